"""Certificates of the task families: they inherit their base tasks' (docs/certificates.md).

- ``Aggregate-<Task>``: the instance's ``base`` is a ``<Task>`` instance and the reference is
  the base task's; its certificate is the base reference's, checked on ``base``.
- ``Compose-...``: ``{"kind": "parts", "parts": [c_1, ..., c_K]}``, one base certificate (or
  ``null``) per part, in the order of the instance's ``parts``; the solution is the list of the
  parts' solutions. A part counts as solved optimally when its certificate proves its
  solution optimal. The composite's objective is the number of such parts and its bound is
  K (no answer solves more parts than there are), so it is proven exactly when every part is.
  A chained part (a ``links`` entry ``{"field", "scale", "offset"}``) must also have
  ``field = scale * k + offset``, where ``k`` is the previous part's certified optimum;
  otherwise the chain is not the one its prompt describes.

Cost: the sum of the parts' checks.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from npgym.certificates import MODULES, CertificateError, integer


def base_module(instance: Any) -> ModuleType:
    """The checker module of a base instance's ``task``."""
    if not isinstance(instance, Mapping):
        raise CertificateError("a part or base instance is a JSON object")
    name = MODULES.get(str(instance.get("task")))
    if name is None:
        raise CertificateError(f"no checker for a part of task {instance.get('task')!r}")
    return importlib.import_module(f"npgym.certificates.{name}")


class Aggregate:
    """``Aggregate-<Task>``: the base task's checker on the instance's ``base``."""

    def __init__(self, task: str) -> None:
        self.base_task = task.removeprefix("Aggregate-")
        module = MODULES.get(self.base_task)
        if module is None:
            raise CertificateError(f"no certificate checker for task {task!r}")
        self.module = importlib.import_module(f"npgym.certificates.{module}")
        self.SENSE = self.module.SENSE

    def _base(self, instance: Mapping[str, Any]) -> Mapping[str, Any]:
        base = instance.get("base")
        if not isinstance(base, Mapping) or base.get("task") != self.base_task:
            raise CertificateError(f"the instance's base is not a {self.base_task} instance")
        return base

    def objective(self, instance: Mapping[str, Any], solution: Any) -> int | None:
        return self.module.objective(self._base(instance), solution)

    def bound(self, instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
        return self.module.bound(self._base(instance), certificate)


class Compose:
    """``Compose-...``: every part's checker (see the module docstring)."""

    SENSE = "max"

    @staticmethod
    def check_pair(
        instance: Mapping[str, Any], solution: Any, certificate: Mapping[str, Any]
    ) -> tuple[int, int]:
        """The composite's (objective, bound): parts certified optimal, and the part count."""
        parts, links = instance.get("parts"), instance.get("links")
        if not isinstance(parts, list) or not isinstance(links, list) or len(links) != len(parts):
            raise CertificateError("a composite instance has parts and as many links")
        proofs = certificate.get("parts")
        if certificate.get("kind") != "parts" or not isinstance(proofs, list):
            raise CertificateError('a composite certificate is {"kind": "parts", "parts": [...]}')
        if not isinstance(solution, list) or not len(solution) == len(proofs) == len(parts):
            raise CertificateError(f"expected {len(parts)} parts' solutions and certificates")
        solved, optimum = 0, None
        for index, (part, link, answer, proof) in enumerate(
            zip(parts, links, solution, proofs, strict=True), start=1
        ):
            module = base_module(part)
            if link is not None:
                _check_link(part, link, optimum, index)
            value = module.objective(part, answer)
            optimum = None
            if proof is not None:
                if not isinstance(proof, Mapping):
                    raise CertificateError(f"part {index}: a certificate is a JSON object")
                if module.bound(part, proof) == value:
                    solved, optimum = solved + 1, value
        return solved, len(parts)


def _check_link(part: Mapping[str, Any], link: Any, previous: int | None, index: int) -> None:
    """A chained part's parameter is ``scale * k + offset`` for the previous certified optimum."""
    if not isinstance(link, Mapping):
        raise CertificateError(f"part {index}: a link is a JSON object")
    if previous is None:
        raise CertificateError(f"part {index} is chained to a part not certified optimal")
    field = link.get("field")
    expected = integer(link.get("scale"), "scale") * previous + integer(
        link.get("offset"), "offset"
    )
    if not isinstance(field, str) or part.get(field) != expected:
        raise CertificateError(
            f"part {index}: its {field} is not {expected}, the link's value for the previous "
            f"part's certified optimum {previous}"
        )


def family_checker(task: str) -> Any:
    """The checker object of a family task name, or ``None`` when it is not one."""
    if task.startswith("Aggregate-"):
        return Aggregate(task)
    if task.startswith("Compose-"):
        return Compose()
    return None
