"""npgym in SkyRL through skyrl-gym 0.4's own entry points: ``skyrl_gym.make`` builds every npgym
id, ``init`` and ``step`` play single- and multi-turn episodes, the samples of one row share its
instance (as SkyRL's generator makes them: one extras dict per row, ``global_step`` added), and
the adaptive curriculum holds a scripted learner's pass rate in its target band."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import npgym.integrations.curriculum as curricula
from tests.extras import need

skyrl_gym = need("skyrl_gym")

from omegaconf import OmegaConf  # noqa: E402  (skyrl-gym's dependency)
from skyrl_gym.metrics import aggregate_for_environment  # noqa: E402

import npgym  # noqa: E402
from npgym.integrations import skyrl  # noqa: E402
from npgym.integrations.curriculum import KEY_FIELD  # noqa: E402

TARGET = (0.3, 0.7)
CURRICULUM = {"tasks": ["Knapsack"], "target": list(TARGET), "window": 8, "step": 0.1}


@pytest.fixture(autouse=True)
def _fresh_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no remembered draws and no shared curricula."""
    monkeypatch.setattr(skyrl, "_DRAWS", OrderedDict())
    monkeypatch.setattr(curricula, "_SHARED", {})


def make(env_id: str, extras: dict[str, Any], env_config: Any = None) -> Any:
    return skyrl_gym.make(env_id, env_config=env_config or {}, extras=extras)


def optimal(env: Any) -> str:
    """The reference answer of the episode ``env`` plays."""
    session = env.env.session
    return "Let me think.\n" + session.task.format_answer(session.reference.solution)


def test_every_npgym_id_is_registered_and_made() -> None:
    ids = [i for i in gym.registry if i.startswith("npgym/")]
    assert len(ids) > 100 and set(ids) <= set(skyrl_gym.registry)
    assert skyrl.register() == []  # idempotent
    env = make("npgym/TSP-hard", {"seed": 0})
    assert isinstance(env, skyrl_gym.Env) and isinstance(env, skyrl.NPGymTextEnv)
    assert env.spec.id == "npgym/TSP-hard"
    assert isinstance(make("npgym/Curriculum", {"seed": 0, "global_step": 0}), skyrl_gym.Env)


def test_single_turn_plays_the_seeds_instance_and_keeps_system_messages() -> None:
    env = make("npgym/Knapsack-easy", {"seed": 7, "max_turns": 1})
    row_prompt = [
        {"role": "system", "content": "Reason briefly."},
        {"role": "user", "content": "placeholder"},
    ]
    messages, metadata = env.init(row_prompt)
    expected, _ = gym.make("npgym/Knapsack-easy").reset(seed=7)
    assert messages == [row_prompt[0], {"role": "user", "content": expected}]
    assert metadata == {}
    from_parquet = np.array(row_prompt, dtype=object)  # how pandas reads a parquet row's prompt
    assert make("npgym/Knapsack-easy", {"seed": 7}).init(from_parquet)[0] == messages
    out = env.step(optimal(env))
    assert (out["reward"], out["done"], out["observations"]) == (2.0, True, [])
    assert out["metadata"]["feasible"] and out["metadata"]["optimality"] == 1.0
    assert env.get_metrics() == {
        "reward": 2.0,
        "format_ok": 1.0,
        "feasible": 1.0,
        "optimality": 1.0,
        "attempts": 1.0,
    }
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step("again")
    wrong = make("npgym/Knapsack-easy", {"seed": 7})
    wrong.init([])
    task = npgym.get_task("Knapsack")
    session = wrong.env.session
    expected_score = task.score(session.instance, "no answer", session.reference)
    assert wrong.step("no answer")["reward"] == expected_score.reward < 0


def test_multi_turn_gives_feedback_and_the_episode_reward_at_the_end() -> None:
    env = make("npgym/Knapsack-easy", {"seed": 3, "max_turns": 3})
    assert env.max_turns == 3
    env.init([])
    first = env.step("Answer: [0]")  # feasible, far from the best
    assert first["done"] is False and first["reward"] == 0.0
    [feedback] = first["observations"]
    assert feedback["role"] == "user"
    assert feedback["content"].startswith("Feasible") and "2 more attempts" in feedback["content"]
    last = env.step(optimal(env))
    assert last["done"] is True and last["observations"] == []
    assert last["reward"] == 2.0  # the best attempt's reward (reward_policy "best")
    assert env.get_metrics()["attempts"] == 2.0
    strict = make("npgym/Knapsack-easy", {"seed": 3, "max_turns": 2}, {"reward_policy": "last"})
    strict.init([])
    strict.step(optimal(strict).replace("Let me think.\n", "") + " ")
    assert strict.turns == 1  # an optimal answer ends the episode at once


def test_a_rows_samples_share_one_instance_and_its_reference() -> None:
    extras = {"seed": 11, "max_turns": 1, "global_step": 4}  # one dict per row, as SkyRL
    group = [make("npgym/Knapsack-easy", extras) for _ in range(3)]
    for env in group:
        env.init([])
    instances = {id(env.env.session.instance) for env in group}
    assert len(instances) == 1  # one object: the reference is solved once
    other = make("npgym/Knapsack-easy", {**extras, "seed": 12})
    other.init([])
    assert other.env.session.instance.fingerprint() != group[0].env.session.instance.fingerprint()


