"""HamiltonianCycle generator config, the published tiers, and the generator itself.

Each instance is Hamiltonian with probability ``hamiltonian_share``; otherwise it is built around
a structure that rules a Hamiltonian cycle out and makes its longest cycle known. Every
construction plants cycles on "internal" vertex numbers, adds noise edges, and finally renumbers
the vertices by a random permutation so that nothing shows in the numbering. Every vertex has
degree 2 or more, so no instance gives itself away by a dangling vertex.

Revision 2 (the published tiers since NP-Bench version 2), chosen per tier by ``separator_share``,
``hub_share`` and ``hub_links``:

- ``hamiltonian`` (a share ``1 - separator_share`` of the Hamiltonian instances): a planted
  cycle through all n vertices in a random graph of the tier's ``density``. Longest cycle: n.
- ``separator`` (the other Hamiltonian instances, and every non-Hamiltonian one): s =
  ``hub_share * n`` hubs and s components; the planted cycle runs hub, a path through a whole
  component, the next hub, and so on. No edge joins two components; hub-hub and within-component
  pairs get noise at the density's probability, and each component vertex about ``hub_links``
  noise edges to the hubs. The cycle must use no hub-hub edge and cross each component from a
  vertex next to one hub to a vertex next to the next: rotation-extension, which happily walks
  the hub-hub edges, often misses it, the more often the larger the graph. A non-Hamiltonian
  instance adds one spare component of 1 or 2 vertices (each cycle component is at least as
  large) joined to two hubs. A cycle meets at most s components (one per arc between hubs), so
  none is longer than s plus the s largest components: the planted n - 1 or n - 2 vertices.
  The instance records the hubs as ``separator``; the reference checks that bound on the graph.

Revision 1 (NP-Bench version 1), kept byte for byte:

- ``hamiltonian``: a planted cycle through all n vertices. Longest cycle: n.
- ``cut_vertex``: a large block and one or two small blocks (3+ vertices each) hanging off it at
  distinct cut vertices; each block has its own planted Hamiltonian cycle and noise edges only
  inside blocks. A cycle never leaves its block, so the longest cycle is the largest block.
- ``independent_set``: vertices split into S (s of them) and an independent set I with
  ``|I| > s``; a planted cycle alternates between all of S and s vertices of I, every other vertex
  of I gets two neighbours in S, noise edges join S-S and S-I pairs. On any cycle each vertex of I
  is followed by one of S, so no cycle is longer than 2s: the planted one is a longest.

Noise edges appear with the probability that makes a Hamiltonian instance's expected edge density
equal to ``density`` (planted cycle included); the other constructions use the same probability
on the pairs their structure allows, so their graphs are sparser.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig, range_growth
from npgym.heuristics.hamiltonian_cycle import canonical_cycle

MAX_GENERATED_VERTICES = 500


REVISION_2_FIELDS = ("separator_share", "hub_share", "hub_links")
"""Config fields that only revision 2 reads; revision-1 dumps leave them out."""


class HamiltonianCycleConfig(GeneratorConfig):
    """How HamiltonianCycle instances are drawn: size, edge density, share of Hamiltonian ones,
    and (revision 2) how often and how the separator construction is used."""

    latest_revision: ClassVar[int] = 2
    revision_fields: ClassVar[Mapping[int, tuple[str, ...]]] = {2: REVISION_2_FIELDS}
    growth: ClassVar[Mapping[str, float]] = range_growth(n=1.0) | {"density": -1.0}

    n_min: int = Field(ge=5, le=MAX_GENERATED_VERTICES)
    n_max: int = Field(ge=5, le=MAX_GENERATED_VERTICES)
    density: float = Field(ge=0.0, le=1.0, description="expected edge density (Hamiltonian case)")
    hamiltonian_share: float = Field(
        0.75, ge=0.0, le=1.0, description="probability that an instance has a Hamiltonian cycle"
    )
    separator_share: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="revision 2: share of the Hamiltonian instances built around a separator",
    )
    hub_share: float | None = Field(
        None, gt=0.0, le=0.5, description="revision 2: separator (hub) vertices as a share of n"
    )
    hub_links: float | None = Field(
        None, ge=0.0, description="revision 2: expected noise edges from a component to the hubs"
    )


TIERS: dict[str, HamiltonianCycleConfig] = {
    "easy": HamiltonianCycleConfig(
        n_min=15,
        n_max=20,
        density=0.2,
        revision=2,
        separator_share=0.5,
        hub_share=0.3,
        hub_links=1.0,
    ),
    "medium": HamiltonianCycleConfig(
        n_min=20,
        n_max=30,
        density=0.3,
        revision=2,
        separator_share=0.9,
        hub_share=0.3,
        hub_links=1.0,
    ),
    "hard": HamiltonianCycleConfig(
        n_min=30,
        n_max=40,
        density=0.4,
        revision=2,
        separator_share=0.9,
        hub_share=0.4,
        hub_links=1.0,
    ),
    "benchmark": HamiltonianCycleConfig(
        n_min=40,
        n_max=50,
        density=0.5,
        revision=2,
        separator_share=0.9,
        hub_share=0.4,
        hub_links=1.0,
    ),
}
"""Revision 2. The benchmark keeps revision 1's size, density and Hamiltonian share: NP-Bench
version 1 is this preset drawn under revision 1."""


def build(rng: np.random.Generator, config: HamiltonianCycleConfig) -> dict[str, Any]:
    """Draw the graph, its construction and a longest cycle of it (by ``config.revision``)."""
    if config.revision == 1:
        return _build_revision_1(rng, config)
    return _build_revision_2(rng, config)


def _noise_probability(n: int, density: float) -> float:
    """The noise edge probability that gives a Hamiltonian instance the expected ``density``."""
    pairs = n * (n - 1) // 2
    return min(max((density * pairs - n) / max(pairs - n, 1), 0.0), 1.0)


def _build_revision_2(rng: np.random.Generator, config: HamiltonianCycleConfig) -> dict[str, Any]:
    """Revision 2: a planted cycle in a random graph, or the separator construction."""
    assert config.separator_share is not None  # the config's validator guarantees it
    n = int(rng.integers(config.n_min, config.n_max + 1))
    noise = _noise_probability(n, config.density)
    hamiltonian = bool(rng.random() < config.hamiltonian_share)
    hubs: list[int] = []
    if hamiltonian and rng.random() >= config.separator_share:
        structure = "hamiltonian"
        _, planted, cycle = _hamiltonian(n)
        probability = np.full((n, n), noise)
    else:
        structure = "separator"
        spare = 0 if hamiltonian else (2 if n >= 8 and rng.random() < 0.5 else 1)
        probability, planted, cycle, hubs = _separator(rng, n, spare, noise, config)
    first, second = np.triu_indices(n, 1)
    chosen = planted[first, second] | (rng.random(first.size) < probability[first, second])
    label = rng.permutation(n)
    edges = sorted(
        (min(u, v), max(u, v))
        for u, v in zip(label[first[chosen]].tolist(), label[second[chosen]].tolist(), strict=True)
    )
    fields: dict[str, Any] = {
        "n": n,
        "edges": tuple(edges),
        "hamiltonian": hamiltonian,
        "structure": structure,
        "planted_cycle": tuple(canonical_cycle(label[np.array(cycle)])),
    }
    if hubs:
        fields["separator"] = tuple(sorted(label[np.array(hubs)].tolist()))
    return fields


def _build_revision_1(rng: np.random.Generator, config: HamiltonianCycleConfig) -> dict[str, Any]:
    """Revision 1 (NP-Bench version 1): kept exactly as it was, so its instances rebuild."""
    n = int(rng.integers(config.n_min, config.n_max + 1))
    noise = _noise_probability(n, config.density)
    if rng.random() < config.hamiltonian_share:
        structure = "hamiltonian"
        allowed, planted, cycle = _hamiltonian(n)
    elif rng.random() < 0.5:
        structure = "cut_vertex"
        allowed, planted, cycle = _cut_vertex(rng, n)
    else:
        structure = "independent_set"
        allowed, planted, cycle = _independent_set(rng, n)
    first, second = np.triu_indices(n, 1)
    chosen = planted[first, second] | (allowed[first, second] & (rng.random(first.size) < noise))
    label = rng.permutation(n)
    edges = sorted(
        (min(u, v), max(u, v))
        for u, v in zip(label[first[chosen]].tolist(), label[second[chosen]].tolist(), strict=True)
    )
    return {
        "n": n,
        "edges": tuple(edges),
        "hamiltonian": structure == "hamiltonian",
        "structure": structure,
        "planted_cycle": tuple(canonical_cycle(label[np.array(cycle)])),
    }


def _empty(n: int) -> np.ndarray:
    return np.zeros((n, n), dtype=np.bool_)


def _plant(planted: np.ndarray, cycle: list[int]) -> None:
    """Add the edges of the closed cycle ``cycle`` (without its closing vertex) to ``planted``."""
    for u, v in zip(cycle, cycle[1:] + cycle[:1], strict=True):
        planted[u, v] = planted[v, u] = True


def _hamiltonian(n: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Noise anywhere; the cycle 0, 1, ..., n-1."""
    planted = _empty(n)
    cycle = list(range(n))
    _plant(planted, cycle)
    return ~_empty(n), planted, cycle


