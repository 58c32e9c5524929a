"""Learning shown: a small attention policy trained with REINFORCE on batched structured TSP-easy.

    python bench/reinforce_tsp.py            # ~ a few CPU-minutes; curve in bench/results/
    python bench/reinforce_tsp.py --smoke    # seconds: runs, shapes, JSON; no learning verdict

It needs PyTorch, which no npgym extra installs (the CPU build is enough, and pip cannot pick it
from an extra): ``pip install torch --index-url https://download.pytorch.org/whl/cpu``. Without
it the script says so in one line (:data:`NEEDS`) and exits 1.

The env is ``gym.make_vec("npgym/TSP-easy", vectorization_mode="vector_entry_point",
mode="structured", reward_mode="objective")`` (10 to 20 cities padded to 20; the reward is minus
the tour length). The policy embeds the city coordinates with a two-layer transformer encoder
(padded cities masked out) and, at each step, scores the legal cities against a query made of
the graph's mean embedding, the current city's and the start city's (the attention model's
decoder, reduced). The loss is REINFORCE with a greedy-rollout baseline: the advantage of a
sampled tour is its length minus the current policy's greedy tour on the same instances (the
env replays them from the same seeds).

Verdict, on a fixed held-out batch of :data:`HELD_OUT` instances (seeds from
:data:`HELD_OUT_SEED`): the trained policy's greedy mean tour length must be at most
:data:`MAX_RATIO` times the random policy's (uniform over legal moves), and the per-instance
improvement must clear :data:`MIN_Z` standard errors; and it must be at most
:data:`MAX_RATIO_TO_UNTRAINED` of the untrained policy's greedy mean. Otherwise it prints "no
learning" and exits 1. Work limits, not time, decide the run (``--iterations``, fixed seeds);
threads: one.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import npgym  # noqa: F401 (registers the ids)

NEEDS = (
    "bench/reinforce_tsp.py needs PyTorch: pip install torch "
    "--index-url https://download.pytorch.org/whl/cpu"
)
"""What to install, said in one line when torch is missing."""
try:
    import torch
    from torch import nn
except ModuleNotFoundError:
    raise SystemExit(NEEDS) from None

RESULTS = Path(__file__).resolve().parent / "results"
HELD_OUT = 512
HELD_OUT_SEED = 10**9
MAX_RATIO = 0.75
"""The trained greedy tour length may be at most this share of the random policy's."""
MIN_Z = 10.0
"""Standard errors by which the paired per-instance improvement must exceed zero."""
MAX_RATIO_TO_UNTRAINED = 0.9
"""The trained greedy tour length may be at most this share of the untrained policy's greedy
one (a random attention policy, decoded greedily, already beats random moves: training must
add to that)."""
GRID = 100.0
"""TSP's coordinate range (``TSPConfig.grid``): coordinates are scaled into [0, 1]."""


