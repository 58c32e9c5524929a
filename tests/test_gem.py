"""npgym in GEM through gem-llm 0.1's own entry points: ``gem.make`` builds every npgym id,
``reset`` and ``step`` play single- and multi-turn episodes ending in GEM's ``TERMINAL_STATE``,
``gem.make_vec`` (sync and async, with GEM's observation wrappers) plays distinct instances, and
the adaptive curriculum holds a scripted learner's pass rate in its target band."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import npgym.integrations.curriculum as curricula
from tests.extras import need

gem = need("gem")

from gem.envs.registration import ENV_REGISTRY  # noqa: E402
from gem.utils.constants import TERMINAL_STATE  # noqa: E402
from gem.wrappers.wrapper_factory import get_wrapper_fns  # noqa: E402

from npgym.curriculum import AdaptiveCurriculum  # noqa: E402
from npgym.integrations import gem as adapter  # noqa: E402
from npgym.integrations.curriculum import KEY_FIELD  # noqa: E402

TARGET = (0.3, 0.7)
CURRICULUM = {"tasks": ["Knapsack"], "target": TARGET}
OPTIONS = {"window": 8, "step": 0.1}


@pytest.fixture(autouse=True)
def _fresh_curricula(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no shared curricula."""
    monkeypatch.setattr(curricula, "_SHARED", {})


def optimal(env: Any) -> str:
    """The reference answer of the episode ``env`` (a GEM env, maybe wrapped) plays."""
    session = env.unwrapped.env.session
    return "Let me think.\n" + session.task.format_answer(session.reference.solution)


def prompt_of(env_id: str, seed: int) -> str:
    return gym.make(env_id).reset(seed=seed)[0]


def test_every_npgym_id_is_registered_and_made() -> None:
    ids = [i for i in gym.registry if i.startswith("npgym/")]
    assert len(ids) > 100 and set(ids) <= set(ENV_REGISTRY)
    assert adapter.register() == []  # idempotent
    env = gem.make("npgym/TSP-hard")
    assert isinstance(env, gem.Env) and isinstance(env, adapter.NPGymGemEnv)
    assert env.env_id == "npgym/TSP-hard" and env.env.tier == "hard"
    assert isinstance(gem.make("npgym/Curriculum", **CURRICULUM), adapter.NPGymGemCurriculumEnv)


