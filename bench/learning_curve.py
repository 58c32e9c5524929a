"""Learning, shown: GRPO with the "strict" reward on one npgym task, reward per step.

A tiny Qwen2 is built here (tokenizer trained on the prompts, random weights, nothing
downloaded), warmed up for a few supervised steps on reference answers, then trained with TRL's
GRPOTrainer on CPU. Writes ``learning_curve.json`` (reward and its parts per step) and
``learning_curve.png`` to ``--output``, and prints whether the mean reward of the last 20% of
steps beats that of the first 20%. Takes minutes on a laptop CPU::

    python bench/learning_curve.py --steps 40 --output out/learning-curve
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import npgym
from npgym.integrations.smoke import warm_started
from npgym.integrations.trl import make_dataset, make_reward, reward_parts

REWARD = "strict"


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Warm up, train, and return the per-step log and the verdict."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    import trl

    torch.manual_seed(args.seed)
    task = npgym.get_task(args.task)
    data = make_dataset([args.task], n=args.prompts, mix={args.tier: 1}, seed=args.seed)
    answers = [task.format_answer(json.loads(row["reference"])["solution"]) for row in data]
    started = time.perf_counter()
    tokenizer, model = warm_started(data["prompt"], answers, args.warm_up, args.hidden)
    warm_seconds = time.perf_counter() - started
    config = trl.GRPOConfig(
        output_dir=str(args.output / "trainer"),
        per_device_train_batch_size=args.batch,
        num_generations=args.generations,
        max_completion_length=args.completion_tokens,
        max_steps=args.steps,
        logging_steps=1,
        learning_rate=args.learning_rate,
        beta=0.0,
        temperature=1.0,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        seed=args.seed,
        disable_tqdm=True,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[make_reward(REWARD), *reward_parts(REWARD)],
        args=config,
        train_dataset=data,
        processing_class=tokenizer,
    )
    trainer.train()
    keys = ("reward", "reward_std", "grad_norm", "loss")
    metrics = ("npgym/format_rate", "npgym/feasible_rate", "npgym/mean_ratio")
    steps = [
        {"step": entry["step"], **{k: entry[k] for k in (*keys, *metrics) if k in entry}}
        for entry in trainer.state.log_history
        if "reward" in entry
    ]
    rewards = [step["reward"] for step in steps]
    fifth = max(len(rewards) // 5, 1)
    first, last = sum(rewards[:fifth]) / fifth, sum(rewards[-fifth:]) / fifth
    return {
        "task": args.task,
        "tier": args.tier,
        "reward": REWARD,
        "settings": {k: str(v) for k, v in vars(args).items()},
        "warm_up_seconds": round(warm_seconds, 1),
        "train_seconds": round(time.perf_counter() - started - warm_seconds, 1),
        "steps": steps,
        "first_fifth_mean": first,
        "last_fifth_mean": last,
        "rises": last > first,
    }


def plot(result: dict[str, Any], path: Path) -> None:
    """Reward per step with its first- and last-fifth means."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [entry["step"] for entry in result["steps"]]
    rewards = [entry["reward"] for entry in result["steps"]]
    figure, axis = plt.subplots(figsize=(7, 4))
    axis.plot(steps, rewards, marker=".", label="mean reward per step")
    fifth = max(len(steps) // 5, 1)
    axis.hlines(
        result["first_fifth_mean"], steps[0], steps[fifth - 1], colors="grey", label="first 20%"
    )
    axis.hlines(result["last_fifth_mean"], steps[-fifth], steps[-1], colors="red", label="last 20%")
    axis.set_xlabel("GRPO step")
    axis.set_ylabel(f"npgym reward ({result['reward']})")
    axis.set_title(f"{result['task']}-{result['tier']}: tiny Qwen2 on CPU")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="MaxClique")
    parser.add_argument("--tier", default="easy")
    parser.add_argument("--prompts", type=int, default=16, help="training instances")
    parser.add_argument("--warm-up", type=int, default=40, help="supervised steps")
    parser.add_argument("--hidden", type=int, default=64, help="model width")
    parser.add_argument("--steps", type=int, default=30, help="GRPO steps")
    parser.add_argument("--batch", type=int, default=8, help="completions per step")
    parser.add_argument("--generations", type=int, default=4, help="completions per prompt")
    parser.add_argument("--completion-tokens", type=int, default=24)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=Path("out/learning-curve"))
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    result = run(args)
    (args.output / "learning_curve.json").write_text(json.dumps(result, indent=2) + "\n")
    plot(result, args.output / "learning_curve.png")
    verdict = "rises" if result["rises"] else "does NOT rise"
    print(
        f"mean reward, first 20% of steps {result['first_fifth_mean']:.3f}, "
        f"last 20% {result['last_fifth_mean']:.3f}: the reward {verdict} "
        f"({len(result['steps'])} steps, {result['train_seconds']:.0f} s)"
    )


if __name__ == "__main__":
    main()
