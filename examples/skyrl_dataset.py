"""A SkyRL dataset of placeholder rows for npgym, and SkyRL's generator loop played on it.

    python examples/skyrl_dataset.py --output-dir data/npgym   # train/validation parquet files
    python examples/skyrl_dataset.py --smoke                   # CPU, seconds: one scripted step

Needs ``pip install 'npgym[skyrl]'`` (and pyarrow to write parquet). The rows only name their
instance (``seed``): ``init`` puts npgym's prompt in place of the placeholder, so the training
set is endless (``npgym/Curriculum``) and the validation set is fixed (``npgym/<Task>-<tier>``
and its seeds). Each step then builds, initialises and steps one env per sample, as SkyRL's
``SkyRLGymGenerator`` does: one extras dict per row shared by its samples, ``global_step`` and
``max_turns`` added. In smoke mode a scripted policy answers (the reference answer for every
other sample) in place of the model. Training itself runs in skyrl-train (docs/skyrl.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import skyrl_gym

from npgym.integrations import skyrl

CURRICULUM = {"tasks": ["Knapsack", "SubsetSum"], "target": [0.3, 0.7]}
"""``environment.skyrl_gym.npgym/Curriculum`` in SkyRL's config."""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, help="write train.parquet, validation.parquet")
    parser.add_argument("--rows", type=int, default=256, help="training rows (prompts per epoch)")
    parser.add_argument("--samples", type=int, default=4, help="samples per prompt")
    parser.add_argument("--max-turns", type=int, default=2, help="attempts per episode")
    parser.add_argument("--smoke", action="store_true", help="4 rows, one scripted step, CPU")
    return parser.parse_args()


def write(rows: list[dict[str, Any]], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    print(f"wrote {len(rows)} rows to {path}")


def play_step(rows: list[dict[str, Any]], samples: int, step: int, max_turns: int) -> list[float]:
    """One generator step over ``rows`` with the scripted policy; the episodes' rewards."""
    rewards = []
    for row in rows:
        extras = {"seed": row["seed"], "global_step": step, "max_turns": max_turns}
        for sample in range(samples):
            env = skyrl_gym.make(row["env_class"], env_config=CURRICULUM, extras=extras)
            env.init(row["prompt"])
            session = env.env.session
            answer = session.task.format_answer(session.reference.solution)
            out = env.step(answer if sample % 2 == 0 else "I do not know.")
            while not out["done"]:
                out = env.step(answer)
            rewards.append(out["reward"])
    return rewards


def main() -> None:
    args = parse_args()
    train = skyrl.placeholder_rows("npgym/Curriculum", 4 if args.smoke else args.rows)
    validation = skyrl.placeholder_rows("npgym/Knapsack-medium", 4 if args.smoke else 64)
    if args.output_dir is not None:
        write(train, args.output_dir / "train.parquet")
        write(validation, args.output_dir / "validation.parquet")
    if args.smoke:
        rewards = play_step(train, args.samples, step=0, max_turns=args.max_turns)
        frontier = skyrl.shared_curriculum(**CURRICULUM).stats()
        print(f"episodes {len(rewards)}, mean reward {sum(rewards) / len(rewards):.3f}")
        print("curriculum:", {task: stat["reports"] for task, stat in frontier.items()}, "reports")
        print(f"smoke run done: 1 step of {len(train)} rows x {args.samples} samples")


if __name__ == "__main__":
    main()
