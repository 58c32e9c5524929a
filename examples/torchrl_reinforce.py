"""REINFORCE on npgym/TSP-easy through TorchRL: ``env.rollout`` drives bench/reinforce_tsp.py's
attention policy, wrapped as a TorchRL ``ProbabilisticActor``.

    python examples/torchrl_reinforce.py            # 60 iterations of 64 tours, ~30 CPU-seconds
    python examples/torchrl_reinforce.py --smoke    # seconds: two tiny iterations

Needs ``pip install 'npgym[torchrl]'`` (its own venv: docs/torchrl.md). Each iteration plays one
episode in each of the batch's envs (``rollout(..., break_when_all_done=True)``: finished tours
wait, done, until every tour is finished; TorchRL repeats their finishing step meanwhile), sums
the log-probabilities of the moves each tour really made and takes a REINFORCE step with the
batch's mean tour length as the baseline.
At the end the greedy policy (the most likely legal city) and random legal moves each play the
same held-out instances; the script prints both mean tour lengths and exits 1 unless the greedy
one is at most :data:`MAX_RATIO` of the random one (the smoke run gives no verdict).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import torch
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.modules import MaskedCategorical, ProbabilisticActor

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is in the repository only
from bench.reinforce_tsp import GRID, AttentionPolicy
from npgym.integrations.torchrl import NPGymTorchRLEnv

KEYS = ["coordinates", "city_mask", "current", "action_mask"]
"""The observation keys the attention policy reads."""
HELD_OUT_SEED = 10**9
MAX_RATIO = 0.75
"""The trained greedy mean tour length may be at most this share of random legal moves' one."""


class Logits(nn.Module):
    """bench/reinforce_tsp.py's policy on TensorDict keys: the logits of every city."""

    def __init__(self, policy: AttentionPolicy) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        observation = {key: tensor.numpy() for key, tensor in zip(KEYS, tensors, strict=True)}
        cities, graph = self.policy.encode(observation)
        return self.policy.logits(cities, graph, observation)


def actor(policy: AttentionPolicy) -> ProbabilisticActor:
    """A TorchRL actor sampling legal cities (``action_mask``) and returning log-probabilities."""
    module = TensorDictModule(Logits(policy), in_keys=KEYS, out_keys=["logits"])
    return ProbabilisticActor(
        module,
        in_keys={"logits": "logits", "mask": "action_mask"},
        out_keys=["action"],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )


def episode(env: NPGymTorchRLEnv, policy: Any, seed: int) -> TensorDictBase:
    """One tour in each env, from instances ``seed + i``."""
    env.set_seed(seed)
    return env.rollout(env.limits["n"] + 1, policy, break_when_all_done=True)


def played(rollout: TensorDictBase) -> torch.Tensor:
    """Which steps each env really played: up to its finishing step. (With
    ``break_when_all_done`` TorchRL fills a finished env's later steps with copies of its
    finishing step, reward and log-probability included.)"""
    finished = rollout["next", "done"].squeeze(-1).long()
    return (finished.cumsum(-1) - finished) == 0


def tour_lengths(rollout: TensorDictBase) -> torch.Tensor:
    """Each env's tour length: minus the reward of its finishing step."""
    return -(rollout["next", "reward"].squeeze(-1) * played(rollout)).sum(-1)


def train(iterations: int, batch: int, held_out: int, seed: int) -> dict[str, float]:
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    env = NPGymTorchRLEnv("npgym/TSP-easy", num_envs=batch, reward_mode="objective")
    policy = AttentionPolicy()
    sampler = actor(policy)
    optimiser = torch.optim.Adam(policy.parameters(), lr=1e-3)
    losses = []
    for iteration in range(iterations):
        with set_exploration_type(ExplorationType.RANDOM):  # sample (the actor's default: mode)
            rollout = episode(env, sampler, seed * 10**6 + iteration * batch)
        log_probability = (rollout["action_log_prob"] * played(rollout)).sum(-1)
        lengths = tour_lengths(rollout).detach()
        advantage = (lengths - lengths.mean()) / GRID
        loss = (advantage * log_probability).mean()
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimiser.step()
        losses.append(loss.item())
        print(f"iteration {iteration:3d}  mean tour length {lengths.mean():7.1f}  loss {loss:8.4f}")
    tester = NPGymTorchRLEnv("npgym/TSP-easy", num_envs=held_out, reward_mode="objective")
    with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
        greedy = tour_lengths(episode(tester, sampler, HELD_OUT_SEED)).mean()
    random = tour_lengths(episode(tester, None, HELD_OUT_SEED)).mean()
    print(f"held-out mean tour length: greedy policy {greedy:.1f}, random legal moves {random:.1f}")
    return {"greedy": float(greedy), "random": float(random), "last_loss": losses[-1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--held-out", type=int, default=128)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="two tiny iterations")
    args = parser.parse_args(argv)
    if args.smoke:
        args.iterations, args.batch, args.held_out = 2, 4, 8
    result = train(args.iterations, args.batch, args.held_out, args.seed)
    if args.smoke:
        print(f"smoke run done: {args.iterations} iterations, last loss {result['last_loss']:.4f}")
        return 0
    learned = result["greedy"] <= MAX_RATIO * result["random"]
    print(
        f"greedy/random {result['greedy'] / result['random']:.3f}, target <= {MAX_RATIO}: "
        + ("learning" if learned else "no learning")
    )
    return 0 if learned else 1


if __name__ == "__main__":
    sys.exit(main())
