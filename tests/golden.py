"""Golden hashes that pin generation: same seed, same bytes, on every machine and every run.

For each task and tier the digest covers the JSON and the prompt of the instances for
:data:`SEEDS`, and the exact reference objective of the first one. ``python tests/golden.py``
adds entries for tasks or tiers that have none; it never changes an existing entry unless
given ``--force`` (do that only when a generator change is intended, and say so in the commit).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import npgym

GOLDEN_PATH = Path(__file__).parent / "golden" / "generation.json"
SEEDS = (0, 1, 2)


def digest(task_name: str, tier: str) -> str:
    """SHA-256 over the instances' JSON and prompts for :data:`SEEDS`."""
    task = npgym.get_task(task_name)
    hasher = hashlib.sha256()
    for seed in SEEDS:
        instance = task.generate(seed, tier=tier)
        hasher.update(instance.to_json().encode())
        hasher.update(b"\n")
        hasher.update(task.prompt(instance).encode())
        hasher.update(b"\n")
    return hasher.hexdigest()


def reference_objective(task_name: str, tier: str) -> int | float | None:
    """Exact reference objective of the instance generated with the first seed."""
    task = npgym.get_task(task_name)
    return task.reference(task.generate(SEEDS[0], tier=tier)).objective


def load() -> dict[str, dict[str, object]]:
    return json.loads(GOLDEN_PATH.read_text()) if GOLDEN_PATH.exists() else {}


def main(force: bool) -> None:
    golden = load()
    for task_name in npgym.list_tasks():
        for tier in npgym.TIERS:
            key = f"{task_name}/{tier}"
            if key in golden and not force:
                continue
            golden[key] = {
                "sha256": digest(task_name, tier),
                "reference_objective": reference_objective(task_name, tier),
            }
            print(f"pinned {key}")
    GOLDEN_PATH.parent.mkdir(exist_ok=True)
    GOLDEN_PATH.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(force="--force" in sys.argv[1:])
