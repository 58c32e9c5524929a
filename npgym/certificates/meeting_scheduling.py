"""MeetingScheduling certificates: an upper bound on the attendee participations of any schedule.

The instance is its JSON object: ``meetings`` (objects with ``attendees``, distinct attendee ids,
and ``duration``, minutes >= 1), ``availability`` (per attendee, ``[a, b]`` free intervals),
``rooms`` (capacities >= 1), ``slot >= 1`` and ``0 <= day_start < day_end <= 1440``. The grid starts
are ``day_start + j * slot``; the *grid instants* are ``day_start + k * slot`` for ``0 <= k < K``,
``K = ceil((day_end - day_start) / slot)``. The witness is a list of ``[meeting, room, start]``
rows: distinct meetings, a room that seats every attendee, a start on the grid with ``day_start <=
start <= day_end - duration``, every attendee free throughout ``[start, start + duration)`` (inside
one interval), and no two overlapping meetings sharing a room or an attendee. Its objective is the
sum of the scheduled meetings' attendee counts (their *sizes*).

A *placement* of meeting m is a pair ``(r, t)``: a room r that seats it and a grid start t where
every attendee is free; meeting m at ``(r, t)`` *runs through* the grid instants k with
``t <= day_start + k * slot < t + duration``. Two overlapping meetings always share such an
instant (the later start is one), so in any schedule each attendee and each room is busy in at
most one meeting at each instant.

A certificate is ``{"kind": "lagrangian", "tree": [node, ...]}``, a branching tree flattened in
pre-order. Each node restricts one meeting's *options* (its placements, and being skipped;
at the root every meeting has all of them):

- ``["skip", m]`` (skipping m still allowed there): two subtrees follow, first the one where m is
  skipped (its only option), then the one where it is scheduled (skipping removed).
- ``["at", m, r, t]`` (``r = -1``: any room, ``t = -1``: any start; at least one of m's
  placements there matches): first the subtree where m is at a matching placement (those are its
  only options), then the one where the matching placements are removed from its options.
- ``["bound", s, persons, rooms]``: a leaf. ``s >= 1`` is the scale; ``persons`` is a flat list
  of triples ``p, k, v`` (attendee p, instant k, multiplier ``v >= 0``), ``rooms`` one of triples
  ``r, k, v`` (room r, instant k); a pair listed twice adds up. With ``L[p][k]`` and ``R[r][k]``
  these multipliers (0 when not listed), the *price* of m at ``(r, t)`` is the sum over the
  instants k it runs through of ``R[r][k]`` plus ``L[p][k]`` for each attendee p of m. The leaf's
  bound is ``floor((sum of all multipliers + sum over meetings of best[m]) / s)``, where
  ``best[m]`` is the largest of ``s * size[m] - price`` over m's placement options there, and 0
  if m may be skipped. A leaf where some meeting has no option holds no schedule (no bound).

Why: any schedule meets the options of exactly one leaf, and there its participations are at
most their value plus ``sum of L[p][k] * (1 - meetings of p at k) + sum of R[r][k] * (1 -
meetings in r at k)``, which regroups into the leaf's sum (every load is 0 or 1). The
certificate's bound is the largest leaf bound. A single leaf with no multipliers bounds by the
sizes of the meetings that have a placement; the leaf's multipliers, the (scaled) duals of the
time-indexed LP relaxation, give that LP's bound.

All numbers are JSON integers below :data:`MAX_NUMBER` in magnitude. Cost: at most
:data:`MAX_WORK` steps, ``nodes * sum over meetings of (attendees * K + options)`` (a node costs
at most that, plus ``K`` per multiplier it lists), plus the instance's own size; a tree past it
is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from npgym.certificates import CertificateError, integer, integers

SENSE: Literal["min", "max"] = "max"

MAX_WORK = 30_000_000
"""Largest ``nodes * sum over meetings of (attendees * K + options)`` of a tree (a few seconds)."""
MAX_NUMBER = 2**62
"""Every number of a certificate is below this in magnitude (keeps the arithmetic cheap)."""
MINUTES_PER_DAY = 1440

Option = tuple[int, int] | None
"""A placement ``(room, start)``, or ``None`` for skipping the meeting."""


def _instance(instance: Mapping[str, Any]) -> tuple[list[list[int]], list[int], list[Any], Any]:
    """The meetings' attendees and durations, the capacities and the grid, validated."""
    slot, first = integer(instance["slot"], "slot"), integer(instance["day_start"], "day_start")
    last = integer(instance["day_end"], "day_end")
    if not (slot >= 1 and 0 <= first < last <= MINUTES_PER_DAY):
        raise CertificateError("the day must satisfy slot >= 1, 0 <= day_start < day_end <= 1440")
    availability = instance["availability"]
    if not isinstance(availability, list) or not all(
        isinstance(free, list) and all(len(integers(pair, "an interval")) == 2 for pair in free)
        for free in availability
    ):
        raise CertificateError("availability must be lists of [start, end] intervals")
    meetings, rooms = instance["meetings"], integers(instance["rooms"], "rooms")
    if not isinstance(meetings, list) or not meetings or not rooms or min(rooms) < 1:
        raise CertificateError("meetings and rooms must be non-empty, capacities >= 1")
    attendees, durations = [], []
    for meeting in meetings:
        if not isinstance(meeting, Mapping):
            raise CertificateError("each meeting is an object")
        people = integers(meeting["attendees"], "attendees")
        if not people or len(set(people)) != len(people):
            raise CertificateError("a meeting needs distinct attendees")
        if not all(0 <= p < len(availability) for p in people):
            raise CertificateError("a meeting has an attendee out of range")
        attendees.append(people)
        durations.append(integer(meeting["duration"], "duration"))
        if durations[-1] < 1:
            raise CertificateError("durations must be at least 1")
    return attendees, durations, rooms, (slot, first, last, availability)


