"""The learning curve's verdict (bench/learning_curve.py): it says "learning" only when the
format and feasible rates rise and the reward's rise passes a one-sided permutation test."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.learning_curve import judge, parse


def log(rewards: list[float], rates: list[float] | None = None) -> list[dict[str, float]]:
    """A per-step log; the two rates follow ``rates`` (default: the rewards' ranks in 0-1)."""
    rates = rates if rates is not None else [index / len(rewards) for index in range(len(rewards))]
    return [
        {"reward": reward, "npgym/format_rate": rate, "npgym/feasible_rate": rate}
        for reward, rate in zip(rewards, rates, strict=True)
    ]


def test_a_clear_rise_of_reward_and_rates_is_learning() -> None:
    verdict = judge(log([-2.0 + 0.05 * step for step in range(40)]))
    assert verdict.learned and verdict.reasons == []
    assert verdict.p_value < 1e-3 and verdict.statistic == pytest.approx(1.6)


def test_a_flat_log_is_no_learning() -> None:
    verdict = judge(log([-2.1] * 40, [0.1] * 40))
    assert not verdict.learned and verdict.p_value == 1.0
    assert any("format_rate does not rise" in reason for reason in verdict.reasons)


def test_the_issue_s_run_is_no_learning() -> None:
    """Issue 27: the reward 'rose' from -2.155 to -2.106 while both rates fell to 0."""
    rewards = [-2.2, -2.1, -2.2, -2.1, -2.2, -2.1, -2.2, -2.14] + [-2.1, -2.12] * 16
    rates = [0.25, 0, 0, 0.125] + [0.0] * 36
    verdict = judge(log(rewards, rates))
    assert verdict.last["reward"] > verdict.first["reward"] and not verdict.learned
    assert [reason.split()[0] for reason in verdict.reasons] == ["format_rate", "feasible_rate"]


def test_a_rise_within_the_noise_is_no_learning() -> None:
    noisy = [-2.0 + (0.5 if step % 2 else -0.5) + 0.002 * step for step in range(40)]
    verdict = judge(log(noisy))
    assert verdict.last["reward"] > verdict.first["reward"]
    assert not verdict.learned and verdict.p_value > 0.05


@given(st.lists(st.floats(-3, 2), min_size=10, max_size=60))
def test_a_declining_reward_is_never_learning(rewards: list[float]) -> None:
    verdict = judge(log(sorted(rewards, reverse=True)))
    assert not verdict.learned


def test_zero_gradient_steps_are_counted() -> None:
    steps = log([-2.0 + 0.05 * step for step in range(20)])
    for step in steps[:3]:
        step["frac_reward_zero_std"] = 1.0
    steps[3]["frac_reward_zero_std"] = 0.5  # one group of two was flat: a gradient remains
    assert judge(steps).zero_gradient_steps == 3


def test_the_verdict_needs_ten_steps() -> None:
    judge(log([float(step) for step in range(10)]))
    with pytest.raises(ValueError, match="at least 10 steps"):
        judge(log([float(step) for step in range(9)]))


def test_smoke_mode_is_shorter_and_writes_elsewhere() -> None:
    default, smoke = parse([]), parse(["--smoke"])
    assert (default.steps, smoke.steps) == (40, 25)
    assert str(default.output) == "bench/results" and str(smoke.output) != "bench/results"
    assert parse(["--smoke", "--steps", "12"]).steps == 12
