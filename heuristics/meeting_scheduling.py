"""MeetingScheduling reference solvers on plain lists.

A problem is meetings (sorted attendee ids and a duration), each attendee's availability as
sorted, disjoint ``(start, end)`` intervals, room capacities, and a start grid: starts are
``day_start + k * slot`` with ``start + duration <= day_end``. A meeting occupies
``[start, start + duration)``; the objective is the total number of attendees of the scheduled
meetings. Schedules are lists of ``(meeting, room, start)`` sorted by meeting.

- :func:`greedy_schedule`: several priority orders, each placing meetings at their earliest
  conflict-free start in the smallest room that seats them, then a swap search that trades
  scheduled meetings for larger unscheduled ones, within a work budget of placement attempts.
- :func:`lp_bound`: the time-indexed LP relaxation (each meeting at most once, no attendee in two
  meetings at a grid instant, no more meetings of size s or more at an instant than rooms that
  seat them): an upper bound far tighter than :meth:`Problem.upper_bound` on crowded instances.
- :func:`cp_sat_schedule`: exact CP-SAT model. Each meeting has a start variable over its
  feasible grid starts and one literal per start (the time-indexed columns of the LP above);
  attendees: at most one literal running at each grid instant, which is exactly no-overlap
  because two overlapping meetings always share a grid instant (the later start); rooms: an
  optional interval per (meeting, room) with no-overlap per room, plus the LP's room-load rows
  as redundant constraints. Linearization level 2 puts these rows in CP-SAT's LP, so its bound
  starts at the LP bound and its cuts close the rest: at difficulty 2.0 (about 90 meetings) the
  proof takes about a second, where an interval-only model stopped at the budget 3-12% away.
  One search worker, a fixed seed and a budget in CP-SAT's deterministic time, so the witness
  and the proof are the same on every run and machine.
- :func:`certify`: the proof that :mod:`npgym.certificates.meeting_scheduling` checks, CP-SAT's
  word being none: a depth-first branch and bound on the time-indexed LP with rooms
  (:class:`_Relaxation`, HiGHS warm-started from node to node) whose leaves carry the LP's duals
  rounded up to integers over a scale, closed when the exact integer bound they prove meets the
  optimum. The LP bound alone closes most benchmark-tier instances (a tree of 2.3 nodes on
  average, 13 at most); at difficulty 2.0 trees have tens to a few hundred nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from npgym.heuristics.budget import (
    CP_SAT_DETERMINISTIC_PER_SECOND,
    Deadline,
    cp_sat_solver,
    work_units,
)
from npgym.heuristics.result import SolverResult

PLACEMENTS_PER_SECOND = 50_000
"""Greedy placement attempts (:meth:`_Board.slot_for` calls) per nominal second of effort."""

Schedule = list[tuple[int, int, int]]


@dataclass(frozen=True)
class Problem:
    """The instance data the solvers need, as plain Python values."""

    attendees: tuple[tuple[int, ...], ...]
    durations: tuple[int, ...]
    availability: tuple[tuple[tuple[int, int], ...], ...]
    capacities: tuple[int, ...]
    slot: int
    day_start: int
    day_end: int

    @cached_property
    def sizes(self) -> list[int]:
        """Number of attendees of each meeting (its worth when scheduled)."""
        return [len(members) for members in self.attendees]

    @cached_property
    def starts(self) -> list[list[int]]:
        """Each meeting's grid starts at which every attendee is available throughout."""
        return [
            [
                start
                for start in range(self.day_start, self.day_end - duration + 1, self.slot)
                if all(
                    any(a <= start and start + duration <= b for a, b in self.availability[person])
                    for person in members
                )
            ]
            for members, duration in zip(self.attendees, self.durations, strict=True)
        ]

    @cached_property
    def rooms(self) -> list[list[int]]:
        """Each meeting's rooms that seat it, smallest capacity first (then lowest id)."""
        order = sorted(range(len(self.capacities)), key=lambda r: (self.capacities[r], r))
        return [[r for r in order if self.capacities[r] >= size] for size in self.sizes]

    def upper_bound(self) -> int:
        """Participations if every meeting that fits on its own were scheduled."""
        return sum(
            size
            for size, starts, rooms in zip(self.sizes, self.starts, self.rooms, strict=True)
            if starts and rooms
        )


