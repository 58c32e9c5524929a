"""The SetCover task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from npgym.answer import AnswerFormatError
from npgym.heuristics import set_cover as solvers
from npgym.results import Objective, Reference, Score, Verdict
from npgym.task import KernelTask
from npgym.tasks.set_cover import generator, prompt
from npgym.tasks.set_cover.instance import SetCoverInstance
from npgym.tasks.set_cover.verifier import (
    OK,
    check_cover,
    check_cover_python,
    reason,
    scan_check_cover,
)

IMPOSSIBLE = "Impossible"
"""The answer (and reference solution) for an instance whose subsets do not cover the universe."""

_NO_IDS = np.zeros(0, dtype=np.int64)


class SetCoverTask(KernelTask[SetCoverInstance, generator.SetCoverConfig]):
    """Set Cover: the fewest subsets whose union is the universe, or ``Impossible``.

    Answer: ``[s1, s2, ...]``, distinct subset numbers in any order (a repeated subset is
    infeasible), or the word ``Impossible`` (any letter case is accepted; the prompt says
    ``Impossible``). About one generated instance in ten has no cover (see
    :mod:`~npgym.tasks.set_cover.generator`). ``Impossible`` on a coverable instance is
    infeasible; on an instance without a cover it is feasible with no objective
    (``Verdict.objective`` is ``None``), its reference is ``Impossible`` with objective
    ``None``, and it scores as optimal (ratio 1). Reference: greedy (most newly covered elements,
    redundant subsets dropped), then the integer programme solved by HiGHS to prove it optimal
    or improve it; whether a cover exists at all is proven by the union of all subsets. Every
    reference carries a certificate (:mod:`npgym.certificates.set_cover`): the element no
    subset holds, or rounded LP duals (with a branching tree where the root's fall short) that
    prove the bound without HiGHS's word; without ``exact``, the size bound's prices.
    """

    name = "SetCover"
    category = "subset selection"
    sense = "min"
    objective_name = "number of subsets"
    instance_type = SetCoverInstance
    tiers: ClassVar[dict[str, generator.SetCoverConfig]] = generator.TIERS
    episode = "npgym.tasks.set_cover.structured:SetCoverEpisode"
    vector = "npgym.tasks.set_cover.vector:SetCoverBatch"
    drawer = "npgym.tasks.set_cover.render:draw"
    variant_maker = "npgym.tasks.set_cover.variants:make_variant"
    inverse = "npgym.tasks.set_cover.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_cover)
    fused_kernel = staticmethod(scan_check_cover)
    reason = staticmethod(reason)
    twin = staticmethod(check_cover_python)
    answer_name = "list of subsets"
    solution_part_count = 2

    def to_solution(self, value: Any) -> np.ndarray | str:
        if isinstance(value, str):
            if value.lower() == IMPOSSIBLE.lower():
                return IMPOSSIBLE
            raise AnswerFormatError("expected a list of subset numbers or the word Impossible")
        return super().to_solution(value)

    def solution_parts(self, solution: np.ndarray | str) -> tuple[np.ndarray, bool]:
        """The kernel's ``ids`` and ``claims_impossible``."""
        if isinstance(solution, str):
            return _NO_IDS, True
        return solution, False

    def verdict(self, instance: SetCoverInstance, result: tuple[int, ...]) -> Verdict:
        """A correct ``Impossible`` is feasible with no objective."""
        if result[0] == OK and result[3]:
            return Verdict(True, None)
        return super().verdict(instance, result)

    def ratio(self, objective: Objective | None, reference_objective: Objective | None) -> float:
        """A correct ``Impossible`` (objective ``None``) is optimal; covers compare as usual."""
        if objective is None:
            return 1.0
        return super().ratio(objective, reference_objective)

    def feedback(self, score: Score) -> str:
        if score.feasible and score.objective is None:
            return "Feasible and optimal: no cover exists, Impossible is correct."
        return super().feedback(score)

    def random_solution(self, instance: SetCoverInstance, rng: np.random.Generator) -> list[int]:
        return np.flatnonzero(rng.random(len(instance.subsets)) < 0.5).tolist()

    def greedy_solution(self, instance: SetCoverInstance) -> list[int] | str:
        if solvers.first_uncovered(instance.membership) >= 0:
            return IMPOSSIBLE
        return solvers.greedy_cover(instance.membership).tolist()

    def baseline_solution(self, instance: SetCoverInstance) -> list[int] | str:
        """All subsets, ``[0, 1, ..., m-1]``, or ``Impossible`` when even they leave an element
        uncovered (the union of all subsets decides it, no search)."""
        if solvers.first_uncovered(instance.membership) >= 0:
            return IMPOSSIBLE
        return list(range(len(instance.subsets)))

    def solve(self, instance: SetCoverInstance, *, exact: bool, time_limit: float) -> Reference:
        membership = instance.membership
        uncovered = solvers.first_uncovered(membership)
        if uncovered >= 0:
            return Reference(
                objective=None,
                solution=IMPOSSIBLE,
                proven_optimal=True,
                method="exact",
                solver="union of all subsets",
                certificate={"kind": "uncovered", "element": uncovered},
            )
        cover = solvers.greedy_cover(membership)
        if not exact:
            bound = solvers.size_bound(membership)
            certificate = solvers.size_certificate(membership)
            return Reference.bounded(
                len(cover), cover.tolist(), bound, "greedy", certificate=certificate
            )
        result = solvers.exact_cover(membership, time_limit, incumbent=cover)
        return Reference.from_result(result, result.witness.tolist(), "integer programme (HiGHS)")
