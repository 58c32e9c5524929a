"""What every exact solver in this package returns, and the one definition of ``gap``.

A solver ends with the best solution it found (the *witness*), that solution's objective, and a
proven bound on the optimum: a lower bound for minimisation, an upper bound for maximisation. The
witness is optimal exactly when the two meet. ``gap`` measures how far apart they are, relative
to the objective:

    gap = |objective - bound| / max(|objective|, 1)

This is the relative MIP gap of Gurobi, CPLEX and HiGHS (primal-dual distance over the primal
value): it says how far the *reference* may be from the optimum, in units of the reference,
which is what a reward ratio computed against it needs. Every objective in npgym is an integer, so
``max(|objective|, 1)`` only matters for an objective of 0 and never divides by zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

Stop = Literal["", "budget", "deadline"]
"""Why a search ended without a proof: ``budget`` (its deterministic work allowance ran out: the
same on every machine) or ``deadline`` (the wall-clock safety net fired: machine-dependent);
empty when it ran to the end."""

WitnessT = TypeVar("WitnessT")


def relative_gap(objective: float, bound: float) -> float:
    """``|objective - bound| / max(|objective|, 1)``: 0 exactly when the bound proves optimality."""
    return abs(objective - bound) / max(abs(objective), 1)


@dataclass(frozen=True, slots=True)
class SolverResult(Generic[WitnessT]):
    """Outcome of an exact solver: the best witness found and what was proven about it.

    ``bound`` is a proven bound on the optimum (lower for minimisation, upper for maximisation),
    equal to ``objective`` when the witness is proven optimal. ``work`` counts the deterministic
    work units spent (branch-and-bound nodes, LP solves, CP-SAT deterministic seconds: each
    solver says which); ``stopped`` says why the search ended early, if it did.
    """

    witness: WitnessT
    objective: int
    bound: int
    work: int = 0
    stopped: Stop = ""
    solver: str = ""
    certificate: dict[str, Any] | None = None
    """JSON-ready proof of ``bound`` that :mod:`npgym.certificates` checks on the instance alone
    (``None`` where the solver has none)."""

    @property
    def proven_optimal(self) -> bool:
        """Whether the bound meets the objective (the witness is optimal)."""
        return self.bound == self.objective

    @property
    def gap(self) -> float:
        """:func:`relative_gap` of the objective and the bound."""
        return relative_gap(self.objective, self.bound)
