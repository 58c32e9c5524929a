"""Scored groups of npgym problems from Atropos's offline ``process`` mode, then a summary.

    pip install "npgym[atropos]"
    python examples/atropos_process.py --base-url http://localhost:9001/v1 \\
        --model Qwen/Qwen3-1.7B --tasks TSP,Knapsack --groups 32 --group-size 8
    python examples/atropos_process.py --smoke   # CPU, offline: a local fake model (CI runs it)

It runs ``python -m npgym.integrations.atropos process`` (Atropos's own command line) against an
OpenAI-compatible endpoint: items come from npgym's adaptive curriculum, every completion is
scored with npgym's reward and reported to the curriculum, and the groups are written as
Atropos's JSON lines (plus its HTML viewer). The summary reads them back: mean reward per group
and how many groups have scores that differ (the ones that carry a GRPO signal).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from statistics import mean
from typing import Any

SMOKE_ANSWERS = ["Answer: []", "I do not know."]
"""What the smoke mode's fake model answers (a feasible empty knapsack, and no answer)."""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://localhost:9001/v1")
    parser.add_argument("--model", default="Qwen/Qwen3-1.7B")
    parser.add_argument("--tokenizer", default=None, help="default: the model's")
    parser.add_argument("--tasks", default="TSP,Knapsack", help="comma-separated npgym tasks")
    parser.add_argument("--groups", type=int, default=32)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--out", default="out/atropos/groups.jsonl")
    parser.add_argument("--smoke", action="store_true", help="fake model, tiny tokenizer, CPU")
    return parser.parse_args()


class FakeModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint whose choices cycle through :data:`SMOKE_ANSWERS`."""

    def log_message(self, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        choices = [
            {
                "index": index,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": SMOKE_ANSWERS[index % len(SMOKE_ANSWERS)],
                },
            }
            for index in range(int(body.get("n") or 1))
        ]
        reply = {"id": "smoke", "object": "chat.completion", "created": 0, "model": "smoke"}
        data = json.dumps({**reply, "choices": choices}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def fake_model() -> Iterator[str]:
    """The fake endpoint on a free port of 127.0.0.1, its base URL inside the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def process(args: argparse.Namespace, base_url: str, tokenizer: str, out: Path) -> None:
    """Run Atropos's ``process`` command for npgym's env (wandb off)."""
    command = [sys.executable, "-m", "npgym.integrations.atropos", "process"]
    command += ["--env.tasks", args.tasks, "--env.tokenizer_name", tokenizer]
    command += ["--env.total_steps", str(args.groups), "--env.group_size", str(args.group_size)]
    command += ["--env.use_wandb", "False", "--env.data_path_to_save_groups", str(out)]
    command += ["--openai.base_url", base_url, "--openai.model_name", args.model]
    command += ["--openai.api_key", os.environ.get("OPENAI_API_KEY", "x")]
    environment = {**os.environ, "WANDB_MODE": "disabled"}
    subprocess.run(command, check=True, env=environment, stdout=subprocess.DEVNULL)


def summarise(out: Path) -> list[list[float]]:
    """Each written group's scores, with a line per group and an overall line."""
    groups = [json.loads(line)["scores"] for line in out.read_text().splitlines()]
    for index, scores in enumerate(groups):
        print(f"group {index}: mean reward {mean(scores):+.3f}  scores {scores}")
    varied = sum(len(set(scores)) > 1 for scores in groups)
    overall = mean(score for scores in groups for score in scores)
    print(f"{len(groups)} groups, mean reward {overall:+.3f}, {varied} with differing scores")
    return groups


def main() -> None:
    args = parse_args()
    if not args.smoke:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        process(args, args.base_url, args.tokenizer or args.model, out)
        summarise(out)
        return
    import npgym
    from npgym.integrations.smoke import tiny_tokenizer

    args.tasks, args.groups, args.group_size = "Knapsack", 2, 2
    with tempfile.TemporaryDirectory() as folder, fake_model() as base_url:
        task = npgym.get_task("Knapsack")
        texts = [task.prompt(task.generate(seed, tier="easy")) for seed in range(4)]
        tokenizer = Path(folder) / "tokenizer"
        tiny_tokenizer([*texts, *SMOKE_ANSWERS], vocab_size=400).save_pretrained(tokenizer)
        out = Path(folder) / "groups.jsonl"
        process(args, base_url, str(tokenizer), out)
        groups = summarise(out)
    print(f"smoke run done: {len(groups)} group(s) of {args.group_size}")


if __name__ == "__main__":
    main()
