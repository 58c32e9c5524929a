"""Layout rules: the solvers never import npgym's core, nothing imports a bare ``heuristics``,
and numba's on-disk cache follows NUMBA_CACHE_DIR and never breaks imports."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_heuristics_import_nothing_from_the_rest_of_npgym() -> None:
    for path in (ROOT / "heuristics").glob("*.py"):
        for name in _imports(path):
            if name.startswith("npgym"):
                assert name.startswith("npgym.heuristics"), f"{path.name} imports {name}"


def test_nothing_imports_the_bare_heuristics_name() -> None:
    for folder in ("npgym", "heuristics", "tests", "bench", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            for name in _imports(path):
                assert name.split(".")[0] != "heuristics", f"{path} imports {name}"


@pytest.mark.slow
def test_numba_cache_goes_to_numba_cache_dir(tmp_path: Path) -> None:
    code = (
        "import npgym; t = npgym.get_task('TSP'); i = t.generate(0, tier='easy');"
        "t.score(i, 'Answer: [0]', 1)"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert list(tmp_path.rglob("*.nbi")), "numba wrote no cache index under NUMBA_CACHE_DIR"


def test_uncachable_kernels_still_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    from npgym.heuristics import jit

    real_njit = numba.njit

    def njit_without_locator(*args: object, **kwargs: object) -> object:
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return real_njit(*args, **kwargs)

    monkeypatch.setattr(jit.numba, "njit", njit_without_locator)
    monkeypatch.setattr(jit, "_warned", False)
    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_DIR"):
        add_one = jit.njit(lambda x: x + 1)
    assert add_one(1) == 2