class AttentionPolicy(nn.Module):
    """Encoder over the cities, a one-query decoder over the legal ones."""

    def __init__(self, width: int = 64, heads: int = 4, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Linear(2, width)
        layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.query = nn.Linear(3 * width, width)
        self.key = nn.Linear(width, width)
        self.width = width

    def encode(self, observation: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """City embeddings and graph embeddings (mean over the real cities). The instance's
        arrays are the env's shared read-only buffers: converting them copies, as torch asks."""
        points = torch.tensor(observation["coordinates"], dtype=torch.float32) / GRID
        real = torch.tensor(observation["city_mask"], dtype=torch.bool)
        cities = self.encoder(self.embed(points), src_key_padding_mask=~real)
        weights = real.float().unsqueeze(-1)
        graph = (cities * weights).sum(1) / weights.sum(1)
        return cities, graph

    def logits(
        self, cities: torch.Tensor, graph: torch.Tensor, observation: dict[str, np.ndarray]
    ) -> torch.Tensor:
        """Scores of every city from the current one; illegal ones at minus infinity."""
        rows = torch.arange(cities.shape[0])
        current = torch.from_numpy(observation["current"][:, 0])
        context = torch.cat([graph, cities[rows, current], cities[:, 0]], dim=1)
        scores = torch.einsum("bd,bnd->bn", self.query(context), self.key(cities))
        scores = 10.0 * torch.tanh(scores / math.sqrt(self.width))
        legal = torch.from_numpy(observation["action_mask"]).bool()
        legal[~legal.any(1), 0] = True  # a finished env: its action is ignored (autoreset)
        return scores.masked_fill(~legal, -math.inf)


def make_env(batch: int) -> Any:
    return gym.make_vec(
        "npgym/TSP-easy",
        num_envs=batch,
        vectorization_mode="vector_entry_point",
        mode="structured",
        reward_mode="objective",
    )


def rollout(
    env: Any, policy: AttentionPolicy | None, seeds: list[int], how: str
) -> tuple[torch.Tensor, np.ndarray]:
    """One episode on each seed's instance: (sum of log-probabilities, tour lengths).

    ``how`` is ``"sample"``, ``"greedy"`` or ``"random"`` (uniform over legal moves, no policy).
    Envs that finish first wait through autoresets; their later moves do not count."""
    observation, _ = env.reset(seed=seeds)
    batch = len(seeds)
    log_probability = torch.zeros(batch)
    lengths = np.zeros(batch)
    done = np.zeros(batch, np.bool_)
    rng = np.random.default_rng(seeds[0])
    cities, graph = policy.encode(observation) if policy is not None else (None, None)
    while not done.all():
        if policy is None:
            mask = observation["action_mask"].astype(np.float64)
            actions = np.argmax(mask * rng.random(mask.shape), axis=1)
        else:
            logits = policy.logits(cities, graph, observation)  # type: ignore[arg-type]
            if how == "greedy":
                chosen = logits.argmax(1)
            else:
                distribution = torch.distributions.Categorical(logits=logits)
                chosen = distribution.sample()
                counted = torch.from_numpy(~done)
                log_probability = log_probability + distribution.log_prob(chosen) * counted
            actions = chosen.numpy()
        observation, reward, terminated, _, _ = env.step(actions)
        newly = terminated & ~done
        lengths[newly] = -reward[newly]
        done |= terminated
    return log_probability, lengths


def train(args: argparse.Namespace) -> dict[str, Any]:
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    policy = AttentionPolicy()
    optimiser = torch.optim.Adam(policy.parameters(), lr=args.lr)
    train_env, baseline_env = make_env(args.batch), make_env(args.batch)
    held_out_env = make_env(args.held_out)
    held_out = [HELD_OUT_SEED + index for index in range(args.held_out)]
    _, random_lengths = rollout(held_out_env, None, held_out, "random")
    curve: list[dict[str, float]] = []
    start = time.process_time()
    for iteration in range(args.iterations + 1):
        if iteration % args.eval_every == 0 or iteration == args.iterations:
            with torch.no_grad():
                _, greedy_lengths = rollout(held_out_env, policy, held_out, "greedy")
            curve.append(
                {
                    "iteration": iteration,
                    "cpu_seconds": time.process_time() - start,
                    "held_out_greedy_mean": float(greedy_lengths.mean()),
                }
            )
            print(
                f"iteration {iteration:4d}  cpu {curve[-1]['cpu_seconds']:7.1f}s  "
                f"held-out greedy mean {greedy_lengths.mean():8.1f}  "
                f"(random {random_lengths.mean():.1f})",
                flush=True,
            )
        if iteration == args.iterations:
            break
        seeds = [args.seed * 10**7 + iteration * args.batch + index for index in range(args.batch)]
        log_probability, lengths = rollout(train_env, policy, seeds, "sample")
        with torch.no_grad():
            _, baseline = rollout(baseline_env, policy, seeds, "greedy")
        advantage = torch.from_numpy((lengths - baseline) / GRID).float()
        loss = (advantage * log_probability).mean()
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimiser.step()
    return {
        "command": " ".join(["python", "bench/reinforce_tsp.py", *sys.argv[1:]]),
        "env": "npgym/TSP-easy (vector_entry_point, structured, reward_mode=objective)",
        "batch": args.batch,
        "iterations": args.iterations,
        "cpu_seconds": time.process_time() - start,
        "held_out": args.held_out,
        "random_mean": float(random_lengths.mean()),
        "untrained_greedy_mean": curve[0]["held_out_greedy_mean"],
        "trained_greedy_mean": float(greedy_lengths.mean()),
        "paired_improvement": (random_lengths - greedy_lengths).tolist(),
        "curve": curve,
    }


def verdict(result: dict[str, Any]) -> tuple[bool, str]:
    """Whether the trained policy beats the random one by the margin, and the line saying so."""
    improvement = np.asarray(result["paired_improvement"])
    z = improvement.mean() / (improvement.std(ddof=1) / math.sqrt(improvement.size))
    ratio = result["trained_greedy_mean"] / result["random_mean"]
    gain = result["trained_greedy_mean"] / result["untrained_greedy_mean"]
    learned = bool(ratio <= MAX_RATIO and z >= MIN_Z and gain <= MAX_RATIO_TO_UNTRAINED)
    line = (
        f"held-out mean tour length: random {result['random_mean']:.1f}, untrained greedy "
        f"{result['untrained_greedy_mean']:.1f}, trained greedy "
        f"{result['trained_greedy_mean']:.1f} (trained/random {ratio:.3f}, target <= "
        f"{MAX_RATIO}; paired z {z:.1f}, target >= {MIN_Z}; trained/untrained {gain:.3f}, "
        f"target <= {MAX_RATIO_TO_UNTRAINED})"
    )
    return learned, line


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 3.5))
    minutes = [point["cpu_seconds"] / 60 for point in result["curve"]]
    axis.plot(minutes, [point["held_out_greedy_mean"] for point in result["curve"]], marker="o")
    axis.axhline(result["random_mean"], color="grey", linestyle="--", label="random policy")
    axis.set_xlabel("CPU minutes")
    axis.set_ylabel("held-out mean tour length")
    axis.set_title(f"REINFORCE on npgym/TSP-easy, batch {result['batch']}")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=600)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--held-out", type=int, default=HELD_OUT)
    parser.add_argument("--eval-every", type=int, default=25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="folder for the JSON and PNG")
    parser.add_argument("--smoke", action="store_true", help="a few tiny iterations, no verdict")
    args = parser.parse_args(argv)
    if args.smoke:
        args.iterations, args.batch, args.held_out, args.eval_every = 2, 8, 16, 1
    out = args.out or (Path(tempfile.mkdtemp()) if args.smoke else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    result = train(args)
    learned, line = verdict(result)
    result["learned"] = learned
    (out / "reinforce_tsp.json").write_text(json.dumps(result, indent=1) + "\n")
    plot(result, out / "reinforce_tsp.png")
    print(line)
    print(f"wrote {out / 'reinforce_tsp.json'} and {out / 'reinforce_tsp.png'}")
    if args.smoke:
        assert len(result["curve"]) == args.iterations + 1
        assert len(result["paired_improvement"]) == args.held_out
        print("smoke run: ran, shapes and JSON checked (no learning verdict)")
        return 0
    print("learning" if learned else "no learning")
    return 0 if learned else 1


if __name__ == "__main__":
    sys.exit(main())
