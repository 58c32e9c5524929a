"""MaxClique: hand-checked verdicts, kernel vs. pure twin, solvers vs. brute force and networkx."""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym.heuristics import cliques as solvers
from npgym.tasks.max_clique import MaxCliqueConfig, MaxCliqueInstance
from npgym.tasks.max_clique.verifier import check_vertex_set, check_vertex_set_python
from tests import helpers

TASK = npgym.get_task("MaxClique")

# Hand-checked: vertices 0-3 form a K4, then a path 3-4-5; the only maximum clique is {0,1,2,3}.
K4_AND_PATH = MaxCliqueInstance(
    n=6, edges=[[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3], [3, 4], [4, 5]]
)


def brute_force_clique_number(adjacency: np.ndarray) -> int:
    """Size of the largest vertex subset (all 2^n of them) that is a clique."""
    n = adjacency.shape[0]
    best = 0
    for mask in range(1 << n):
        members = [v for v in range(n) if mask >> v & 1]
        if len(members) > best and solvers.is_clique(adjacency, np.array(members)):
            best = len(members)
    return best


def networkx_clique_number(adjacency: np.ndarray) -> int:
    _, weight = nx.max_weight_clique(nx.from_numpy_array(adjacency.astype(int)), weight=None)
    return int(weight)


@pytest.mark.parametrize(
    ("answer", "feasible", "objective", "reason"),
    [
        ([0, 1, 2, 3], True, 4, ""),
        ([3, 2, 1, 0], True, 4, ""),
        ([4, 5], True, 2, ""),
        ([5], True, 1, ""),
        ([], True, 0, ""),
        ([0, 1, 4], False, None, "vertices 0 and 4 are not adjacent"),
        ([5, 3, 4], False, None, "vertices 3 and 5 are not adjacent"),
        ([0, 0], False, None, "vertex 0 listed twice"),
        ([0, 1, 2, 3, 1], False, None, "vertex 1 listed twice"),
        ([0] * 1000, False, None, "vertex 0 listed twice"),
        ([0, 6], False, None, "vertex 6 does not exist (vertices are 0 to 5)"),
        ([0, 0, -1], False, None, "vertex -1 does not exist (vertices are 0 to 5)"),
        ([10**17], False, None, f"vertex {10**17} does not exist (vertices are 0 to 5)"),
        ([[0, 1]], False, None, "expected integers in the vertex list, got a list"),
        ([0, True], False, None, "expected integers in the vertex list, got a boolean"),
        ("0, 1", False, None, "expected a list for the vertex list, got a word"),
    ],
)
def test_hand_checked_verdicts(answer: object, feasible: bool, objective: int, reason: str) -> None:
    helpers.assert_verdict(TASK, K4_AND_PATH, answer, (feasible, objective, reason))


def test_hand_checked_reference_and_scores() -> None:
    reference = helpers.assert_exact_reference(TASK, K4_AND_PATH, 4, [[0, 1, 2, 3]])
    assert (reference.bound, reference.gap) == (4, 0.0)
    empty = TASK.score(K4_AND_PATH, "Answer: []")
    assert (empty.feasible, empty.reward, empty.reason) == (False, -0.5, "empty answer")
    helpers.assert_rewards(
        TASK,
        K4_AND_PATH,
        {
            "Answer: [3, 1, 0, 2]": 2.0,
            "**Answer:** [4, 5].": pytest.approx(1.5),
            "Answer: [0, 1, 4]": -0.5,
            "Answer: [0, [1]]": -2.5,
        },
    )


@given(case=helpers.graphs_and_vertex_lists(), adjacent=st.booleans())
def test_kernel_agrees_with_python_twin(case: tuple[np.ndarray, list[int]], adjacent: bool) -> None:
    adjacency, ids = case
    helpers.assert_kernel_matches_twin(
        check_vertex_set, check_vertex_set_python, adjacency, adjacent, ids
    )


