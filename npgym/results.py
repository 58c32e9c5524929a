"""What the verifier, the reference solvers and the scorer return."""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

import npgym.certificates as certificates
from npgym.heuristics.result import SolverResult, relative_gap

Objective = int | float
ReferenceMethod = Literal["exact", "planted", "heuristic"]
NOT_SCANNED = -1
"""The code a task's fused kernel (``Task.check_answer``) returns first when its scanner did
not read the answer: ``Task.score`` then hands the answer to the parser."""
MAX_REFERENCE_MAGNITUDE = 1e300
"""Largest reference objective, in absolute value, that scoring accepts: far above any npgym
objective, and small enough that no ratio or gap of it overflows a float into an exception."""
DEADLINE_NOTE = " [stopped by the wall-clock safety net]"
"""Appended to ``Reference.solver`` when the safety net, not the work budget, ended the search."""
DEFAULT_TIME_LIMIT = 60.0
"""Nominal seconds of work a reference may spend before it reports its best bound instead.

Solvers turn it into deterministic work budgets (nodes, LP columns, CP-SAT deterministic time;
see :mod:`npgym.heuristics.budget`), calibrated so that an idle machine needs about that long:
whether a reference is proven never depends on machine load. The wall clock only backs this up,
at :data:`npgym.heuristics.budget.SAFETY_FACTOR` times the limit."""


def reference_key(exact: bool, time_limit: float) -> str:
    """Where ``Task.reference`` keeps a reference in the instance's cache."""
    return f"reference:{bool(exact)}:{float(time_limit)}"


DEFAULT_REFERENCE_KEY = reference_key(True, DEFAULT_TIME_LIMIT)
"""Where the reference that ``score()`` uses by default is kept (exact, default limit)."""


@dataclass(frozen=True, init=False)
class Verdict:
    """Feasibility of a parsed solution, its objective value, and why it failed if it did."""

    feasible: bool
    objective: Objective | None = None
    reason: str = ""

    def __init__(
        self, feasible: bool, objective: Objective | None = None, reason: str = ""
    ) -> None:
        # One dict update instead of a frozen dataclass's setattr per field (see Score).
        self.__dict__.update(feasible=feasible, objective=objective, reason=reason)


class Reference(BaseModel):
    """The best known solution of an instance and how much we know about its optimality.

    ``method`` is ``exact`` when a solver proved optimality, ``planted`` when the construction
    proves it, and ``heuristic`` otherwise. ``bound`` is a proven bound on the optimum (lower for
    minimisation, upper for maximisation) and ``gap`` how far the objective may be from it, on
    every task the same way (:func:`npgym.heuristics.result.relative_gap`)::

        gap = |objective - bound| / max(|objective|, 1)

    the relative MIP gap of Gurobi, CPLEX and HiGHS. It is relative to the reference itself, so
    it bounds how far off a reward ratio computed against the reference can be: for a
    minimisation the optimum is at least ``(1 - gap) * objective``, for a maximisation at most
    ``(1 + gap) * objective``. Objectives are integers, so ``max(|objective|, 1)`` only guards
    an objective of 0. ``gap`` is 0 exactly when the reference is proven optimal, and ``bound``
    and ``gap`` are ``None`` when nothing is known (a heuristic reference without a bound, or an
    instance without a solution). ``solution`` is a witness in the task's answer shape that the
    verifier accepts. ``solver`` names the method; it ends in :data:`DEADLINE_NOTE` when the
    wall-clock safety net, not the deterministic work budget, stopped the search (then, and only
    then, the reference may differ on a faster machine). ``certificate`` is the proof of
    ``bound`` that :mod:`npgym.certificates` checks from the instance alone, in exact arithmetic
    (docs/certificates.md); rows keep it out of their ``reference`` field
    (:meth:`row_json`) and datasets carry it beside them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    objective: Objective | None
    solution: Any
    proven_optimal: bool
    method: ReferenceMethod
    solver: str = ""
    bound: Objective | None = None
    gap: float | None = None
    certificate: dict[str, Any] | None = None

    @classmethod
    def from_result(
        cls, result: SolverResult[Any], solution: Any, solver: str, proven_method: str = "exact"
    ) -> Reference:
        """The reference of an exact solver's result, ``solution`` being its witness in the
        task's answer shape; ``proven_method`` is the method when it is proven optimal."""
        proven = result.proven_optimal
        return cls(
            objective=result.objective,
            solution=solution,
            proven_optimal=proven,
            method=proven_method if proven else "heuristic",
            solver=solver + (DEADLINE_NOTE if result.stopped == "deadline" else ""),
            bound=result.bound,
            gap=result.gap,
            certificate=result.certificate,
        )

    @classmethod
    def bounded(
        cls,
        objective: int,
        solution: Any,
        bound: int,
        solver: str,
        method: str = "exact",
        certificate: dict[str, Any] | None = None,
    ) -> Reference:
        """A reference with a known bound (and its ``certificate``): proven (with ``method``)
        when the bound meets it."""
        proven = bound == objective
        return cls(
            objective=objective,
            solution=solution,
            proven_optimal=proven,
            method=method if proven else "heuristic",
            solver=solver,
            bound=bound,
            gap=relative_gap(objective, bound),
            certificate=certificate,
        )

    def row_json(self) -> str:
        """The reference as a row's ``reference`` field stores it: everything but the
        certificate, which travels beside the rows (so NP-Bench's published rows keep their
        bytes; docs/certificates.md)."""
        return self.model_dump_json(exclude={"certificate"})


