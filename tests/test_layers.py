"""Layers point one way: the package's import graph, checked from the source."""

from __future__ import annotations

import ast
import re
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


def _module_name(path: Path) -> str:
    """``npgym.x.y`` for ``npgym/x/y.py`` (``npgym.x`` for a package's ``__init__.py``)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_there_is_no_import_circle() -> None:
    """No module reaches itself through imports, function-level ones included (an import of
    ``npgym.a.b`` counts for ``npgym.a.b`` when it is a module, else for ``npgym.a``; a module's
    own packages are left out). The package's ``__init__`` (the composition root that wires
    everything up) is left out too."""
    import networkx as nx

    modules = {
        _module_name(path): path
        for path in PACKAGE.rglob("*.py")
        if path != PACKAGE / "__init__.py"
    }
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        for imported in _imports(path):
            target = imported if imported in modules else imported.rpartition(".")[0]
            # A module's own packages are imported before it anyway: not an edge of a circle.
            if target in modules and target != name and not name.startswith(target + "."):
                graph.add_edge(name, target)
    circles = [sorted(cycle) for cycle in nx.simple_cycles(graph)]
    assert circles == [], f"import circles: {circles[:5]}"


def test_mypy_checks_the_solvers_as_strictly_as_the_library() -> None:
    """heuristics/ is in mypy's files, and no override names a module of it (so none relaxes a
    check there): the solvers are held to the library's strictness."""
    config = (PACKAGE.parent / "pyproject.toml").read_text()
    assert re.search(r'^files = \[[^]]*"heuristics"', config, re.MULTILINE)
    overridden = re.findall(
        r'"(heuristics(?:\.[\w*]+)*)"', config.split("[[tool.mypy.overrides]]", 1)[1]
    )
    assert overridden == []


LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("certificates", ("npgym.certificates", "npgym.certificates.*")),
    (
        "foundations",
        (
            "npgym.version",
            "npgym.seeding",
            "npgym.progress",
            "npgym.answer",
            "npgym.scan",
            "npgym.kernels",
            "npgym.named_arguments",
            "npgym.results",
            "npgym.instance",
            "npgym.config",
            "npgym.graphs",
            "npgym.reward",
            "npgym.streams",
            "npgym.journal",
        ),
    ),
    ("task contract", ("npgym.scoring", "npgym.task", "npgym.capabilities", "npgym.inverse")),
    (
        "tasks",
        (
            "npgym.tasks",
            "npgym.tasks.*",
            "npgym.tasks.*.instance",
            "npgym.tasks.*.generator",
            "npgym.tasks.*.prompt",
            "npgym.tasks.*.verifier",
            "npgym.tasks.*.task",
            "npgym.tasks.*.inverse",
        ),
    ),
    ("registry", ("npgym.registry",)),
    (
        "modes",
        (
            "npgym.env_options",
            "npgym.multiturn",
            "npgym.records",
            "npgym.outputs",
            "npgym.reference_pool",
            "npgym.trainer_rows",
            "npgym.datasets",
            "npgym.variants",
            "npgym.render",
            "npgym.structured",
            "npgym.vector",
            "npgym.env",
            "npgym.curriculum",
            "npgym.testing",
        ),
    ),
    (
        "task modes",
        (
            "npgym.tasks.*.variants",
            "npgym.tasks.*.render",
            "npgym.tasks.*.structured",
            "npgym.tasks.*.vector",
        ),
    ),
    ("families", ("npgym.families", "npgym.families.*")),
    (
        "applications",
        (
            "npgym.npbench",
            "npgym.npbench.*",
            "npgym.integrations",
            "npgym.integrations.*",
            "npgym.selfplay",
            "npgym.selfplay.*",
        ),
    ),
    ("commands", ("npgym.commands",)),
    ("entry points", ("npgym.cli", "npgym.__main__")),
]
"""Every module's layer, bottom first: a module imports only from its own layer or below."""


def _layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s layer (``*`` stands for one name part)."""
    found = [
        index
        for index, (_, patterns) in enumerate(LAYERS)
        for pattern in patterns
        if re.fullmatch(re.escape(pattern).replace(r"\*", r"[^.]+"), module)
    ]
    assert len(found) == 1, f"{module} is in {len(found)} layers of LAYERS; put it in one"
    return found[0]


def test_every_module_has_a_layer_and_imports_only_downwards() -> None:
    """Each module of the package is placed in :data:`LAYERS` (a new module must be placed),
    and imports (function-level ones included) reach only its own layer or those below."""
    modules = {
        _module_name(path): path
        for path in PACKAGE.rglob("*.py")
        if path != PACKAGE / "__init__.py"
    }
    upward = []
    for name, path in sorted(modules.items()):
        layer = _layer_of(name)
        for imported in sorted(_imports(path)):
            target = imported if imported in modules else imported.rpartition(".")[0]
            if target in modules and target != name and _layer_of(target) > layer:
                upward.append(f"{name} ({LAYERS[layer][0]}) -> {target}")
    assert upward == [], "imports that point up:\n" + "\n".join(upward)
