"""Steps per CPU-second of batched TSP envs: npgym's vector env against gymnasium's sync vector env
over the same npgym envs, rl4co's ``TSPEnv`` and jumanji's ``TSP``, on CPU, in one run.

    python bench/env_throughput.py            # B = 1, 256, 1024; 20 cities
    python bench/env_throughput.py --batches 1 256 4096 --cities 50

Every env plays random legal moves (sampled from its action mask by the same rule in each
library's own array type) through whole episodes, resets included, on instances of ``--cities``
cities (npgym: ``overrides={"n_min": N, "n_max": N}``; rl4co ``num_loc``; jumanji
``num_cities``). npgym's envs use ``reward_mode="objective"``: minus the tour length on the last
step and no reference solve, the reward rl4co and jumanji give. rl4co's reward is its
``get_reward`` at each episode's end, as its rollouts compute it. A step of a batch counts B
env-steps. Time is process CPU time (all threads), after one warm-up episode (numba and jax
compile). A library that cannot be imported shows as 'not installed'.

Targets (exit 1 when missed): at B = 256, npgym's vector env makes at least
:data:`SYNC_RATIO_TARGET` times the env-steps of gymnasium's sync vector env over the same npgym
envs, and at least as many as rl4co (a missing rl4co is a miss: the target cannot be checked).

``--every-task`` measures instead every task that declares a batched env, at its medium tier:
npgym's vector env (copied observations) against gymnasium's sync vector env over the same
single envs at B = 256, both in ``reward_mode="objective"`` on random legal moves, every step
counted (autoreset steps included, on both sides); exit 1 when one is below
:data:`SYNC_RATIO_TARGET`::

    python bench/env_throughput.py --every-task
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

SYNC_RATIO_TARGET = 10.0
TARGET_BATCH = 256
ENV_STEPS_PER_MEASURE = 200_000
"""Env-steps (B per batched step) each measurement plays, at least one episode; the sync env,
whose steps cost most, plays a tenth."""

Measure = Callable[[int, int, int], float]
"""``(batch, cities, env_steps) -> env-steps per CPU second``."""


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One random legal action per row of a 0/1 mask (row 0 when none is legal)."""
    return np.argmax(mask * rng.random(mask.shape), axis=1)


def _make_vec(env_id: str, batch: int, vectorization_mode: str, **options: Any) -> Any:
    """``batch`` structured npgym envs of ``env_id`` in ``reward_mode="objective"``, batched by
    ``vectorization_mode`` (``"vector_entry_point"``: npgym's vector env, ``"sync"``:
    gymnasium's sync env of single envs)."""
    import gymnasium as gym

    import npgym  # noqa: F401 (registers the ids)

    return gym.make_vec(
        env_id,
        num_envs=batch,
        vectorization_mode=vectorization_mode,
        mode="structured",
        reward_mode="objective",
        **options,
    )


def _random_play_seconds(env: Any, warm_up: int, steps: int) -> float:
    """CPU seconds of ``steps`` random legal steps of a batched env, after a reset (seed 0) and
    ``warm_up`` untimed steps."""
    rng = np.random.default_rng(0)
    observation, _ = env.reset(seed=0)
    for _ in range(warm_up):
        observation, *_ = env.step(random_legal(observation["action_mask"], rng))
    start = time.process_time()
    for _ in range(steps):
        observation, *_ = env.step(random_legal(observation["action_mask"], rng))
    return time.process_time() - start


def npgym_vector(copy: bool) -> Measure:
    def measure(batch: int, cities: int, env_steps: int) -> float:
        overrides = {"n_min": cities, "n_max": cities}
        env = _make_vec(
            "npgym/TSP-easy", batch, "vector_entry_point", overrides=overrides, copy=copy
        )
        return _play_tsp(env, batch, cities, env_steps)

    return measure


