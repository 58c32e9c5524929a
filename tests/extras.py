"""One way for a test to need an optional dependency: :func:`need`.

``pip install -e ".[test]" && pytest`` (the README's test line) must pass without any extra, so
a test that needs torch, Ray, TRL, verl, OpenEnv, lm-eval or verifiers skips without it, with a
reason that names what to install. Every such skip goes through :func:`need`, whose reasons start
with :data:`SKIP_PREFIX`; ``tests/conftest.py`` lists the tests skipped that way (and those
skipped by a bare ``pytest.importorskip`` or with a reason that says what to ``pip install``) in
the file named by :data:`RECORD_ENV`, so that CI, once it has installed the extras, runs exactly
those again (``.ci/run``).
"""

from __future__ import annotations

from types import ModuleType

import pytest

SKIP_PREFIX = "missing extra: "
"""How every reason given by :func:`need` starts."""
RECORD_ENV = "NPGYM_RECORD_EXTRA_SKIPS"
"""Environment variable naming a file: a run writes there each test (or module) it skipped for a
missing dependency, one ``nodeid<TAB>reason`` a line."""
RUN_AGAIN_ENV = "NPGYM_RUN_AGAIN"
"""Environment variable naming such a file, written by an earlier run: the tests (or modules) it
lists carry the ``run_again`` mark, so that one run selects them beside others (CI's
``-m "slow or run_again"``, once the extras are installed)."""
RUN_AGAIN_MARK = "run_again"
"""The mark that :data:`RUN_AGAIN_ENV`'s tests carry (registered in ``tests/conftest.py``)."""
IMPORT_SKIP = "could not import"
"""How a bare ``pytest.importorskip`` without a reason words its skip (recorded too)."""

INSTALL = {
    "torch": "pip install torch",
    "trl": "pip install 'npgym[trl]'",
    "transformers": "pip install 'npgym[trl]'",
    "ray": "pip install 'npgym[ray]'",
    "verl": "pip install 'npgym[verl]'",
    "fastapi": "pip install 'npgym[verl]'",
    "openenv": "pip install 'npgym[openenv]'",
    "uvicorn": "pip install 'npgym[openenv]'",
    "websockets": "pip install 'npgym[openenv]'",
    "lm_eval": "pip install 'npgym[lm-eval]'",
    "atroposlib": "pip install 'npgym[atropos]'",
    "verifiers": "pip install 'npgym[verifiers]', in a venv without npgym[openenv]",
    "torchrl": "pip install 'npgym[torchrl]', in a venv without npgym[verl] (.ci/venv-torchrl)",
    "tensordict": "pip install 'npgym[torchrl]', in a venv without npgym[verl] (.ci/venv-torchrl)",
    "nemo_gym": "pip install 'npgym[nemo-gym]' on Python >=3.13.14, or .ci/venv-nemo-gym",
    "skyrl_gym": "pip install 'npgym[skyrl]'",
    "gem": "pip install 'npgym[gem]' on Python <=3.12.0, in a venv without npgym[verl] "
    "(.ci/venv-gem)",
}
"""What to install for each optional top-level module a test may import."""


def reason(module: str) -> str:
    """The skip reason of a test that needs ``module``: what is missing and what to install."""
    top = module.split(".")[0]
    if top not in INSTALL:
        raise KeyError(f"tests/extras.py: no install hint for {module!r}; add it to INSTALL")
    return f"{SKIP_PREFIX}{module} ({INSTALL[top]})"


def need(module: str) -> ModuleType:
    """``module``, imported; or skip the test (or, at module level, the file) naming the extra
    to install."""
    __tracebackhide__ = True  # the skip is reported at the caller's line
    return pytest.importorskip(module, reason=reason(module))


def is_extra_skip(text: str) -> bool:
    """Whether a skip's reason says that an optional dependency is missing: one of :func:`need`,
    a bare ``pytest.importorskip``'s, or any other that says what to ``pip install``."""
    return text.startswith((SKIP_PREFIX, IMPORT_SKIP)) or "pip install" in text
