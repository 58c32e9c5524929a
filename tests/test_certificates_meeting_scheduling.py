"""MeetingScheduling certificates: every reference carries one the independent checker accepts,
and no mutated, forged or hostile certificate proves a false bound."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.certificates import CertificateError
from npgym.certificates import meeting_scheduling as checker
from npgym.heuristics import meeting_scheduling as solvers
from npgym.heuristics.result import SolverResult
from npgym.results import UncertifiedReferenceWarning
from npgym.tasks.meeting_scheduling.instance import MeetingSchedulingInstance
from npgym.tasks.meeting_scheduling.task import _problem
from tests.certify import check_reference as check_reference_of


def check_reference(instance: Any, exact: bool = True) -> certificates.Checked:
    """The reference of ``instance``, its claims checked against its certificate."""
    return check_reference_of("MeetingScheduling", instance, exact)


TASK = npgym.get_task("MeetingScheduling")
DAY = (480, 660)
"""The day of the tiny instances: six half-hour slots."""


def as_json(instance: MeetingSchedulingInstance) -> dict[str, Any]:
    return json.loads(instance.to_json())


def brute_force(instance: dict[str, Any]) -> int:
    """The optimum, by trying every option (skip, or a room and a grid start) of every meeting."""
    meetings, rooms = instance["meetings"], instance["rooms"]
    first, last, slot = instance["day_start"], instance["day_end"], instance["slot"]

    def free(people: list[int], start: int, end: int) -> bool:
        return all(
            any(a <= start and end <= b for a, b in instance["availability"][p]) for p in people
        )

    options = [
        [None]
        + [
            (room, start, start + m["duration"])
            for room, capacity in enumerate(rooms)
            if capacity >= len(m["attendees"])
            for start in range(first, last - m["duration"] + 1, slot)
            if free(m["attendees"], start, start + m["duration"])
        ]
        for m in meetings
    ]
    best = 0

    def search(index: int, chosen: list[tuple[int, int, int, int]], value: int) -> None:
        nonlocal best
        if index == len(meetings):
            best = max(best, value)
            return
        people = set(meetings[index]["attendees"])
        for option in options[index]:
            if option is None:
                search(index + 1, chosen, value)
                continue
            room, start, end = option
            if all(
                not (start < e and s < end)
                or (room != r and not people & set(meetings[m]["attendees"]))
                for m, r, s, e in chosen
            ):
                chosen.append((index, room, start, end))
                search(index + 1, chosen, value + len(people))
                chosen.pop()

    search(0, [], 0)
    return best


@st.composite
def tiny_instances(draw: st.DrawFn) -> dict[str, Any]:
    """Up to four meetings of up to three of four attendees, one or two rooms, six slots."""
    people = draw(st.integers(2, 4))
    slots = st.integers(0, 6)
    availability = []
    for _ in range(people):
        a, b = sorted(draw(st.lists(slots, min_size=2, max_size=2, unique=True)))
        availability.append([[DAY[0] + 30 * a, DAY[0] + 30 * b]])
    meetings = [
        {
            "attendees": draw(
                st.lists(st.integers(0, people - 1), min_size=1, max_size=3, unique=True)
            ),
            "duration": 30 * draw(st.integers(1, 3)),
        }
        for _ in range(draw(st.integers(1, 4)))
    ]
    rooms = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    instance = MeetingSchedulingInstance(
        meetings=meetings,
        availability=availability,
        rooms=rooms,
        slot=30,
        day_start=DAY[0],
        day_end=DAY[1],
    )
    return as_json(instance)


def certified(instance: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The optimum (brute force) and the producer's certificate of it."""
    optimum = brute_force(instance)
    problem = _problem(MeetingSchedulingInstance(**instance))
    bound, certificate = solvers.certify(problem, optimum)
    assert bound == optimum
    return optimum, certificate


@pytest.mark.parametrize(
    ("tier", "difficulty"),
    [(tier, None) for tier in ("easy", "medium", "hard", "benchmark")]
    + [(None, difficulty) for difficulty in (0.0, 0.5, 1.0, 1.5)],
)
def test_every_tier_and_difficulty_is_proven_with_a_certificate(
    tier: str | None, difficulty: float | None
) -> None:
    for seed in range(3 if difficulty is None or difficulty < 1.5 else 1):
        assert check_reference(TASK.generate(seed, tier, difficulty)).proven


@pytest.mark.slow
def test_difficulty_two_is_proven_with_a_certificate() -> None:
    for seed in range(3):
        assert check_reference(TASK.generate(seed, None, 2.0)).proven


