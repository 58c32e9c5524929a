"""MaxIndependentSet: hand-checked verdicts, kernel vs. pure twin, solvers vs. brute force and
networkx."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym.heuristics import cliques as solvers
from npgym.tasks.max_independent_set import MaxIndependentSetConfig, MaxIndependentSetInstance
from npgym.tasks.max_independent_set.task import cover_certificate
from npgym.tasks.max_independent_set.verifier import check_vertex_set, check_vertex_set_python
from npgym.variants import variant
from tests import helpers

TASK = npgym.get_task("MaxIndependentSet")

# Hand-checked: the 5-cycle 0-1-2-3-4-0 plus vertex 5 joined to 0 and 2, and isolated vertex 6.
# alpha = 4, e.g. {1, 3, 5, 6} or {1, 4, 5, 6}.
CYCLE_AND_MORE = MaxIndependentSetInstance(
    n=7, edges=[[0, 1], [1, 2], [2, 3], [3, 4], [0, 4], [0, 5], [2, 5]]
)


def brute_force_independence_number(adjacency: np.ndarray) -> int:
    """Size of the largest vertex subset (all 2^n of them) with no edge inside."""
    n = adjacency.shape[0]
    best = 0
    for mask in range(1 << n):
        members = [v for v in range(n) if mask >> v & 1]
        if len(members) > best and not adjacency[np.ix_(members, members)].any():
            best = len(members)
    return best


def independence_number(adjacency: np.ndarray) -> int:
    """Exact alpha through the task's reference on a fresh instance."""
    edges = np.argwhere(np.triu(adjacency, 1)).tolist()
    instance = MaxIndependentSetInstance(n=adjacency.shape[0], edges=edges)
    reference = TASK.reference(instance)
    assert reference.proven_optimal and reference.method == "exact"
    chosen = reference.solution
    assert not adjacency[np.ix_(chosen, chosen)].any()
    assert TASK.verify(instance, chosen).objective == reference.objective
    heuristic = TASK.reference(instance, exact=False)
    assert TASK.verify(instance, heuristic.solution).feasible
    assert heuristic.objective <= reference.objective
    return reference.objective


@pytest.mark.parametrize(
    ("answer", "feasible", "objective", "reason"),
    [
        ([1, 3, 5, 6], True, 4, ""),
        ([6, 4, 1, 5], True, 4, ""),
        ([0, 2], True, 2, ""),
        ([], True, 0, ""),
        ([1, 3, 4], False, None, "vertices 3 and 4 are adjacent"),
        ([5, 6, 0], False, None, "vertices 0 and 5 are adjacent"),
        ([6, 6], False, None, "vertex 6 listed twice"),
        ([0] * 1000, False, None, "vertex 0 listed twice"),
        ([1, 3, 5, 6, 1, 3, 5, 6], False, None, "vertex 1 listed twice"),
        ([1, 7], False, None, "vertex 7 does not exist (vertices are 0 to 6)"),
        ([-3, 1], False, None, "vertex -3 does not exist (vertices are 0 to 6)"),
        ([[1, 3], [5]], False, None, "expected integers in the vertex list, got a list"),
        (None, False, None, "expected a list for the vertex list, got nothing"),
    ],
)
def test_hand_checked_verdicts(answer: object, feasible: bool, objective: int, reason: str) -> None:
    helpers.assert_verdict(TASK, CYCLE_AND_MORE, answer, (feasible, objective, reason))


def test_hand_checked_reference_and_scores() -> None:
    helpers.assert_exact_reference(TASK, CYCLE_AND_MORE, 4, [[1, 3, 5, 6], [1, 4, 5, 6]])
    helpers.assert_rewards(
        TASK,
        CYCLE_AND_MORE,
        {
            "Answer: [6, 5, 3, 1]": 2.0,
            "Answer: [0, 2]": pytest.approx(1.5),
            "Answer: []": -0.5,  # empty: no solution
            "Answer: " + str([0] * 1000): -0.5,
            "Answer: {1, 3}": -2.5,
        },
    )


@given(case=helpers.graphs_and_vertex_lists())
def test_kernel_agrees_with_python_twin(case: tuple[np.ndarray, list[int]]) -> None:
    adjacency, ids = case
    helpers.assert_kernel_matches_twin(
        check_vertex_set, check_vertex_set_python, adjacency, False, ids
    )


def test_reference_agrees_with_brute_force_on_tiny_graphs() -> None:
    for adjacency in helpers.random_graphs(np.random.default_rng(0), 100, (1, 11)):
        assert independence_number(adjacency) == brute_force_independence_number(adjacency)


