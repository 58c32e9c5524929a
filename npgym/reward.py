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
from collections.abc import Callable
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from npgym.answer import IntRows
from npgym.results import Objective, Reference, Score, Verdict

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


EMPTY_ANSWER = "empty answer"
"""The reason given when a maximisation answer has objective 0: the empty set is no solution."""


def verdict_score(
    weights: RewardConfig,
    verdict: Verdict,
    reference_objective: Objective | None,
    baseline_objective: Objective | None,
    sense: Sense,
    ratio: Callable[[Objective, Objective | None], float],
) -> Score:
    """The score of an answer that parsed into the task's shape: the formula of the reward.

    ``ratio`` is the task's unclipped optimality ratio (``Task.ratio``). On a maximisation task
    an objective of 0 (the empty answer) is not a solution: it scores as infeasible, in every
    preset. Under ``optimality="gap"`` the feasibility term runs linearly from ``infeasible`` (no
    better than the baseline) to ``optimality_weight`` (optimal).
    """
    if not verdict.feasible:
        reason = verdict.reason
        return failed_score(
            weights, True, verdict.objective, reference_objective, reason, 0.0, baseline_objective
        )
    objective = verdict.objective
    if sense == "max" and objective == 0:
        return failed_score(
            weights, True, 0, reference_objective, EMPTY_ANSWER, 0.0, baseline_objective
        )
    unclipped = ratio(objective, reference_objective)  # type: ignore[arg-type]
    if weights.optimality == "ratio":
        optimality = clip_ratio(unclipped)
        feasibility_reward = weights.optimality_weight * optimality
    else:
        if unclipped >= 1.0 or objective is None:
            optimality = 1.0
        else:
            optimality = gap_closed(
                objective,
                baseline_objective,
                reference_objective,  # type: ignore[arg-type]
                sense,
            )
        span = weights.optimality_weight - weights.infeasible
        feasibility_reward = weights.infeasible + span * optimality
    return Score(
        reward=weights.format_ok + feasibility_reward,
        format_ok=True,
        feasible=True,
        objective=objective,
        reference_objective=reference_objective,
        ratio=unclipped,
        optimality=optimality,
        reason="",
        format_reward=weights.format_ok,
        feasibility_reward=feasibility_reward,
        baseline_objective=baseline_objective,
        no_better_than_baseline=no_better(sense, objective, baseline_objective),
    )


def failed_score(
    weights: RewardConfig,
    format_ok: bool,
    objective: Objective | None,
    reference_objective: Objective | None,
    reason: str,
    credit: float = 0.0,
    baseline_objective: Objective | None = None,
) -> Score:
    """The score of an answer that failed to parse (plus any graded ``credit``) or is infeasible."""
    format_reward = (weights.format_ok if format_ok else weights.format_fail) + credit
    return Score(
        reward=format_reward + weights.infeasible,
        format_ok=format_ok,
        feasible=False,
        objective=objective,
        reference_objective=reference_objective,
        ratio=None,
        optimality=0.0,
        reason=reason,
        format_reward=format_reward,
        feasibility_reward=weights.infeasible,
        baseline_objective=baseline_objective,
    )


def no_better(sense: Sense, objective: Objective | None, baseline: Objective | None) -> bool:
    """Whether a feasible answer's objective fails to improve on the baseline's."""
    if objective is None or baseline is None:
        return False
    return objective <= baseline if sense == "max" else objective >= baseline


def format_credit(
    weights: RewardConfig, step: str, value: Any, reference: Reference | Objective
) -> float:
    """Partial credit for an unparseable answer: marker found, bracketed value, right outline.

    ``step`` is the parse step that failed: past ``extract`` the marker was found; past
    ``tokenise`` a value was read, which earns more if it is a list, and more again if it has
    the nesting and lengths of the reference solution (when the reference carries one).
    """
    if step == "extract":
        return 0.0
    credit = weights.marker_credit
    if step != "shape" or not is_list(value):
        return credit
    credit += weights.value_credit
    if isinstance(reference, Reference) and _outline(value) == _outline(reference.solution):
        credit += weights.shape_credit
    return credit


def is_list(value: Any) -> bool:
    """Whether a parsed value is a list: plain, or as the scanner makes them (arrays, rows)."""
    return isinstance(value, (list, np.ndarray, IntRows))


def _outline(value: Any) -> Any:
    """The nesting and lengths of a value, without its entries (``None`` for a scalar)."""
    if isinstance(value, (np.ndarray, IntRows)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_outline(item) for item in value]
    return None
