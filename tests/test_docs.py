"""The contract in docs/ stays true to the code: every task is described, with its canonical
fields and its tier table exactly as the presets define them, and nothing points at a file
users do not have."""

from __future__ import annotations

import importlib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import npgym
from npgym import Task
from npgym.cli import DOCS as DOCS_BASE
from npgym.cli import main
from tests.extras import INSTALL, reason

ROOT = Path(__file__).resolve().parents[1]
TASKS_DOC = ROOT / "docs" / "tasks.md"


def tier_table(task: Task) -> str:
    """The markdown table of a task's tier presets: one row per config field, a ``_min`` /
    ``_max`` pair as one ``low-high`` row."""
    presets = [task.tiers[tier].model_dump() for tier in npgym.TIERS]
    rows = ["| field | " + " | ".join(npgym.TIERS) + " |", "|---" * (len(npgym.TIERS) + 1) + "|"]
    for field in presets[0]:
        if field.endswith("_max") and field[:-4] + "_min" in presets[0]:
            continue
        partner = field[:-4] + "_max" if field.endswith("_min") else None
        if partner in presets[0]:
            label = f"`{field[:-4]}`"
            cells = [_span(preset[field], preset[partner]) for preset in presets]
        else:
            label = f"`{field}`"
            cells = [str(preset[field]) for preset in presets]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _span(low: object, high: object) -> str:
    return str(low) if low == high else f"{low}-{high}"


@pytest.mark.parametrize("task_name", npgym.list_tasks())
def test_tasks_doc_describes_each_task_with_its_tier_table(task_name: str) -> None:
    text = TASKS_DOC.read_text()
    task = npgym.get_task(task_name)
    section = text.split(f"\n## {task_name}\n", 1)[1].split("\n## ", 1)[0]
    assert tier_table(task) in section, f"docs/tasks.md: {task_name}'s tier table is stale"
    assert f"Category: {task.category}." in section
    for field in task.instance_type.canonical_fields:
        assert f"`{field}`" in section, f"docs/tasks.md: {task_name} field {field} undescribed"


def test_no_reference_to_files_users_do_not_have() -> None:
    folders = ["npgym", "heuristics", "tests", "examples", "bench", "docs"]
    paths = [ROOT / "README.md", *(p for f in folders for p in (ROOT / f).rglob("*.*"))]
    stale = [
        str(path.relative_to(ROOT))
        for path in paths
        if path.suffix in {".py", ".md", ".yaml", ".sh", ".toml"}
        and path != Path(__file__)
        and ("TASKS.md" in path.read_text() or "shared folder" in path.read_text())
    ]
    assert not stale, f"these point at a file users do not have: {stale}"


