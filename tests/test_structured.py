"""Classic-RL mode (``mode="structured"``): spaces, masks, rewards, bad actions."""

from __future__ import annotations

import json
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import testing
from npgym.structured import InvalidActionError, StructuredEnv

TASK_NAMES = testing.tasks_declaring("episode")


def play(env: gym.Env, policy: str, seed: int, rng: np.random.Generator) -> tuple[float, dict]:
    """One episode under a masked random or the greedy policy; checks every observation."""
    observation, _ = env.reset(seed=seed)
    total, done, info = 0.0, False, {}
    while not done:
        assert env.observation_space.contains(observation)
        legal = np.flatnonzero(observation["action_mask"])
        assert legal.size, "a legal move must exist until the episode ends"
        if policy == "random":
            action = int(rng.choice(legal))
        else:
            action = env.unwrapped.episode.greedy_action()
            assert observation["action_mask"][action]
        observation, reward, done, truncated, info = env.step(action)
        assert not truncated
        total += reward
    assert not observation["action_mask"].any()
    return total, info


@pytest.mark.parametrize("task_name", TASK_NAMES)
@pytest.mark.parametrize("policy", ["random", "greedy"])
def test_masked_policies_end_feasible_with_the_task_reward(task_name: str, policy: str) -> None:
    env = gym.make(npgym.env_id(task_name, "medium"), mode="structured", exact_reference=False)
    task = npgym.get_task(task_name)
    rng = np.random.default_rng(0)
    for seed in range(4):
        total, info = play(env, policy, seed, rng)
        episode = env.unwrapped.episode
        answer = task.format_answer(episode.solution())
        score = task.score(episode.instance, answer, env.unwrapped.reference)
        assert info["feasible"], info["reason"]
        assert total == pytest.approx(score.reward)
        assert info["reward"] == pytest.approx(score.reward)
        assert info["answer"] == task.format_answer(episode.solution())


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_check_env_passes(task_name: str) -> None:
    env = gym.make(npgym.env_id(task_name, "easy"), mode="structured", exact_reference=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_spaces_are_fixed_per_tier_and_hold_the_largest_instance(task_name: str) -> None:
    env = StructuredEnv(task_name, "hard", exact_reference=False)
    task = npgym.get_task(task_name)
    config = task.config("hard")
    fields = type(config).model_fields
    lowest_is_highest = {
        name: getattr(config, name[:-4] + "_max")
        for name in fields
        if name.endswith("_min") and name[:-4] + "_max" in fields
    }
    largest = task.generate(0, "hard", overrides=lowest_is_highest)
    observation, _ = env.reset(options={"instance": largest})
    assert env.observation_space.contains(observation)


def test_make_vec_runs_masked_steps() -> None:
    """gymnasium's SyncVectorEnv over single structured envs (``vectorization_mode="sync"``;
    the default is the vector entry point, which batches only tasks that declare ``vector``)."""
    envs = gym.make_vec(
        "npgym/Knapsack-easy",
        num_envs=3,
        vectorization_mode="sync",
        mode="structured",
        exact_reference=False,
    )
    observation, _ = envs.reset(seed=1)
    assert observation["action_mask"].shape == (3, 2)
    for _ in range(40):
        # after an episode ends the vector env resets on the next step, ignoring the action
        actions = np.array(
            [
                int(np.flatnonzero(mask)[-1]) if mask.any() else 0
                for mask in observation["action_mask"]
            ]
        )
        observation, reward, _terminated, _truncated, _ = envs.step(actions)
        assert reward.shape == (3,)
    envs.close()


@pytest.mark.parametrize("bad", [-1, 99, 2.5, "1", None, np.array([0, 1]), True])
def test_out_of_range_or_odd_actions_end_with_a_penalty(bad: object) -> None:
    env = StructuredEnv("Knapsack", "easy", exact_reference=False)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(bad)
    assert terminated and info["invalid_action"] and info["reason"]
    assert reward == -2.5
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_masked_action_is_refused_with_a_reason() -> None:
    env = StructuredEnv("TSP", "easy", exact_reference=False)
    observation, _ = env.reset(seed=0)
    assert observation["action_mask"][0] == 0  # the tour starts at city 0
    _, reward, terminated, _, info = env.step(0)
    assert terminated and reward == -2.5 and "masked" in info["reason"]


def test_raise_mode_names_the_problem_and_keeps_the_episode() -> None:
    env = StructuredEnv("TSP", "easy", invalid_action="raise", exact_reference=False)
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match="masked"):
        env.step(0)
    with pytest.raises(InvalidActionError, match="outside"):
        env.step(10**6)
    env.step(1)  # still playable


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_shaping_spreads_the_reward_without_changing_the_return(task_name: str) -> None:
    plain = StructuredEnv(task_name, "easy", exact_reference=False)
    shaped = StructuredEnv(task_name, "easy", exact_reference=False, shaping=0.5)
    returns = []
    for env in (plain, shaped):
        env.reset(seed=3)
        total, done = 0.0, False
        while not done:
            _, reward, done, _, _ = env.step(env.episode.greedy_action())
            total += reward
        returns.append(total)
    assert returns[0] == pytest.approx(returns[1])