def test_curriculum_rows_share_a_draw_per_step_and_report_every_sample() -> None:
    config = OmegaConf.create(CURRICULUM)  # what SkyRL passes: environment.skyrl_gym.<id>
    curriculum = skyrl.shared_curriculum(**CURRICULUM)
    extras = {"seed": 0, "global_step": 1}
    group = [make("npgym/Curriculum", extras, config) for _ in range(4)]
    metadata = [env.init([])[1] for env in group]
    assert len({meta[KEY_FIELD] for meta in metadata}) == 1
    assert metadata[0]["task"] == "Knapsack" and metadata[0]["difficulty"] == 0.2
    for env in group:
        assert env.step(optimal(env))["metadata"][KEY_FIELD] == metadata[0][KEY_FIELD]
    assert curriculum.stats()["Knapsack"]["reports"] == 4
    later = make("npgym/Curriculum", {"seed": 0, "global_step": 2}, config)
    assert later.init([])[1][KEY_FIELD] != metadata[0][KEY_FIELD]
    metrics = aggregate_for_environment("npgym/Curriculum", [env.get_metrics() for env in group])
    assert metrics["reward"] == 2.0 and metrics["difficulty"] == 0.2


@pytest.mark.parametrize(("rows", "shared"), [(4, True), (5, False)])
def test_draws_are_remembered_for_max_draws_rows(
    monkeypatch: pytest.MonkeyPatch, rows: int, shared: bool
) -> None:
    """At the limit (4 rows here) the first row's later samples still share its draw; one row
    past it, the first row's draw is forgotten and a later sample draws anew."""
    monkeypatch.setattr(skyrl, "MAX_DRAWS", 4)
    config = {**CURRICULUM, "seed": 1}
    keys = [
        make("npgym/Curriculum", {"seed": row, "global_step": 0}, config).init([])[1][KEY_FIELD]
        for row in range(rows)
    ]
    again = make("npgym/Curriculum", {"seed": 0, "global_step": 0}, config).init([])[1]
    assert (again[KEY_FIELD] == keys[0]) is shared


def test_bad_rows_and_options_fail_at_make_naming_the_problem() -> None:
    for extras in ({}, {"seed": -1}, {"seed": True}, {"seed": "7"}):
        with pytest.raises(ValueError, match="non-negative integer 'seed'"):
            make("npgym/TSP-easy", extras)
    with pytest.raises(ValueError, match="'global_step' in its extras"):
        make("npgym/Curriculum", {"seed": 0})
    with pytest.raises(ValueError, match="max_turns"):
        make("npgym/TSP-easy", {"seed": 0, "max_turns": 0})
    with pytest.raises(ValueError, match=r"unknown env_config option.*max_attempts"):
        make("npgym/TSP-easy", {"seed": 0}, {"max_attempts": 3})
    with pytest.raises(ValueError, match=r"unknown env_config option.*difficulty"):
        make("npgym/Curriculum", {"seed": 0, "global_step": 0}, {"difficulty": 0.3})
    with pytest.raises(ValueError, match="unknown reward preset"):
        make("npgym/TSP-easy", {"seed": 0}, {"reward": "nope"})
    with pytest.raises(KeyError, match="unknown task"):
        make("npgym/Curriculum", {"seed": 0, "global_step": 0}, {"tasks": ["Nope"]})
    with pytest.raises(RuntimeError, match="init"):
        make("npgym/TSP-easy", {"seed": 0}).step("Answer: [0]")


def test_placeholder_rows() -> None:
    rows = skyrl.placeholder_rows("npgym/TSP-hard", 3, first=10)
    assert [row["seed"] for row in rows] == [10, 11, 12]
    assert {row["env_class"] for row in rows} == {"npgym/TSP-hard"}
    with pytest.raises(ValueError, match="not a registered"):
        skyrl.placeholder_rows("npgym/Nope-easy", 1)


def learner_passes(rng: np.random.Generator, difficulty: float) -> bool:
    """The scripted learner: optimal with probability 1.25 - 1.5 * difficulty (0.95 at the
    start, 0.5 at 0.5), else no answer. The band (0.3, 0.7) holds between 0.37 and 0.63."""
    return bool(rng.random() < np.clip(1.25 - 1.5 * difficulty, 0.0, 1.0))


def test_curriculum_holds_a_scripted_learner_in_the_target_band() -> None:
    """Steps of 4 rows x 4 samples, each built, initialised and stepped as SkyRL's generator
    does; every sample's result is reported, and the frontier settles where the learner passes
    about half the time."""
    rng = np.random.default_rng(0)
    passes: list[bool] = []
    for step in range(10):
        for row in range(4):
            extras = {"seed": row, "global_step": step, "max_turns": 1}
            for _ in range(4):
                env = make("npgym/Curriculum", extras, CURRICULUM)
                _, metadata = env.init([])
                passed = learner_passes(rng, metadata["difficulty"])
                out = env.step(optimal(env) if passed else "no answer")
                assert out["done"] and (out["reward"] == 2.0) is passed
                passes.append(passed)
    stats = skyrl.shared_curriculum(**CURRICULUM).stats()["Knapsack"]
    assert stats["reports"] == len(passes) == 160
    assert stats["difficulty"] >= 0.4  # the frontier moved up from 0.2
    assert sum(passes[:8]) >= 7  # too easy at the start...
    final = passes[-64:]
    assert TARGET[0] <= sum(final) / len(final) <= TARGET[1]  # ...in the band at the end
