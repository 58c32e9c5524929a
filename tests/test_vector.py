"""The batched structured env (``npgym.vector``): step for step the same as gymnasium's
SyncVectorEnv over single structured envs, autoreset, seeding, bad actions and refusals."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import testing
from npgym.capabilities import (
    MalformedCapabilityError,
    check_declarations,
)
from npgym.structured import InvalidActionError, StructuredEnv, episode_type
from npgym.tasks.tsp import TSPTask
from npgym.tasks.tsp.vector import TSPBatch
from npgym.vector import MAX_NUM_ENVS, VectorStructuredEnv, as_tensors, batch_type
from tests.extras import need

BATCHED = testing.tasks_declaring("vector")


def make_vector(task: str, tier: str, num_envs: int, **options: Any) -> Any:
    return gym.make_vec(
        f"npgym/{task}-{tier}",
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        mode="structured",
        **options,
    )


def make_sync(task: str, tier: str, num_envs: int, **options: Any) -> gym.vector.SyncVectorEnv:
    return gym.vector.SyncVectorEnv(
        [lambda: StructuredEnv(task, tier, **options) for _ in range(num_envs)]
    )


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row (0 where none is legal: that env is resetting)."""
    return np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask])


def test_every_task_with_a_structured_episode_is_batched() -> None:
    assert testing.tasks_declaring("episode") == BATCHED
    assert len(BATCHED) == 10
    for task in BATCHED:
        assert batch_type(task).episode is episode_type(task)


SLOW_STEP_BY_STEP = {"MeetingScheduling", "MinBisection", "HamiltonianCycle"}
"""Tasks whose step-by-step comparison takes 5 to 8 CPU-seconds: it runs in the slow suite."""


