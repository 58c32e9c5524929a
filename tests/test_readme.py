"""README.md stays true: its Python snippets run as scripts and its npgym commands exist.

Each ```python block runs as its own ``python`` process, in an empty folder, as a reader who
pasted it into a file would run it: a snippet that leans on something it never imports (npgym's
environment registration, say) fails here as it would for them. A snippet that needs an extra
not installed skips, naming the extra (``tests/extras.py``): found from its imports before it
runs, or from the ``ModuleNotFoundError`` it stops with. A block preceded by
``<!-- not run: why -->`` is reported as skipped with that reason.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from npgym.cli import main
from tests.extras import INSTALL, reason

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCK = re.compile(r"(<!-- not run:([^>]*)-->\n)?```(python|bash)\n(.*?)```", re.S)
BLOCKS = [
    (
        match[3],
        match[4],
        None if match[1] is None else match[2].strip(),
        README.count("\n", 0, match.start(3)) + 1,
    )
    for match in BLOCK.finditer(README)
]
"""Each block: its language, its code, why it is not run (or ``None``), its line in README.md."""
SNIPPET_TIMEOUT = 300
"""Seconds one snippet may run (the slowest builds a small NP-Bench: a few seconds once numba's
kernel cache is warm, a minute or so on a cold, busy machine)."""
MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def _snippets() -> list:
    return [
        pytest.param(code, why, id=f"README.md:{line}")
        for lang, code, why, line in BLOCKS
        if lang == "python"
    ]


def _imported_modules(code: str) -> set[str]:
    """Top-level names of the modules a snippet imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_readme_opens_with_the_two_fresh_machine_commands() -> None:
    """The first bash block is what ``.ci/run`` runs first, on a bare venv."""
    lang, code, _, _ = BLOCKS[0]
    lines = [line for line in code.splitlines() if line.strip()]
    assert lang == "bash" and len(lines) == 2
    assert lines[0].endswith("# main job") and lines[1].endswith("# tests")
    assert "pytest" in lines[1]


def test_readme_has_python_snippets() -> None:
    assert _snippets(), "README.md has no ```python block: the pattern no longer matches"


@pytest.mark.parametrize(("code", "why"), _snippets())
def test_python_snippets_run_as_scripts(code: str, why: str | None, tmp_path: Path) -> None:
    if why is not None:
        pytest.skip(f"README marks this snippet 'not run': {why}")
    for name in sorted(_imported_modules(code) & INSTALL.keys()):
        if importlib.util.find_spec(name) is None:
            pytest.skip(reason(name))
    script = tmp_path / "snippet.py"
    script.write_text(code)
    run = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=SNIPPET_TIMEOUT,
    )
    if run.returncode != 0:
        missing = MISSING.findall(run.stderr)
        if missing and missing[-1].split(".")[0] in INSTALL:
            pytest.skip(reason(missing[-1]))
    assert run.returncode == 0, f"the README snippet failed as a script:\n{run.stderr[-3000:]}"
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert "ReferencePoolFallback" not in run.stderr, run.stderr[-3000:]  # an unguarded pool


def _npgym_commands() -> list[list[str]]:
    commands = []
    for lang, code, _, _ in BLOCKS:
        if lang != "bash":
            continue
        for line in code.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part.split("#")[0])
                if words[:1] == ["npgym"]:
                    commands.append(words[1:])
    return commands


@pytest.mark.parametrize("words", _npgym_commands(), ids=lambda words: " ".join(words[:2]))
def test_npgym_commands_and_options_exist(words: list[str]) -> None:
    path = [word for word in words[:2] if not word.startswith("-")]
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    help_text = result.output
    for option in (word.split("=")[0] for word in words if word.startswith("--")):
        assert option in help_text, f"{option} is not an option of npgym {' '.join(path)}"
