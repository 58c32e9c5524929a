"""npgym's ``score()`` at least 3x faster than NP-ENGINE's validator on every task (issue 10).

Run: ``NPENGINE_PATH=/path/to/NP-Engine pytest bench/test_npengine.py``. Skips, saying why,
when ``NPENGINE_PATH`` is unset; see :mod:`bench.npengine` for how the comparison is made.
"""

from __future__ import annotations

import pytest

import npgym
from bench.npengine import LENGTHS, SKIP_MESSAGE, compare, npengine_root

GOAL = 3.0


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("task_name", npgym.list_tasks())
def test_score_is_faster_than_npengine(task_name: str, length: int) -> None:
    root = npengine_root()
    if root is None:
        pytest.skip(SKIP_MESSAGE)
    row = compare(task_name, root, length)
    assert row["ratio"] >= GOAL, row
