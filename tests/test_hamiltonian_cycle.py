"""HamiltonianCycle: hand-checked verdicts, kernel vs. pure twin, solvers vs. brute force,
generator constructions vs. exact search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym.heuristics import hamiltonian_cycle as solvers
from npgym.tasks.hamiltonian_cycle import HamiltonianCycleConfig, HamiltonianCycleInstance
from npgym.tasks.hamiltonian_cycle.verifier import check_cycle, check_cycle_python
from tests import helpers

TASK = npgym.get_task("HamiltonianCycle")

# A square 0-1-2-3 and a triangle 3-4-5 sharing the cut vertex 3 (hand-checked): no Hamiltonian
# cycle, the longest cycle is the square.
SQUARE_AND_TRIANGLE = HamiltonianCycleInstance(
    n=6, edges=[[0, 1], [1, 2], [2, 3], [0, 3], [3, 4], [4, 5], [3, 5]]
)
TOO_SHORT = "a cycle needs at least 3 distinct vertices"


def brute_force(adjacency: np.ndarray) -> int:
    """Length of the longest cycle, by trying every vertex order (tiny graphs only)."""
    n = adjacency.shape[0]
    for length in range(n, 2, -1):
        for members in itertools.combinations(range(n), length):
            for rest in itertools.permutations(members[1:]):
                order = (members[0], *rest)
                if all(adjacency[order[i - 1], order[i]] for i in range(length)):
                    return length
    return 0


def is_cycle(adjacency: np.ndarray, cycle: np.ndarray) -> bool:
    closed = [*cycle.tolist(), int(cycle[0])]
    return TASK.verify(HamiltonianCycleInstance(**graph_fields(adjacency)), closed).feasible


def graph_fields(adjacency: np.ndarray) -> dict[str, object]:
    first, second = np.nonzero(np.triu(adjacency))
    return {
        "n": adjacency.shape[0],
        "edges": list(zip(first.tolist(), second.tolist(), strict=True)),
    }


@pytest.mark.parametrize(
    ("answer", "feasible", "objective", "reason"),
    [
        ([0, 1, 2, 3, 0], True, 4, ""),
        ([2, 1, 0, 3, 2], True, 4, ""),
        ([3, 4, 5, 3], True, 3, ""),
        ([0, 1, 2, 3], False, None, "cycle does not return to 0 (it ends at 3)"),
        ([0, 1, 2, 3, 4, 5, 0], False, None, "vertices 5 and 0 are not adjacent"),
        ([0, 2, 3, 0], False, None, "vertices 0 and 2 are not adjacent"),
        ([0, 1, 1, 2, 3, 0], False, None, "vertex 1 visited twice"),
        ([3, 4, 5, 3, 0, 1, 2, 3], False, None, "vertex 3 visited twice"),
        ([0, 1, 2, 3, 0, 1, 2, 3, 0], False, None, "vertex 0 visited twice"),
        ([0, 1, 9, 0], False, None, "vertex 9 does not exist (vertices are 0 to 5)"),
        ([0, -1, 3, 0], False, None, "vertex -1 does not exist (vertices are 0 to 5)"),
        ([10**17, 0, 10**17], False, None, f"vertex {10**17} does not exist (vertices are 0 to 5)"),
        ([], False, None, TOO_SHORT),
        ([0], False, None, TOO_SHORT),
        ([0, 0], False, None, TOO_SHORT),
        ([0, 1, 0], False, None, TOO_SHORT),
        ([3, 4, 3], False, None, TOO_SHORT),
        ([0] * 1000, False, None, "vertex 0 visited twice"),
    ],
)
def test_hand_checked_verdicts(
    answer: list[int], feasible: bool, objective: int, reason: str
) -> None:
    helpers.assert_verdict(TASK, SQUARE_AND_TRIANGLE, answer, (feasible, objective, reason))


def test_hand_checked_reference_and_scores() -> None:
    helpers.assert_exact_reference(TASK, SQUARE_AND_TRIANGLE, 4, [[0, 1, 2, 3, 0]])
    helpers.assert_rewards(
        TASK,
        SQUARE_AND_TRIANGLE,
        {
            "Answer: [1, 0, 3, 2, 1]": 2.0,
            "Answer: [3, 4, 5, 3]": pytest.approx(1.75),
            "Answer: [0, 1, 0]": -0.5,
        },
    )


@st.composite
def graphs_and_cycles(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    n = draw(st.integers(1, 8))
    flags = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    upper = np.triu(np.array(flags, dtype=np.bool_).reshape(n, n), 1)
    adjacency = upper | upper.T
    closed = st.permutations(range(n)).flatmap(
        lambda order: st.integers(0, n).map(lambda k: [*order[:k], *order[:1]])
    )
    cycle = draw(st.lists(st.integers(-2, n + 1), max_size=n + 3) | closed)
    return adjacency, cycle


@given(case=graphs_and_cycles())
def test_kernel_agrees_with_python_twin(case: tuple[np.ndarray, list[int]]) -> None:
    helpers.assert_kernel_matches_twin(check_cycle, check_cycle_python, *case)


def test_solvers_agree_with_brute_force_on_tiny_graphs() -> None:
    for adjacency in helpers.random_graphs(np.random.default_rng(1), 120, (3, 8)):
        optimum = brute_force(adjacency)
        dp = solvers.longest_cycle_dp(adjacency)
        exact = solvers.exact_cycle(adjacency, effort=30)
        heuristic = solvers.heuristic_cycle(adjacency)
        assert dp.size == exact.witness.size == optimum
        assert exact.proven_optimal and exact.bound == optimum
        assert heuristic.size <= optimum <= solvers.cycle_bound(adjacency)
        for cycle in (dp, exact.witness, heuristic):
            assert cycle.size == 0 or is_cycle(adjacency, cycle)
        if optimum:
            reference = TASK.reference(HamiltonianCycleInstance(**graph_fields(adjacency)))
            assert reference.objective == optimum and reference.proven_optimal


def test_exact_search_matches_dynamic_programme_on_small_graphs() -> None:
    rng = np.random.default_rng(2)
    for n in (10, 12, 14):
        for density in (0.15, 0.25, 0.4):
            adjacency = helpers.random_adjacency(rng, n, density)
            optimum = solvers.longest_cycle_dp(adjacency).size
            exact = solvers.exact_cycle(adjacency, effort=30)
            assert exact.proven_optimal and exact.witness.size == optimum
            assert optimum == 0 or is_cycle(adjacency, exact.witness)
            assert solvers.heuristic_cycle(adjacency).size <= optimum


@pytest.mark.parametrize("tier", npgym.TIERS)
def test_generator_respects_the_tier_and_its_proofs(tier: str) -> None:
    config = TASK.tiers[tier]
    structures = set()
    for seed in range(16):
        mix = {"hamiltonian_share": 0.5, "separator_share": 0.5}
        instance = TASK.generate(seed, tier=tier, overrides=mix)
        structures.add(instance.structure)
        assert config.n_min <= instance.n <= config.n_max
        assert instance.adjacency.sum(axis=1).min() >= 2
        planted = len(instance.planted_cycle) - 1
        assert instance.hamiltonian == (planted == instance.n)
        assert (instance.structure == "separator") == (instance.separator is not None)
        if not instance.hamiltonian:  # one spare component of 1 or 2 vertices left out
            assert instance.structure == "separator" and instance.n - 2 <= planted < instance.n
        reference = TASK.reference(instance)
        assert reference.proven_optimal and reference.objective == planted
        assert reference.method == "planted"
    assert structures == {"hamiltonian", "separator"}


@pytest.mark.parametrize("tier", npgym.TIERS)
def test_revision_1_keeps_its_constructions_and_proofs(tier: str) -> None:
    structures = set()
    for seed in range(12):
        instance = TASK.generate(
            seed, tier=tier, overrides={"hamiltonian_share": 0.5, "revision": 1}
        )
        structures.add(instance.structure)
        assert instance.separator is None and "separator_share" not in instance.config
        planted = len(instance.planted_cycle) - 1
        assert (
            instance.hamiltonian == (instance.structure == "hamiltonian") == (planted == instance.n)
        )
        reference = TASK.reference(instance)
        assert reference.proven_optimal and reference.objective == planted
        assert reference.method == ("planted" if instance.hamiltonian else "exact")
    assert structures == {"hamiltonian", "cut_vertex", "independent_set"}


@pytest.mark.parametrize("hamiltonian", [True, False])
def test_separator_construction_matches_brute_force_on_tiny_graphs(hamiltonian: bool) -> None:
    """The planted claim (length and, without a Hamiltonian cycle, the separator bound) against
    an exhaustive search, over every tiny size and several noise levels."""
    spares = set()
    for seed in range(40):
        n = 6 + seed % 4
        config = {
            "n_min": n,
            "n_max": n,
            "density": (0.2, 0.6, 1.0)[seed % 3],
            "hamiltonian_share": float(hamiltonian),
            "separator_share": 1.0,
            "hub_share": (0.25, 0.5)[seed % 2],
            "hub_links": 1.5,
        }
        instance = TASK.generate(seed, tier="easy", overrides=config)
        assert instance.structure == "separator"
        planted = len(instance.planted_cycle) - 1
        assert brute_force(instance.adjacency) == planted
        separator = np.array(instance.separator)
        assert solvers.separator_bound(instance.adjacency, separator) == planted
        spares.add(instance.n - planted)
    assert spares == ({0} if hamiltonian else {1, 2})


def test_separator_bound_never_undercuts_the_longest_cycle() -> None:
    rng = np.random.default_rng(4)
    for adjacency in helpers.random_graphs(rng, 200, (3, 10)):
        separator = np.flatnonzero(rng.random(len(adjacency)) < rng.random())
        assert solvers.separator_bound(adjacency, separator) >= brute_force(adjacency)
    # Hand-checked: removing the centre of a wheel with 5 spokes leaves one 5-cycle: bound 6;
    # removing vertices 0 and 2 of the square 0-1-2-3 leaves {1} and {3}: bound 2 + 1 + 1 = 4.
    wheel = np.zeros((6, 6), dtype=np.bool_)
    for spoke in range(1, 6):
        wheel[0, spoke] = wheel[spoke, 1 + spoke % 5] = True
    wheel |= wheel.T
    assert solvers.separator_bound(wheel, np.array([0])) == 6
    square = SQUARE_AND_TRIANGLE.adjacency[:4, :4]
    assert solvers.separator_bound(square, np.array([0, 2])) == 4
    assert solvers.separator_bound(square, np.array([], dtype=np.int64)) == 4


def test_a_separator_that_proves_nothing_falls_back_to_search() -> None:
    instance = TASK.generate(3, tier="medium", overrides={"hamiltonian_share": 0.0})
    planted = len(instance.planted_cycle) - 1
    wrong = instance.model_copy(update={"separator": (instance.separator[0],)})
    assert solvers.separator_bound(wrong.adjacency, np.array(wrong.separator)) > planted
    reference = TASK.reference(wrong)
    assert reference.proven_optimal and reference.objective == planted
    assert reference.method == "exact"


def test_a_relabelled_variant_keeps_its_certificate() -> None:
    from npgym.variants import variant

    instance = TASK.generate(3, tier="benchmark", overrides={"hamiltonian_share": 0.0})
    relabelled = variant(instance, 7).instance
    assert relabelled.separator != instance.separator
    reference = TASK.reference(relabelled)
    assert reference.method == "planted" and reference.proven_optimal
    assert reference.objective == len(instance.planted_cycle) - 1


def test_hamiltonian_share_and_density() -> None:
    def kinds(share: float) -> list[bool]:
        return [
            TASK.generate(seed, tier="medium", overrides={"hamiltonian_share": share}).hamiltonian
            for seed in range(40)
        ]

    assert all(kinds(1.0)) and not any(kinds(0.0))
    assert 20 <= sum(kinds(0.75)) <= 38
    for separator_share in (0.0, None):  # revision 2's random graphs, and revision 1
        config = {"hamiltonian_share": 1.0, "n_min": 40, "n_max": 40, "density": 0.3}
        config |= {"separator_share": 0.0} if separator_share == 0.0 else {"revision": 1}
        edges = [len(TASK.generate(seed, overrides=config).edges) for seed in range(20)]
        assert abs(np.mean(edges) / (40 * 39 / 2) - 0.3) < 0.02


def test_revision_2_fields_are_required_and_left_out_of_revision_1_dumps() -> None:
    with pytest.raises(ValueError, match="revision 2 needs separator_share, hub_share, hub_links"):
        HamiltonianCycleConfig(n_min=15, n_max=20, density=0.2, revision=2)
    benchmark = TASK.config("benchmark")
    assert benchmark.revision == 2 and benchmark.model_dump()["separator_share"] == 0.9
    old = TASK.config("benchmark", overrides={"revision": 1}).model_dump(mode="json")
    assert old == {"n_min": 40, "n_max": 50, "density": 0.5, "hamiltonian_share": 0.75}
    assert "separator" not in TASK.generate(0, tier="easy", overrides={"revision": 1}).to_json()


def test_prompt_shows_only_the_graph() -> None:
    instance = TASK.generate(5, tier="hard", overrides={"hamiltonian_share": 0.0})
    bare = HamiltonianCycleInstance(n=instance.n, edges=instance.edges)
    prompt = TASK.prompt(instance)
    assert prompt == TASK.prompt(bare)
    for line in npgym.graphs.adjacency_lines(instance.neighbours()):
        assert f"\n{line}\n" in prompt
    assert f"{instance.n} vertices" in prompt and f"{len(instance.edges)} edges" in prompt
    assert instance.fingerprint() == bare.fingerprint() != TASK.generate(6).fingerprint()


def test_reference_without_planted_cycle_is_found_and_deterministic() -> None:
    for seed in range(6):
        instance = TASK.generate(seed, tier="benchmark", overrides={"hamiltonian_share": 0.3})
        bare = HamiltonianCycleInstance(n=instance.n, edges=instance.edges)
        first = helpers.solved_twice(TASK, bare)
        assert first.proven_optimal and first.objective == len(instance.planted_cycle) - 1
        assert TASK.verify(instance, first.solution).objective == first.objective


def test_heuristic_reference_reports_a_bound() -> None:
    instance = TASK.generate(0, tier="hard", overrides={"hamiltonian_share": 0.0})
    quick = TASK.reference(instance, exact=False)
    assert quick.bound >= quick.objective and quick.bound >= TASK.reference(instance).objective
    assert quick.proven_optimal == (quick.bound == quick.objective)
    assert quick.gap == pytest.approx((quick.bound - quick.objective) / quick.objective)


def test_time_limit_keeps_the_bound_consistent() -> None:
    adjacency = helpers.random_adjacency(np.random.default_rng(3), 150, 0.03)
    incumbent = solvers.heuristic_cycle(adjacency, effort=1)
    result = solvers.exact_cycle(adjacency, effort=0.001, incumbent=incumbent)
    assert result.witness.size >= incumbent.size and result.bound >= result.witness.size
    assert result.proven_optimal == (result.bound == result.witness.size)
    assert result.witness.size == 0 or is_cycle(adjacency, result.witness)


def test_blocks_and_canonical_cycle() -> None:
    adjacency = SQUARE_AND_TRIANGLE.adjacency
    assert [block.tolist() for block in solvers.blocks(adjacency)] == [[0, 1, 2, 3], [3, 4, 5]]
    assert solvers.cycle_bound(adjacency) == 4
    assert solvers.canonical_cycle(np.array([3, 2, 1, 0])) == [0, 1, 2, 3, 0]
    assert solvers.canonical_cycle(np.array([2, 0, 3, 1])) == [0, 2, 1, 3, 0]
    with pytest.raises(ValueError, match="at most"):
        solvers.longest_cycle_dp(np.zeros((19, 19), dtype=np.bool_))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"n": 4, "edges": [[0, 1], [1, 2], [2, 3]]}, "no cycle"),
        ({"n": 3, "edges": [[0, 1], [1, 2], [0, 2], [2, 2]]}, "self-loop"),
        ({"n": 3, "edges": [[0, 1], [1, 3], [0, 2]]}, "outside"),
        ({"n": 3, "edges": [[0, 1], [1, 2], [0, 2]], "planted_cycle": [0, 1, 2]}, "closed"),
        ({"n": 4, "edges": [[0, 1], [1, 2], [0, 2]], "planted_cycle": [0, 1, 3, 0]}, "not an edge"),
        (
            {
                "n": 3,
                "edges": [[0, 1], [1, 2], [0, 2]],
                "planted_cycle": [0, 1, 2, 0],
                "hamiltonian": False,
            },
            "hamiltonian",
        ),
        ({"n": 3, "edges": [[0, 1], [1, 2], [0, 2]], "structure": "clique"}, "structure"),
        ({"n": 3, "edges": [[0, 1], [1, 2], [0, 2]], "separator": [0, 0]}, "distinct"),
        ({"n": 3, "edges": [[0, 1], [1, 2], [0, 2]], "separator": [3]}, "distinct"),
    ],
)
def test_bad_instances_are_rejected(fields: dict[str, object], message: str) -> None:
    helpers.assert_rejected(HamiltonianCycleInstance, message, **fields)


def test_config_bounds_and_overrides() -> None:
    bad = {"n_min": {"n_min": 30, "n_max": 20}, "hamiltonian_share": {"hamiltonian_share": 1.5}}
    helpers.assert_overrides_rejected(TASK, "easy", bad)
    assert isinstance(TASK.config(difficulty=0.0), HamiltonianCycleConfig)
    instance = TASK.generate(
        0, overrides={"n_min": 5, "n_max": 5, "density": 0.0, "hamiltonian_share": 0.0}
    )
    assert instance.n == 5 and TASK.reference(instance).objective == len(instance.planted_cycle) - 1


ODD_ITEMS = st.sampled_from([None, "x", 1.5, True, [0, 1]])


@given(
    answer=st.lists(st.integers(-2, 7) | st.integers(-(10**19), 10**19) | ODD_ITEMS, max_size=40)
)
def test_verify_never_raises(answer: list[object]) -> None:
    verdict = TASK.verify(SQUARE_AND_TRIANGLE, answer)
    assert verdict.feasible == (verdict.reason == "")


@pytest.mark.slow
@pytest.mark.parametrize("tier", npgym.TIERS)
def test_exact_search_confirms_every_construction(tier: str) -> None:
    for seed in range(20, 45):
        instance = TASK.generate(seed, tier=tier, overrides={"hamiltonian_share": 0.0})
        search = solvers.exact_cycle(instance.adjacency, effort=60)
        assert search.proven_optimal
        assert search.witness.size == len(instance.planted_cycle) - 1 < instance.n


@pytest.mark.parametrize("difficulty", [1.0, 1.5, 2.0])
def test_the_heuristic_reference_takes_the_planted_proof_first(difficulty: float) -> None:
    # The exact path's planted proofs are a check, far cheaper than rotation-extension: the
    # heuristic reference uses them too, so it is never slower than the exact one.
    for seed in range(4):
        instance = TASK.generate(seed, difficulty=difficulty)
        exact = TASK.reference(instance)
        if exact.method == "planted":
            assert TASK.reference(instance, exact=False) == exact
