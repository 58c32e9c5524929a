"""Gymnasium registration and env options; configs, tiers and the difficulty knob."""

from __future__ import annotations

import math
import subprocess
import sys

import gymnasium as gym
import pytest
from pydantic import ValidationError

import npgym
from npgym.config import TIER_DIFFICULTY, interpolate
from npgym.env import NPGymEnv


def test_every_task_and_tier_is_registered() -> None:
    for task in npgym.list_tasks():
        for tier in npgym.TIERS:
            assert f"npgym/{task}-{tier}" in gym.registry


def test_make_with_module_prefix_needs_no_import() -> None:
    code = (
        "import gymnasium as gym; env = gym.make('npgym:npgym/TSP-easy', exact_reference=False);"
        "obs, info = env.reset(seed=1); print(type(obs).__name__, info['instance'].task)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["str", "TSP"]


def test_reset_without_seed_draws_fresh_reproducible_instances() -> None:
    env = gym.make("npgym/TSP-easy", exact_reference=False)
    env.reset(seed=3)
    first = [env.reset()[1]["instance"] for _ in range(3)]
    assert len({instance.seed for instance in first}) == 3
    env.reset(seed=3)
    again = [env.reset()[1]["instance"] for _ in range(3)]
    assert first == again


def test_step_after_the_end_raises() -> None:
    env = NPGymEnv("TSP", "easy", exact_reference=False)
    env.reset(seed=0)
    env.step("Answer: [0]")
    with pytest.raises(RuntimeError, match="reset"):
        env.step("Answer: [0]")


SMALL_TOURS = {"n_min": 6, "n_max": 7}


def test_generate_takes_config_as_a_deprecated_alias_of_overrides() -> None:
    task = npgym.get_task("TSP")
    with pytest.warns(DeprecationWarning, match=r"use overrides="):
        old = task.generate(3, "easy", config=SMALL_TOURS)
    assert old == task.generate(3, "easy", overrides=SMALL_TOURS)
    assert old == task.generate(3, "easy", None, SMALL_TOURS)
    assert old.n in (6, 7)
    with pytest.raises(TypeError, match="deprecated alias config="):
        task.generate(3, "easy", overrides=SMALL_TOURS, config=SMALL_TOURS)


@pytest.mark.parametrize("mode", ["text", "structured"])
def test_envs_take_config_as_a_deprecated_alias_of_overrides(mode: str) -> None:
    options = {"mode": mode, "exact_reference": False}
    with pytest.warns(DeprecationWarning, match=r"use overrides="):
        old = gym.make("npgym/TSP-easy", config=SMALL_TOURS, **options)
    new = gym.make("npgym/TSP-easy", overrides=SMALL_TOURS, **options)
    assert old.unwrapped.overrides == new.unwrapped.overrides == SMALL_TOURS  # type: ignore[attr-defined]
    assert old.observation_space == new.observation_space
    assert old.reset(seed=1)[1]["instance"] == new.reset(seed=1)[1]["instance"]
    with pytest.raises(TypeError, match="deprecated alias config="):
        gym.make("npgym/TSP-easy", overrides=SMALL_TOURS, config=SMALL_TOURS, **options)


def test_options_pass_through_make() -> None:
    env = gym.make(
        "npgym/TSP-hard",
        overrides={"n_min": 60, "n_max": 61},
        reward={"format_fail": -5.0},
        exact_reference=False,
    )
    _, info = env.reset(seed=0)
    assert 60 <= info["instance"].n <= 61
    assert info["reference"].method == "heuristic"
    _, reward, *_ = env.step("no answer at all")
    assert reward == -5.0 - 1.5


def test_reset_can_play_a_given_instance() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(99, tier="easy")
    env = NPGymEnv("TSP", "hard", exact_reference=False)
    prompt, info = env.reset(options={"instance": instance})
    assert info["instance"] is instance and prompt == task.prompt(instance)


def test_difficulty_env_and_render() -> None:
    env = gym.make("npgym/TSP-easy", difficulty=0.9, exact_reference=False, render_mode="ansi")
    prompt, info = env.reset(seed=0)
    assert info["instance"].tier is None and info["instance"].difficulty == 0.9
    assert env.render() == prompt


def test_bad_options_fail_at_make() -> None:
    with pytest.raises(ValidationError, match="n_min"):
        gym.make("npgym/TSP-hard", overrides={"n_min": -4})
    with pytest.raises(ValidationError, match="unknown_key"):
        gym.make("npgym/TSP-hard", overrides={"unknown_key": 1})
    with pytest.raises(ValidationError, match="n_min"):
        gym.make("npgym/TSP-hard", overrides={"n_min": 60, "n_max": 50})
    with pytest.raises(KeyError, match="unknown task"):
        npgym.get_task("Sudoku")


@pytest.mark.parametrize("mode", ["text", "structured"])
@pytest.mark.parametrize("seconds", [-1, 0, math.nan, math.inf])
def test_reference_time_limit_must_be_a_positive_finite_number(mode: str, seconds: float) -> None:
    options = {"mode": "structured"} if mode == "structured" else {}
    with pytest.raises(ValueError, match="reference_time_limit must be a positive finite"):
        gym.make("npgym/TSP-easy", reference_time_limit=seconds, **options)
    with pytest.raises(TypeError, match="reference_time_limit must be a number"):
        gym.make("npgym/TSP-easy", reference_time_limit="5", **options)
    assert (
        gym.make("npgym/TSP-easy", reference_time_limit=2, **options).unwrapped.reference_time_limit
        == 2.0
    )


def test_get_task_is_case_insensitive() -> None:
    assert npgym.get_task("tsp") is npgym.get_task("TSP")


def test_interpolation_hits_the_tiers_and_grows_with_difficulty() -> None:
    presets = npgym.get_task("TSP").tiers
    for tier, anchor in TIER_DIFFICULTY.items():
        assert interpolate(presets, anchor) == presets[tier]
    sizes = [interpolate(presets, d / 20).n_max for d in range(21)]
    assert sizes == sorted(sizes)
    assert interpolate(presets, 0.0).n_min >= 3
    assert interpolate(presets, 1.0).n_max > presets["benchmark"].n_max
    assert interpolate(presets, 0.5).metric == presets["medium"].metric
    assert interpolate(presets, 0.85).metric == presets["benchmark"].metric
    for bad in (-0.1, 2.1, float("nan"), "0.5"):
        with pytest.raises(ValueError, match="difficulty"):
            interpolate(presets, bad)  # type: ignore[arg-type]


def test_seed_must_be_a_non_negative_integer() -> None:
    task = npgym.get_task("TSP")
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="seed"):
            task.generate(bad)  # type: ignore[arg-type]
