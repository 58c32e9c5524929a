"""Layers point one way: the package's import graph, checked from the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "npgym"


def _imports(path: Path) -> set[str]:
    """Modules imported anywhere in ``path`` (function-level imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def _modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).glob("*.py"))


@pytest.mark.parametrize(
    ("lower", "upper"), [("npbench", "npgym.integrations"), ("integrations", "npgym.npbench")]
)
def test_npbench_and_integrations_do_not_import_each_other(lower: str, upper: str) -> None:
    for path in _modules(lower):
        assert not any(name.startswith(upper) for name in _imports(path)), path


def test_submodules_do_not_import_the_package_for_its_side_effects() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "__init__.py" or path.parent != PACKAGE:
            names = _imports(path)
            assert "npgym" not in names, f"{path} imports npgym (it registers the gym envs)"
            assert "npgym.__version__" not in names, path


def test_the_core_does_not_import_the_layers_above_it() -> None:
    core = ["datasets.py", "records.py", "trainer_rows.py", "task.py", "registry.py"]
    for name in core:
        imported = _imports(PACKAGE / name)
        assert not any(
            module.startswith(("npgym.npbench", "npgym.integrations", "npgym.cli"))
            for module in imported
        ), name