@settings(max_examples=150, deadline=None)
@given(tiny_instances())
def test_certified_bounds_agree_with_brute_force(instance: dict[str, Any]) -> None:
    optimum, certificate = certified(instance)
    assert checker.bound(instance, certificate) == optimum
    relaxation = solvers._Relaxation(_problem(MeetingSchedulingInstance(**instance)))
    value, plain = relaxation.leaf(relaxation.root(), None, optimum)
    assert checker.bound(instance, lagrangian(plain)) == value >= optimum


def numbers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path to every integer in a JSON value."""
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in numbers(item, (*path, i))]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in numbers(item, (*path, key))]
    return [path] if type(value) is int else []


def mutated_bound(
    instance: dict[str, Any], certificate: dict[str, Any], path: tuple[Any, ...], value: Any
) -> int | None:
    """The bound of ``certificate`` with the number at ``path`` replaced (None if refused)."""
    forged = copy.deepcopy(certificate)
    holder = forged
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    try:
        return certificates.check("MeetingScheduling", instance, [], forged).bound
    except CertificateError:
        return None


@settings(max_examples=300, deadline=None)
@given(tiny_instances(), st.data())
def test_a_mutated_certificate_is_refused_or_still_a_valid_bound(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    optimum, certificate = certified(instance)
    # The root LP leaf too, so that mutations meet multipliers even where no tree was needed.
    problem = _problem(MeetingSchedulingInstance(**instance))
    relaxation = solvers._Relaxation(problem)
    solved = relaxation.solve(relaxation.root())
    assert solved is not None
    root = {
        "kind": "lagrangian",
        "tree": [relaxation.leaf(relaxation.root(), solved[1], optimum)[1]],
    }
    for proof in (certificate, root):
        paths = numbers(proof)
        if not paths:
            continue
        path = data.draw(st.sampled_from(paths))
        value = data.draw(st.integers(-3, 12) | st.sampled_from([480, 510, 2**62 - 1, 2**62]))
        bound = mutated_bound(instance, proof, path, value)
        assert bound is None or bound >= optimum


@settings(max_examples=150, deadline=None)
@given(tiny_instances(), st.data())
def test_a_mutated_tree_shape_is_refused_or_still_a_valid_bound(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    optimum, certificate = certified(instance)
    tree = certificate["tree"]
    index = data.draw(st.integers(0, len(tree) - 1))
    change = data.draw(st.sampled_from(["drop", "duplicate", "swap", "empty leaf"]))
    forged = list(tree)
    if change == "drop":
        del forged[index]
    elif change == "duplicate":
        forged.insert(index, tree[index])
    elif change == "swap":
        other = data.draw(st.integers(0, len(tree) - 1))
        forged[index], forged[other] = forged[other], forged[index]
    else:
        forged[index] = ["bound", 1, [], []]
    try:
        bound = checker.bound(instance, {"kind": "lagrangian", "tree": forged})
    except CertificateError:
        return
    assert bound >= optimum


SMALL = {
    "task": "MeetingScheduling",
    "meetings": [
        {"attendees": [0, 1], "duration": 60},
        {"attendees": [1, 2], "duration": 60},
        {"attendees": [0, 2], "duration": 60},
    ],
    "availability": [[[480, 540]], [[480, 540]], [[480, 540]]],
    "rooms": [3, 3],
    "slot": 30,
    "day_start": 480,
    "day_end": 660,
}
"""Three pairwise-conflicting meetings of two, all only at 08:00: the optimum is 2. With no
multipliers the bound is 6; the LP's (1/2 per attendee at 08:00 and 08:30) is 3."""


def leaf(persons: list[int], rooms: list[int] | None = None, scale: int = 1) -> list[Any]:
    return ["bound", scale, persons, rooms or []]


def lagrangian(*nodes: list[Any]) -> dict[str, Any]:
    return {"kind": "lagrangian", "tree": list(nodes)}


HALF = [p for person in range(3) for k in range(2) for p in (person, k, 1)]
"""Multiplier 1/2 (scale 2) for every attendee at instants 0 and 1."""


def test_small_instance_by_hand() -> None:
    assert brute_force(SMALL) == 2
    assert checker.objective(SMALL, [[0, 0, 480]]) == 2
    assert checker.bound(SMALL, lagrangian(leaf([]))) == 6
    assert checker.bound(SMALL, lagrangian(leaf(HALF, scale=2))) == 3
    # Meeting 0 skipped (1 and 2 clash on attendee 2), or scheduled and then 1 skipped (0 and 2
    # clash on attendee 0) or scheduled (0 clashes with 1 on attendee 1 and with 2 on 0).
    tree = lagrangian(
        ["skip", 0],
        leaf([2, 0, 2]),
        ["skip", 1],
        leaf([0, 0, 2]),
        leaf([1, 0, 2, 0, 0, 2]),
    )
    assert checker.bound(SMALL, tree) == 2
    tree["tree"][1] = leaf([2, 0, 1])  # half the multiplier: 1 + (2 - 1) + (2 - 1)
    assert checker.bound(SMALL, tree) == 3
    _, certificate = certified(SMALL)
    assert checker.bound(SMALL, certificate) == 2


