"""CPU smoke check behind ``run_grpo.sh --smoke`` (verl's rollout engine needs a GPU).

Composes verl's trainer config with the launch script's overrides (so a renamed or mistyped key
fails here), loads the reward function the config names (with its ``reward_kwargs``: the
"strict" preset) and scores each row of ``DATA/train.parquet`` with its reference answer, its
zero-effort baseline and no answer, checking the strict reward's order::

    python examples/verl/smoke.py DATA override [override ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(data: Path, overrides: list[str]) -> None:
    import pandas
    import verl
    from hydra import compose, initialize_config_dir
    from verl.trainer.ppo.reward import get_custom_reward_fn

    import npgym

    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        config = compose(config_name="ppo_trainer", overrides=overrides)
    compute_score = get_custom_reward_fn(config)
    rows = pandas.read_parquet(data / "train.parquet").to_dict("records")
    for row in rows:
        info = row["extra_info"]
        task = npgym.get_task(info["task"])
        instance = task.from_json(info["instance"])
        answers = {"reference": task.format_answer(json.loads(info["reference"])["solution"])}
        baseline = task.baseline_solution(instance)
        if baseline is not None:
            answers["baseline"] = task.format_answer(baseline)
        answers["none"] = "I do not know."
        scores = {
            kind: compute_score(
                data_source=row["data_source"],
                solution_str=text,
                ground_truth=row["reward_model"]["ground_truth"],
                extra_info=info,
            )["score"]
            for kind, text in answers.items()
        }
        print(f"{info['task']} {row['data_source']}: {scores}")
        if scores["reference"] != 2.0 or scores.get("baseline", -0.5) > -0.5 > scores["none"]:
            raise SystemExit(f"unexpected rewards {scores}: is the strict preset configured?")
    print(f"verl smoke check passed: {len(rows)} rows, config and reward function load")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
