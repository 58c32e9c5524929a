"""MaxIndependentSet in classic-RL form: as MaxClique's (:mod:`npgym.tasks.max_clique.structured`),
with an added vertex legal when it is adjacent to no selected vertex."""

from __future__ import annotations

import numpy as np

from npgym.tasks.max_clique.structured import VertexSetEpisode
from npgym.tasks.max_independent_set.instance import MaxIndependentSetInstance


class MaxIndependentSetEpisode(VertexSetEpisode[MaxIndependentSetInstance]):
    """An independent set: every added vertex adjacent to no selected one."""

    def compatible(self) -> np.ndarray:
        return self.instance.complement_adjacency
