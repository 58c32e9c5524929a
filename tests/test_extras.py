"""Without its extras the suite still collects, and what needs an extra skips naming it.

The README's test line installs ``.[test]`` only. ``.ci/run`` runs it on a bare venv; these tests
check the same on any machine by hiding the extras from a fresh interpreter
(``sys.modules[name] = None`` in a ``sitecustomize``: ``import`` fails and ``find_spec`` finds
nothing, as when the package is not installed).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.extras import INSTALL, RECORD_ENV, RUN_AGAIN_ENV, SKIP_PREFIX, reason

ROOT = Path(__file__).resolve().parents[1]


def _hiding(tmp_path: Path) -> dict[str, str]:
    """An environment whose interpreters cannot import any module of :data:`INSTALL`."""
    folder = tmp_path / "hide"
    folder.mkdir()
    names = ", ".join(repr(name) for name in sorted(INSTALL))
    (folder / "sitecustomize.py").write_text(
        f"import sys\nfor name in ({names},):\n    sys.modules[name] = None\n"
    )
    path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, RECORD_ENV: str(tmp_path / "skips.tsv")}


def test_every_reason_names_what_to_install() -> None:
    extras = set(importlib.metadata.metadata("npgym").get_all("Provides-Extra") or [])
    for module, install in INSTALL.items():
        assert reason(module).startswith(SKIP_PREFIX + module)
        named = re.findall(r"npgym\[([\w-]+)\]", install)
        assert named or module == "torch", install
        assert set(named) <= extras, f"{install}: no such extra in pyproject.toml"


def test_need_skips_naming_the_extra(tmp_path: Path) -> None:
    test = tmp_path / "test_needs_torch.py"
    test.write_text("from tests.extras import need\n\ndef test_x():\n    need('torch')\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "tests.conftest", "-rs", str(test)],
        cwd=ROOT,
        env=_hiding(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    assert "1 skipped" in run.stdout and reason("torch") in run.stdout
    assert f"{test.name}:4: {reason('torch')}" in run.stdout  # the caller's line, not the helper's
    recorded = (tmp_path / "skips.tsv").read_text().splitlines()
    assert [line.split("\t")[1] for line in recorded] == [reason("torch")]


def test_the_run_again_list_selects_its_tests_and_modules(tmp_path: Path) -> None:
    """CI's one run of ``-m "slow or run_again"``: a listed module path selects every test in
    it, a listed node id that test alone."""
    for name in ("test_one.py", "test_two.py"):
        (tmp_path / name).write_text("def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    again = tmp_path / "again.tsv"
    again.write_text("test_one.py\tmissing extra: x\ntest_two.py::test_b\tmissing extra: x\n")
    rooted = ["--rootdir", str(tmp_path), "-p", "tests.conftest", "-p", "no:cacheprovider"]
    selecting = ["--collect-only", "-q", "-m", "run_again", str(tmp_path)]
    run = subprocess.run(  # rooted in tmp_path (node ids relative to it), no ini file there
        [sys.executable, "-m", "pytest", *rooted, *selecting],
        cwd=ROOT,
        env={**os.environ, RUN_AGAIN_ENV: str(again)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    selected = [line for line in run.stdout.splitlines() if "::" in line]
    assert selected == ["test_one.py::test_a", "test_one.py::test_b", "test_two.py::test_b"]


@pytest.mark.slow
def test_the_suite_collects_without_the_extras(tmp_path: Path) -> None:
    """No test module fails to import when torch, Ray, TRL, verl, OpenEnv, lm-eval and verifiers
    are missing; the modules that need one skip saying what to install, and are recorded (so CI
    runs them again)."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:randomly"],
        cwd=ROOT,
        env=_hiding(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-5000:]
    assert "error" not in run.stdout.splitlines()[-1], run.stdout[-5000:]
    recorded = dict(
        line.split("\t", 1) for line in (tmp_path / "skips.tsv").read_text().splitlines()
    )
    assert {"tests/test_verl.py", "tests/test_ray_curriculum.py"} <= recorded.keys(), recorded
    assert all("pip install" in text for text in recorded.values()), recorded  # says what
