"""Shared test settings.

- numba caches compiled kernels on disk, but only notices changes to the file that defines a
  kernel: a kernel that calls one from another file (``npgym.kernels.check_ids``) would keep a
  stale copy. Tests therefore use a cache folder keyed by a hash of all kernel sources, so any
  source change compiles afresh and an unchanged tree reuses its cache. ``NUMBA_CACHE_DIR``
  set by the caller wins.
- hypothesis: no per-example deadline (the first call of a numba kernel compiles it).
- ``built`` and ``copy``: a bench folder built once per module from the module's ``SPEC``, and a
  fresh copy of it per test (for the modules that tamper with built folders).
- Tests skipped for a missing optional dependency (``tests/extras.py``) are listed in the file
  named by ``NPGYM_RECORD_EXTRA_SKIPS``, for CI to run them again once the extras are installed:
  a run with ``NPGYM_RUN_AGAIN`` naming that file marks them ``run_again``.
"""

import hashlib
import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _source_digest() -> str:
    digest = hashlib.sha256()
    for folder in ("npgym", "heuristics"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _numba_cache_dir() -> str:
    """This tree's cache folder; folders of older trees are removed."""
    parent = ROOT / ".pytest_cache" / "numba"
    current = parent / _source_digest()
    if parent.exists():
        for stale in parent.iterdir():
            if stale != current:
                shutil.rmtree(stale, ignore_errors=True)
    return str(current)


if "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = _numba_cache_dir()

from hypothesis import HealthCheck, settings  # noqa: E402  (after NUMBA_CACHE_DIR is set)

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=100
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=2000
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


import pytest  # noqa: E402


@pytest.fixture(scope="module")
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bench folder built once per test module from that module's ``SPEC`` (a BuildSpec)."""
    from npgym.npbench.build import build

    folder = tmp_path_factory.mktemp("bench") / "b"
    build(request.module.SPEC, folder, workers=1, progress=False)
    return folder


@pytest.fixture
def copy(built: Path, tmp_path: Path) -> Path:
    """A copy of the module's built bench folder for a test to tamper with."""
    return Path(shutil.copytree(built, tmp_path / "copy"))


@pytest.fixture(autouse=True)
def _score_guard_never_trips():
    """Fail any test during which ``Task.score``'s last-resort guard caught an exception."""
    from npgym.scoring import GUARD_TRIPS

    before = GUARD_TRIPS.copy()
    yield
    tripped = GUARD_TRIPS - before
    assert not tripped, f"score() guard caught a bug: {dict(tripped)} (see the npgym log)"


_EXTRA_SKIPS: dict[str, str] = {}


def _note_extra_skip(report: pytest.CollectReport | pytest.TestReport) -> None:
    from tests.extras import is_extra_skip

    if report.skipped and isinstance(report.longrepr, tuple) and not hasattr(report, "wasxfail"):
        text = str(report.longrepr[2]).removeprefix("Skipped: ")
        if is_extra_skip(text):
            _EXTRA_SKIPS[report.nodeid] = text


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``run_again`` mark (``--strict-markers``)."""
    from tests.extras import RUN_AGAIN_ENV, RUN_AGAIN_MARK

    config.addinivalue_line(
        "markers", f"{RUN_AGAIN_MARK}: listed in the file named by {RUN_AGAIN_ENV} (CI's re-run)"
    )


@pytest.hookimpl(tryfirst=True)  # before -m deselects: the mark must be there to select on
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``run_again`` each test that the file named by ``NPGYM_RUN_AGAIN`` lists, by its node
    id or by its module's path (a module skipped as a whole)."""
    from tests.extras import RUN_AGAIN_ENV, RUN_AGAIN_MARK

    listed = os.environ.get(RUN_AGAIN_ENV)
    if not listed:
        return
    again = {line.split("\t", 1)[0] for line in Path(listed).read_text().splitlines() if line}
    for item in items:
        if item.nodeid in again or item.nodeid.split("::", 1)[0] in again:
            item.add_marker(RUN_AGAIN_MARK)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A test file skipped as a whole (``need`` at module level)."""
    _note_extra_skip(report)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """A single test skipped (``need`` inside it)."""
    _note_extra_skip(report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the tests skipped for a missing extra where ``NPGYM_RECORD_EXTRA_SKIPS`` says (in
    the controller only: xdist workers' reports reach it too)."""
    from tests.extras import RECORD_ENV

    target = os.environ.get(RECORD_ENV)
    if target and not hasattr(session.config, "workerinput"):
        lines = (f"{nodeid}\t{text}\n" for nodeid, text in sorted(_EXTRA_SKIPS.items()))
        Path(target).write_text("".join(lines))