def participations(problem: Problem, schedule: Schedule) -> int:
    """Objective of a schedule (assumed feasible)."""
    sizes = problem.sizes
    return sum(sizes[meeting] for meeting, _, _ in schedule)


class _Board:
    """The meetings placed so far (meeting -> room, start), and where another one still fits."""

    def __init__(self, problem: Problem, work: list[int] | None = None) -> None:
        self.problem = problem
        self.placed: dict[int, tuple[int, int]] = {}
        self.work = [0] if work is None else work
        """Placement attempts so far, shared by the boards of one search."""

    def slot_for(self, meeting: int) -> tuple[int, int] | None:
        """Earliest start, then smallest room, where ``meeting`` fits; None if nowhere."""
        self.work[0] += 1
        problem = self.problem
        duration = problem.durations[meeting]
        members = set(problem.attendees[meeting])
        for start in problem.starts[meeting]:
            end = start + duration
            busy_rooms: set[int] = set()
            blocked = False
            for other, (room, other_start) in self.placed.items():
                if other_start < end and start < other_start + problem.durations[other]:
                    if not members.isdisjoint(problem.attendees[other]):
                        blocked = True
                        break
                    busy_rooms.add(room)
            if blocked:
                continue
            for room in problem.rooms[meeting]:
                if room not in busy_rooms:
                    return room, start
        return None

    def place(self, meeting: int) -> None:
        """Place ``meeting`` at :meth:`slot_for` if it fits anywhere."""
        spot = self.slot_for(meeting)
        if spot is not None:
            self.placed[meeting] = spot

    def schedule(self) -> Schedule:
        return sorted((meeting, room, start) for meeting, (room, start) in self.placed.items())


def _greedy(problem: Problem, order: list[int], work: list[int] | None = None) -> _Board:
    board = _Board(problem, work)
    for meeting in order:
        board.place(meeting)
    return board


def _improve(problem: Problem, board: _Board, budget: int) -> None:
    """Swap search: drop one scheduled meeting, insert unscheduled ones, keep strict gains;
    stop once ``board.work`` reaches ``budget`` placement attempts."""
    sizes = problem.sizes
    by_worth = sorted(range(len(sizes)), key=lambda m: (-sizes[m], m))
    improved = True
    while improved and board.work[0] < budget:
        improved = False
        for dropped in sorted(board.placed):
            if board.work[0] >= budget:
                break
            trial = _Board(problem, board.work)
            trial.placed = {m: spot for m, spot in board.placed.items() if m != dropped}
            for meeting in by_worth:
                if meeting not in trial.placed and meeting != dropped:
                    trial.place(meeting)
            trial.place(dropped)
            gain = sum(sizes[m] for m in trial.placed) - sum(sizes[m] for m in board.placed)
            if gain > 0:
                board.placed = trial.placed
                improved = True
                break


def first_fit_schedule(problem: Problem) -> Schedule:
    """Meetings in id order, each at its earliest conflict-free start in the smallest room."""
    return _greedy(problem, list(range(len(problem.durations)))).schedule()


def greedy_schedule(problem: Problem, effort: float = 60.0) -> Schedule:
    """Best schedule over a few greedy orders, each followed by the swap search.

    Deterministic: orders are fixed and ties keep the earlier order. ``effort`` nominal seconds
    (:data:`PLACEMENTS_PER_SECOND`) cap the placement attempts of all orders together; the first
    order's greedy pass always runs in full.
    """
    budget = work_units(effort, PLACEMENTS_PER_SECOND)
    work = [0]
    count = len(problem.durations)
    sizes, durations = problem.sizes, problem.durations
    options = [len(s) * len(r) for s, r in zip(problem.starts, problem.rooms, strict=True)]
    orders = [
        sorted(range(count), key=lambda m: (-sizes[m], durations[m], options[m], m)),
        sorted(range(count), key=lambda m: (-sizes[m] / durations[m], options[m], m)),
        sorted(range(count), key=lambda m: (options[m], -sizes[m], m)),
        list(range(count)),
    ]
    best: Schedule = []
    best_value = -1
    for index, order in enumerate(orders):
        if index and work[0] >= budget:
            break
        board = _greedy(problem, order, work)
        _improve(problem, board, budget)
        schedule = board.schedule()
        value = participations(problem, schedule)
        if value > best_value:
            best, best_value = schedule, value
    return best