def _cut_vertex(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Vertices 0..big-1 form the large block; each small block shares one of them."""
    small_count = 2 if n >= 11 and rng.random() < 0.5 else 1
    largest_small = max(3, (n - 1) // (small_count + 1) + 1)
    sizes = [int(rng.integers(3, largest_small + 1)) for _ in range(small_count)]
    big = n - sum(size - 1 for size in sizes)
    cut_vertices = rng.choice(big, size=small_count, replace=False).tolist()
    allowed, planted = _empty(n), _empty(n)
    groups = [list(range(big))]
    start = big
    for size, cut in zip(sizes, cut_vertices, strict=True):
        groups.append([cut, *range(start, start + size - 1)])
        start += size - 1
    for group in groups:
        allowed[np.ix_(group, group)] = True
        _plant(planted, group)
    return allowed, planted, max(groups, key=len)


def _independent_set(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """S = 0..s-1 and the independent set I = s..n-1, with n - s > s."""
    s = (n - 1) // 2
    if s > 2 and rng.random() < 0.5:
        s -= 1
    allowed, planted = _empty(n), _empty(n)
    allowed[:s, :] = allowed[:, :s] = True
    cycle = [vertex for pair in zip(range(s), range(s, 2 * s), strict=True) for vertex in pair]
    _plant(planted, cycle)
    for extra in range(2 * s, n):
        for u in rng.choice(s, size=2, replace=False).tolist():
            planted[u, extra] = planted[extra, u] = True
    return allowed, planted, cycle


def _separator(
    rng: np.random.Generator,
    n: int,
    spare: int,
    noise: float,
    config: HamiltonianCycleConfig,
) -> tuple[np.ndarray, np.ndarray, list[int], list[int]]:
    """Hubs 0..s-1, then s cycle components in turn, then (unless ``spare`` is 0) one spare
    component of ``spare`` vertices; returns the noise probability per pair, the planted edges,
    the planted cycle and the hubs.

    The planted cycle runs hub, a path through a whole cycle component, the next hub, ... Noise
    joins hubs to hubs and vertices inside one component with probability ``noise``, and a
    component vertex to each hub with probability ``hub_links / s``; never two components. Every
    cycle component holds at least ``spare`` vertices, so the cycle components are the s largest.
    """
    assert config.hub_share is not None and config.hub_links is not None
    smallest = max(spare, 1)
    hub_count = max(2, min(round(config.hub_share * n), (n - spare) // (smallest + 1)))
    extra = n - hub_count - spare - hub_count * smallest
    cuts = np.sort(rng.choice(extra + hub_count - 1, size=hub_count - 1, replace=False)) + 1
    sizes = np.diff(np.concatenate(([0], cuts, [extra + hub_count]))) - 1 + smallest
    components: list[list[int]] = []
    start = hub_count
    for size in [*sizes.tolist(), *([spare] if spare else [])]:
        components.append(list(range(start, start + size)))
        start += size
    hubs = list(range(hub_count))
    probability = np.zeros((n, n))
    probability[:hub_count, :hub_count] = noise
    link = min(config.hub_links / hub_count, 1.0)
    for component in components:
        probability[np.ix_(component, component)] = noise
        probability[np.ix_(hubs, component)] = link
        probability[np.ix_(component, hubs)] = link
    planted = _empty(n)
    cycle = [
        vertex
        for hub, path in zip(hubs, components[:hub_count], strict=True)
        for vertex in (hub, *path)
    ]
    _plant(planted, cycle)
    if spare:
        path = components[-1]
        for u, v in pairwise(path):
            planted[u, v] = planted[v, u] = True
        left, right = rng.choice(hub_count, size=2, replace=False).tolist()
        planted[left, path[0]] = planted[path[0], left] = True
        planted[right, path[-1]] = planted[path[-1], right] = True
    return probability, planted, cycle, hubs
