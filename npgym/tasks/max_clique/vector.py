"""MaxClique's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.max_clique.structured.MaxCliqueEpisode` with the batch first, stepped in one
numba call. :class:`VertexSetBatch` serves MaxIndependentSet too, through :meth:`compatible`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.graphs import GraphInstance
from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.task import Task
from npgym.tasks.max_clique.structured import MaxCliqueEpisode
from npgym.vector import BatchedEpisode


class VertexSetBatch(BatchedEpisode):
    """B vertex sets grown one pairwise-compatible vertex at a time, or stopped."""

    static_keys = ("adjacency", "vertex_mask")

    @classmethod
    def compatible(cls, adjacency: np.ndarray) -> np.ndarray:
        """``[u, v]`` True when u and v may both be in the set, from the graph's adjacency."""
        return adjacency

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        size = limits["n"]
        self.buffers = {
            "adjacency": np.zeros((batch_size, size, size), np.int8),
            "vertex_mask": np.zeros((batch_size, size), np.int8),
            "selected": np.zeros((batch_size, size), np.int8),
            "action_mask": np.zeros((batch_size, size + 1), np.int8),
        }
        self.compatible_pairs = np.zeros((batch_size, size, size), np.bool_)
        self.vertex_count = np.zeros(batch_size, np.int64)
        self.chosen = np.zeros(batch_size, np.int64)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, GraphInstance)
        return {"adjacency": instance.adjacency, "compatible": cls.compatible(instance.adjacency)}

    @classmethod
    def draw(cls, task: Task[Any, Any], rng: np.random.Generator, config: BaseModel) -> Any:
        """The generator's graph as arrays, without building (and validating) its instance."""
        fields = task.build(rng, config)
        n = int(fields["n"])
        pairs = np.asarray(fields["edges"], np.int64).reshape(-1, 2)
        adjacency = np.zeros((n, n), np.bool_)
        adjacency[pairs[:, 0], pairs[:, 1]] = True
        adjacency[pairs[:, 1], pairs[:, 0]] = True
        return {"adjacency": adjacency, "compatible": cls.compatible(adjacency)}

    def load(self, slots: np.ndarray, arrays: Sequence[dict[str, Any]]) -> None:
        buffers = self.buffers
        for slot, drawn in zip(slots, arrays, strict=True):
            n = drawn["adjacency"].shape[0]
            buffers["adjacency"][slot] = 0
            buffers["adjacency"][slot, :n, :n] = drawn["adjacency"]
            self.compatible_pairs[slot] = False
            self.compatible_pairs[slot, :n, :n] = drawn["compatible"]
            self.vertex_count[slot] = n
        _restart(
            np.asarray(slots, np.int64),
            self.vertex_count,
            buffers["vertex_mask"],
            buffers["selected"],
            buffers["action_mask"],
            self.chosen,
        )

    def step(self, actions: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        finished = np.zeros(self.batch_size, np.bool_)
        illegal = np.zeros(self.batch_size, np.bool_)
        _step(
            actions,
            active,
            self.vertex_count,
            self.compatible_pairs,
            self.buffers["selected"],
            self.buffers["action_mask"],
            self.chosen,
            finished,
            illegal,
        )
        return finished, illegal

    def objectives(self) -> np.ndarray:
        return self.chosen.astype(np.float64)

    def solution(self, slot: int) -> list[int]:
        return np.flatnonzero(self.buffers["selected"][slot]).tolist()


class MaxCliqueBatch(VertexSetBatch):
    """Cliques: every added vertex adjacent to all selected ones."""

    episode = MaxCliqueEpisode


@njit
def _restart(
    slots: np.ndarray,
    vertex_count: np.ndarray,
    vertex_mask: np.ndarray,
    selected: np.ndarray,
    action_mask: np.ndarray,
    chosen: np.ndarray,
) -> None:
    """Empty sets in ``slots``: every real vertex a candidate, stopping not yet legal."""
    size = vertex_mask.shape[1]
    for slot in slots:
        for vertex in range(size):
            real = vertex < vertex_count[slot]
            vertex_mask[slot, vertex] = real
            selected[slot, vertex] = 0
            action_mask[slot, vertex] = real
        action_mask[slot, size] = 0
        chosen[slot] = 0


@njit
def _step(
    actions: np.ndarray,
    active: np.ndarray,
    vertex_count: np.ndarray,
    compatible: np.ndarray,
    selected: np.ndarray,
    action_mask: np.ndarray,
    chosen: np.ndarray,
    finished: np.ndarray,
    illegal: np.ndarray,
) -> None:
    """Add each active slot's vertex (or stop); the candidates left are the vertices compatible
    with every selected one. Flags finished sets and illegal moves."""
    size = selected.shape[1]
    for slot in range(actions.shape[0]):
        if not active[slot]:
            continue
        action = actions[slot]
        if action < 0 or action > size or action_mask[slot, action] == 0:
            illegal[slot] = True
            action_mask[slot, :] = 0
            continue
        if action == size:
            finished[slot] = True
            action_mask[slot, :] = 0
            continue
        selected[slot, action] = 1
        chosen[slot] += 1
        left = False
        for vertex in range(vertex_count[slot]):
            keep = action_mask[slot, vertex] == 1 and compatible[slot, action, vertex]
            keep = keep and vertex != action
            action_mask[slot, vertex] = keep
            left = left or keep
        if left:
            action_mask[slot, size] = 1
        else:
            finished[slot] = True
            action_mask[slot, :] = 0
