"""The contract in docs/ stays true to the code: every task is described, with its canonical
fields and its tier table exactly as the presets define them, and nothing points at a file
users do not have."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import npgym
from npgym import Task

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