def test_single_turn_plays_the_stream_and_ends_in_the_terminal_state() -> None:
    env = gem.make("npgym/Knapsack-easy", seed=7)
    prompt, info = env.reset()
    assert prompt == prompt_of("npgym/Knapsack-easy", 7)
    assert info == {"task": "Knapsack", "instance_seed": 7}
    observation, reward, terminated, truncated, info = env.step(optimal(env))
    assert (observation, reward, terminated, truncated) == (TERMINAL_STATE, 2.0, True, True)
    assert info["feasible"] and "optimal" in info["feedback"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step("again")
    following, info = env.reset()  # unseeded: the stream's next instance
    assert following != prompt and info["instance_seed"] != 7
    session = env.env.session
    expected = session.task.score(session.instance, "no answer", session.reference).reward
    assert env.step("no answer")[1] == expected < 0
    assert env.reset(seed=7)[0] == prompt  # a seed picks its instance again


def test_multi_turn_feedback_then_terminal_state() -> None:
    env = gem.make("npgym/Knapsack-easy", seed=3, max_attempts=3)
    env.reset()
    feedback, first, terminated, truncated, _ = env.step("Answer: [0]")  # feasible, not best
    assert feedback.startswith("Feasible") and "2 more attempts" in feedback
    assert (terminated, truncated) == (False, False) and 1.0 < first < 2.0
    observation, second, terminated, truncated, info = env.step(optimal(env))
    assert observation == TERMINAL_STATE and first + second == pytest.approx(2.0)
    assert (terminated, truncated) == (True, False)  # solved before the attempts ran out
    assert info["attempt"] == 2
    env.reset()
    steps = [env.step("no answer") for _ in range(3)]
    assert [step[2:4] for step in steps] == [(False, False), (False, False), (True, True)]
    assert steps[-1][0] == TERMINAL_STATE


@pytest.mark.parametrize("async_mode", [False, True])
def test_make_vec_plays_distinct_instances_through_gems_wrappers(async_mode: bool) -> None:
    wrappers = get_wrapper_fns("concat_with_action")  # a name trainer configs use
    vec = gem.make_vec(
        ["npgym/Knapsack-easy"] * 4,
        wrappers=wrappers,
        async_mode=async_mode,
        seed=10,
        max_attempts=2,
    )
    prompts, infos = vec.reset()
    assert prompts == [prompt_of("npgym/Knapsack-easy", 10 + i) + "\n" for i in range(4)]
    assert [info["instance_seed"] for info in infos] == [10, 11, 12, 13]
    observations, rewards, terminated, truncated, _ = vec.step(["Answer: [0]"] * 4)
    assert not terminated.any() and not truncated.any() and (rewards > 0).all()
    assert all(
        obs.startswith(prompts[i] + "Answer: [0]\nFeasible") for i, obs in enumerate(observations)
    )
    envs = vec.envs
    _, _, terminated, _, _ = vec.step([optimal(env) for env in envs])
    assert terminated.all()
    after, _, _, _, _ = vec.step(["unused"] * 4)  # autoreset: each env's next instance
    assert len(set(after)) == 4 and not set(after) & set(prompts)


def test_curriculum_envs_share_one_curriculum_and_report_each_episode() -> None:
    vec = gem.make_vec(
        ["npgym/Curriculum"] * 4, async_mode=True, curriculum_options=OPTIONS, **CURRICULUM
    )
    curricula = {id(env.curriculum) for env in vec.envs}
    assert len(curricula) == 1
    _, infos = vec.reset()
    assert len({info[KEY_FIELD] for info in infos}) == 4
    assert {info["difficulty"] for info in infos} == {0.2}
    _, rewards, terminated, _, step_infos = vec.step([optimal(env) for env in vec.envs])
    assert terminated.all() and (rewards == 2.0).all()
    # GEM resets a finished env in the same step: the infos are the next draws'.
    assert {info[KEY_FIELD] for info in step_infos}.isdisjoint(info[KEY_FIELD] for info in infos)
    curriculum = vec.envs[0].curriculum
    assert curriculum is adapter.shared_curriculum(["Knapsack"], target=TARGET, **OPTIONS)
    assert curriculum.stats()["Knapsack"]["reports"] == 4
    own = AdaptiveCurriculum(["Knapsack"], seed=5)
    assert gem.make("npgym/Curriculum", curriculum=own).curriculum is own


def test_bad_input_fails_naming_the_problem() -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        gem.make("npgym/TSP-easy", seed=-1)
    env = gem.make("npgym/TSP-easy")
    with pytest.raises(ValueError, match="non-negative integer"):
        env.reset(seed=True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step("Answer: [0]")
    with pytest.raises(TypeError, match="nope"):
        gem.make("npgym/TSP-easy", nope=1)
    with pytest.raises(ValueError, match="unknown reward preset"):
        gem.make("npgym/TSP-easy", reward="nope")
    with pytest.raises(ValueError, match="not both"):
        gem.make("npgym/Curriculum", curriculum=AdaptiveCurriculum(["TSP"]), tasks=["TSP"])
    with pytest.raises(KeyError, match="unknown task"):
        gem.make("npgym/Curriculum", tasks=["Nope"])


def learner_passes(rng: np.random.Generator, difficulty: float) -> bool:
    """The scripted learner: optimal with probability 1.25 - 1.5 * difficulty (0.95 at the
    start, 0.5 at 0.5), else no answer. The band (0.3, 0.7) holds between 0.37 and 0.63."""
    return bool(rng.random() < np.clip(1.25 - 1.5 * difficulty, 0.0, 1.0))


def test_curriculum_holds_a_scripted_learner_in_the_target_band() -> None:
    env = gem.make("npgym/Curriculum", curriculum_options=OPTIONS, **CURRICULUM)
    rng = np.random.default_rng(0)
    passes: list[bool] = []
    for _ in range(160):
        _, info = env.reset()
        passed = learner_passes(rng, info["difficulty"])
        _, reward, terminated, _, _ = env.step(optimal(env) if passed else "no answer")
        assert terminated and (reward == 2.0) is passed
        passes.append(passed)
    stats = env.curriculum.stats()["Knapsack"]
    assert stats["reports"] == len(passes) == 160
    assert stats["difficulty"] >= 0.4  # the frontier moved up from 0.2
    assert sum(passes[:8]) >= 7  # too easy at the start...
    final = passes[-64:]
    assert TARGET[0] <= sum(final) / len(final) <= TARGET[1]  # ...in the band at the end
