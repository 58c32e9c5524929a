"""Inverse problems stay bounded and settled: every answer within the stated caps is checked
within 1 CPU second and 100 MB, and settled (never "could not settle"); every reference scores 2
at every difficulty the ids accept. The bounded-work exact routines agree with brute force."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym.capabilities import capability
from npgym.config import MAX_DIFFICULTY
from npgym.families import INVERTIBLE_TASKS
from npgym.families.invert import InvertInstance
from npgym.heuristics import small_exact
from npgym.tasks.meeting_scheduling.inverse import MAX_ATTENDEES, MAX_ROOMS, MIN_SLOT

CPU_BOUND_S = 1.0
MEMORY_BOUND_MB = 100.0
MARGIN = 2.0
"""Asserted bounds are the documented ones divided by this margin."""
UNSETTLED = "could not settle"


def _cap(base: str) -> int:
    """The largest size an answer to ``Invert-<base>`` may state."""
    return int(capability(npgym.get_task(base), "inverse").size_cap)


def _task(base: str) -> Any:
    return npgym.get_task(f"Invert-{base}")


def _asking(base: str, size: int) -> InvertInstance:
    """An Invert instance that asks for the optimum property at ``size`` (k is irrelevant: the
    check settles the optimum either way)."""
    instance = _task(base).generate(0, tier="easy")
    return instance.model_copy(update={"property": "optimum", "size": size, "k": 1})


def _answer(fields: dict[str, Any]) -> str:
    return "Answer: " + json.dumps(fields, separators=(",", ":"))


# --- the issue's cases -------------------------------------------------------------------------


def _meeting(meetings: int, attendees: list[int], duration: int, rooms: int, slot: int) -> dict:
    return {
        "meetings": [{"attendees": attendees, "duration": duration}] * meetings,
        "availability": [[[480, 1080]]] * (max(attendees) + 1),
        "rooms": [2] * rooms,
        "slot": slot,
    }


def test_the_issues_meeting_answer_is_refused_before_any_model() -> None:
    """The issue's 494-character answer (100 rooms, slot 1) cost 1.5 CPU-s and 300 MB: it is
    now over the stated caps, a format failure read in linear time."""
    task = _task("MeetingScheduling")
    instance = _asking("MeetingScheduling", 6)
    text = _answer(_meeting(6, [0, 1], 250, 100, 1))
    assert len(text) < 600
    started = time.process_time()
    score = task.score(instance, text)
    assert time.process_time() - started < 0.05
    assert not score.format_ok and f"at most {MAX_ROOMS} rooms" in score.reason


@pytest.mark.parametrize(
    ("rooms", "slot", "attendees", "refused"),
    [
        (MAX_ROOMS, MIN_SLOT, MAX_ATTENDEES, ""),
        (MAX_ROOMS + 1, MIN_SLOT, MAX_ATTENDEES, "rooms"),
        (MAX_ROOMS, MIN_SLOT - 1, MAX_ATTENDEES, "slot"),
        (MAX_ROOMS, MIN_SLOT, MAX_ATTENDEES + 1, "attendees"),
    ],
)
def test_meeting_caps_at_and_past_the_limit(
    rooms: int, slot: int, attendees: int, refused: str
) -> None:
    """At every MeetingScheduling cap the answer is settled within the bound; one past any cap
    is a format failure naming it."""
    task = _task("MeetingScheduling")
    instance = _asking("MeetingScheduling", _cap("MeetingScheduling"))
    fields = _meeting(_cap("MeetingScheduling"), [0, 1], 90, rooms, slot)
    fields["availability"] = [[[480, 1080]]] * attendees
    started = time.process_time()
    score = task.score(instance, _answer(fields))
    assert time.process_time() - started < CPU_BOUND_S / MARGIN
    if refused:
        assert not score.format_ok and refused in score.reason
    else:
        assert score.format_ok and score.feasible and UNSETTLED not in score.reason


def test_a_correct_min_bisection_answer_at_the_cap_scores_two() -> None:
    """The issue: a correct 46-vertex answer scored 1.0 ("could not settle"). At the cap (24
    vertices, a dense graph of random weights) a correct answer is settled and scores 2."""
    rng = np.random.default_rng(7)
    n = _cap("MinBisection")
    edges = [[u, v, int(rng.integers(1, 10**6))] for u in range(n) for v in range(u + 1, n)]
    optimum = small_exact.min_bisection_optimum(n, np.array(edges, dtype=np.int64))
    instance = _asking("MinBisection", n).model_copy(update={"k": int(optimum)})
    started = time.process_time()
    score = _task("MinBisection").score(instance, _answer({"n": n, "edges": edges}))
    assert time.process_time() - started < CPU_BOUND_S / MARGIN
    assert score.reward == 2.0, score.reason


@pytest.mark.parametrize("base", sorted(INVERTIBLE_TASKS))
def test_an_answer_one_past_the_size_cap_is_refused(base: str) -> None:
    """Generation never states a size above the cap, and an answer one past the cap is refused
    (its size is not the stated one) before any solver runs."""
    task = _task(base)
    for seed in range(5):
        for difficulty in (0.0, 1.0, MAX_DIFFICULTY):
            assert task.generate(seed, difficulty=difficulty).size <= _cap(base)
    cap = _cap(base)
    asking = _asking(base, cap)
    if base in ("MaxClique", "MaxIndependentSet", "GraphColoring", "HamiltonianCycle"):
        bigger = {"n": cap + 1, "edges": [[v, v + 1] for v in range(cap)] + [[0, cap]]}
    elif base == "MinBisection":
        bigger = {"n": cap + 1, "edges": [[v, v + 1, 1] for v in range(cap)]}
    elif base == "SetCover":
        bigger = {"universe_size": cap + 1, "subsets": [[e] for e in range(cap + 1)]}
    elif base == "MeetingScheduling":
        bigger = _meeting(cap + 1, [0, 1], 60, 2, MIN_SLOT)
    elif base == "Knapsack":
        bigger = {"weights": [1] * (cap + 1), "values": [1] * (cap + 1), "capacity": 3}
    elif base == "SubsetSum":
        bigger = {"numbers": [1] * (cap + 1), "target": 3}
    else:
        row = range(cap + 1)
        bigger = {"distances": [[int(i != j) for j in row] for i in row]}
    started = time.process_time()
    score = task.score(asking, _answer(bigger))
    assert time.process_time() - started < 0.05
    assert score.format_ok and not score.feasible and f"not {cap}" in score.reason


@pytest.mark.parametrize("base", sorted(INVERTIBLE_TASKS))
def test_references_score_two_at_the_ends_of_the_difficulty_range(base: str) -> None:
    task = _task(base)
    for seed in range(3):
        for difficulty in (0.0, 1.0, MAX_DIFFICULTY):
            instance = task.generate(seed, difficulty=difficulty)
            reference = task.reference(instance)
            assert task.score(instance, task.format_answer(reference.solution)).reward == 2.0


@pytest.mark.slow
@pytest.mark.parametrize("base", sorted(INVERTIBLE_TASKS))
def test_every_reference_scores_two_over_many_seeds_up_to_the_top_difficulty(base: str) -> None:
    """The issue: 5 of 40 Invert-TSP seeds at difficulty 1.0 stated 45 cities, over the integer
    cap, and their references scored -2.5 (20 seeds here: CI's time budget; the bug failed one
    seed in eight)."""
    task = _task(base)
    for seed in range(20):
        for difficulty in (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, MAX_DIFFICULTY):
            instance = task.generate(seed, difficulty=difficulty)
            reference = task.reference(instance)
            score = task.score(instance, task.format_answer(reference.solution))
            assert score.reward == 2.0, (seed, difficulty, score.reason)


# --- adversarial answers at the caps -----------------------------------------------------------


def _graph(rng: np.random.Generator, n: int, density: float) -> list[list[int]]:
    return [[u, v] for u in range(n) for v in range(u + 1, n) if rng.random() < density]


def _multipartite(n: int, parts: int) -> list[list[int]]:
    """Complete multipartite graph: many maximum cliques and colourings, the worst for branching."""
    return [[u, v] for u in range(n) for v in range(u + 1, n) if u % parts != v % parts]


def adversaries(base: str, count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` answers of the cap's size built to be expensive to settle: dense and sparse
    random graphs, complete multipartite graphs, equal and random weights, magnitudes at the
    cap, fragmented meeting calendars."""
    rng = np.random.default_rng(seed)
    n = _cap(base)
    answers: list[dict[str, Any]] = []
    for index in range(count):
        density = (0.1, 0.3, 0.5, 0.7, 0.9, 1.0)[index % 6]
        if base in ("MaxClique", "MaxIndependentSet", "GraphColoring", "HamiltonianCycle"):
            edges = _multipartite(n, 2 + index % 5) if index % 3 == 2 else _graph(rng, n, density)
            answers.append({"n": n, "edges": edges or [[0, 1]]})
        elif base == "TSP":
            high = (1, 3, 10**6)[index % 3]
            matrix = np.triu(rng.integers(0, high + 1, size=(n, n)), 1)
            answers.append({"distances": (matrix + matrix.T).tolist()})
        elif base == "MinBisection":
            edges = [
                [u, v, 1 if index % 3 == 0 else int(rng.integers(1, 10**6))]
                for u, v in _graph(rng, n, density)
            ]
            answers.append({"n": n, "edges": edges or [[0, 1, 1]]})
        elif base == "Knapsack":
            weights = rng.integers(10**5, 10**6, size=n)
            values = weights if index % 2 else rng.integers(0, 10**6, size=n)
            answers.append(
                {"weights": weights.tolist(), "values": values.tolist(), "capacity": 10**6}
            )
        elif base == "SubsetSum":
            numbers = rng.integers(1, 100_001 if index % 2 else 20, size=n)
            target = int(min(100_000, numbers[: n // 2].sum()))
            answers.append({"numbers": numbers.tolist(), "target": target})
        elif base == "SetCover":
            universe = 100 if index % 2 else 20
            subsets = [
                sorted({int(e) for e in rng.integers(0, universe, size=rng.integers(1, 6))})
                for _ in range(n)
            ]
            answers.append({"universe_size": universe, "subsets": subsets})
        else:
            answers.append(_hard_meetings(rng, n))
    return answers


def _hard_meetings(rng: np.random.Generator, meetings: int) -> dict[str, Any]:
    """Meetings of shared attendees with fragmented calendars, in few small rooms."""
    calendars = []
    for _ in range(MAX_ATTENDEES):
        cuts = sorted({int(c) * MIN_SLOT for c in rng.integers(16, 36, size=6)})
        free = [[cuts[i], cuts[i + 1]] for i in range(0, len(cuts) - 1, 2)]
        calendars.append(free or [[480, 1080]])
    return {
        "meetings": [
            {
                "attendees": sorted(
                    {int(a) for a in rng.integers(0, MAX_ATTENDEES, size=rng.integers(1, 5))}
                ),
                "duration": int(rng.integers(1, 5)) * MIN_SLOT,
            }
            for _ in range(meetings)
        ],
        "availability": calendars,
        "rooms": [int(c) for c in rng.integers(1, 6, size=MAX_ROOMS)],
        "slot": MIN_SLOT,
    }


def measure(base: str, count: int) -> dict[str, float]:
    """Worst CPU seconds of one check, growth of the peak RSS in MB and the number of unsettled
    answers over ``count`` adversaries (run in a fresh process, after a warm-up)."""
    import resource

    task = _task(base)
    instance = _asking(base, _cap(base))
    for fields in adversaries(base, 10, seed=99):  # compile and load every kernel first (from a
        task.score(instance, _answer(fields))  # cold cache, one adversary may leave some out)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worst, unsettled, invalid = 0.0, 0, 0
    for fields in adversaries(base, count):
        started = time.process_time()
        score = task.score(instance, _answer(fields))
        worst = max(worst, time.process_time() - started)
        unsettled += UNSETTLED in score.reason
        invalid += not (score.format_ok and score.feasible)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cpu_s": worst, "mb": peak - baseline, "unsettled": unsettled, "invalid": invalid}


@pytest.mark.slow
@pytest.mark.parametrize("base", sorted(INVERTIBLE_TASKS))
def test_adversarial_answers_at_the_caps_settle_within_the_bounds(base: str) -> None:
    """60 answers at each task's size cap, built to be expensive, each checked within half the
    1 s CPU bound, with the process's peak memory growing by less than half of 100 MB, and
    every one settled."""
    code = (
        "import json, sys; from tests.test_invert_limits import measure; "
        f"print(json.dumps(measure({base!r}, 60)))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    ).stdout
    figures = json.loads(output.strip().splitlines()[-1])
    assert figures["unsettled"] == 0, figures
    assert figures["invalid"] < 60, figures  # the adversaries are valid instances
    assert figures["cpu_s"] < CPU_BOUND_S / MARGIN, figures
    assert figures["mb"] < MEMORY_BOUND_MB / MARGIN, figures


# --- the bounded-work routines against brute force ---------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 7), st.integers(0, 2**32 - 1))
def test_held_karp_equals_every_tour(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    matrix = np.triu(rng.integers(0, 30, size=(n, n)), 1)
    matrix = matrix + matrix.T
    tours = ((0, *rest) for rest in itertools.permutations(range(1, n)))
    best = min(sum(matrix[t[i], t[(i + 1) % n]] for i in range(n)) for t in tours)
    assert small_exact.tsp_optimum(matrix.astype(np.int64)) == best


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 10), st.integers(0, 2**32 - 1))
def test_every_bisection_equals_brute_force(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    edges = [[u, v, int(rng.integers(1, 20))] for u in range(n) for v in range(u + 1, n)]
    edges = [edge for edge in edges if rng.random() < 0.6]
    weight = np.zeros((n, n), dtype=np.int64)
    for u, v, w in edges:
        weight[u, v] = weight[v, u] = w
    best = min(
        sum(weight[a, b] for a in side for b in range(n) if b not in side)
        for side in itertools.combinations(range(n), n // 2)
    )
    array = np.array(edges, dtype=np.int64).reshape(-1, 3)
    assert small_exact.min_bisection_optimum(n, array) == best


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=9), st.integers(0, 2**32 - 1))
def test_knapsack_and_subset_sum_equal_every_selection(weights: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 30, size=len(weights))
    capacity, target = int(rng.integers(0, 80)), int(rng.integers(1, 80))
    selections = [
        chosen
        for size in range(len(weights) + 1)
        for chosen in itertools.combinations(range(len(weights)), size)
    ]
    best_value = max(
        sum(values[i] for i in chosen)
        for chosen in selections
        if sum(weights[i] for i in chosen) <= capacity
    )
    reaching = [len(c) for c in selections if sum(weights[i] for i in c) == target]
    array = np.array(weights, dtype=np.int64)
    assert small_exact.knapsack_optimum(array, values.astype(np.int64), capacity) == best_value
    assert small_exact.subset_sum_optimum(array, target) == max(reaching, default=-1)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 130), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_set_cover_equals_every_selection(universe: int, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    subsets = [
        sorted({int(e) for e in rng.integers(0, universe, size=rng.integers(1, universe + 1))})
        for _ in range(count)
    ]
    covers = [
        size
        for size in range(1, count + 1)
        for chosen in itertools.combinations(subsets, size)
        if set().union(*chosen) == set(range(universe))
    ]
    bits = small_exact.subset_bits(universe, subsets)
    assert small_exact.set_cover_optimum(universe, bits) == min(covers, default=-1)


@pytest.mark.parametrize(
    "base", ["TSP", "MinBisection", "Knapsack", "SubsetSum", "SetCover", "HamiltonianCycle"]
)
def test_bounded_routines_agree_with_the_base_exact_solvers(base: str) -> None:
    """On generated instances, the optimum the inverse check uses equals the base task's proven
    reference objective."""
    task = _task(base)
    for seed in range(6):
        instance = task.base.generate(seed, difficulty=0.1)
        settled, optimum = task.optimum(instance, 60.0)
        reference = task.base.reference(instance)
        assert settled and reference.proven_optimal
        assert optimum == reference.objective
