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
from npgym.tasks.tsp import instance as tsp

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
    edges=st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=20),
    walk=st.lists(st.integers(-2, 8), max_size=10),
)
def test_first_missing_step_matches_a_set_lookup(
    edges: set[tuple[int, int]], walk: list[int]
) -> None:
    """The binary search over the canonical rows finds the first step a set of edges lacks."""
    canonical = sorted({(min(u, v), max(u, v)) for u, v in edges if u != v})
    pairs = np.array(canonical, dtype=np.int64).reshape(-1, 2)
    lookup = set(canonical)
    steps = [(min(u, v), max(u, v)) for u, v in itertools.pairwise(walk)]
    expected = next((index for index, step in enumerate(steps) if step not in lookup), -1)
    vertices = np.array(walk, dtype=np.int64)
    assert hamiltonian.first_missing_step(vertices, pairs) == expected


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


@given(
    rows=st.integers(3, 5).flatmap(
        lambda n: st.lists(
            st.lists(st.integers(0, 2), min_size=n, max_size=n), min_size=n, max_size=n
        )
    ),
    symmetric=st.booleans(),
    zero_diagonal=st.booleans(),
    bad=st.none() | st.tuples(st.integers(0, 4), st.sampled_from([-1, tsp.MAX_DISTANCE + 1])),
)
def test_matrix_problem_reports_what_numpy_finds_first(
    rows: list[list[int]], symmetric: bool, zero_diagonal: bool, bad: tuple[int, int] | None
) -> None:
    """The one-pass TSP matrix check names the problem the whole-matrix numpy tests find first."""
    matrix = np.array(rows, dtype=np.int64)
    if symmetric:  # most drawn matrices are asymmetric; reach the diagonal check too
        matrix = np.triu(matrix) + np.triu(matrix, 1).T
    if zero_diagonal:
        np.fill_diagonal(matrix, 0)
    if bad is not None:
        matrix[bad[0] % len(matrix), 1] = bad[1]
    if (matrix < 0).any() or (matrix > tsp.MAX_DISTANCE).any():
        expected = "lie in"
    elif (matrix != matrix.T).any():
        expected = "symmetric"
    elif np.diagonal(matrix).any():
        expected = "itself"
    else:
        expected = None
    problem = tsp.matrix_problem(matrix, tsp.MAX_DISTANCE)
    assert (expected is None) == (problem == 0)
    if expected is not None:
        assert expected in tsp._MATRIX_PROBLEMS[problem]