def test_reference_agrees_with_networkx_on_larger_graphs() -> None:
    rng = np.random.default_rng(1)
    for n, density in [(30, 0.2), (40, 0.3), (50, 0.2), (50, 0.1), (60, 0.15)]:
        adjacency = helpers.random_adjacency(rng, n, density)
        complement = nx.complement(nx.from_numpy_array(adjacency.astype(int)))
        _, alpha = nx.max_weight_clique(complement, weight=None)
        assert independence_number(adjacency) == alpha


def test_complement_adjacency_has_no_self_loops() -> None:
    complement = CYCLE_AND_MORE.complement_adjacency
    assert not complement.diagonal().any() and not complement.flags.writeable
    assert (complement | CYCLE_AND_MORE.adjacency | np.eye(7, dtype=bool)).all()
    assert not (complement & CYCLE_AND_MORE.adjacency).any()
    assert solvers.color_bound(complement) >= 4


def test_reference_is_deterministic() -> None:
    helpers.assert_exact_references_are_deterministic(TASK)


def test_unproven_reference_reports_heuristic_bound_and_gap() -> None:
    """With no time the search stops at once: the clique-cover bound lies above the set found."""
    instance = TASK.generate(0, overrides={"n_min": 150, "n_max": 150, "density": 0.1})
    reference = TASK.reference(instance, time_limit=0.0)
    helpers.assert_unproven_reference(TASK, instance, reference)
    assert reference.bound > reference.objective


@pytest.mark.parametrize("tier", npgym.TIERS)
def test_generator_respects_the_tier(tier: str) -> None:
    for config, instance in helpers.tier_instances(TASK, tier, seeds=20):
        assert TASK.reference(instance).objective >= config.set_min


def test_sparse_random_edges_can_beat_the_planted_set() -> None:
    """The planted set of 10 is a lower bound, not the answer: with 30 vertices at density 0.3
    some seeds leave a larger independent set."""
    overrides = helpers.pinned(n=30, set=10) | {"density": 0.3}
    helpers.assert_chance_can_beat_the_plant(TASK, overrides, planted=10)


def test_generator_density_and_clamped_set_size() -> None:
    config = MaxIndependentSetConfig(**helpers.pinned(n=80, set=20), density=0.25)
    instance = TASK.generate(0, overrides=config)
    allowed = 80 * 79 / 2 - 20 * 19 / 2
    assert abs(len(instance.edges) - 0.25 * allowed) < 0.03 * allowed
    tiny = TASK.generate(0, overrides={"n_min": 2, "n_max": 3, "set_min": 5, "set_max": 9})
    assert tiny.edges == () and TASK.reference(tiny).objective == tiny.n


def test_prompt_lists_every_vertex_and_its_neighbours() -> None:
    instance = TASK.generate(4, tier="benchmark")
    prompt = helpers.assert_prompt_lists_neighbours(TASK, instance)
    assert "An independent set is a set of vertices in which no two" in prompt


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"n": 3, "edges": [[2, 3]]}, "outside"),
        ({"n": 3, "edges": [[2, 2]]}, "self-loop"),
        ({"n": 3, "edges": [[0, 2], [2, 0]]}, "twice"),
        ({"n": 3, "edges": [[0, "1"]]}, "integer"),
    ],
)
def test_bad_instances_are_rejected(fields: dict[str, object], message: str) -> None:
    helpers.assert_rejected(MaxIndependentSetInstance, message, **fields)


def test_bad_config_is_rejected() -> None:
    helpers.assert_overrides_rejected(
        TASK, "hard", {"set_min": {"set_min": 20, "set_max": 10}, "n_max": {"n_max": 10**6}}
    )


# --- the planted clique cover above the benchmark tier --------------------------------------


def tiny_covered(seed: int) -> MaxIndependentSetInstance:
    """A certified instance small enough for brute force (4-12 vertices, 2-5 groups)."""
    config = MaxIndependentSetConfig(
        n_min=4, n_max=12, set_min=2, set_max=5, density=0.3, clique_cover=True
    )
    return TASK.generate(seed, overrides=config)


def forged(instance: MaxIndependentSetInstance, cover: object) -> MaxIndependentSetInstance:
    """``instance`` with another ``planted_cover``, read back through validation."""
    data = instance.model_dump()
    data["planted_cover"] = cover
    return MaxIndependentSetInstance.model_validate(data)