def test_bad_options_fail_at_make() -> None:
    with pytest.raises(ValueError, match="mode"):
        gym.make("npgym/TSP-easy", mode="pixels")
    with pytest.raises(ValueError, match="shaping"):
        StructuredEnv("TSP", "easy", shaping=-1)
    with pytest.raises(ValueError, match="invalid_action"):
        StructuredEnv("TSP", "easy", invalid_action="ignore")


def test_too_large_instance_is_refused() -> None:
    env = StructuredEnv("TSP", "easy", exact_reference=False)
    big = npgym.get_task("TSP").generate(0, "benchmark")
    with pytest.raises(ValueError, match="too large"):
        env.reset(options={"instance": big})


def _reset_on(instance_json: str) -> tuple[StructuredEnv, dict[str, Any]]:
    """An easy-tier env of the instance's task (heuristic reference), reset on that instance."""
    name = json.loads(instance_json)["task"]
    env = StructuredEnv(name, "easy", exact_reference=False)
    observation, _ = env.reset(options={"instance": npgym.get_task(name).from_json(instance_json)})
    return env, observation


def test_set_cover_impossible_is_the_only_way_out_when_no_cover_exists() -> None:
    env, observation = _reset_on(
        '{"task": "SetCover", "universe_size": 4, "subsets": [[0, 1], [1, 2]]}'
    )
    impossible = env.action_count - 1
    assert observation["action_mask"][impossible]
    _, reward, done, _, info = env.step(impossible)
    assert done and info["feasible"] and info["answer"] == "Answer: Impossible"
    assert reward == pytest.approx(2.0)


def test_hamiltonian_walk_avoids_dead_ends_outside_the_two_core() -> None:
    # a triangle 0-1-2 with a tail 2-3-4: vertices 3 and 4 lie on no cycle
    _, observation = _reset_on(
        '{"task": "HamiltonianCycle", "n": 5, "edges": [[0, 1], [0, 2], [1, 2], [2, 3], [3, 4]]}'
    )
    assert observation["action_mask"][:5].tolist() == [1, 1, 1, 0, 0]


@settings(max_examples=12)
@given(
    task_name=st.sampled_from(TASK_NAMES),
    seed=st.integers(0, 2**32),
    policy_seed=st.integers(0, 2**32),
    difficulty=st.floats(0.0, 0.5),
)
def test_any_masked_random_walk_ends_feasible(
    task_name: str, seed: int, policy_seed: int, difficulty: float
) -> None:
    env = StructuredEnv(task_name, difficulty=difficulty, exact_reference=False)
    total, info = play(env, "random", seed, np.random.default_rng(policy_seed))
    assert info["feasible"], info["reason"]
    assert total == pytest.approx(info["reward"])


@pytest.mark.parametrize("task", TASK_NAMES)
@given(seed=st.integers(0, 2**32), policy_seed=st.integers(0, 2**16))
@settings(max_examples=10)
def test_the_objective_reward_is_the_built_answers_objective(
    task: str, seed: int, policy_seed: int
) -> None:
    """reward_mode="objective" pays the objective the verifier gives the answer the episode
    built (signed), whenever that answer is feasible (a HamiltonianCycle closed after a detour
    pays its cycle, not its walk)."""
    env = StructuredEnv(task, "easy", reward_mode="objective")
    observation, _ = env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    terminated = False
    while not terminated:
        action = rng.choice(np.flatnonzero(observation["action_mask"]))
        observation, reward, terminated, _, info = env.step(action)
    episode = env.episode
    assert episode is not None
    answer = env.task.format_answer(episode.solution())
    verdict = env.task.score(episode.instance, answer, reference=1)
    if verdict.feasible and verdict.objective is None:  # SetCover's "impossible": no subsets
        assert info["objective"] == 0
    elif verdict.feasible:
        assert info["objective"] == verdict.objective
        assert reward == (verdict.objective if env.task.sense == "max" else -verdict.objective)
