"""Multi-turn repair: feedback, attempt limits, reward policies, the env's multi-turn mode."""

from __future__ import annotations

import gymnasium as gym
import pytest
from pydantic import ValidationError

import npgym
from npgym.multiturn import RepairConfig, RepairSession, episode_reward

TASK = npgym.get_task("TSP")


@pytest.fixture(scope="module")
def case() -> tuple:
    instance = TASK.generate(0, tier="easy")
    return instance, TASK.reference(instance)


def _suboptimal(instance: npgym.Instance) -> str:
    return TASK.format_answer([*range(instance.n), 0])


@pytest.mark.parametrize(
    ("rewards", "policy", "expected"),
    [
        ([-0.5, 1.5, 1.2], "last", 1.2),
        ([-0.5, 1.5, 1.2], "best", 1.5),
        ([-0.5, 1.5, 1.2], "discounted", max(1.5 * 0.9, 1.2 * 0.81)),
        ([-2.5, -0.5], "discounted", -0.5),
        ([2.0], "discounted", 2.0),
    ],
)
def test_episode_reward_policies(rewards: list[float], policy: str, expected: float) -> None:
    assert episode_reward(rewards, policy, 0.9) == pytest.approx(expected)


def test_episode_reward_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="at least one"):
        episode_reward([], "best")
    with pytest.raises(ValueError, match="policy"):
        episode_reward([1.0], "median")  # type: ignore[arg-type]
    for bad in ({"max_attempts": 0}, {"discount": 0.0}, {"policy": "median"}):
        with pytest.raises(ValidationError):
            RepairConfig(**bad)


def test_session_gives_feedback_and_stops_on_optimal(case: tuple) -> None:
    instance, reference = case
    session = RepairSession(TASK, instance, reference, RepairConfig(max_attempts=3))
    first = session.submit("Answer: [0, 1, 1]")
    assert not first.done and "Infeasible" in first.feedback and "2 more attempts" in first.feedback
    second = session.submit(_suboptimal(instance))
    assert not second.done and "the best known is lower" in second.feedback
    assert str(reference.objective) not in second.feedback  # the target is not revealed
    third = session.submit(TASK.format_answer(reference.solution))
    assert third.done and "optimal" in third.feedback
    assert session.reward() == 2.0
    with pytest.raises(RuntimeError, match="no attempts left"):
        session.submit("Answer: [0]")


def test_session_without_attempts_scores_as_a_format_failure(case: tuple) -> None:
    instance, reference = case
    assert RepairSession(TASK, instance, reference).reward() == -2.5


def test_env_multi_turn_returns_sum_to_the_episode_reward(case: tuple) -> None:
    instance, _ = case
    for policy in ("best", "last"):
        env = gym.make("npgym/TSP-easy", max_attempts=3, reward_policy=policy)
        env.reset(options={"instance": instance})
        rewards, infos = [], []
        for answer in (_suboptimal(instance), "Answer: [0, 0]", "no answer"):
            _, reward, terminated, truncated, info = env.step(answer)
            rewards.append(reward)
            infos.append(info)
        assert terminated and not truncated
        assert [info["attempt"] for info in infos] == [1, 2, 3]
        assert sum(rewards) == pytest.approx(infos[-1]["episode_reward"])
        if policy == "best":
            assert infos[-1]["episode_reward"] == pytest.approx(infos[0]["reward"])
        else:
            assert infos[-1]["episode_reward"] == -2.5  # the last attempt failed to parse
        with pytest.raises(RuntimeError, match="reset"):
            env.step("Answer: [0]")


def test_env_multi_turn_ends_early_on_an_optimal_answer(case: tuple) -> None:
    instance, reference = case
    env = gym.make("npgym/TSP-easy", max_attempts=5)
    env.reset(options={"instance": instance})
    _, reward, terminated, *_ = env.step("Answer: [0]")
    assert not terminated and reward == -0.5
    _, reward, terminated, *_ = env.step(TASK.format_answer(reference.solution))
    assert terminated and reward == pytest.approx(2.5)  # from -0.5 to 2.0


def test_bad_repair_options_fail_at_make() -> None:
    with pytest.raises(ValidationError, match="max_attempts"):
        gym.make("npgym/TSP-easy", max_attempts=0)


def test_check_env_passes_in_multi_turn_mode() -> None:
    import warnings

    from gymnasium.utils.env_checker import check_env

    env = gym.make("npgym/Knapsack-easy", max_attempts=3, exact_reference=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
