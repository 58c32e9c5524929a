"""Shared pieces of the core: the id-list kernel and the graph instance base."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npgym.graphs import GraphInstance, adjacency_lines, random_edges
from npgym.kernels import check_ids, check_ids_python, ids_reason


class _Graph(GraphInstance):
    task: Literal["Graph"] = "Graph"


@given(ids=st.lists(st.integers(-3, 12), max_size=15), count=st.integers(0, 10))
def test_check_ids_agrees_with_its_twin(ids: list[int], count: int) -> None:
    kernel = check_ids(np.array(ids, dtype=np.int64), count)
    assert tuple(int(v) for v in kernel) == check_ids_python(ids, count)


def test_ids_reasons() -> None:
    assert ids_reason(*check_ids_python([0, 9], 4)[:2], 4, "vertex") == (
        "vertex 9 does not exist (vertices are 0 to 3)"
    )
    assert ids_reason(*check_ids_python([1, 1], 4)[:2], 4, "item") == "item 1 listed twice"
    assert ids_reason(*check_ids_python([1, 2], 4)[:2], 4, "item") == ""


def test_graph_edges_are_canonical_and_validated() -> None:
    graph = _Graph(n=4, edges=[[3, 1], [0, 1]])
    assert graph.edges == ((0, 1), (1, 3))
    assert graph.adjacency[3, 1] and graph.adjacency[1, 3] and not graph.adjacency[0, 3]
    assert graph.edge_array.tolist() == [[0, 1], [1, 3]]
    assert adjacency_lines(graph.neighbours()) == ["0: 1", "1: 0, 3", "2: none", "3: 1"]
    assert _Graph.model_validate_json(graph.to_json()) == graph
    for edges, message in [
        ([[0, 0]], "self-loop"),
        ([[0, 1], [1, 0]], "twice"),
        ([[0, 5]], "outside"),
        ([[-1, 2]], "outside"),
        ([[0, 1.0]], "integer"),
    ]:
        with pytest.raises(ValueError, match=message):
            _Graph(n=3, edges=edges)


def test_random_edges_density() -> None:
    edges = random_edges(np.random.default_rng(0), 60, 0.3)
    assert all(u < v < 60 for u, v in edges)
    assert len(edges) == len(set(edges))
    assert abs(len(edges) / (60 * 59 / 2) - 0.3) < 0.05
