"""The NP-ENGINE reward: ``R = R_format + R_feasibility`` with parameterised weights."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

from npgym.results import Objective

Sense = Literal["min", "max"]


class RewardConfig(BaseModel):
    """Reward weights (docs/contract.md, "Reward"); the defaults are the published ones.

    A parsed answer earns ``format_ok``, an unparseable one ``format_fail``. A feasible answer
    then earns ``optimality_weight`` times its clipped optimality ratio; an infeasible one (or one
    that failed to parse) earns ``infeasible``. The optimal answer scores 1 + 1 = 2. Every
    weight must be a finite number: a NaN or infinite weight would make rewards NaN.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    format_ok: float = 1.0
    format_fail: float = -1.0
    infeasible: float = -1.5
    optimality_weight: float = 1.0


DEFAULT_REWARD = RewardConfig()


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


def clip_ratio(ratio: float) -> float:
    """Clip an optimality ratio into [0, 1] for the reward and the Average Ratio metric."""
    return min(max(ratio, 0.0), 1.0)
