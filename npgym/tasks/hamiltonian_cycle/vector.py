"""HamiltonianCycle's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.hamiltonian_cycle.structured.HamiltonianCycleEpisode` with the batch first,
stepped in one numba call.

Each slot holds its padded adjacency, its graph's 2-core (where the walk may go, peeled in the
compiled restart), the path so far and, once closed, the path position the cycle starts from; a
move extends the path or closes the longest cycle the path allows.

With the objective reward, instances of the generator's revision 2 are drawn in compiled code
(:meth:`HamiltonianCycleBatch.load_seeded`): drawing one through ``task.generate`` costs more
than a whole episode's steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.heuristics.jit import njit
from npgym.streams import choice_without_replacement, integer, permutation, uniform
from npgym.tasks.hamiltonian_cycle.generator import HamiltonianCycleConfig
from npgym.tasks.hamiltonian_cycle.structured import HamiltonianCycleEpisode
from npgym.vector import GraphBatch, mark_real, seeded_slot, set_symmetric


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    sizes: tuple[int, int],
    shares: tuple[float, float, float, float, float],
    adjacency: np.ndarray,
    vertex_count: np.ndarray,
) -> None:
    """Each slot's graph as :func:`~npgym.tasks.hamiltonian_cycle.generator.build` (revision 2)
    draws it from ``task.generate``'s stream for its seed, numpy's draws reproduced by
    :mod:`npgym.streams`. ``sizes`` is ``(n_min, n_max)``, ``shares`` the config's
    ``(density, hamiltonian_share, separator_share, hub_share, hub_links)``."""
    n_min, n_max = sizes
    density, hamiltonian_share, separator_share, hub_share, hub_links = shares
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        n = integer(state, n_min, n_max + 1)
        pairs = n * (n - 1) // 2
        noise = min(max((density * pairs - n) / max(pairs - n, 1), 0.0), 1.0)
        hamiltonian = uniform(state) < hamiltonian_share
        probability = np.full((n, n), noise)
        planted = np.zeros((n, n), np.bool_)
        if hamiltonian and uniform(state) >= separator_share:
            for vertex in range(n):
                set_symmetric(planted, vertex, (vertex + 1) % n, True)
        else:
            spare = 0 if hamiltonian else (2 if n >= 8 and uniform(state) < 0.5 else 1)
            _separator(state, n, spare, noise, hub_share, hub_links, probability, planted)
        chosen = np.zeros((n, n), np.bool_)
        for u in range(n):
            for v in range(u + 1, n):
                chosen[u, v] = uniform(state) < probability[u, v] or planted[u, v]
        label = permutation(state, n)
        adjacency[slot] = 0
        for u in range(n):
            for v in range(u + 1, n):
                if chosen[u, v]:
                    set_symmetric(adjacency[slot], label[u], label[v], 1)
        vertex_count[slot] = n


@njit
def _separator(
    state: np.ndarray,
    n: int,
    spare: int,
    noise: float,
    hub_share: float,
    hub_links: float,
    probability: np.ndarray,
    planted: np.ndarray,
) -> None:
    """The separator construction of the generator's ``_separator``: hubs ``0..s-1``, then s
    cycle components in turn, then the spare one (``spare`` vertices, none when 0); the noise
    probability per pair and the planted edges, drawn as it draws them."""
    smallest = max(spare, 1)
    hub_count = max(2, min(np.int64(np.rint(hub_share * n)), (n - spare) // (smallest + 1)))
    extra = n - hub_count - spare - hub_count * smallest
    cuts = np.sort(choice_without_replacement(state, extra + hub_count - 1, hub_count - 1)) + 1
    component = np.full(n, -1, np.int64)
    first = np.empty(hub_count + 1, np.int64)  # component k is first[k]..first[k + 1] - 1
    first[0] = hub_count
    for index in range(hub_count):
        high = cuts[index] if index < hub_count - 1 else extra + hub_count
        low = cuts[index - 1] if index else 0
        first[index + 1] = first[index] + high - low - 1 + smallest
        component[first[index] : first[index + 1]] = index
    component[first[hub_count] :] = hub_count  # the spare component, if any
    link = min(hub_links / hub_count, 1.0)
    for u in range(n):
        for v in range(n):
            if component[u] < 0 and component[v] < 0:
                probability[u, v] = noise
            elif component[u] < 0 or component[v] < 0:
                probability[u, v] = link
            else:
                probability[u, v] = noise if component[u] == component[v] else 0.0
    for hub in range(hub_count):
        set_symmetric(planted, hub, first[hub], True)
        for vertex in range(first[hub], first[hub + 1] - 1):
            set_symmetric(planted, vertex, vertex + 1, True)
        set_symmetric(planted, first[hub + 1] - 1, (hub + 1) % hub_count, True)
    if spare:
        for vertex in range(first[hub_count], n - 1):
            set_symmetric(planted, vertex, vertex + 1, True)
        ends = choice_without_replacement(state, hub_count, 2)
        set_symmetric(planted, ends[0], first[hub_count], True)
        set_symmetric(planted, ends[1], n - 1, True)


@njit
def _restart(
    slots: np.ndarray,
    vertex_count: np.ndarray,
    adjacency: np.ndarray,
    core: np.ndarray,
    vertex_mask: np.ndarray,
    path: np.ndarray,
    on_path: np.ndarray,
    current: np.ndarray,
    action_mask: np.ndarray,
    steps: np.ndarray,
    closed_from: np.ndarray,
) -> None:
    """Empty walks in ``slots``: any 2-core vertex may start, closing is not yet legal."""
    size = vertex_mask.shape[1]
    for slot in slots:
        _peel(adjacency[slot], vertex_count[slot], core[slot])
        mark_real(vertex_mask[slot], vertex_count[slot])
        path[slot, :] = -1
        on_path[slot, :] = 0
        action_mask[slot, :size] = core[slot]
        action_mask[slot, size] = 0
        current[slot, 0] = -1
        steps[slot] = 0
        closed_from[slot] = -1


@njit
def _peel(adjacency: np.ndarray, n: int, core: np.ndarray) -> None:
    """``core`` the 2-core of the first ``n`` vertices (those left after repeatedly removing
    the vertices of degree below 2), as :func:`~npgym.tasks.hamiltonian_cycle.structured.two_core`
    finds it; padding is outside."""
    degree = np.zeros(n, np.int64)
    weak = np.empty(n, np.int64)
    count = 0
    core[:] = False
    for vertex in range(n):
        core[vertex] = True
        for other in range(n):
            degree[vertex] += adjacency[vertex, other]
        if degree[vertex] < 2:
            core[vertex] = False
            weak[count] = vertex
            count += 1
    while count:
        count -= 1
        vertex = weak[count]
        for other in range(n):
            if adjacency[vertex, other] and core[other]:
                degree[other] -= 1
                if degree[other] < 2:
                    core[other] = False
                    weak[count] = other
                    count += 1


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    vertex_count: np.ndarray,
    core: np.ndarray,
    adjacency: np.ndarray,
    path: np.ndarray,
    on_path: np.ndarray,
    current: np.ndarray,
    action_mask: np.ndarray,
    steps: np.ndarray,
    closed_from: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Walk each slot in ``slots`` to its vertex, or close its cycle from the earliest path position
    adjacent to the current vertex (at least two steps back). Flags finished cycles."""
    size = path.shape[1]
    for slot in slots:
        action = actions[slot]
        here = current[slot, 0]
        if action < size:
            path[slot, steps[slot]] = action
            steps[slot] += 1
            on_path[slot, action] = 1
            current[slot, 0] = action
            here = action
        close = -1
        for index in range(steps[slot] - 2):
            if adjacency[slot, here, path[slot, index]]:
                close = index
                break
        if action == size:
            closed_from[slot] = close
            finished[slot] = True
            continue
        for vertex in range(vertex_count[slot]):
            action_mask[slot, vertex] = (
                core[slot, vertex] and adjacency[slot, here, vertex] and on_path[slot, vertex] == 0
            )
        action_mask[slot, size] = close >= 0


