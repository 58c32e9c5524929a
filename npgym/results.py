"""What the verifier, the reference solvers and the scorer return."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Objective = int | float
ReferenceMethod = Literal["exact", "planted", "heuristic"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Feasibility of a parsed solution, its objective value, and why it failed if it did."""

    feasible: bool
    objective: Objective | None = None
    reason: str = ""


class Reference(BaseModel):
    """The best known solution of an instance and how much we know about its optimality.

    ``method`` is ``exact`` when a solver proved optimality, ``planted`` when the construction
    proves it, and ``heuristic`` otherwise; then ``bound`` (a proven bound on the optimum: lower
    for minimisation, upper for maximisation) and ``gap`` (relative distance between objective and
    bound) say how far from optimal the reference may be. ``solution`` is a witness in the
    task's answer shape that the verifier accepts.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    objective: Objective | None
    solution: Any
    proven_optimal: bool
    method: ReferenceMethod
    solver: str = ""
    bound: Objective | None = None
    gap: float | None = None


@dataclass(frozen=True, slots=True)
class Score:
    """A completion's reward and the verdict behind it (docs/contract.md, "Reward").

    ``ratio`` is the unclipped optimality ratio (objective vs. reference, >1 when the answer beats
    the reference), ``None`` unless the answer is feasible; ``optimality`` is that ratio clipped to
    [0, 1] and 0 for infeasible answers: the term of the reward and of NP-Bench's Average Ratio.
    ``baseline_objective`` is the objective of the task's zero-effort answer
    (``Task.baseline_solution``; ``None`` where the task has none, and for an answer that did not
    parse), and ``no_better_than_baseline``
    says whether a feasible answer failed to improve on it (always ``False`` for an infeasible
    answer or a ``None`` baseline).
    """

    reward: float
    format_ok: bool
    feasible: bool
    objective: Objective | None
    reference_objective: Objective | None
    ratio: float | None
    optimality: float
    reason: str
    format_reward: float
    feasibility_reward: float
    baseline_objective: Objective | None = None
    no_better_than_baseline: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The score as a plain dict (JSON-serialisable)."""
        return asdict(self)