@pytest.mark.parametrize(
    "task",
    [pytest.param(t, marks=pytest.mark.slow) if t in SLOW_STEP_BY_STEP else t for t in BATCHED],
)
@settings(max_examples=3)
@given(
    seed=st.integers(0, 2**32),
    num_envs=st.integers(1, 4),
    reward_mode=st.sampled_from(["objective", "task"]),
    policy_seed=st.integers(0, 2**16),
)
def test_vector_env_equals_single_envs_step_by_step(
    task: str, seed: int, num_envs: int, reward_mode: str, policy_seed: int
) -> None:
    """Same observations, rewards, terminations as B single envs, over several episodes
    (autoresets included), on random legal moves."""
    options = {"reward_mode": reward_mode, "exact_reference": False}
    vector = make_vector(task, "easy", num_envs, **options)
    sync = make_sync(task, "easy", num_envs, **options)
    assert vector.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
    assert vector.single_observation_space == sync.single_observation_space
    assert vector.single_action_space == sync.single_action_space
    ours, _ = vector.reset(seed=seed)
    theirs, _ = sync.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    finished = 0
    for _ in range(50):
        assert ours.keys() == theirs.keys()
        for key in theirs:
            np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
        assert vector.observation_space.contains(ours)
        actions = random_legal(theirs["action_mask"], rng)
        ours, reward, terminated, truncated, _ = vector.step(actions)
        theirs, their_reward, their_terminated, their_truncated, _ = sync.step(actions)
        np.testing.assert_allclose(reward, their_reward, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(terminated, their_terminated)
        np.testing.assert_array_equal(truncated, their_truncated)
        finished += int(terminated.sum())
    assert finished >= num_envs  # every env finished at least one episode (easy: <= 20 moves)


@pytest.mark.parametrize("task", BATCHED)
@given(seed=st.integers(0, 2**63 - 2), tier=st.sampled_from(["easy", "hard", "benchmark"]))
@settings(max_examples=5)
def test_first_instances_are_the_single_envs_instances(task: str, seed: int, tier: str) -> None:
    """reset(seed=s): env i shows the first observation of a single env reset with s + i, that
    is of task.generate(s + i), through the compiled draws (objective mode) where a task has
    them."""
    vector = VectorStructuredEnv(task, tier, 2, reward_mode="objective")
    observation, _ = vector.reset(seed=seed)
    for index in range(2):
        single = StructuredEnv(task, tier, reward_mode="objective")
        theirs, _ = single.reset(seed=seed + index)
        for key, value in theirs.items():
            np.testing.assert_array_equal(observation[key][index], value, err_msg=key)


def test_next_step_autoreset_ignores_the_action_and_pays_nothing() -> None:
    vector = VectorStructuredEnv(
        "TSP", "easy", 2, reward_mode="objective", overrides={"n_min": 3, "n_max": 3}
    )
    observation, _ = vector.reset(seed=3)
    for _ in range(2):  # 3 cities: two moves end the tour
        observation, reward, terminated, _, info = vector.step(observation["action_mask"].argmax(1))
    assert terminated.all()
    assert (reward < 0).all()
    np.testing.assert_allclose(-reward, info["objective"])
    assert not observation["action_mask"].any()
    observation, reward, terminated, _, _ = vector.step(np.array([99, -5]))  # ignored
    assert not terminated.any()
    assert not reward.any()
    assert (observation["action_mask"].sum(1) == 2).all()
    assert (observation["tour"][:, 0] == 0).all()


def test_reset_mask_resets_only_the_chosen_envs() -> None:
    vector = VectorStructuredEnv("TSP", "easy", 3, reward_mode="objective")
    observation, _ = vector.reset(seed=0)
    observation, *_ = vector.step(observation["action_mask"].argmax(1))
    moved = observation["tour"].copy()
    observation, _ = vector.reset(options={"reset_mask": np.array([True, False, False])})
    assert (observation["tour"][0, 1:] == -1).all()
    np.testing.assert_array_equal(observation["tour"][1:], moved[1:])


def test_same_seed_same_batch_and_unseeded_streams_differ() -> None:
    first = VectorStructuredEnv("TSP", "easy", 4, reward_mode="objective")
    second = VectorStructuredEnv("TSP", "easy", 4, reward_mode="objective")
    one, _ = first.reset(seed=11)
    two, _ = second.reset(seed=11)
    np.testing.assert_array_equal(one["distances"], two["distances"])
    assert len({row.tobytes() for row in one["distances"]}) == 4


def test_illegal_moves_are_penalised_with_the_task_reward() -> None:
    vector = VectorStructuredEnv("TSP", "easy", 2, exact_reference=False)
    observation, _ = vector.reset(seed=5)
    legal = observation["action_mask"].argmax(1)
    observation, reward, terminated, _, info = vector.step(np.array([0, legal[1]]))  # 0: visited
    assert reward[0] == -2.5
    assert reward[1] == 0.0
    assert terminated.tolist() == [True, False]
    assert info["invalid_action"].tolist() == [True, False]
    assert not observation["action_mask"][0].any()


@pytest.mark.parametrize(
    "options", [{"reward_mode": "objective"}, {"invalid_action": "raise", "exact_reference": False}]
)
def test_illegal_moves_raise_and_the_batch_must_reset(options: dict[str, Any]) -> None:
    vector = VectorStructuredEnv("TSP", "easy", 2, **options)
    vector.reset(seed=5)
    with pytest.raises(InvalidActionError, match="env 1: action 500"):
        vector.step(np.array([1, 500]))
    with pytest.raises(RuntimeError, match="reset"):
        vector.step(np.array([1, 1]))
    observation, _ = vector.reset(seed=5)
    vector.step(observation["action_mask"].argmax(1))


@pytest.mark.parametrize("actions", [[1], [1.0, 2.0], [[1, 2]], ["1", "2"]])
def test_malformed_action_batches_are_refused(actions: Any) -> None:
    vector = VectorStructuredEnv("TSP", "easy", 2, reward_mode="objective")
    vector.reset(seed=0)
    with pytest.raises(InvalidActionError, match="actions must be 2 integers"):
        vector.step(np.array(actions))


def test_step_before_reset_is_refused() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        VectorStructuredEnv("TSP", "easy", 1).step(np.array([1]))


@pytest.mark.parametrize("num_envs", [0, MAX_NUM_ENVS + 1, True, 2.0])
def test_batch_sizes_outside_the_limit_are_refused(num_envs: Any) -> None:
    with pytest.raises(ValueError, match="num_envs"):
        VectorStructuredEnv("TSP", "easy", num_envs)


def test_the_largest_batch_is_accepted() -> None:
    """The limit itself (3 cities keep its buffers small)."""
    vector = VectorStructuredEnv("TSP", "easy", MAX_NUM_ENVS, overrides={"n_min": 3, "n_max": 3})
    assert vector.observation_space["distances"].shape == (MAX_NUM_ENVS, 3, 3)


def test_families_have_no_vector_entry_point_and_text_mode_stays_sync() -> None:
    with pytest.raises(gym.error.Error, match="vector entry point"):
        make_vector("Invert-TSP", "easy", 2)
    text = gym.make_vec("npgym/TSP-easy", num_envs=2)
    assert isinstance(text, gym.vector.SyncVectorEnv)
    observations, _ = text.reset(seed=0)
    assert len(observations) == 2


def test_copy_false_hands_out_the_live_buffers() -> None:
    vector = VectorStructuredEnv("TSP", "easy", 2, reward_mode="objective", copy=False)
    observation, _ = vector.reset(seed=0)
    before = observation["visited"].sum()
    vector.step(observation["action_mask"].argmax(1))
    assert observation["visited"].sum() == before + 2  # moved in place, no copy
    copied = VectorStructuredEnv("TSP", "easy", 2, reward_mode="objective")
    fresh, _ = copied.reset(seed=0)
    copied.step(fresh["action_mask"].argmax(1))
    assert fresh["visited"].sum() == 2  # a copy does not move


def test_tensors_share_the_live_buffers() -> None:
    need("torch")
    vector = VectorStructuredEnv("TSP", "easy", 2, reward_mode="objective", copy=False)
    observation, _ = vector.reset(seed=0)
    tensors = as_tensors(observation)
    before = tensors["visited"].sum().item()
    vector.step(observation["action_mask"].argmax(1))
    assert tensors["visited"].sum().item() == before + 2  # torch.from_numpy: no copy


def test_a_vector_that_is_not_a_batched_episode_is_malformed() -> None:
    class Broken(TSPTask):
        vector = "npgym.tasks.tsp.structured:TSPEpisode"

    with pytest.raises(
        MalformedCapabilityError, match=r"vector must be an npgym\.vector\.BatchedEpisode subclass"
    ):
        check_declarations(Broken)


def test_a_vector_batching_another_episode_is_refused() -> None:
    class Mismatched(TSPTask):
        vector = "npgym.tasks.knapsack.vector:KnapsackBatch"

    with pytest.raises(ValueError, match="batches KnapsackEpisode, not its structured episode"):
        VectorStructuredEnv(Mismatched(), "easy", 2)


@pytest.mark.parametrize("task", BATCHED)
def test_static_keys_are_written_only_by_loads(task: str) -> None:
    vector = VectorStructuredEnv(task, "easy", 4, reward_mode="objective")
    observation, _ = vector.reset(seed=3)
    rng = np.random.default_rng(0)
    static = vector.batch_class.static_keys
    assert static, f"{task} declares no static keys: every step would copy its whole instance"
    for _ in range(40):
        before = {key: vector.batch.buffers[key].copy() for key in static}
        active = ~vector._autoreset & ~vector._done
        actions = np.argmax(
            observation["action_mask"] * rng.random(observation["action_mask"].shape), 1
        )
        vector.batch.step(actions.astype(np.int64), active)
        for key in static:
            assert np.array_equal(vector.batch.buffers[key], before[key]), (task, key)
        observation = vector.batch.observation()


def test_copied_static_keys_are_shared_read_only_until_a_load() -> None:
    vector = VectorStructuredEnv("TSP", "easy", 2, reward_mode="objective")
    first, _ = vector.reset(seed=0)
    second, *_ = vector.step(first["action_mask"].argmax(1))
    assert second["distances"] is first["distances"]  # not copied again by a step
    assert second["visited"] is not first["visited"]
    with pytest.raises(ValueError, match="read-only"):
        first["distances"][0, 0, 1] = 7
    held = first["distances"].copy()
    fresh, _ = vector.reset(seed=100)
    assert fresh["distances"] is not first["distances"]
    assert np.array_equal(first["distances"], held)  # what was handed out never changes
    assert not np.array_equal(fresh["distances"], held)


def test_static_keys_must_name_observation_keys() -> None:
    class Misnamed(TSPBatch):
        static_keys = ("distance",)

    class Task(TSPTask):
        vector = Misnamed

    with pytest.raises(ValueError, match=r"static_keys names no observation key: \['distance'\]"):
        VectorStructuredEnv(Task(), "easy", 2)


_DRAW_BATCHES = """
import sys, gymnasium as gym, numpy as np, npgym
for name in sys.argv[1:]:
    env = gym.make_vec(f"npgym/{name}-easy", num_envs=4, vectorization_mode="vector_entry_point",
                       mode="structured", reward_mode="objective")
    observation, _ = env.reset(seed=3)
    env.step(np.argmax(observation["action_mask"], axis=1))  # a legal move in every slot
print("drawn")
"""


@pytest.mark.slow
def test_compiled_draws_load_from_numba_cache_beside_fresh_compiles(tmp_path: Path) -> None:
    """Batches compiled by one process into an empty cache load in the next one, after it has
    compiled other batches itself (as pytest-xdist's workers do): numba's cache cannot load a
    caller of a compiled generator once the generator was compiled anew (a KeyError on its
    type), which one process compiling everything never sees."""
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    names = npgym.list_tasks()
    first, second = names[::2], names[1::2]
    for batches in (first, second + first):  # the second run compiles, then loads the first's
        run = subprocess.run(
            [sys.executable, "-c", _DRAW_BATCHES, *batches],
            env=environment,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert run.returncode == 0 and "drawn" in run.stdout, run.stderr[-3000:]