@settings(max_examples=50)
@given(seed=st.integers(0, 10**6))
def test_planted_cover_proves_the_independence_number(seed: int) -> None:
    instance = tiny_covered(seed)
    cover = instance.planted_cover
    assert cover is not None
    assert sorted(v for group in cover for v in group) == list(range(instance.n))
    reference = TASK.reference(instance)
    assert reference.method == "planted" and reference.proven_optimal and reference.gap == 0
    assert reference.objective == len(cover)
    assert brute_force_independence_number(instance.adjacency) == len(cover)
    assert TASK.verify(instance, reference.solution).objective == len(cover)
    assert TASK.reference(instance, exact=False) == reference


def test_broken_certificates_are_never_trusted() -> None:
    """Each forged cover claims fewer groups than the optimum, or is not a partition into
    cliques: the reference ignores it and proves the optimum by search."""
    instance = tiny_covered(7)
    assert instance.planted_cover is not None and len(instance.planted_cover) >= 2
    alpha = brute_force_independence_number(instance.adjacency)
    groups = [list(group) for group in instance.planted_cover]
    merged = [groups[0] + groups[1], *groups[2:]]  # two planted vertices, not adjacent
    missing = [groups[0][:1], *groups[1:]] if len(groups[0]) > 1 else [*groups[:-1]]
    repeated = [*groups, groups[0][:1]]  # its first vertex twice: k + 1 "independent" firsts
    outside = [[*groups[0], instance.n], *groups[1:]]
    empty = [[], *groups]
    for cover in (merged, missing, repeated, outside, empty):
        broken = forged(instance, cover)
        assert cover_certificate(broken) is None, cover
        reference = TASK.reference(broken)
        assert reference.method == "exact" and reference.objective == alpha, cover
    bare = forged(instance, None)
    assert TASK.reference(bare).objective == alpha and TASK.reference(bare).method == "exact"


def test_a_cover_whose_first_vertices_clash_bounds_but_does_not_prove() -> None:
    """Valid cliques but first vertices not independent: the group count is still a bound, the
    witness comes from the search."""
    for seed in range(50):
        instance = tiny_covered(seed)
        assert instance.planted_cover is not None
        groups = [list(group) for group in instance.planted_cover]
        # Move to the front of a group a vertex adjacent to another group's first vertex.
        swap = next(
            (
                (index, position)
                for index, group in enumerate(groups)
                for position in range(1, len(group))
                if any(instance.adjacency[group[position], other[0]] for other in groups)
            ),
            None,
        )
        if swap is None:
            continue
        index, position = swap
        group = groups[index]
        group[0], group[position] = group[position], group[0]
        shuffled = forged(instance, groups)
        certificate = cover_certificate(shuffled)
        assert certificate is not None and certificate.planted is None
        assert certificate.bound == len(groups)
        reference = TASK.reference(shuffled, exact=False)
        assert reference.objective == len(groups) and reference.proven_optimal
        return
    pytest.fail("no instance with a vertex adjacent to another group's first vertex")


def test_published_tiers_carry_no_cover_and_keep_their_json() -> None:
    for tier in ("easy", "medium", "hard", "benchmark"):
        instance = TASK.generate(1, tier=tier)
        assert instance.planted_cover is None
        assert "planted_cover" not in instance.to_json()
        assert "clique_cover" not in instance.to_json()
    assert "clique_cover" not in TASK.generate(1, difficulty=0.8).to_json()
    grown = TASK.generate(1, difficulty=1.2)
    assert grown.config is not None and grown.config["clique_cover"] is True
    assert grown.planted_cover is not None
    assert TASK.from_json(grown.to_json()) == grown
    assert forged(grown, None).fingerprint() == grown.fingerprint()


def test_a_relabelled_variant_keeps_the_certificate() -> None:
    instance = TASK.generate(4, difficulty=1.2)
    relabelled = variant(instance, 9)
    reference = TASK.reference(relabelled.instance)
    assert reference.method == "planted"
    assert reference.objective == TASK.reference(instance).objective
    back = relabelled.to_original(reference.solution)
    assert TASK.verify(instance, back).objective == reference.objective


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", [1.2, 2.0])
def test_greedy_is_optimal_on_at_most_half_above_the_benchmark_tier(difficulty: float) -> None:
    optimal = 0
    for seed in range(20):
        instance = TASK.generate(seed, difficulty=difficulty)
        reference = TASK.reference(instance)
        assert reference.method == "planted"
        optimal += TASK.verify(instance, TASK.greedy_solution(instance)).objective == (
            reference.objective
        )
    assert optimal <= 10
