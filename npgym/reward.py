"""The reward: ``R = R_format + R_feasibility`` with parameterised weights, and named presets.

Two presets (:data:`PRESETS`), accepted by name everywhere a reward is configured:

- ``"np-engine"`` (the default): NP-ENGINE's published formula. A feasible answer earns
  ``format_ok + optimality_weight * ratio`` with the ratio objective/reference clipped to [0, 1].
- ``"strict"``: for training. Optimality is the share of the gap from the task's zero-effort
  baseline (:meth:`npgym.task.Task.baseline_solution`) to the reference that the answer closes,
  so an answer no better than the baseline earns exactly what an infeasible answer earns and only
  real effort pays; the optimal answer still scores 2. Format failures earn graded partial credit
  (the ``Answer:`` marker, a bracketed value, a value of the right shape), always below every
  parsed answer, so a cold-start model has a slope to climb.

In both, an answer with objective 0 on a maximisation task (the empty set) is not a solution: it
scores as infeasible with the reason "empty answer".
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from npgym.results import Objective

Sense = Literal["min", "max"]
Optimality = Literal["ratio", "gap"]

MAX_REWARD_WEIGHT = 1e6
"""Largest magnitude of a reward weight: every reward then stays within a few million, so no
sum of weights can overflow a float to infinity."""
Weight = Annotated[float, Field(ge=-MAX_REWARD_WEIGHT, le=MAX_REWARD_WEIGHT)]


class RewardConfig(BaseModel):
    """Reward weights (docs/contract.md, "Reward"); the defaults are the published ones.

    A parsed answer earns ``format_ok``, an unparseable one ``format_fail``. A feasible answer
    then earns ``optimality_weight`` times its optimality; an infeasible one (or one that failed
    to parse) earns ``infeasible``. The optimal answer scores 1 + 1 = 2.

    ``optimality`` says how a feasible answer's optimality is measured: ``"ratio"`` (objective
    against reference, NP-ENGINE) or ``"gap"`` (share of the baseline-to-reference gap closed;
    the feasibility term then runs from ``infeasible`` at the baseline to ``optimality_weight``
    at the reference). ``marker_credit``, ``value_credit`` and ``shape_credit`` are added to an
    unparseable answer that has the ``Answer:`` marker, a bracketed value after it, and a value
    of the reference solution's nesting and length; together they stay below
    ``format_ok - format_fail``, so every parsed answer outranks every unparseable one. Every
    weight must be a finite number of magnitude at most :data:`MAX_REWARD_WEIGHT`: a NaN,
    infinite or huge weight would make rewards NaN or infinite.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    format_ok: Weight = 1.0
    format_fail: Weight = -1.0
    infeasible: Weight = -1.5
    optimality_weight: Weight = 1.0
    optimality: Optimality = "ratio"
    marker_credit: Weight = 0.0
    value_credit: Weight = 0.0
    shape_credit: Weight = 0.0

    @model_validator(mode="after")
    def _credits_below_a_parsed_answer(self) -> RewardConfig:
        credits = (self.marker_credit, self.value_credit, self.shape_credit)
        if min(credits) < 0:
            raise ValueError("format credits must be non-negative")
        if sum(credits) >= self.format_ok - self.format_fail and sum(credits) > 0:
            raise ValueError(
                "marker_credit + value_credit + shape_credit must stay below "
                "format_ok - format_fail, or a malformed answer would outrank a parsed one"
            )
        if self.optimality == "gap" and self.optimality_weight < self.infeasible:
            raise ValueError("with optimality='gap', optimality_weight must be >= infeasible")
        return self


DEFAULT_REWARD = RewardConfig()

PRESETS: dict[str, RewardConfig] = {
    "np-engine": DEFAULT_REWARD,
    "strict": RewardConfig(optimality="gap", marker_credit=0.4, value_credit=0.4, shape_credit=0.4),
}
"""Reward presets by name: ``"np-engine"`` (default, the published formula) and ``"strict"``."""

DEFAULT_PRESET = "np-engine"

RewardSpec = RewardConfig | str | None
"""What reward parameters accept: a preset name, a :class:`RewardConfig`, or ``None`` (default)."""


def resolve_reward(reward: RewardSpec | dict[str, object] = None) -> RewardConfig:
    """The :class:`RewardConfig` for a preset name, a config, a mapping of weights, or ``None``.

    An unknown preset name raises ``ValueError`` listing the valid ones.
    """
    if reward is None:
        return DEFAULT_REWARD
    if isinstance(reward, RewardConfig):
        return reward
    if isinstance(reward, str):
        try:
            return PRESETS[reward]
        except KeyError:
            valid = ", ".join(repr(name) for name in PRESETS)
            raise ValueError(f"unknown reward preset {reward!r}; valid presets: {valid}") from None
    if isinstance(reward, dict):
        return RewardConfig.model_validate(reward)
    raise TypeError(
        f"reward must be a preset name, a RewardConfig or a mapping, got {type(reward).__name__}"
    )


def optimality_ratio(objective: Objective, reference: Objective, sense: Sense) -> float:
    """``M_s / M_h`` for maximisation, ``M_h / M_s`` for minimisation, unclipped.

    A zero denominator is handled without dividing by zero: equal values give 1, an answer that
    beats a zero reference gives infinity. Negative ratios (impossible for npgym's non-negative
    objectives) are reported as 0.
    """
    numerator, denominator = (objective, reference) if sense == "max" else (reference, objective)
    if denominator == 0:
        if numerator == 0:
            return 1.0
        return math.inf if numerator > 0 else 0.0
    return max(numerator / denominator, 0.0)


def gap_closed(
    objective: Objective, baseline: Objective | None, reference: Objective, sense: Sense
) -> float:
    """Share of the gap from ``baseline`` to ``reference`` that ``objective`` closes, in [0, 1].

    A ``None`` baseline (a task with no zero-effort answer) is measured from 0. Reaching or
    beating the reference gives 1 even when the gap is empty; anything else with an empty or
    inverted gap gives 0.
    """
    start = 0 if baseline is None else baseline
    better = objective >= reference if sense == "max" else objective <= reference
    if better:
        return 1.0
    gap = (reference - start) if sense == "max" else (start - reference)
    if gap <= 0:
        return 0.0
    gained = (objective - start) if sense == "max" else (start - objective)
    return clip_ratio(gained / gap)


def clip_ratio(ratio: float) -> float:
    """Clip an optimality ratio into [0, 1] for the reward and the Average Ratio metric."""
    return min(max(ratio, 0.0), 1.0)