def _instants(problem: Problem, start: int, duration: int) -> range:
    """The grid instants a meeting at ``start`` runs through. Two meetings overlap exactly when
    they share one (the later start is itself a grid instant inside the earlier meeting), so
    "at most one at each instant" is the whole no-overlap condition."""
    first = problem.day_start + -(-(start - problem.day_start) // problem.slot) * problem.slot
    return range(first, start + duration, problem.slot)


def lp_bound(problem: Problem, deadline: Deadline | None = None) -> int:
    """Upper bound from the time-indexed LP relaxation (see the module docstring), rounded down;
    :meth:`Problem.upper_bound` when the LP cannot be solved before ``deadline``.

    Variables ``y[m, t]``: meeting m starts at grid start t. Rows: each meeting at most once; for
    each attendee and grid instant, at most one of their meetings running; for each meeting size
    s and grid instant, at most as many meetings of size s or more running as rooms seat s.
    """
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix

    weak = problem.upper_bound()
    columns = [
        (meeting, start)
        for meeting, (starts, rooms) in enumerate(zip(problem.starts, problem.rooms, strict=True))
        if rooms
        for start in starts
    ]
    if not columns:
        return 0
    rows: dict[tuple[object, ...], int] = {}
    limits: list[float] = []
    entries_row: list[int] = []
    entries_column: list[int] = []

    def add(key: tuple[object, ...], limit: float, column: int) -> None:
        if key not in rows:
            rows[key] = len(limits)
            limits.append(limit)
        entries_row.append(rows[key])
        entries_column.append(column)

    thresholds = sorted(set(problem.sizes))
    rooms_seating = {s: sum(c >= s for c in problem.capacities) for s in thresholds}
    for column, (meeting, start) in enumerate(columns):
        size = problem.sizes[meeting]
        add(("meeting", meeting), 1.0, column)
        for instant in _instants(problem, start, problem.durations[meeting]):
            for person in problem.attendees[meeting]:
                add(("person", person, instant), 1.0, column)
            for threshold in thresholds:
                if threshold <= size:
                    add(("rooms", threshold, instant), rooms_seating[threshold], column)
    matrix = csr_matrix(
        (np.ones(len(entries_row)), (entries_row, entries_column)),
        shape=(len(limits), len(columns)),
    )
    deadline = deadline or Deadline(60.0)
    result = linprog(
        -np.array([problem.sizes[meeting] for meeting, _ in columns], dtype=np.float64),
        A_ub=matrix,
        b_ub=np.array(limits),
        bounds=(0, 1),
        method="highs",
        options={"time_limit": deadline.remaining()},
    )
    if result.status != 0:
        return weak
    return min(weak, math.floor(-result.fun + 1e-6))


def cp_sat_schedule(
    problem: Problem,
    effort: float = 60.0,
    hint: Schedule | None = None,
    deadline: Deadline | None = None,
) -> SolverResult[Schedule]:
    """Maximise participations with CP-SAT within ``effort`` nominal seconds of deterministic time
    (:data:`~npgym.heuristics.budget.CP_SAT_DETERMINISTIC_PER_SECOND`);
    proven optimal unless that budget runs out (then the best schedule and an upper bound).

    ``hint`` (a feasible schedule, e.g. the greedy one) seeds the search and is returned if CP-SAT
    finds nothing better. When it already meets :meth:`Problem.upper_bound` or :func:`lp_bound`
    no model is built; when CP-SAT stops without a proof the bound is the better of its own and
    the LP's.
    ``deadline`` is the wall-clock safety net. ``work`` counts deterministic milliseconds.

    The result carries a certificate of its bound (:func:`certify`, CP-SAT's word being no
    proof); where the certificate's tree would be too large, the bound is the one it proves.
    """
    deadline = deadline or Deadline.for_effort(effort)
    result = _cp_sat_search(problem, effort, hint, deadline)
    bound, certificate = certify(problem, result.bound, deadline)
    stopped = result.stopped
    if bound > result.bound:
        stopped = "deadline" if deadline.expired() else "budget"
    return replace(result, bound=bound, stopped=stopped, certificate=certificate)


def _cp_sat_search(
    problem: Problem, effort: float, hint: Schedule | None, deadline: Deadline
) -> SolverResult[Schedule]:
    """:func:`cp_sat_schedule`'s search, its bound CP-SAT's word."""
    from ortools.sat.python import cp_model

    sizes = problem.sizes
    incumbent = sorted(hint) if hint is not None else []
    incumbent_value = participations(problem, incumbent)
    bound = problem.upper_bound()
    if incumbent_value >= bound:
        return SolverResult(incumbent, incumbent_value, incumbent_value)
    bound = lp_bound(problem, deadline)
    if incumbent_value >= bound:
        return SolverResult(incumbent, incumbent_value, incumbent_value, solver="LP bound")

    model = cp_model.CpModel()
    present: dict[int, cp_model.IntVar] = {}
    start_of: dict[int, cp_model.IntVar] = {}
    starts_at: dict[tuple[int, int], cp_model.IntVar] = {}
    in_room: dict[tuple[int, int], cp_model.IntVar] = {}
    room_intervals: list[list[cp_model.IntervalVar]] = [[] for _ in problem.capacities]
    attending: dict[tuple[int, int], list[cp_model.IntVar]] = {}  # (person, instant)
    seated: dict[tuple[int, int], list[cp_model.IntVar]] = {}  # (size threshold, instant)
    thresholds = sorted(set(sizes))
    for meeting, (starts, rooms) in enumerate(zip(problem.starts, problem.rooms, strict=True)):
        if not starts or not rooms:
            continue
        duration = problem.durations[meeting]
        start = model.new_int_var_from_domain(cp_model.Domain.from_values(starts), f"s{meeting}")
        chosen = model.new_bool_var(f"x{meeting}")
        present[meeting], start_of[meeting] = chosen, start
        at_start = []
        for grid_start in starts:
            here = model.new_bool_var(f"y{meeting}_{grid_start}")
            starts_at[meeting, grid_start] = here
            at_start.append(here)
            model.add(start == grid_start).only_enforce_if(here)
            for instant in _instants(problem, grid_start, duration):
                for person in problem.attendees[meeting]:
                    attending.setdefault((person, instant), []).append(here)
                for threshold in thresholds:
                    if threshold <= sizes[meeting]:
                        seated.setdefault((threshold, instant), []).append(here)
        model.add(sum(at_start) == chosen)
        placements = []
        for room in rooms:
            here = model.new_bool_var(f"x{meeting}_{room}")
            in_room[meeting, room] = here
            placements.append(here)
            room_intervals[room].append(
                model.new_optional_fixed_size_interval_var(
                    start, duration, here, f"i{meeting}_{room}"
                )
            )
        model.add(sum(placements) == chosen)
    seating = {s: sum(c >= s for c in problem.capacities) for s in thresholds}
    for literals in attending.values():
        if len(literals) > 1:
            model.add_at_most_one(literals)
    for (threshold, _), literals in seated.items():
        if len(literals) > seating[threshold]:
            model.add(sum(literals) <= seating[threshold])
    for intervals in room_intervals:
        if len(intervals) > 1:
            model.add_no_overlap(intervals)
    model.maximize(sum(sizes[meeting] * chosen for meeting, chosen in present.items()))
    placed = {meeting: (room, start) for meeting, room, start in incumbent}
    for (meeting, room), here in in_room.items():
        model.add_hint(here, placed.get(meeting, (-1, 0))[0] == room)
    for (meeting, grid_start), here in starts_at.items():
        model.add_hint(here, placed.get(meeting, (0, -1))[1] == grid_start)
    for meeting, chosen in present.items():
        model.add_hint(chosen, meeting in placed)
        if meeting in placed:
            model.add_hint(start_of[meeting], placed[meeting][1])

    solver = cp_sat_solver(effort * CP_SAT_DETERMINISTIC_PER_SECOND, deadline)
    solver.parameters.linearization_level = 2  # the time-indexed rows and cuts in the LP
    status = solver.solve(model)
    work = int(solver.deterministic_time * 1000)
    if status == cp_model.OPTIMAL:
        bound = incumbent_value
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        schedule = sorted(
            (meeting, room, int(solver.value(start_of[meeting])))
            for (meeting, room), here in in_room.items()
            if solver.boolean_value(here)
        )
        value = participations(problem, schedule)
        if value > incumbent_value:
            incumbent, incumbent_value = schedule, value
        if status == cp_model.OPTIMAL:
            return SolverResult(incumbent, incumbent_value, incumbent_value, work)
        bound = min(bound, math.floor(solver.best_objective_bound + 1e-6))
    timed_out = deadline.expired()
    bound = max(bound, incumbent_value)
    stopped = "" if bound == incumbent_value else "deadline" if timed_out else "budget"
    return SolverResult(incumbent, incumbent_value, bound, work, stopped)


CERTIFICATE_MAX_NODES = 2001
"""Most nodes of a certificate's branching tree (:func:`certify`); past it the reference is
reported unproven, with the root's certified bound."""
CERTIFICATE_MAX_WORK = 30_000_000
"""The checker's ``MAX_WORK``: a tree's nodes times ``sum over meetings of (attendees * instants +
placements + 1)`` stays within it (else the root's certificate stands in)."""
CERTIFICATE_SCALES = (1, 2, 6, 12, 60, 2520, 1 << 20)
"""Scales tried, smallest first, for a leaf's multipliers (LP duals rounded up to ``k / scale``):
small ones keep certificates short where the duals are simple fractions."""

_Options = list[tuple[bool, frozenset[int]]]
"""Per meeting: whether it may be skipped, and its allowed placements (LP column ids)."""


class _Relaxation:
    """The time-indexed LP with rooms, ``x[m, r, t] <= 1``: each meeting at most once, at most
    one meeting per attendee and per room at each grid instant; and the exact integer bound
    that rounded duals of it prove (the certificate checker's leaf bound, computed here on its
    own)."""

    def __init__(self, problem: Problem) -> None:
        import highspy
        from scipy.sparse import csc_matrix

        from npgym.heuristics.highs import quiet_highs

        self.problem = problem
        self.columns = [
            (meeting, room, start)
            for meeting, (starts, rooms) in enumerate(
                zip(problem.starts, problem.rooms, strict=True)
            )
            for room in rooms
            for start in starts
        ]
        self.runs = [
            range(
                (start - problem.day_start) // problem.slot,
                -(-(start + problem.durations[meeting] - problem.day_start) // problem.slot),
            )
            for meeting, _, start in self.columns
        ]
        self.instants = -(-(problem.day_end - problem.day_start) // problem.slot)
        people, meetings = len(problem.availability), len(problem.durations)
        self.person_row = meetings  # rows: meetings, then (person, instant), then (room, instant)
        self.room_row = meetings + people * self.instants
        entries_row, entries_column = [], []
        for column, (meeting, room, _) in enumerate(self.columns):
            rows = [meeting]
            for k in self.runs[column]:
                rows += [
                    self.person_row + p * self.instants + k for p in problem.attendees[meeting]
                ]
                rows.append(self.room_row + room * self.instants + k)
            entries_row += rows
            entries_column += [column] * len(rows)
        shape = (self.room_row + len(problem.capacities) * self.instants, len(self.columns))
        matrix = csc_matrix((np.ones(len(entries_row)), (entries_row, entries_column)), shape)
        self.transposed = matrix.T.tocsr()
        self.penalty = sum(problem.sizes) + 1
        """Objective bonus of a meeting that must be scheduled: its ``<= 1`` row then acts as
        ``= 1`` (an LP where it cannot be has a bound below the target), never infeasible."""
        self.highs = quiet_highs()
        for option, value in (("random_seed", 0), ("threads", 1)):
            self.highs.setOptionValue(option, value)
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = shape[1], shape[0]
        lp.col_cost_ = np.zeros(shape[1])
        lp.col_lower_, lp.col_upper_ = np.zeros(shape[1]), np.ones(shape[1])
        lp.row_lower_, lp.row_upper_ = np.full(shape[0], -highspy.kHighsInf), np.ones(shape[0])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_ = matrix.indptr, matrix.indices
        lp.a_matrix_.value_ = matrix.data
        self.highs.passModel(lp)
        self.every = np.arange(shape[1], dtype=np.int32)
        self.work = sum(
            len(people) * self.instants + len(rooms) * len(starts) + 1
            for people, rooms, starts in zip(
                problem.attendees, problem.rooms, problem.starts, strict=True
            )
        )
        """What a tree node costs the checker, at most (its ``MAX_WORK`` unit)."""
        self.cost = -np.array([problem.sizes[m] for m, _, _ in self.columns], dtype=np.float64)

    def root(self) -> _Options:
        by_meeting: list[list[int]] = [[] for _ in self.problem.durations]
        for column, (meeting, _, _) in enumerate(self.columns):
            by_meeting[meeting].append(column)
        return [(True, frozenset(columns)) for columns in by_meeting]

    def solve(self, options: _Options) -> tuple[np.ndarray, np.ndarray] | None:
        """The LP's primal ``x`` and nonnegative duals at a node (warm-started from the last
        node's basis); None if HiGHS stops short of optimal."""
        import highspy

        if not self.columns:  # no meeting fits anywhere: nothing to price
            return np.zeros(0), np.zeros(self.transposed.shape[1])
        cost = self.cost.copy()
        upper = np.zeros(len(self.columns))
        for skip, allowed in options:
            columns = list(allowed)
            upper[columns] = 1.0
            if not skip:
                cost[columns] -= self.penalty
        count = len(self.columns)
        self.highs.changeColsCost(count, self.every, cost)
        self.highs.changeColsBounds(count, self.every, np.zeros(count), upper)
        self.highs.run()
        if self.highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        solution = self.highs.getSolution()
        duals = np.maximum(-np.asarray(solution.row_dual, dtype=np.float64), 0.0)
        return np.asarray(solution.col_value, dtype=np.float64), duals

    def leaf(
        self, options: _Options, duals: np.ndarray | None, target: int
    ) -> tuple[int, list[object]]:
        """The bound of ``duals`` rounded up to the largest of :data:`CERTIFICATE_SCALES` (no
        multipliers when ``duals`` is None) and its ``["bound", ...]`` leaf; when that meets
        ``target``, the smallest scale that does (the shortest leaf)."""
        scales = CERTIFICATE_SCALES[-1:] + CERTIFICATE_SCALES[:-1]
        best: tuple[int, list[object]] | None = None
        for scale in (1,) if duals is None else scales:
            scaled = np.zeros(0) if duals is None else np.ceil(duals * scale - 1e-9)
            value = self._bound(options, scale, scaled)
            if best is None or value <= target:
                leaf: list[object] = ["bound", scale]
                for first, count in (
                    (self.person_row, len(self.problem.availability)),
                    (self.room_row, len(self.problem.capacities)),
                ):
                    flat = []
                    for row in np.flatnonzero(scaled[first : first + count * self.instants] > 0):
                        who, k = divmod(int(row), self.instants)
                        flat += [who, k, int(scaled[first + row])]
                    leaf.append(flat)
                best = value, leaf
            if best[0] > target or (scale != scales[0] and value <= target):
                break
        assert best is not None
        return best

    def _bound(self, options: _Options, scale: int, scaled: np.ndarray) -> int:
        """The leaf bound of multipliers ``scaled`` (one per LP row; the meeting rows unused).
        Exact: the prices are integer sums far below 2**53, so float64 holds them exactly."""
        sizes = self.problem.sizes
        multipliers = scaled.copy() if scaled.size else np.zeros(self.transposed.shape[1])
        multipliers[: self.person_row] = 0.0
        prices = np.rint(self.transposed @ multipliers).astype(np.int64)
        total = int(multipliers.sum())
        for meeting, (skip, allowed) in enumerate(options):
            values = [scale * sizes[meeting] - int(prices[list(allowed)].min())] if allowed else []
            if skip:
                values.append(0)
            if not values:
                return -1  # no schedule here
            total += max(values)
        return total // scale


def certify(
    problem: Problem, target: int, deadline: Deadline | None = None
) -> tuple[int, dict[str, object]]:
    """A certificate (:mod:`npgym.certificates.meeting_scheduling`) that the optimum is at most
    ``target``, and ``target``; or, when its tree would pass :data:`CERTIFICATE_MAX_NODES` (or
    ``deadline`` expires), the root's certificate and the (larger) bound it proves.

    Depth-first branch and bound on the LP of :class:`_Relaxation`: a node is a leaf when its
    rounded duals bound it by ``target``; otherwise it splits (:func:`_branch`) on a
    fractional meeting's being scheduled, else its start, its room, its placement.
    """
    relaxation = _Relaxation(problem)
    root = relaxation.root()
    plain = relaxation.leaf(root, None, target)
    if plain[0] <= target:
        return plain[0], {"kind": "lagrangian", "tree": [plain[1]]}
    tree: list[object] = []
    stack = [root]
    root_leaf: tuple[int, list[object]] | None = None
    while stack:
        options = stack.pop()
        solved = (
            None
            if len(tree) >= CERTIFICATE_MAX_NODES or (deadline is not None and deadline.expired())
            else relaxation.solve(options)
        )
        if solved is None:
            break
        x, duals = solved
        value, leaf = relaxation.leaf(options, duals, target)
        if root_leaf is None:
            root_leaf = min((value, leaf), plain, key=lambda pair: pair[0])
        if value <= target:
            tree.append(leaf)
            continue
        split = _branch(relaxation, options, x)
        if split is None:
            break
        meeting, node, inside = split
        skip, allowed = options[meeting]
        first = list(options)
        second = list(options)
        if inside is None:
            first[meeting] = (True, frozenset())
            second[meeting] = (False, allowed)
        else:
            first[meeting] = (False, inside)
            second[meeting] = (skip, allowed - inside)
        tree.append(node)
        stack += [second, first]
    else:
        if len(tree) * relaxation.work <= CERTIFICATE_MAX_WORK:
            return target, {"kind": "lagrangian", "tree": tree}
    fallback = root_leaf or plain
    return fallback[0], {"kind": "lagrangian", "tree": [fallback[1]]}


def _branch(
    relaxation: _Relaxation, options: _Options, x: np.ndarray
) -> tuple[int, list[object], frozenset[int] | None] | None:
    """The meeting to split on, the split node and the placements it puts in its first subtree
    (None: the meeting skipped); None when ``x`` is integral. The split is on the first kind of
    aggregate of ``x`` that is fractional: a meeting's being scheduled, its start, its room, its
    placement; among those, the one of the largest ``size * min(value, 1 - value)`` (on the
    tiers up to difficulty 2.0, half the nodes of the most fractional one)."""
    columns, sizes = relaxation.columns, relaxation.problem.sizes
    groups: list[dict[tuple[int, int, int], float]] = [{}, {}, {}, {}]
    for column in np.flatnonzero(x > 1e-7):
        meeting, room, start = columns[column]
        keys = (
            (meeting, -1, -1),
            (meeting, -1, start),
            (meeting, room, -1),
            (meeting, room, start),
        )
        for group, key in zip(groups, keys, strict=True):
            group[key] = group.get(key, 0.0) + float(x[column])
    for index, group in enumerate(groups):
        fractional = [
            (-sizes[key[0]] * min(value, 1 - value), key)
            for key, value in group.items()
            if 1e-6 < value < 1 - 1e-6 and (index or options[key[0]][0])
        ]
        if not fractional:
            continue
        meeting, room, start = min(fractional)[1]
        if not index:
            return meeting, ["skip", meeting], None
        inside = frozenset(
            column
            for column in options[meeting][1]
            if room in (-1, columns[column][1]) and start in (-1, columns[column][2])
        )
        return meeting, ["at", meeting, room, start], inside
    return None
