"""A tokenizer trained here on the test's own texts: trainer tests download nothing.

The builder lives in :mod:`npgym.integrations.smoke`, shared with the examples' ``--smoke`` modes
and ``bench/learning_curve.py``.
"""

from npgym.integrations.smoke import CHATML, SPECIAL, TOOL_TAGS, tiny_tokenizer

__all__ = ["CHATML", "SPECIAL", "TOOL_TAGS", "tiny_tokenizer"]