def _fits(people: list[int], start: int, end: int, availability: list[Any]) -> bool:
    """Whether every attendee is free throughout ``[start, end)``."""
    return all(any(a <= start and end <= b for a, b in availability[p]) for p in people)


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """The participations of ``solution``, a feasible schedule (see the module docstring)."""
    attendees, durations, rooms, (slot, first, last, availability) = _instance(instance)
    if not isinstance(solution, list):
        raise CertificateError("the solution must be a list of [meeting, room, start]")
    rows = [integers(row, "a schedule row") for row in solution]
    seen: set[int] = set()
    for row in rows:
        if len(row) != 3:
            raise CertificateError("each schedule row is [meeting, room, start]")
        m, r, t = row
        if not 0 <= m < len(attendees) or m in seen or not 0 <= r < len(rooms):
            raise CertificateError(f"row {row}: unknown or repeated meeting, or unknown room")
        seen.add(m)
        if not first <= t <= last - durations[m] or (t - first) % slot:
            raise CertificateError(f"row {row}: start off the grid or outside the day")
        if rooms[r] < len(attendees[m]) or not _fits(
            attendees[m], t, t + durations[m], availability
        ):
            raise CertificateError(f"row {row}: room too small or an attendee unavailable")
    for i, (m, r, t) in enumerate(rows):
        for n, q, u in rows[i + 1 :]:
            overlap = t < u + durations[n] and u < t + durations[m]
            if overlap and (r == q or set(attendees[m]) & set(attendees[n])):
                raise CertificateError(f"meetings {m} and {n} overlap in a room or attendee")
    return sum(len(attendees[m]) for m, _, _ in rows)


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The upper bound on the optimum that ``certificate`` proves."""
    attendees, durations, rooms, (slot, first, last, availability) = _instance(instance)
    if certificate.get("kind") != "lagrangian" or set(certificate) != {"kind", "tree"}:
        raise CertificateError("the certificate must be {'kind': 'lagrangian', 'tree': [...]}")
    tree = certificate["tree"]
    if not isinstance(tree, list) or not tree:
        raise CertificateError("the tree must be a non-empty list of nodes")
    instants = -(-(last - first) // slot)
    runs: list[dict[int, tuple[int, int]]] = []  # meeting -> start -> instants [k0, k1)
    options: list[set[Option]] = []
    for people, duration in zip(attendees, durations, strict=True):
        starts = range(first, last - duration + 1, slot)
        ok = [t for t in starts if _fits(people, t, t + duration, availability)]
        runs.append({t: ((t - first) // slot, -(-(t + duration - first) // slot)) for t in ok})
        seats = [r for r, capacity in enumerate(rooms) if capacity >= len(people)]
        options.append({None, *((r, t) for r in seats for t in ok)})
    per_node = sum(len(p) * instants + len(o) for p, o in zip(attendees, options, strict=True))
    if len(tree) * per_node > MAX_WORK:
        raise CertificateError(f"{len(tree)} nodes of {per_node} steps: past {MAX_WORK}")
    stack: list[tuple[int, set[Option], set[Option] | None]] = []  # meeting, options, the rest
    best: int | None = None
    for position, node in enumerate(tree):
        if not stack and position:
            raise CertificateError(f"node {position} follows a complete tree")
        kind = node[0] if isinstance(node, list) and node else None
        if kind not in ("skip", "at", "bound") or len(node) != {"skip": 2}.get(kind, 4):
            raise CertificateError(f"node {position} is not a skip, at or bound node")
        if kind != "bound":
            m = integer(node[1], "a meeting")
            if not 0 <= m < len(options):
                raise CertificateError(f"node {position}: no meeting {m}")
            match: set[Option] = options[m] & {None}
            if kind == "at":
                r, t = integer(node[2], "a room"), integer(node[3], "a start")
                match = {o for o in options[m] if o and r in (-1, o[0]) and t in (-1, o[1])}
            if not match:
                raise CertificateError(f"node {position} splits on no option of meeting {m}")
            stack.append((m, options[m], options[m] - match))
            options[m] = match
            continue
        value = _leaf(node, attendees, runs, options, len(availability), len(rooms), instants)
        if value is not None:
            best = value if best is None else max(best, value)
        while stack and stack[-1][2] is None:  # both subtrees done: restore the options
            m, saved, _ = stack.pop()
            options[m] = saved
        if stack:  # the first subtree is done: the second follows
            m, saved, rest = stack.pop()
            options[m] = rest  # type: ignore[assignment]
            stack.append((m, saved, None))
    if stack:
        raise CertificateError("the tree is incomplete")
    if best is None:
        raise CertificateError("no leaf holds a schedule")
    return best


def _leaf(
    node: list[Any],
    attendees: list[list[int]],
    runs: list[dict[int, tuple[int, int]]],
    options: list[set[Option]],
    people: int,
    rooms: int,
    instants: int,
) -> int | None:
    """The bound of one ``["bound", s, persons, rooms]`` leaf; ``None`` if it holds no schedule."""
    scale = integer(node[1], "a scale")
    if not 1 <= scale < MAX_NUMBER:
        raise CertificateError(f"the scale must be in 1..2**62, got {scale}")
    prices = []  # prefix sums over instants, per attendee and per room
    for triples, count in ((node[2], people), (node[3], rooms)):
        flat = integers(triples, "multipliers")
        if len(flat) % 3:
            raise CertificateError("multipliers are triples: id, instant, value")
        rows: dict[int, list[int]] = {}
        for who, k, v in zip(flat[::3], flat[1::3], flat[2::3], strict=True):
            if not (0 <= who < count and 0 <= k < instants and 0 <= v < MAX_NUMBER):
                raise CertificateError(f"multiplier {[who, k, v]} out of range")
            rows.setdefault(who, [0] * instants)[k] += v
        prices.append({who: _prefix(row) for who, row in rows.items()})
    persons, by_room = prices
    total = sum(row[-1] for group in prices for row in group.values())
    for m, allowed in enumerate(options):
        if not allowed:
            return None
        own = [persons[p] for p in attendees[m] if p in persons]
        mine = [sum(column) for column in zip(*own, strict=True)] if own else None
        worth, best = scale * len(attendees[m]), None
        for option in allowed:
            if option is None:
                value = 0
            else:
                k0, k1 = runs[m][option[1]]
                room = by_room.get(option[0])
                value = worth - (mine[k1] - mine[k0] if mine else 0)
                value -= room[k1] - room[k0] if room else 0
            best = value if best is None else max(best, value)
        total += best  # type: ignore[operator]
    return total // scale


def _prefix(row: list[int]) -> list[int]:
    """``[0, row[0], row[0] + row[1], ...]``."""
    sums = [0]
    for value in row:
        sums.append(sums[-1] + value)
    return sums