def test_each_task_object_fills_its_own_kernel_arguments() -> None:
    """Kernel arguments are kept on the instance per task object: a subclass whose ``adjacent``
    differs, scoring the same instance, checks the other rule on both paths."""
    task = npgym.get_task("MaxClique")
    instance = task.generate(seed=0, tier="easy")
    clique = task.reference(instance).solution
    independent = type("IndependentRule", (type(task),), {"adjacent": False})()
    for _ in range(2):  # alternate: neither object may keep the other's arguments
        assert task.score(instance, f"Answer: {clique}").feasible
        assert not independent.score(instance, f"Answer: {clique}").feasible
        assert task.check(instance, np.array(clique)).feasible
        assert not independent.check(instance, np.array(clique)).feasible


def test_solvers_agree_with_brute_force_on_tiny_graphs() -> None:
    for adjacency in helpers.random_graphs(np.random.default_rng(0), 150, (1, 11)):
        optimum = brute_force_clique_number(adjacency)
        heuristic = solvers.heuristic_clique(adjacency)
        for incumbent in (heuristic, np.empty(0, np.int64)):  # the search must find it alone
            exact = solvers.exact_clique(adjacency, incumbent=incumbent)
            assert exact.proven_optimal and exact.objective == exact.bound == optimum
            assert exact.witness.tolist() == sorted(set(exact.witness.tolist()))
            assert exact.witness.size == optimum and solvers.is_clique(adjacency, exact.witness)
        assert heuristic.size <= optimum <= solvers.color_bound(adjacency)
        assert len(set(heuristic.tolist())) == heuristic.size
        assert solvers.is_clique(adjacency, heuristic)


def test_exact_agrees_with_networkx_on_larger_graphs() -> None:
    rng = np.random.default_rng(1)
    for n, density in [(20, 0.5), (30, 0.3), (40, 0.6), (50, 0.8), (60, 0.5)]:
        adjacency = helpers.random_adjacency(rng, n, density)
        exact = solvers.exact_clique(adjacency, incumbent=np.empty(0, np.int64))
        assert exact.proven_optimal and exact.objective == networkx_clique_number(adjacency)
        assert solvers.is_clique(adjacency, exact.witness)
        assert solvers.exact_clique(adjacency).objective == exact.objective
        assert solvers.heuristic_clique(adjacency).size <= exact.objective


def test_exact_result_does_not_depend_on_the_chunking(monkeypatch: pytest.MonkeyPatch) -> None:
    adjacency = helpers.random_adjacency(np.random.default_rng(2), 60, 0.6)
    whole = solvers.exact_clique(adjacency, incumbent=np.array([0]))
    monkeypatch.setattr(solvers, "CHUNK_WORK", 3)
    chunked = solvers.exact_clique(adjacency, incumbent=np.array([0]))
    assert whole.work > 3 * 10
    assert (chunked.objective, chunked.witness.tolist(), chunked.work, chunked.proven_optimal) == (
        whole.objective,
        whole.witness.tolist(),
        whole.work,
        True,
    )
    assert chunked.certificate == whole.certificate  # the search tree, recorded across chunks
    assert whole.certificate is not None and whole.certificate["kind"] == "search"


def test_time_limit_returns_a_bound_instead_of_a_proof() -> None:
    adjacency = helpers.random_adjacency(np.random.default_rng(3), 60, 0.5)
    result = solvers.exact_clique(adjacency, effort=0.0)
    assert not result.proven_optimal
    assert result.objective < result.bound <= solvers.color_bound(adjacency)
    assert solvers.is_clique(adjacency, result.witness)


def test_unproven_reference_reports_heuristic_bound_and_gap() -> None:
    """With no time the search stops at once: the colour bound lies above the heuristic clique."""
    edges = np.argwhere(np.triu(helpers.random_adjacency(np.random.default_rng(3), 60, 0.5), 1))
    instance = MaxCliqueInstance(n=60, edges=edges.tolist())
    reference = TASK.reference(instance, time_limit=0.0)
    helpers.assert_unproven_reference(TASK, instance, reference)
    assert reference.bound > reference.objective


