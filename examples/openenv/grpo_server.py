"""GRPO with TRL against npgym OpenEnv servers (one trainer, N environment servers).

Start one server per machine (or several on one), then point the trainer at all of them. A
server reachable from other machines needs a token, which the trainer sends:

    export NPGYM_SERVE_TOKEN=$(python -c "import secrets; print(secrets.token_urlsafe(24))")
    npgym serve npgym/TSP-hard --host 0.0.0.0 --port 8000 --max-attempts 3     # on each env host
    python examples/openenv/grpo_server.py --model Qwen/Qwen2.5-1.5B-Instruct \\
        --servers http://env1:8000,http://env2:8000   # same NPGYM_SERVE_TOKEN
    python examples/openenv/grpo_server.py --smoke   # starts a local server, one CPU step (CI)

Each rollout's environment (TRL's ``environment_factory``) connects to one server round robin,
resets it with the row's ``seed``, and gives the model the verifier as a ``submit_solution``
tool; the episode reward comes from the server (the best checked answer).
"""

from __future__ import annotations

import argparse
import functools
import tempfile
from pathlib import Path


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="Qwen/Qwen2.5-1.5B-Instruct")
    parser.add_argument("--servers", default="http://127.0.0.1:8000", help="comma-separated URLs")
    parser.add_argument("--episodes", type=int, default=2000, help="dataset rows (seeds)")
    parser.add_argument("--max-steps", type=int, default=500)
    parser.add_argument("--output-dir", default="out/grpo-npgym-openenv")
    parser.add_argument(
        "--smoke", action="store_true", help="local server, tiny local model, one step, CPU"
    )
    return parser.parse_args()


def train(args: argparse.Namespace, urls: list[str]) -> None:
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    from npgym.integrations.openenv import NPGymServerEnvironment
    from npgym.integrations.smoke import save_tiny

    instruction = [{"role": "user", "content": "Solve the following optimisation problem."}]
    episodes = 2 if args.smoke else args.episodes
    dataset = Dataset.from_list([{"prompt": instruction, "seed": seed} for seed in range(episodes)])
    model = args.model
    if args.smoke:
        texts = [instruction[0]["content"], "Answer: [0, 1, 2]", "submit_solution"]
        folder = Path(tempfile.mkdtemp(prefix="npgym-tiny-"))
        model = str(save_tiny(texts, folder, chat_template=qwen2_5_chat_template))
    config = GRPOConfig(
        output_dir=args.output_dir,
        max_steps=1 if args.smoke else args.max_steps,
        per_device_train_batch_size=2 if args.smoke else 8,
        num_generations=2 if args.smoke else 8,
        max_completion_length=16 if args.smoke else 4096,
        learning_rate=1e-6,
        logging_steps=1 if args.smoke else 5,
        use_cpu=args.smoke,
        bf16=not args.smoke and torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
        save_strategy="no" if args.smoke else "steps",
        report_to="none" if args.smoke else "all",
    )
    trainer = GRPOTrainer(
        model=model,
        args=config,
        train_dataset=dataset,
        environment_factory=functools.partial(NPGymServerEnvironment, urls),
    )
    trainer.train()
    if args.smoke:
        rewards = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]
        print(f"smoke run done: {len(rewards)} step(s) against {urls[0]}, reward {rewards}")


def main() -> None:
    args = parse_args()
    if not args.smoke:
        train(args, args.servers.split(","))
        return
    from npgym.integrations.openenv import local_server

    options = ["--max-attempts", "2", "--heuristic-reference"]
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        with local_server("npgym/Knapsack-easy", options, log=log) as (url, _):
            train(args, [url])


if __name__ == "__main__":
    main()
