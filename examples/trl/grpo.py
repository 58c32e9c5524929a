"""GRPO on npgym tasks with TRL.

    pip install "npgym[trl]"   # plus a torch build for your machine
    python examples/trl/grpo.py --model Qwen/Qwen2.5-1.5B-Instruct --tasks TSP,Knapsack
    python examples/trl/grpo.py --model Qwen/Qwen2.5-1.5B-Instruct --multi-turn   # repair tool
    python examples/trl/grpo.py --model Qwen/Qwen2.5-1.5B-Instruct --stream       # fresh instances

The rewards are logged as their three parts (format, feasibility, optimality) plus npgym's
feasibility rate and mean ratio.
"""

import argparse
import functools

from trl import GRPOConfig, GRPOTrainer

from npgym.integrations.trl import (
    NPGymEnvironment,
    make_dataset,
    make_iterable_dataset,
    reward_parts,
)
from npgym.multiturn import RepairConfig

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--model", default="Qwen/Qwen2.5-1.5B-Instruct")
parser.add_argument("--tasks", default=None, help="comma-separated (default: all ten)")
parser.add_argument("--n", type=int, default=500, help="instances per task")
parser.add_argument("--mix", default="easy:5,medium:4,hard:1")
parser.add_argument("--multi-turn", action="store_true", help="verifier feedback as a tool")
parser.add_argument("--stream", action="store_true", help="a fresh instance for every prompt")
parser.add_argument("--max-steps", type=int, default=500)
parser.add_argument("--output-dir", default="out/grpo-npgym")
args = parser.parse_args()

tasks = args.tasks.split(",") if args.tasks else None
mix = {tier: float(weight) for tier, weight in (part.split(":") for part in args.mix.split(","))}
if args.stream:
    dataset = make_iterable_dataset(tasks, mix=mix)
else:
    dataset = make_dataset(tasks, args.n, mix=mix, environment=args.multi_turn, workers=2)

config = GRPOConfig(
    output_dir=args.output_dir,
    max_steps=args.max_steps,
    per_device_train_batch_size=8,
    num_generations=8,
    max_completion_length=4096,
    learning_rate=1e-6,
    beta=0.001,
    logging_steps=5,
    bf16=True,
)
extra = {}
if args.multi_turn:
    repair = RepairConfig(max_attempts=3, policy="best")
    extra["environment_factory"] = functools.partial(NPGymEnvironment, repair=repair)
trainer = GRPOTrainer(
    model=args.model,
    reward_funcs=None if args.multi_turn else reward_parts(),
    args=config,
    train_dataset=dataset,
    **extra,
)
trainer.train()