def _limit_rows() -> list[tuple[str, str]]:
    """(value, dotted constant) of each row of the contract's Limits table."""
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    section = text.split("## Limits", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 4 and cells[3].startswith("`npgym."):
            rows.append((cells[1], cells[3].strip("`")))
    return rows


def test_every_documented_limit_is_its_constants_value() -> None:
    """Each number in docs/contract.md's Limits table is the value of the constant it names, so
    the documented limits cannot drift from the code."""
    rows = _limit_rows()
    assert len(rows) >= 18
    for value, dotted in rows:
        module_name, _, constant = dotted.rpartition(".")
        actual = getattr(importlib.import_module(module_name), constant)
        assert float(value) == actual, f"docs/contract.md says {dotted} = {value}, code: {actual}"


# --- the docs site and the README as a front page ----------------------------------------------

DOCS = ROOT / "docs"
README = ROOT / "README.md"
MKDOCS_YML = ROOT / "mkdocs.yml"
README_MAX_LINES = 150
"""The README is a front page; everything else is a docs page."""
BLOCK = re.compile(r"(<!-- not run:[^>]*-->\n)?```(python|bash)\n(.*?)```", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def _blocks(lang: str, *, runnable: bool = True) -> list[tuple[str, str]]:
    """(where, code) of each ``lang`` block of the README and the docs; ``runnable`` drops the
    blocks marked ``<!-- not run: ... -->``."""
    found = []
    for path in [README, *_pages()]:
        for index, (skip, kind, code) in enumerate(BLOCK.findall(path.read_text("utf-8"))):
            if kind == lang and not (runnable and skip):
                found.append((f"{path.relative_to(ROOT)}#{index}", code))
    return found


def _nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav lists, relative to docs/."""
    return re.findall(r":\s*(\S+\.md)\s*$", MKDOCS_YML.read_text("utf-8"), re.M)


def test_readme_is_a_front_page() -> None:
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    nav = _nav_pages()
    pages = [str(path.relative_to(DOCS)) for path in _pages()]
    assert sorted(nav) == sorted(pages), "mkdocs.yml's nav and the files of docs/ differ"
    assert "security.md" in nav


@pytest.mark.parametrize("path", [README, *_pages()], ids=lambda path: path.name)
def test_relative_links_resolve(path: Path) -> None:
    """A link to a file of the repository points at one that exists (mkdocs checks the docs'
    links too; this also covers the README, which mkdocs does not build)."""
    for target in LINK.findall(path.read_text("utf-8")):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        file = (path.parent / target.split("#", 1)[0]).resolve()
        assert file.exists(), f"{path.relative_to(ROOT)} links to a missing {target}"


@pytest.mark.parametrize(("where", "code"), _blocks("python", runnable=False))
def test_python_snippets_compile(where: str, code: str) -> None:
    compile(code, where, "exec")


@pytest.mark.slow
@pytest.mark.parametrize(("where", "code"), [b for b in _blocks("python") if "docs/" in b[0]])
def test_docs_python_snippets_run_as_scripts(where: str, code: str, tmp_path: Path) -> None:
    """Each runnable snippet of a docs page runs as ``python snippet.py`` in a fresh process and
    an empty folder, as a reader would run it (the README's are tests/test_readme.py's); one that
    stops on a missing optional module skips, naming the extra (``tests/extras.py``)."""
    script = tmp_path / "snippet.py"
    script.write_text(code, "utf-8")
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    missing = MISSING.findall(result.stderr)
    if result.returncode != 0 and missing and missing[-1].split(".")[0] in INSTALL:
        pytest.skip(reason(missing[-1]))
    assert result.returncode == 0, f"{where} failed:\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, f"{where}:\n{result.stderr[-3000:]}"


def _npgym_commands() -> list[tuple[str, list[str]]]:
    commands = []
    for where, code in _blocks("bash", runnable=False):
        for line in code.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part.split("#")[0])
                if words[:1] == ["npgym"]:
                    commands.append((where, words[1:]))
    return commands


@pytest.mark.parametrize(("where", "words"), _npgym_commands())
def test_npgym_commands_in_the_docs_exist(where: str, words: list[str]) -> None:
    path = [word for word in words[:2] if not word.startswith("-")]
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, f"{where}: npgym {' '.join(path)}: {result.output}"
    for option in (word.split("=")[0] for word in words if word.startswith("-")):
        assert option in result.output, f"{where}: {option} is not an option of npgym {path}"


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


@pytest.mark.parametrize("path", _commands(main), ids=lambda path: " ".join(path) or "npgym")
def test_each_command_help_names_its_docs_page(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    match = re.search(rf"Docs: {DOCS_BASE}/(\S+\.md)", result.output)
    assert match, f"npgym {' '.join(path)} --help names no docs page"
    assert match.group(1) in _nav_pages(), f"{match.group(1)} is not a page of the site"


def test_installs_name_only_extras_that_exist() -> None:
    """``pip install ".[x]"`` in the README or the docs names extras pyproject.toml defines (a
    README once asked for a ``plot`` extra that never existed)."""
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    extras = set(re.findall(r"^([\w-]+)\s*=", section, re.M))
    for where, code in _blocks("bash", runnable=False):
        for names in re.findall(r"npgym\[([^\]]+)\]|\"\.\[([^\]]+)\]\"", code):
            for name in ",".join(names).split(","):
                assert not name or name in extras, f"{where}: no extra named {name!r}"


def test_deep_check_cost_matches_the_help() -> None:
    """docs/evaluate.md gives ``eval --deep`` the CPU-s figure that ``npgym eval --help`` does."""
    help_text = " ".join(CliRunner().invoke(main, ["eval", "--help"]).output.split())
    figure = re.search(r"about (\d+) CPU-s", help_text)
    assert figure, "npgym eval --help states no CPU-s figure for --deep"
    page = " ".join((DOCS / "evaluate.md").read_text("utf-8").split())
    assert f"about {figure.group(1)} CPU-s" in page
    assert len(re.findall(r"about \d+ CPU-s", page)) == 1


@pytest.mark.slow
def test_docs_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: no broken link, missing page or unreadable docstring."""
    pytest.importorskip("mkdocs", reason="the docs site needs: pip install 'npgym[docs]'")
    pytest.importorskip("mkdocstrings", reason="the docs site needs: pip install 'npgym[docs]'")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