def test_reference_is_deterministic() -> None:
    helpers.assert_exact_references_are_deterministic(TASK)


@pytest.mark.parametrize("tier", npgym.TIERS)
def test_generator_respects_the_tier(tier: str) -> None:
    for config, instance in helpers.tier_instances(TASK, tier, seeds=20):
        assert TASK.reference(instance).objective >= config.clique_min


def test_random_edges_can_beat_the_planted_clique() -> None:
    """The planted K3 is a lower bound, not the answer: in G(16, 0.5) chance makes larger ones."""
    overrides = helpers.pinned(n=16, clique=3) | {"density": 0.5}
    helpers.assert_chance_can_beat_the_plant(TASK, overrides, planted=3)


def test_generator_density_and_clamped_clique_size() -> None:
    config = MaxCliqueConfig(**helpers.pinned(n=80, clique=5), density=0.25)
    instance = TASK.generate(0, overrides=config)
    pairs = 80 * 79 / 2
    assert abs(len(instance.edges) - (0.25 * (pairs - 10) + 10)) < 0.03 * pairs
    tiny = TASK.generate(0, overrides={"n_min": 2, "n_max": 3, "clique_min": 5, "clique_max": 9})
    assert TASK.reference(tiny).objective == tiny.n
    assert len(tiny.edges) == tiny.n * (tiny.n - 1) // 2


# --- revision 2: camouflaged clique and decoy ---------------------------------------------------


def revision_2(n: int, k: int, density: float, camouflage: float, decoy: float) -> MaxCliqueConfig:
    return MaxCliqueConfig(
        **helpers.pinned(n=n, clique=k),
        density=density,
        revision=2,
        camouflage=camouflage,
        decoy_scale=decoy,
    )


@pytest.mark.parametrize("k", [3, 4, 6])
def test_decoy_has_a_largest_clique_one_short_and_traps_the_greedy(k: int) -> None:
    """Without random edges a revision-2 graph is the planted K_k, the decoy (complete
    (k-1)-partite, parts of two) and two isolated vertices: the edge count, the degrees and the
    clique number are known exactly, and from k = 4 on the decoy's vertices have the highest
    degree, so the greedy stops at k - 1."""
    decoy = 2 * (k - 1)
    instance = TASK.generate(k, overrides=revision_2(3 * k, k, 0.0, 1.0, 2.0))
    assert len(instance.edges) == k * (k - 1) // 2 + decoy * (decoy - 2) // 2
    assert sorted(instance.adjacency.sum(axis=1).tolist()) == sorted(
        [0, 0] + [k - 1] * k + [2 * k - 4] * decoy
    )
    reference = TASK.reference(instance)
    assert reference.proven_optimal and reference.objective == k
    assert networkx_clique_number(instance.adjacency) == k
    if k >= 4:
        assert len(TASK.greedy_solution(instance)) == k - 1


def test_camouflage_gives_clique_members_the_average_degree() -> None:
    """A planted K10 in G(40, 0.5) is nearly always the maximum clique (chance cliques have 5-7
    vertices; a vertex joined to all ten makes a K11 now and then, and such graphs are left out).
    Revision 1 gives its members about (k - 1) / 2 = 4.5 neighbours more than the others;
    revision 2 at camouflage 1 none, at camouflage 0 revision 1's excess."""
    excess = {}
    for camouflage in (0.0, 1.0):
        member, other = [], []
        for seed in range(30):
            instance = TASK.generate(seed, overrides=revision_2(40, 10, 0.5, camouflage, 0.0))
            reference = TASK.reference(instance)
            assert reference.proven_optimal and reference.objective >= 10
            if reference.objective > 10:
                continue
            degree = instance.adjacency.sum(axis=1)
            inside = np.zeros(instance.n, np.bool_)
            inside[reference.solution] = True
            member.extend(degree[inside].tolist())
            other.extend(degree[~inside].tolist())
        assert len(member) >= 25 * 10
        excess[camouflage] = np.mean(member) - np.mean(other)
    assert abs(excess[1.0]) < 1.0 and excess[0.0] > 3.0, excess


