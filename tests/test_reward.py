"""Reward arithmetic (docs/contract.md, "Reward")."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import npgym
from npgym.answer import AnswerFormatError
from npgym.config import TIERS
from npgym.npbench.evaluate import Completions, evaluate
from npgym.records import make_record
from npgym.reward import (
    PRESETS,
    RewardConfig,
    clip_ratio,
    gap_closed,
    optimality_ratio,
    resolve_reward,
)


@pytest.mark.parametrize(
    ("objective", "reference", "sense", "expected"),
    [
        (10, 10, "min", 1.0),
        (20, 10, "min", 0.5),
        (5, 10, "min", 2.0),
        (10, 10, "max", 1.0),
        (5, 10, "max", 0.5),
        (20, 10, "max", 2.0),
        (0, 0, "min", 1.0),
        (0, 0, "max", 1.0),
        (0, 5, "min", math.inf),
        (3, 0, "max", math.inf),
        (0, 5, "max", 0.0),
    ],
)
def test_optimality_ratio(objective: int, reference: int, sense: str, expected: float) -> None:
    assert optimality_ratio(objective, reference, sense) == expected


def test_clip_ratio() -> None:
    assert clip_ratio(math.inf) == 1.0
    assert clip_ratio(1.3) == 1.0
    assert clip_ratio(0.25) == 0.25
    assert clip_ratio(-1.0) == 0.0


def test_reward_weights_are_parameters() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, tier="easy")
    reference = task.reference(instance)
    weights = RewardConfig(format_ok=0.5, format_fail=-2.0, infeasible=-3.0, optimality_weight=4.0)
    optimal = task.format_answer(reference.solution)
    assert task.score(instance, optimal, reference, weights).reward == 0.5 + 4.0
    assert task.score(instance, "garbage", reference, weights).reward == -2.0 - 3.0
    assert task.score(instance, "Answer: [0, 0]", reference, weights).reward == 0.5 - 3.0


def test_suboptimal_answer_earns_the_ratio() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, tier="easy")
    reference = task.reference(instance)
    tour = [*range(instance.n), 0]
    score = task.score(instance, task.format_answer(tour), reference)
    length = task.verify(instance, tour).objective
    assert score.feasible and score.objective == length
    assert score.ratio == pytest.approx(reference.objective / length)
    assert score.reward == pytest.approx(1.0 + score.ratio)


def test_answer_beating_the_reference_is_clipped_but_reported() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, tier="easy")
    reference = task.reference(instance)
    worse_reference = reference.objective + 10
    score = task.score(instance, task.format_answer(reference.solution), worse_reference)
    assert score.ratio == pytest.approx(worse_reference / reference.objective)
    assert score.ratio > 1.0
    assert score.optimality == 1.0 and score.reward == 2.0


@pytest.mark.parametrize("weight", ["format_ok", "format_fail", "infeasible", "optimality_weight"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_reward_weights_must_be_finite(weight: str, bad: float) -> None:
    with pytest.raises(ValidationError, match=f"{weight}\n  Input should be a finite number"):
        RewardConfig(**{weight: bad})
    with pytest.raises(ValidationError, match="finite number"):
        gym.make("npgym/TSP-easy", reward={weight: bad})


# --- presets, baselines and the empty answer (issues 11 and 17) ---------------------------------

TASK_NAMES = npgym.list_tasks()
MAXIMISATION = [name for name in TASK_NAMES if npgym.get_task(name).sense == "max"]
NO_BASELINE = {"SubsetSum", "HamiltonianCycle"}


def _easy(name: str, seed: int = 0):
    task = npgym.get_task(name)
    instance = task.generate(seed, tier="easy")
    return task, instance, task.reference(instance)


def test_unknown_preset_names_the_valid_ones() -> None:
    task, instance, reference = _easy("TSP")
    for call in (
        lambda: resolve_reward("lenient"),
        lambda: task.score(instance, "Answer: [0]", reference, "lenient"),
    ):
        with pytest.raises(ValueError, match="'np-engine', 'strict'"):
            call()
    assert resolve_reward(None) is PRESETS["np-engine"] == RewardConfig()
    assert resolve_reward({"infeasible": -2.0}).infeasible == -2.0


@given(seed=st.integers(0, 10**6), tier=st.sampled_from(TIERS), name=st.sampled_from(TASK_NAMES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_baseline_solution_is_feasible_on_every_instance(seed: int, tier: str, name: str) -> None:
    task = npgym.get_task(name)
    instance = task.generate(seed, tier=tier)
    solution = task.baseline_solution(instance)
    if name in NO_BASELINE:
        assert solution is None and task.baseline(instance) is None
        return
    assert solution is not None
    verdict = task.verify(instance, solution)
    assert verdict.feasible, verdict.reason
    assert task.baseline(instance) == verdict.objective
    if task.sense == "max":
        assert verdict.objective > 0  # the smallest non-empty answer, never the empty one
    assert task.parse(task.format_answer(solution)) is not None


@pytest.mark.parametrize("name", MAXIMISATION)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_empty_answer_is_no_solution(name: str, preset: str) -> None:
    task, instance, reference = _easy(name)
    score = task.score(instance, "Answer: []", reference, preset)
    assert not score.feasible and score.optimality == 0.0 and score.ratio is None
    infeasible = PRESETS[preset].format_ok + PRESETS[preset].infeasible
    assert score.reward == infeasible
    if name not in NO_BASELINE:  # there [] already fails the verifier with its own reason
        assert score.reason == "empty answer"


def test_always_empty_agent_has_success_rate_zero_on_every_task() -> None:
    rows, texts = [], {}
    for name in TASK_NAMES:
        task = npgym.get_task(name)
        for seed in range(3):
            instance = task.generate(seed, tier="easy")
            row = make_record(f"{name}-{seed}", task, instance, task.reference(instance))
            rows.append(row)
            texts[row["id"]] = ["Let me think.\nAnswer: []", "Answer: [ ]"]
    report = evaluate(rows, Completions(texts), source="empty")
    for name in TASK_NAMES:
        metrics = report["tasks"][name]
        assert metrics["success_rate"] == 0.0, name
        assert metrics["average_ratio"] == 0.0, name


@pytest.mark.parametrize("name", TASK_NAMES)
def test_np_engine_is_the_published_formula(name: str) -> None:
    """Every non-empty answer scores exactly 1 + clip(ratio), 1 - 1.5 or -1 - 1.5."""
    task, instance, reference = _easy(name, 3)
    rng = np.random.default_rng(0)
    answers = [task.random_solution(instance, rng) for _ in range(20)]
    answers += [task.greedy_solution(instance), reference.solution]
    for answer in answers:
        score = task.score(instance, task.format_answer(answer), reference, "np-engine")
        if score.feasible:
            expected = 1.0 + clip_ratio(task.ratio(score.objective, reference.objective))
            assert score.reward == expected
        else:
            assert score.reward == -0.5
    assert task.score(instance, "no answer", reference, "np-engine").reward == -2.5


@pytest.mark.parametrize("name", TASK_NAMES)
def test_strict_pays_only_for_progress_beyond_the_baseline(name: str) -> None:
    task, instance, reference = _easy(name, 5)
    optimal = task.score(instance, task.format_answer(reference.solution), reference, "strict")
    assert optimal.reward == 2.0 and optimal.optimality == 1.0
    baseline = task.baseline_solution(instance)
    if baseline is not None:
        text = task.format_answer(baseline)
        strict = task.score(instance, text, reference, "strict")
        engine = task.score(instance, text, reference, "np-engine")
        assert strict.baseline_objective == engine.baseline_objective == task.baseline(instance)
        if strict.optimality < 1.0:  # unless the baseline happens to be optimal
            assert strict.no_better_than_baseline and engine.no_better_than_baseline
            assert strict.reward == -0.5  # exactly what an infeasible answer earns
            assert strict.feasible and strict.reward < engine.reward
    rng = np.random.default_rng(1)
    for _ in range(30):
        answer = task.random_solution(instance, rng)
        strict = task.score(instance, task.format_answer(answer), reference, "strict")
        engine = task.score(instance, task.format_answer(answer), reference, "np-engine")
        assert strict.feasible == engine.feasible
        assert -0.5 <= strict.reward <= 2.0
        if strict.feasible:
            start = 0 if strict.baseline_objective is None else strict.baseline_objective
            gained = strict.objective - start if task.sense == "max" else start - strict.objective
            assert (strict.reward > -0.5) == (gained > 0 or strict.optimality == 1.0)


def test_gap_closed() -> None:
    assert gap_closed(5, 1, 9, "max") == 0.5
    assert gap_closed(1, 1, 9, "max") == 0.0
    assert gap_closed(0, 1, 9, "max") == 0.0  # worse than the baseline: clipped
    assert gap_closed(4, None, 8, "max") == 0.5  # no baseline: measured from 0
    assert gap_closed(12, 20, 4, "min") == 0.5
    assert gap_closed(3, 3, 3, "min") == 1.0  # reaching the reference is optimal, gap or not
    assert gap_closed(10, 10, 10, "max") == 1.0


def test_strict_format_credit_is_graded_and_below_every_parsed_answer() -> None:
    task, instance, reference = _easy("TSP")
    words = "[" + ", ".join("x" for _ in reference.solution) + "]"
    levels = [
        task.score(instance, text, reference, "strict").reward
        for text in ("no answer at all", "Answer: ?", "Answer: [a]", f"Answer: {words}")
    ]
    assert levels == pytest.approx([-2.5, -2.1, -1.7, -1.3])
    parsed_infeasible = task.score(instance, "Answer: [0, 0]", reference, "strict").reward
    assert levels[-1] < parsed_infeasible == -0.5
    # np-engine keeps the flat format failure
    assert {task.score(instance, f"Answer: {words}", reference).reward} == {-2.5}


@given(text=st.text(max_size=60), name=st.sampled_from(TASK_NAMES))
@settings(max_examples=200, deadline=None)
def test_any_unparsed_answer_scores_below_every_feasible_one(text: str, name: str) -> None:
    task, instance, reference = _easy(name)
    for candidate in (text, "Answer: " + text, "Answer: [" + text):
        score = task.score(instance, candidate, reference, "strict")
        assert score.reward <= -0.5  # -0.5: the least a feasible answer earns under strict
        if not score.format_ok:
            assert score.reward < -0.5


def test_credit_weights_cannot_lift_a_malformed_answer_over_a_parsed_one() -> None:
    with pytest.raises(ValueError, match="stay below"):
        RewardConfig(marker_credit=1.0, value_credit=1.0)


@pytest.mark.parametrize("name", TASK_NAMES)
def test_format_answer_rejects_what_is_not_a_solution(name: str) -> None:
    task = npgym.get_task(name)
    for bad in ([0, "7"], "[0, 7]", [0.5], None, {"a": 1}):
        with pytest.raises(AnswerFormatError):
            task.format_answer(bad)


def test_presets_by_name_in_gym_multiturn_and_verl() -> None:
    import gymnasium as gym

    from npgym.integrations.verl import compute_score

    task, instance, reference = _easy("TSP", 7)
    identity = task.format_answer(task.baseline_solution(instance))
    rewards = {}
    for preset in ("np-engine", "strict"):
        env = gym.make("npgym/TSP-easy", reward=preset)
        env.reset(seed=7)
        _, rewards[preset], *_ = env.step(identity)
        info = {
            "task": "TSP",
            "instance": instance.to_json(),
            "reference": reference.model_dump_json(),
        }
        verl = compute_score("npgym/TSP-easy", identity, None, info, reward=preset)
        assert verl["score"] == rewards[preset]
    assert rewards["strict"] == -0.5 < 1.0 < rewards["np-engine"]
    with pytest.raises(ValueError, match="valid presets"):
        gym.make("npgym/TSP-easy", reward="paper")
    with pytest.raises(ValueError, match="valid presets"):
        compute_score("npgym/TSP-easy", identity, None, info, reward="paper")


def test_eval_reward_option_sets_the_mean_reward_only(tmp_path) -> None:
    from click.testing import CliRunner

    from npgym.cli import main
    from npgym.npbench.build import BuildSpec, build

    build(BuildSpec(tasks=("MaxClique",), n=3, mix={"easy": 1}), tmp_path / "b", progress=False)
    runner = CliRunner()
    reports = {}
    for preset in ("np-engine", "strict"):
        out = tmp_path / preset
        result = runner.invoke(
            main,
            ["eval", str(tmp_path / "b"), "--agent", "greedy", "--reward", preset, "-o", str(out)],
        )
        assert result.exit_code == 0, result.output
        reports[preset] = json.loads((out / "report.json").read_text())["overall"]
    engine, strict = reports["np-engine"], reports["strict"]
    assert engine["success_rate"] == strict["success_rate"]
    assert engine["average_ratio"] == strict["average_ratio"]
    assert strict["mean_reward"] <= engine["mean_reward"]
    result = runner.invoke(
        main, ["eval", str(tmp_path / "b"), "--agent", "greedy", "--reward", "x"]
    )
    assert result.exit_code != 0 and "'np-engine', 'strict'" in result.output