class HamiltonianCycleBatch(GraphBatch):
    """B walks inside the 2-core, each closed into a cycle by its last move."""

    episode = HamiltonianCycleEpisode

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)
    draw_kernel = staticmethod(_draw_into)

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        size = limits["n"]
        self.core = np.zeros((batch_size, size), np.bool_)
        self.steps = np.zeros(batch_size, np.int64)
        self.closed_from = np.full(batch_size, -1, np.int64)
        """The path position the closed cycle starts from, -1 while the walk goes on."""

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        assert isinstance(config, HamiltonianCycleConfig)
        if config.revision != 2:
            return None
        assert config.separator_share is not None and config.hub_share is not None
        assert config.hub_links is not None  # revision 2's fields (its validator checks them)
        return (
            (config.n_min, config.n_max),
            (
                config.density,
                config.hamiltonian_share,
                config.separator_share,
                config.hub_share,
                config.hub_links,
            ),
        )

    def objectives(self) -> np.ndarray:
        """The cycle's length once closed, else the path's (the single episode's
        ``partial_objective``)."""
        closed = self.closed_from >= 0
        return np.where(closed, self.steps - self.closed_from, self.steps).astype(np.float64)

    def solution(self, slot: int) -> list[int]:
        path = self.buffers["path"][slot, : self.steps[slot]].tolist()
        start = int(self.closed_from[slot])
        if start < 0:
            return path
        return [*path[start:], path[start]]
