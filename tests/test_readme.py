"""README.md stays true: its Python snippets run and its npgym commands exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from npgym.cli import main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCK = re.compile(r"(<!-- not run:[^>]*-->\n)?```(python|bash)\n(.*?)```", re.S)
BLOCKS = [(lang, code, bool(skip)) for skip, lang, code in BLOCK.findall(README)]


def test_readme_opens_with_the_two_fresh_machine_commands() -> None:
    lang, code, _ = BLOCKS[0]
    lines = [line for line in code.splitlines() if line.strip()]
    assert lang == "bash" and len(lines) == 2
    assert lines[0].endswith("# main job") and lines[1].endswith("# tests")
    assert "pytest" in lines[1]


@pytest.mark.parametrize(
    "code", [code for lang, code, skip in BLOCKS if lang == "python" and not skip]
)
def test_python_snippets_run(code: str) -> None:
    if "integrations.trl" in code:
        pytest.importorskip("datasets", reason="the TRL snippet needs: pip install 'npgym[trl]'")
    exec(compile(code, "README.md", "exec"), {})


def _npgym_commands() -> list[list[str]]:
    commands = []
    for lang, code, _ in BLOCKS:
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
