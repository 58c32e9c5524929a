"""GRPO on npgym tasks with TRL, on the "strict" reward.

    pip install "npgym[trl]"   # plus a torch build for your machine
    python examples/trl/grpo.py --model Qwen/Qwen2.5-1.5B-Instruct --tasks TSP,Knapsack
    python examples/trl/grpo.py --model Qwen/Qwen2.5-1.5B-Instruct --multi-turn   # repair tool
    python examples/trl/grpo.py --model Qwen/Qwen2.5-1.5B-Instruct --stream       # fresh instances
    python examples/trl/grpo.py --smoke     # one step of a tiny local model on CPU (CI runs it)

The reward is npgym's "strict" preset: an answer no better than the task's zero-effort baseline
earns what an infeasible one earns, and malformed answers get graded format credit. Its three
parts (format, feasibility, optimality) and npgym's feasibility rate and mean ratio are logged.
"""

from __future__ import annotations

import argparse
import functools
import json
import tempfile
from pathlib import Path

REWARD = "strict"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="Qwen/Qwen2.5-1.5B-Instruct")
    parser.add_argument("--tasks", default=None, help="comma-separated (default: all ten)")
    parser.add_argument("--n", type=int, default=500, help="instances per task")
    parser.add_argument("--mix", default="easy:5,medium:4,hard:1")
    parser.add_argument("--multi-turn", action="store_true", help="verifier feedback as a tool")
    parser.add_argument("--stream", action="store_true", help="a fresh instance for every prompt")
    parser.add_argument("--base-model", action="store_true", help="plain-text prompts, no chat")
    parser.add_argument("--max-steps", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2, help="processes building the dataset")
    parser.add_argument("--output-dir", default="out/grpo-npgym")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny local model, two instances, one step, CPU"
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    import torch
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    import npgym
    from npgym.integrations.smoke import CHATML, save_tiny
    from npgym.integrations.trl import (
        NPGymEnvironment,
        make_dataset,
        make_iterable_dataset,
        make_reward,
        plain_prompt,
        reward_parts,
    )
    from npgym.multiturn import RepairConfig

    tasks = args.tasks.split(",") if args.tasks else None
    mix = {tier: float(w) for tier, w in (part.split(":") for part in args.mix.split(","))}
    if args.smoke:
        tasks, args.n, mix, args.workers = tasks or ["MaxClique"], 2, {"easy": 1.0}, 1
    chat = not args.base_model
    if args.stream:
        dataset = make_iterable_dataset(tasks, mix=mix)
    else:
        dataset = make_dataset(
            tasks, args.n, mix=mix, environment=args.multi_turn, workers=args.workers, chat=chat
        )
    model = args.model
    if args.smoke:
        rows = list(dataset.take(2)) if args.stream else list(dataset)
        texts = [plain_prompt(row["prompt"]) + row["instance"] for row in rows]
        for row in rows:
            task = npgym.get_task(row["task"])
            texts.append(task.format_answer(json.loads(row["reference"])["solution"]))
        folder = Path(tempfile.mkdtemp(prefix="npgym-tiny-"))
        template = qwen2_5_chat_template if args.multi_turn else CHATML  # tools need Qwen's
        model = str(save_tiny(texts, folder, chat_template=template))
    config = GRPOConfig(
        output_dir=args.output_dir,
        max_steps=1 if args.smoke else args.max_steps,
        per_device_train_batch_size=2 if args.smoke else 8,
        num_generations=2 if args.smoke else 8,
        max_completion_length=16 if args.smoke else 4096,
        learning_rate=1e-6,
        beta=0.001,
        logging_steps=1 if args.smoke else 5,
        use_cpu=args.smoke,
        bf16=not args.smoke and torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
        save_strategy="no" if args.smoke else "steps",
        report_to="none" if args.smoke else "all",
    )
    extra = {}
    if args.multi_turn:
        repair = RepairConfig(max_attempts=3, policy="best")
        extra["environment_factory"] = functools.partial(
            NPGymEnvironment, repair=repair, reward=REWARD
        )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=None if args.multi_turn else [make_reward(REWARD), *reward_parts(REWARD)],
        args=config,
        train_dataset=dataset,
        **extra,
    )
    trainer.train()
    if args.smoke:
        rewards = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]
        print(f"smoke run done: {len(rewards)} step(s), reward {rewards}")


if __name__ == "__main__":  # the dataset build starts worker processes, which re-import this file
    main()