def gymnasium_sync(batch: int, cities: int, env_steps: int) -> float:
    overrides = {"n_min": cities, "n_max": cities}
    env = _make_vec("npgym/TSP-easy", batch, "sync", overrides=overrides)
    return _play_tsp(env, batch, cities, max(env_steps // 10, batch * cities))


def _play_tsp(env: Any, batch: int, cities: int, env_steps: int) -> float:
    steps = max(env_steps // batch, cities + 1)
    seconds = _random_play_seconds(env, cities + 1, steps)  # a warm-up episode first
    # an episode is cities - 1 moves (the tour starts at city 0) and one autoreset step: only
    # the moves count, as rl4co's and jumanji's resets are not counted as steps either
    return batch * steps * (cities - 1) / cities / seconds


def rl4co(batch: int, cities: int, env_steps: int) -> float:
    import torch
    from rl4co.envs import TSPEnv

    torch.manual_seed(0)
    env = TSPEnv(generator_params={"num_loc": cities})

    def episode() -> int:
        td = env.reset(batch_size=[batch])
        actions = []
        for _ in range(cities):
            mask = td["action_mask"].float()
            action = torch.argmax(mask * torch.rand(mask.shape), dim=1)
            td.set("action", action)
            td = env.step(td)["next"]
            actions.append(action)
        env.get_reward(td, torch.stack(actions, dim=1))
        return cities

    episode()
    episodes = max(1, env_steps // (batch * cities))
    start = time.process_time()
    steps = sum(episode() for _ in range(episodes))
    return batch * steps / (time.process_time() - start)


def jumanji(batch: int, cities: int, env_steps: int) -> float:
    import jax
    import jax.numpy as jnp
    from jumanji.environments import TSP
    from jumanji.environments.routing.tsp.generator import UniformGenerator

    env = TSP(generator=UniformGenerator(num_cities=cities))
    reset = jax.jit(jax.vmap(env.reset))
    step = jax.jit(jax.vmap(env.step))

    @jax.jit
    def choose(key: jax.Array, mask: jax.Array) -> jax.Array:
        return jnp.argmax(mask * jax.random.uniform(key, mask.shape), axis=1)

    key = jax.random.PRNGKey(0)

    def episode(key: jax.Array) -> int:
        key, reset_key = jax.random.split(key)
        state, timestep = reset(jax.random.split(reset_key, batch))
        moves = 0
        while not bool(timestep.last().all()):
            key, action_key = jax.random.split(key)
            state, timestep = step(state, choose(action_key, timestep.observation.action_mask))
            moves += 1
        jax.block_until_ready(timestep.reward)
        return moves

    episode(key)
    episodes = max(1, env_steps // (batch * cities))
    start = time.process_time()
    steps = sum(episode(jax.random.PRNGKey(index + 1)) for index in range(episodes))
    return batch * steps / (time.process_time() - start)


KINDS: dict[str, Measure] = {
    "npgym vector (copy)": npgym_vector(copy=True),
    "npgym vector (no copy)": npgym_vector(copy=False),
    "gymnasium sync (npgym)": gymnasium_sync,
    "rl4co TSPEnv": rl4co,
    "jumanji TSP": jumanji,
}
MODULES = {"rl4co TSPEnv": "rl4co", "jumanji TSP": "jumanji"}


def installed(kind: str) -> bool:
    """Whether the library behind ``kind`` imports."""
    module = MODULES.get(kind)
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def task_rate(task: str, mode: str, env_steps: int) -> float:
    """Env-steps per CPU second of ``task``'s medium tier at B = 256, batched (``mode`` is
    ``"vector_entry_point"``) or gymnasium's sync env of single envs (``"sync"``), after 100
    warm-up steps."""
    env = _make_vec(f"npgym/{task}-medium", TARGET_BATCH, mode)
    steps = max(env_steps // TARGET_BATCH, 1)
    return TARGET_BATCH * steps / _random_play_seconds(env, 100, steps)


def every_task(env_steps: int) -> int:
    """Print each batched task's vector/sync ratio at B = 256; 1 when one misses the target."""
    from npgym import testing

    print(f"{'task (medium, B=256)':<22}{'vector':>14}{'sync':>12}{'ratio':>9}")
    missed = []
    for task in testing.tasks_declaring("vector"):
        ours = task_rate(task, "vector_entry_point", env_steps)
        theirs = task_rate(task, "sync", max(env_steps // 20, TARGET_BATCH))
        ratio = ours / theirs
        verdict = "" if ratio >= SYNC_RATIO_TARGET else "  MISSED"
        print(f"{task:<22}{ours:>14,.0f}{theirs:>12,.0f}{ratio:>8.1f}x{verdict}")
        if ratio < SYNC_RATIO_TARGET:
            missed.append(task)
    print(
        f"target: vector >= {SYNC_RATIO_TARGET}x sync for every task: "
        + (f"MISSED by {', '.join(missed)}" if missed else "ok")
    )
    return 1 if missed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, TARGET_BATCH, 1024])
    parser.add_argument("--cities", type=int, default=20)
    parser.add_argument("--env-steps", type=int, default=ENV_STEPS_PER_MEASURE)
    parser.add_argument(
        "--every-task", action="store_true", help="every batched task against the sync env"
    )
    args = parser.parse_args(argv)
    if args.every_task:
        return every_task(args.env_steps)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    rates: dict[tuple[str, int], float | None] = {}
    for kind, measure in KINDS.items():
        for batch in args.batches:
            rates[kind, batch] = (
                measure(batch, args.cities, args.env_steps) if installed(kind) else None
            )
    header = f"{'env (TSP, ' + str(args.cities) + ' cities)':<26}" + "".join(
        f"{'B=' + str(batch):>14}" for batch in args.batches
    )
    print(header)
    for kind in KINDS:
        cells = "".join(
            f"{'not installed' if rates[kind, b] is None else f'{rates[kind, b]:,.0f}':>14}"
            for b in args.batches
        )
        print(f"{kind:<26}{cells}")
    return _verdict(rates, args.batches)


def _verdict(rates: dict[tuple[str, int], float | None], batches: list[int]) -> int:
    """Print the ratios at B = 256 and whether the targets hold (1 when one is missed)."""
    if TARGET_BATCH not in batches:
        print(f"targets are checked at B={TARGET_BATCH}, which was not measured")
        return 1
    ours = rates["npgym vector (copy)", TARGET_BATCH]
    assert ours is not None
    missed = []
    for kind, target in (("gymnasium sync (npgym)", SYNC_RATIO_TARGET), ("rl4co TSPEnv", 1.0)):
        theirs = rates[kind, TARGET_BATCH]
        if theirs is None:
            print(f"B={TARGET_BATCH}: {kind} not installed: target >= {target}x cannot be checked")
            missed.append(kind)
            continue
        ratio = ours / theirs
        verdict = "ok" if ratio >= target else "MISSED"
        ratio_text = f"npgym vector / {kind} = {ratio:.2f}x (target >= {target}x)"
        print(f"B={TARGET_BATCH}: {ratio_text} {verdict}")
        if ratio < target:
            missed.append(kind)
    jumanji_rate = rates["jumanji TSP", TARGET_BATCH]
    if jumanji_rate is not None:
        print(
            f"B={TARGET_BATCH}: npgym vector / jumanji TSP = {ours / jumanji_rate:.2f}x (no target)"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
