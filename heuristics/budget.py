"""Work budgets and the wall-clock safety net of the exact solvers.

Whether an instance is proven must not depend on how busy the machine is, so every search is
limited by *work* (nodes, LP solves, simplex iterations, CP-SAT deterministic time), never by
time. Callers give a nominal number of seconds (``effort``); each solver converts it into its own
work units with a fixed rate, calibrated so that an idle machine needs about that long. The same
instance and effort give the same result, bit for bit, on an idle or a loaded machine.

The wall clock only guards against a run gone astray: :class:`Deadline` fires at
:data:`SAFETY_FACTOR` times the effort, and a solver it stops reports ``stopped="deadline"``
instead of pretending that the budget ran out.
"""

from __future__ import annotations

import math
from time import monotonic
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ortools.sat.python.cp_model import CpSolver

SAFETY_FACTOR = 10.0
"""The wall-clock safety net fires at this multiple of the nominal effort: far beyond what the
work budget needs on an idle machine, so only a stalled or badly overloaded run reaches it."""


CP_SAT_DETERMINISTIC_PER_SECOND = 0.05
"""CP-SAT deterministic seconds (``max_deterministic_time``) per nominal second of effort. CP-SAT's
deterministic clock runs far slower than the wall clock on the models here (measured 10-25x with
one worker), so a nominal second buys 50 deterministic milliseconds."""


class Deadline:
    """A wall-clock safety net: ``expired()`` turns true (and stays true) once it has passed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self._at = monotonic() + self.seconds if math.isfinite(self.seconds) else math.inf
        self.fired = False

    @classmethod
    def for_effort(cls, effort: float) -> Deadline:
        """The safety net for a work budget of ``effort`` nominal seconds."""
        effort = float(effort)
        return cls(SAFETY_FACTOR * (effort if effort > 0 else 0.0) + 1.0)

    def expired(self) -> bool:
        """True once the deadline has passed (remembered in :attr:`fired`)."""
        if not self.fired and monotonic() >= self._at:
            self.fired = True
        return self.fired

    def remaining(self) -> float:
        """Seconds left (at least a millisecond, so that it can be handed to a solver)."""
        if self.expired():
            return 0.001
        return max(min(self._at - monotonic(), 1e9), 0.001)


def cp_sat_solver(deterministic_seconds: float, deadline: Deadline) -> CpSolver:
    """A CP-SAT solver whose result depends only on the model and the budget: one worker, a
    pinned seed, ``deterministic_seconds`` of CP-SAT's deterministic time (at least a
    millisecond); the wall clock only as the safety net ``deadline``."""
    from ortools.sat.python import cp_model  # loaded where a model is solved, not on import

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 1  # CP-SAT's default, pinned
    solver.parameters.max_deterministic_time = max(deterministic_seconds, 0.001)
    solver.parameters.max_time_in_seconds = deadline.remaining()
    return solver


def work_units(effort: float, per_second: float, minimum: int = 1) -> int:
    """``effort`` nominal seconds as a whole number of work units (never below ``minimum``;
    unlimited for an infinite effort, the minimum for NaN)."""
    if math.isnan(effort):
        return minimum
    if math.isinf(effort):
        return 2**62 if effort > 0 else minimum
    return max(minimum, int(min(max(effort, 0.0) * per_second, 2**62)))