def test_a_leaf_where_a_meeting_has_no_option_holds_nothing() -> None:
    # Meeting 0 at 08:00 (its only start) in any room; else skipped; else nothing is left.
    forced = leaf([0, 0, 2, 1, 0, 2])  # 4 - 2 (meeting 0) + 0 + 0
    tree = lagrangian(["at", 0, -1, 480], forced, ["skip", 0], leaf([2, 0, 2]), leaf([]))
    assert checker.bound(SMALL, tree) == 2  # the last leaf (6 if it counted) holds nothing
    tree["tree"][-1] = leaf([5])
    with pytest.raises(CertificateError):
        checker.bound(SMALL, tree)  # still checked


@pytest.mark.parametrize(
    "certificate",
    [
        {},
        {"kind": "dual", "tree": [leaf([])]},
        {"kind": "lagrangian"},
        {"kind": "lagrangian", "tree": [leaf([])], "extra": 1},
        lagrangian(),
        {"kind": "lagrangian", "tree": "bound"},
        lagrangian(["bound"]),
        lagrangian(["bound", 1, [], [], 0]),
        lagrangian(leaf([]), leaf([])),  # a node after a complete tree
        lagrangian(["skip", 0], leaf([])),  # incomplete
        lagrangian(["skip", 3], leaf([]), leaf([])),  # no meeting 3
        lagrangian(["skip", -1], leaf([]), leaf([])),
        lagrangian(["skip", 0], leaf([]), ["skip", 0], leaf([]), leaf([])),  # no skip left
        lagrangian(["at", 0, 0, 510], leaf([]), leaf([])),  # no placement at 08:30
        lagrangian(["at", 0, 2, -1], leaf([]), leaf([])),  # no room 2
        lagrangian(["at", 0, 0], leaf([]), leaf([])),
        lagrangian(["skip", True], leaf([]), leaf([])),
        lagrangian(["skip", 0.0], leaf([]), leaf([])),
        lagrangian(leaf([], scale=0)),
        lagrangian(leaf([], scale=2**62)),
        lagrangian(leaf([0, 0])),  # not a triple
        lagrangian(leaf([0, 0, -1])),
        lagrangian(leaf([0, 0, 2**62])),
        lagrangian(leaf([3, 0, 1])),  # no attendee 3
        lagrangian(leaf([0, 6, 1])),  # no instant 6
        lagrangian(leaf([], [2, 0, 1])),  # no room 2
        lagrangian(leaf([0, 0, "1"])),  # type: ignore[list-item]
        lagrangian(["bound", 1, [[0, 0, 1]], []]),
        lagrangian(["bound", 1, {}, []]),
        lagrangian([[[[[[[[[[]]]]]]]]]]),
        lagrangian(None),  # type: ignore[arg-type]
        lagrangian([]),
    ],
)
def test_hostile_certificates_are_refused(certificate: dict[str, Any]) -> None:
    with pytest.raises(CertificateError):
        certificates.check("MeetingScheduling", SMALL, [], certificate)


@pytest.mark.parametrize(
    "solution",
    [
        [[0, 0, 480], [1, 1, 480]],  # attendee 1 in both
        [[0, 0, 480], [0, 1, 480]],  # meeting repeated
        [[0, 0, 510]],  # attendee unavailable until 09:00
        [[0, 0, 495]],  # off the grid
        [[0, 0, 630]],  # past the day
        [[0, 2, 480]],  # no room 2
        [[3, 0, 480]],  # no meeting 3
        [[0, 0]],
        [[0, 0, True]],
        "[]",
        [[0, 0, 480.0]],
    ],
)
def test_bad_solutions_are_refused(solution: Any) -> None:
    with pytest.raises(CertificateError):
        certificates.check("MeetingScheduling", SMALL, solution, lagrangian(leaf([])))


def test_room_clash_and_capacity_are_refused() -> None:
    instance = {
        **SMALL,
        "meetings": [{"attendees": [0], "duration": 60}, {"attendees": [1], "duration": 30}],
        "rooms": [1, 3],
    }
    assert checker.objective(instance, [[0, 0, 480], [1, 1, 510]]) == 2
    with pytest.raises(CertificateError, match="overlap"):
        checker.objective(instance, [[0, 0, 480], [1, 0, 510]])
    small_room = {**SMALL, "rooms": [1]}
    with pytest.raises(CertificateError, match="room too small"):
        checker.objective(small_room, [[0, 0, 480]])


