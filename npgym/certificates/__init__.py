"""An independent checker of npgym's optimality certificates (docs/certificates.md).

A reference says ``proven_optimal`` because a solver proved it; a certificate lets anyone check
that without trusting the solver. This package shares no code with the solvers: it imports
nothing from :mod:`npgym.heuristics` and nothing else of npgym, reads the instance from its JSON
fields itself, and computes exactly: Python integers, and numpy's int64 arrays only where a
stated magnitude check first rules out overflow (never floating point). Each task has one
module here exposing:

- ``SENSE``: ``"min"`` or ``"max"``;
- ``objective(instance, solution) -> int | None``: the witness checked from scratch (feasible,
  and its objective), :class:`CertificateError` when it is not a solution;
- ``bound(instance, certificate) -> int``: the bound on the optimum the certificate proves
  (lower for minimisation, upper for maximisation), :class:`CertificateError` when it proves
  nothing.

The task families inherit their base tasks' checkers (:mod:`npgym.certificates.families`).

:func:`check` puts them together: a reference is *proven* when the witness's objective and the
certified bound meet. Every number is an integer (fractional duals are scaled by an integer
denominator the certificate states), so a check is exact and never rounds.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

MAX_CERTIFICATE_BYTES = 8 * 1024 * 1024
"""Largest certificate, as compact JSON text, that :func:`check` reads; a bigger one is refused
before it is looked at (a solver that would need more reports its bound unproven)."""

MODULES: dict[str, str] = {
    "TSP": "tsp",
    "MinBisection": "min_bisection",
    "MaxClique": "max_clique",
    "MaxIndependentSet": "max_independent_set",
    "GraphColoring": "graph_coloring",
    "HamiltonianCycle": "hamiltonian_cycle",
    "SetCover": "set_cover",
    "Knapsack": "knapsack",
    "SubsetSum": "subset_sum",
    "MeetingScheduling": "meeting_scheduling",
}
"""The checker module of each task that has certificates, under this package."""


class CertificateError(ValueError):
    """A certificate, a witness or a claim that does not check, with the reason."""


Sense = Literal["min", "max"]


@dataclass(frozen=True)
class Checked:
    """What a certificate proves about a reference: the witness's ``objective`` (``None`` for a
    proven "no solution") and the certified ``bound`` on the optimum."""

    task: str
    sense: Sense
    objective: int | None
    bound: int | None

    @property
    def proven(self) -> bool:
        """Whether the certified bound meets the witness: the witness is optimal."""
        return self.bound == self.objective


def has_checker(task: str) -> bool:
    """Whether ``task`` has a checker: a built-in task, or a family of one
    (``Aggregate-<Task>``, ``Compose-...``; :mod:`npgym.certificates.families`)."""
    return (
        task in MODULES or task.startswith("Compose-") or task.removeprefix("Aggregate-") in MODULES
    )


def checker(task: str) -> Any:
    """The checker of ``task`` (a module, or a family's checker object);
    :class:`CertificateError` for a task without one."""
    module = MODULES.get(task)
    if module is not None:
        return importlib.import_module(f"{__name__}.{module}")
    from npgym.certificates.families import family_checker

    found = family_checker(task) if has_checker(task) else None
    if found is None:
        raise CertificateError(f"no certificate checker for task {task!r}")
    return found


def check(task: str, instance: Mapping[str, Any], solution: Any, certificate: Any) -> Checked:
    """Check ``solution`` and ``certificate`` on ``instance`` (the instance's JSON object).

    Returns what they prove; raises :class:`CertificateError` when the solution is not one,
    the certificate is malformed, too big or proves nothing.
    """
    module = checker(task)
    if not isinstance(certificate, Mapping):
        raise CertificateError("a certificate is a JSON object")
    size = len(json.dumps(certificate, separators=(",", ":")))
    if size > MAX_CERTIFICATE_BYTES:
        raise CertificateError(
            f"certificate of {size} bytes, over the limit of {MAX_CERTIFICATE_BYTES}"
        )
    try:
        if hasattr(module, "check_pair"):
            objective, bound = module.check_pair(instance, solution, certificate)
        else:
            objective = module.objective(instance, solution)
            bound = module.bound(instance, certificate)
    except CertificateError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as error:
        raise CertificateError(f"malformed: {type(error).__name__}: {error}") from None
    return Checked(task, module.SENSE, objective, bound)


def check_claim(
    task: str,
    instance: Mapping[str, Any],
    *,
    objective: int | None,
    solution: Any,
    proven_optimal: bool,
    bound: int | None,
    certificate: Any,
) -> Checked:
    """Check a reference's claims against its certificate: the witness has the stated
    ``objective``; a ``proven_optimal`` reference's certified bound meets it; a stated ``bound``
    is no stronger than the certified one. :class:`CertificateError` says which claim fails."""
    if certificate is None:
        raise CertificateError("no certificate")
    checked = check(task, instance, solution, certificate)
    if checked.objective != objective:
        raise CertificateError(
            f"the solution's objective is {checked.objective}, the reference says {objective}"
        )
    if proven_optimal and not checked.proven:
        raise CertificateError(
            f"marked proven, but the certificate bounds the optimum by {checked.bound}, "
            f"not {objective}"
        )
    if bound is not None and checked.bound is not None:
        stronger = bound > checked.bound if checked.sense == "min" else bound < checked.bound
        if stronger:
            raise CertificateError(
                f"states the bound {bound}, the certificate proves only {checked.bound}"
            )
    return checked


def integer(value: Any, what: str) -> int:
    """``value`` as an ``int``: a JSON integer only (never a bool, a float or a string)."""
    if type(value) is not int:
        raise CertificateError(f"{what} must be an integer, got {value!r:.40}")
    return value


def integers(values: Any, what: str) -> list[int]:
    """``values`` as a list of ``int`` (each checked by :func:`integer`)."""
    if not isinstance(values, list):
        raise CertificateError(f"{what} must be a list of integers")
    return [integer(value, what) for value in values]