@settings(max_examples=60)
@given(
    n=st.integers(2, 10),
    k=st.integers(1, 7),
    density=st.floats(0.0, 1.0),
    camouflage=st.floats(0.0, 1.0),
    decoy=st.floats(0.0, 4.0),
    seed=st.integers(0, 2**32),
)
def test_revision_2_reference_agrees_with_brute_force(
    n: int, k: int, density: float, camouflage: float, decoy: float, seed: int
) -> None:
    instance = TASK.generate(seed, overrides=revision_2(n, k, density, camouflage, decoy))
    assert TASK.from_json(instance.to_json()) == instance
    reference = TASK.reference(instance)
    optimum = brute_force_clique_number(instance.adjacency)
    assert reference.proven_optimal and reference.objective == optimum >= min(k, n)


@pytest.mark.parametrize(
    ("tier", "seeds", "clique_number"),
    [
        ("easy", 15, brute_force_clique_number),
        ("medium", 15, brute_force_clique_number),
        ("hard", 30, networkx_clique_number),
        ("benchmark", 30, networkx_clique_number),
    ],
)
def test_tier_references_agree_with_an_independent_solver(
    tier: str, seeds: int, clique_number: Callable[[np.ndarray], int]
) -> None:
    """Brute force on the small tiers, networkx where 2^n subsets are too many."""
    for seed in range(seeds):
        instance = TASK.generate(seed, tier=tier)
        reference = TASK.reference(instance)
        assert reference.proven_optimal
        assert reference.objective == clique_number(instance.adjacency)


def test_revision_2_fields_are_required_and_left_out_of_revision_1() -> None:
    with pytest.raises(ValueError, match="revision 2 needs camouflage, decoy_scale"):
        MaxCliqueConfig(n_min=8, n_max=8, clique_min=3, clique_max=3, density=0.5, revision=2)
    assert {TASK.tiers[tier].revision for tier in npgym.TIERS} == {2}
    first = TASK.generate(5, tier="benchmark", overrides={"revision": 1})
    assert set(first.config) == {"n_min", "n_max", "clique_min", "clique_max", "density"}
    assert TASK.generate(5, tier="benchmark").config["decoy_scale"] == 2.0


@pytest.mark.slow
@pytest.mark.parametrize(("difficulty", "most"), [(1.2, 0.6), (2.0, 0.5)])
def test_greedy_is_optimal_at_most_half_the_time_above_the_benchmark(
    difficulty: float, most: float
) -> None:
    optimal = 0
    for seed in range(40):
        instance = TASK.generate(seed, difficulty=difficulty)
        reference = TASK.reference(instance, time_limit=10.0)
        assert reference.proven_optimal
        optimal += len(TASK.greedy_solution(instance)) == reference.objective
    assert optimal / 40 <= most


def test_prompt_lists_every_vertex_and_its_neighbours() -> None:
    instance = TASK.generate(4, tier="benchmark")
    prompt = helpers.assert_prompt_lists_neighbours(TASK, instance)
    assert f"{instance.n} vertices, numbered 0 to {instance.n - 1}, and {len(instance.edges)}" in (
        prompt
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"n": 3, "edges": [[0, 3]]}, "outside"),
        ({"n": 3, "edges": [[1, 1]]}, "self-loop"),
        ({"n": 3, "edges": [[0, 1], [1, 0]]}, "twice"),
        ({"n": 0, "edges": []}, "greater than or equal to 1"),
        ({"n": 3, "edges": [[0, 1.5]]}, "integer"),
    ],
)
def test_bad_instances_are_rejected(fields: dict[str, object], message: str) -> None:
    helpers.assert_rejected(MaxCliqueInstance, message, **fields)


def test_bad_config_is_rejected() -> None:
    helpers.assert_overrides_rejected(
        TASK,
        "easy",
        {"clique_min": {"clique_min": 5, "clique_max": 3}, "density": {"density": 1.5}},
    )