def test_the_number_limit() -> None:
    assert checker.bound(SMALL, lagrangian(leaf([0, 0, 2**62 - 1]))) >= 2
    assert checker.bound(SMALL, lagrangian(leaf([], scale=2**62 - 1))) >= 2
    with pytest.raises(CertificateError):
        checker.bound(SMALL, lagrangian(leaf([0, 0, 2**62])))


def test_the_work_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # SMALL: K = 6 instants; each meeting has 2 attendees and 2 placements plus skipping.
    per_node = 3 * (2 * 6 + 3)
    assert solvers._Relaxation(_problem(MeetingSchedulingInstance(**SMALL))).work == per_node
    tree = lagrangian(["skip", 0], leaf([]), leaf([]))
    monkeypatch.setattr(checker, "MAX_WORK", 3 * per_node)
    assert checker.bound(SMALL, tree) == 6
    monkeypatch.setattr(checker, "MAX_WORK", 3 * per_node - 1)
    with pytest.raises(CertificateError, match="past"):
        checker.bound(SMALL, tree)


def test_producer_limits_are_the_checkers() -> None:
    assert solvers.CERTIFICATE_MAX_WORK == checker.MAX_WORK
    assert max(solvers.CERTIFICATE_SCALES) < checker.MAX_NUMBER


def test_the_producer_work_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = _problem(MeetingSchedulingInstance(**SMALL))
    _, certificate = solvers.certify(problem, 2)
    work = len(certificate["tree"]) * solvers._Relaxation(problem).work
    monkeypatch.setattr(solvers, "CERTIFICATE_MAX_WORK", work)
    assert solvers.certify(problem, 2) == (2, certificate)
    monkeypatch.setattr(solvers, "CERTIFICATE_MAX_WORK", work - 1)
    assert solvers.certify(problem, 2)[0] == 3


def test_the_producer_node_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = _problem(MeetingSchedulingInstance(**SMALL))
    _, certificate = solvers.certify(problem, 2)
    size = len(certificate["tree"])
    assert size > 1
    monkeypatch.setattr(solvers, "CERTIFICATE_MAX_NODES", size)
    assert solvers.certify(problem, 2) == (2, certificate)
    monkeypatch.setattr(solvers, "CERTIFICATE_MAX_NODES", size - 1)
    bound, root = solvers.certify(problem, 2)
    assert bound == 3 and len(root["tree"]) == 1 and checker.bound(SMALL, root) == 3


def test_past_the_node_limit_the_reference_is_unproven_with_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(solvers, "CERTIFICATE_MAX_NODES", 1)  # the root only
    instance = MeetingSchedulingInstance(**SMALL)
    reference = TASK.reference(instance)
    assert not reference.proven_optimal and reference.objective == 2 and reference.bound == 3
    checked = check_reference(instance)
    assert checked.bound == 3


def test_a_forged_certificate_never_reaches_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    forged = lagrangian(leaf([]))  # proves 6, claimed to prove 2
    monkeypatch.setattr(solvers, "certify", lambda problem, target, deadline=None: (target, forged))
    with pytest.warns(UncertifiedReferenceWarning, match="bounds the optimum by 6"):
        reference = TASK.reference(MeetingSchedulingInstance(**SMALL))
    assert not reference.proven_optimal and reference.method == "heuristic"
    assert reference.bound == 6


def test_a_search_claiming_optimality_falsely_never_reaches_proven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The search (greedy, LP, CP-SAT) replaced by one that claims the empty schedule optimal.
    monkeypatch.setattr(solvers, "_cp_sat_search", lambda problem, *args: SolverResult([], 0, 0))
    instance = TASK.generate(0, "medium")
    reference = TASK.reference(instance)
    assert not reference.proven_optimal and reference.objective == 0
    assert reference.bound is not None and reference.bound > 0
    assert not check_reference(instance).proven


@pytest.mark.parametrize("hint", [[], [(0, 0, 480)]])
def test_a_wrong_hint_never_yields_a_false_proof(hint: list[tuple[int, int, int]]) -> None:
    problem = _problem(MeetingSchedulingInstance(**SMALL))
    result = solvers.cp_sat_schedule(problem, 5.0, hint=hint)
    checked = certificates.check_claim(
        "MeetingScheduling",
        SMALL,
        objective=result.objective,
        solution=[list(entry) for entry in result.witness],
        proven_optimal=result.proven_optimal,
        bound=result.bound,
        certificate=result.certificate,
    )
    assert checked.proven and result.objective == 2
