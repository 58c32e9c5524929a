"""The numpy/numba instance validators against their exact Python twins: same result, same error.

Edges are drawn with self-loops, repeats, both orientations, negative and out-of-range vertices,
bad weights and integers beyond int64, so every error branch and the exact fallback are reached.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

import npgym
from npgym import graphs
from npgym.tasks.hamiltonian_cycle import instance as hamiltonian
from npgym.tasks.min_bisection import instance as bisection

_VERTEX = st.integers(-2, 12) | st.sampled_from([2**63, -(2**63) - 1])
_WEIGHT = st.integers(-1, 3) | st.just(bisection.MAX_WEIGHT + 1)


def _outcome(function: object, *args: object) -> object:
    try:
        return ("ok", function(*args))  # type: ignore[operator]
    except ValueError as error:
        return ("error", str(error))


def _fast_graph(edges: tuple[tuple[int, int], ...]) -> object:
    canonical = graphs.canonical_edge_rows(edges, 2)
    return graphs._canonical_edges_python(edges) if canonical is None else canonical


def _fast_weighted(edges: tuple[tuple[int, int, int], ...]) -> object:
    canonical = graphs.canonical_edge_rows(edges, 3, bisection.MAX_WEIGHT)
    return bisection._canonical_edges_python(edges) if canonical is None else canonical


@given(edges=st.lists(st.tuples(_VERTEX, _VERTEX), max_size=12).map(tuple))
def test_canonical_edges_match_the_python_twin(edges: tuple[tuple[int, int], ...]) -> None:
    assert _outcome(_fast_graph, edges) == _outcome(graphs._canonical_edges_python, edges)


@given(edges=st.lists(st.tuples(_VERTEX, _VERTEX, _WEIGHT), max_size=12).map(tuple))
def test_weighted_canonical_edges_match_the_python_twin(
    edges: tuple[tuple[int, int, int], ...],
) -> None:
    expected = _outcome(bisection._canonical_edges_python, edges)
    assert _outcome(_fast_weighted, edges) == expected


@given(
    n=st.integers(1, 12),
    edges=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=20),
)
def test_component_count_matches_the_python_twin(n: int, edges: list[tuple[int, int]]) -> None:
    edges = [(u % n, v % n) for u, v in edges]
    pairs = np.array(edges, dtype=np.int64).reshape(-1, 2)
    assert hamiltonian.component_count(n, pairs) == hamiltonian._component_count(n, tuple(edges))


@given(
    edges=st.lists(st.tuples(_VERTEX, _VERTEX), max_size=10),
    n=st.integers(1, 12),
    planted=st.none() | st.lists(_VERTEX, max_size=8),
)
def test_instances_accept_and_reject_as_before(
    edges: list[tuple[int, int]], n: int, planted: list[int] | None
) -> None:
    """Whole instances: the verdict and message equal those of the exact validators."""
    data = {"n": n, "edges": edges, "planted_cycle": planted}
    fast = _validate(hamiltonian.HamiltonianCycleInstance, data)
    exact = _exact_hamiltonian(n, edges, planted)
    if exact is None:
        assert fast[0] == "ok"
    else:
        assert fast[0] == "error" and exact in fast[1]


def _validate(model: type, data: dict) -> tuple[str, str]:
    try:
        model(**data)
    except ValidationError as error:
        return ("error", str(error))
    return ("ok", "")


def _exact_hamiltonian(n: int, edges: list, planted: list | None) -> str | None:
    """The first error message the pre-numpy validators raised, or None (a plain re-statement)."""
    try:
        canonical = graphs._canonical_edges_python(tuple(edges))
    except ValueError as error:
        return str(error)
    for u, v in canonical:
        if u < 0 or v >= n:
            return f"edge ({u}, {v}) has a vertex outside 0..{n - 1}"
    if len(canonical) + hamiltonian._component_count(n, canonical) <= n:
        return "the graph has no cycle"
    if planted is None:
        return None
    inner = planted[:-1]
    if len(planted) < 4 or planted[0] != planted[-1] or len(set(inner)) != len(inner):
        return "planted_cycle must be a closed list"
    edge_set = set(canonical)
    for u, v in itertools.pairwise(planted):
        if (min(u, v), max(u, v)) not in edge_set:
            return f"planted_cycle uses ({u}, {v}), which is not an edge"
    return None


@pytest.mark.parametrize(
    "task_name", ["MaxClique", "GraphColoring", "HamiltonianCycle", "MinBisection"]
)
def test_json_round_trip_keeps_the_edges_and_caches_the_array(task_name: str) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(3, tier="medium")
    again = task.from_json(instance.to_json())
    assert again == instance
    assert again.edge_array.tolist() == [list(edge) for edge in instance.edges]
    assert not again.edge_array.flags.writeable
