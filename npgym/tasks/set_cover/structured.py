"""SetCover in classic-RL form: pick subsets one at a time, or declare ``Impossible``.

Observation (M, U = the tier's largest subset count and universe): ``membership`` (M, U) int8
(subset j holds element e), ``subset_mask`` (M,) int8, ``element_mask`` (U,) int8, ``picked``
(M,) int8, ``covered`` (U,) int8. Action: Discrete(M + 1); ``j < M`` picks subset j (legal when
it covers an element not yet covered), ``M`` answers ``Impossible`` (legal exactly when no cover
exists: the mask encodes feasibility, as for every task). The episode ends when the universe is
covered or on ``Impossible``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pydantic import BaseModel

from npgym.structured import Episode, first_n, flags, padded
from npgym.tasks.set_cover.instance import SetCoverInstance
from npgym.tasks.set_cover.task import IMPOSSIBLE


class SetCoverEpisode(Episode[SetCoverInstance]):
    """Pick subsets that cover something new until everything is covered."""

    @classmethod
    def limits_for(cls, config: BaseModel) -> dict[str, int]:
        return {"subsets": config.subsets_max, "universe": config.universe_size_max}  # type: ignore[attr-defined]

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        m, u = limits["subsets"], limits["universe"]
        return {
            "membership": flags((m, u)),
            "subset_mask": flags((m,)),
            "element_mask": flags((u,)),
            "picked": flags((m,)),
            "covered": flags((u,)),
        }

    @classmethod
    def action_count(cls, limits: Mapping[str, int]) -> int:
        return limits["subsets"] + 1

    @classmethod
    def sizes_of(cls, instance: SetCoverInstance) -> dict[str, int]:  # type: ignore[override]
        return {"subsets": len(instance.subsets), "universe": instance.universe_size}

    def __init__(self, instance: SetCoverInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        m, u = limits["subsets"], limits["universe"]
        self.picked = np.zeros(m, np.int8)
        self.covered = np.zeros(u, np.bool_)
        self.coverable = bool(instance.membership.any(axis=0).all())
        self.impossible = False
        self.static = {
            "membership": padded(instance.membership, (m, u), np.int8),
            "subset_mask": first_n(len(instance.subsets), m),
            "element_mask": first_n(instance.universe_size, u),
        }

    def observation(self) -> dict[str, np.ndarray]:
        return {
            **self.static,
            "picked": self.picked.copy(),
            "covered": self.covered.astype(np.int8),
        }

    def gains(self) -> np.ndarray:
        """How many uncovered elements each real subset would cover."""
        uncovered = ~self.covered[: self.instance.universe_size]
        return self.instance.membership[:, uncovered].sum(axis=1)

    def mask(self) -> np.ndarray:
        legal = np.zeros(self.limits["subsets"] + 1, np.bool_)
        if self.impossible or self.covered[: self.instance.universe_size].all():
            return legal
        legal[: len(self.instance.subsets)] = self.gains() > 0
        legal[-1] = not self.coverable
        return legal

    def apply(self, action: int) -> bool:
        if action == self.limits["subsets"]:
            self.impossible = True
            return True
        self.picked[action] = 1
        self.covered[: self.instance.universe_size] |= self.instance.membership[action]
        return bool(self.covered[: self.instance.universe_size].all())

    def solution(self) -> list[int] | str:
        return IMPOSSIBLE if self.impossible else np.flatnonzero(self.picked).tolist()

    def partial_objective(self) -> float:
        """Subsets picked; 0 once ``Impossible`` is answered, an answer that names none."""
        return 0.0 if self.impossible else float(self.picked.sum())

    def greedy_action(self) -> int:
        """The subset covering the most uncovered elements; ``Impossible`` when none helps."""
        if not self.coverable and not self.mask()[:-1].any():
            return self.limits["subsets"]
        return int(np.argmax(self.gains()))