@dataclass(frozen=True, init=False)
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

    def __init__(
        self,
        reward: float,
        format_ok: bool,
        feasible: bool,
        objective: Objective | None,
        reference_objective: Objective | None,
        ratio: float | None,
        optimality: float,
        reason: str,
        format_reward: float,
        feasibility_reward: float,
        baseline_objective: Objective | None = None,
        no_better_than_baseline: bool = False,
    ) -> None:
        # score() makes one Score per completion: a single dict update costs a third of the
        # per-field setattr that a generated frozen __init__ does. Still frozen afterwards.
        self.__dict__.update(
            reward=reward,
            format_ok=format_ok,
            feasible=feasible,
            objective=objective,
            reference_objective=reference_objective,
            ratio=ratio,
            optimality=optimality,
            reason=reason,
            format_reward=format_reward,
            feasibility_reward=feasibility_reward,
            baseline_objective=baseline_objective,
            no_better_than_baseline=no_better_than_baseline,
        )

    def to_dict(self) -> dict[str, Any]:
        """The score as a plain dict (JSON-serialisable)."""
        return asdict(self)


def checked_reference(reference: object) -> Reference | Objective:
    """``reference`` as :meth:`npgym.task.Task.score` takes it, or ``ValueError`` naming it.

    A :class:`Reference` passes when its objective is ``None`` or a finite number; otherwise
    the reference must be a finite ``int`` or ``float`` (numpy's included, returned as Python
    numbers) of magnitude at most :data:`MAX_REFERENCE_MAGNITUDE`. A ``bool``, a string, a
    container, NaN or an infinity is refused: each would otherwise make the reward NaN, or trip
    the scorer's internal-error guard, instead of saying what is wrong.
    """
    if isinstance(reference, Reference):
        objective = reference.objective
        if objective is not None and not (  # the usual case decided inline: a hot path
            (type(objective) is int or type(objective) is float)
            and -MAX_REFERENCE_MAGNITUDE <= objective <= MAX_REFERENCE_MAGNITUDE
        ):
            _checked_objective(objective, "reference.objective")
        return reference
    return _checked_objective(reference, "reference")


def _checked_objective(value: object, name: str) -> Objective:
    """``value`` as a Python number, if it is a finite, not too large int or float."""
    number: Objective
    if type(value) is int or type(value) is float:  # the usual case first: no conversion
        number = value
    elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    ):
        number = int(value) if isinstance(value, (int, np.integer)) else float(value)
    else:
        raise ValueError(
            f"{name} must be a Reference, a finite number or None, "
            f"got {type(value).__name__} {_shown(value)}"
        )
    if not -MAX_REFERENCE_MAGNITUDE <= number <= MAX_REFERENCE_MAGNITUDE:  # NaN fails too
        raise ValueError(
            f"{name} must be a finite number of magnitude at most "
            f"{MAX_REFERENCE_MAGNITUDE:g}, got {_shown(number)}"
        )
    return number


def _shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a hostile value may be huge)."""
    shown = repr(value) if not isinstance(value, int) or value.bit_length() < 256 else "a huge int"
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


class UncertifiedReferenceWarning(RuntimeWarning):
    """A solver's claim that its certificate does not back: the reference was downgraded."""


def certified(task: str, instance_json: str, reference: Reference) -> Reference:
    """``reference`` when its certificate backs what it claims (:func:`npgym.certificates.
    check_claim`), else the reference downgraded to what is proven, with a warning.

    The proof gate of :meth:`npgym.task.Task.reference`: a solver's word never reaches
    ``proven_optimal`` (or a stated bound) unless the independent checker agrees. A downgraded
    reference keeps its solution and objective, is ``method="heuristic"`` and keeps the bound
    its certificate proves (none when the certificate proves nothing). A task without a checker
    (a plug-in) keeps its solver's word.
    """
    if not certificates.has_checker(task) or (
        reference.bound is None and not reference.proven_optimal
    ):
        return reference
    instance = json.loads(instance_json)
    try:
        certificates.check_claim(
            task,
            instance,
            objective=_integral(reference.objective),
            solution=reference.solution,
            proven_optimal=reference.proven_optimal,
            bound=_integral(reference.bound),
            certificate=reference.certificate,
        )
        return reference
    except certificates.CertificateError as error:
        reason = str(error)
    bound, certificate = None, None
    if reference.certificate is not None:
        try:
            checked = certificates.check(task, instance, reference.solution, reference.certificate)
            bound, certificate = checked.bound, reference.certificate
        except certificates.CertificateError:
            pass
    warnings.warn(
        f"{task}: the reference's certificate does not check ({reason}); it is reported "
        "unproven" + ("" if bound is None else f" with the certified bound {bound}"),
        UncertifiedReferenceWarning,
        stacklevel=2,
    )
    objective = reference.objective
    return reference.model_copy(
        update={
            "proven_optimal": False,
            "method": "heuristic",
            "bound": bound,
            "gap": None if bound is None or objective is None else relative_gap(objective, bound),
            "certificate": certificate,
        }
    )


def _integral(value: Objective | None) -> int | None:
    """An objective or bound as the checker compares it (integral floats as ``int``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value  # type: ignore[return-value]
