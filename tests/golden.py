"""Golden files that pin generation: same seed, same bytes, on every machine and every run.

One readable text file per task and tier, ``tests/golden/<Task>/<tier>.txt`` (format:
:func:`npgym.testing.golden_text`): the instances' JSON and prompts for :data:`SEEDS`, and the
exact reference answer of the first one, so a failing test shows a diff. ``python
tests/golden.py`` writes the files that are missing; it never changes an existing one unless
given ``--force`` (do that only when a generator change is intended, and say so in the commit).
"""

from __future__ import annotations

import sys
from pathlib import Path

import npgym
from npgym.testing import GOLDEN_SEEDS, golden_text

GOLDEN_DIR = Path(__file__).parent / "golden"
SEEDS = GOLDEN_SEEDS


def path(task_name: str, tier: str) -> Path:
    """Where the golden file of a task and tier lives."""
    return GOLDEN_DIR / task_name / f"{tier}.txt"


def main(force: bool) -> None:
    for task_name in npgym.list_tasks():
        for tier in npgym.TIERS:
            target = path(task_name, tier)
            if target.exists() and not force:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(golden_text(npgym.get_task(task_name), tier, SEEDS))
            print(f"pinned {task_name}/{tier} in {target}")


if __name__ == "__main__":
    main(force="--force" in sys.argv[1:])
