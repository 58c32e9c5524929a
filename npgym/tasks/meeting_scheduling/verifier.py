"""MeetingScheduling verifier: a numba kernel and its pure-Python twin, which agree on every input.

A schedule is a ``(k, 3)`` array of ``[meeting, room, start]`` rows. Both checks return
``(code, a, b, c, participations)``; :func:`reason` turns a code and its details into text a
person can act on. Rows are checked in order, each for: meeting id valid, meeting not scheduled
before, room id valid, start inside the day, start on the grid, room capacity, attendee
availability. Then every pair of rows (in order) is checked for overlap: same room first, then a
shared attendee (the smallest). Two meetings overlap when each starts before the other ends:
``start_i < start_j + duration_j`` and ``start_j < start_i + duration_i`` (half-open intervals,
so back-to-back meetings do not overlap).

Starts are only added to durations after the range check, so huge or negative starts (up to
``answer.INT_LIMIT``) cannot overflow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from npgym.heuristics.jit import njit
from npgym.results import NOT_SCANNED
from npgym.scan import first_row_not_of_length, scan_rows

if TYPE_CHECKING:
    from npgym.tasks.meeting_scheduling.instance import Meeting

(
    OK,
    MEETING_OUT_OF_RANGE,
    MEETING_REPEATED,
    ROOM_OUT_OF_RANGE,
    OUTSIDE_DAY,
    OFF_GRID,
    OVER_CAPACITY,
    UNAVAILABLE,
    ROOM_DOUBLE_BOOKED,
    ATTENDEE_DOUBLE_BOOKED,
) = range(10)


@njit
def check_schedule(
    schedule: np.ndarray,
    attendee_ptr: np.ndarray,
    attendee_ids: np.ndarray,
    durations: np.ndarray,
    interval_ptr: np.ndarray,
    interval_starts: np.ndarray,
    interval_ends: np.ndarray,
    capacities: np.ndarray,
    slot: int,
    day_start: int,
    day_end: int,
) -> tuple[int, int, int, int, int]:
    """Check a ``(k, 3)`` schedule against the instance arrays (numba)."""
    n_meetings = durations.shape[0]
    n_rooms = capacities.shape[0]
    rows = schedule.shape[0]
    seen = np.zeros(n_meetings, np.bool_)
    total = 0
    for row in range(rows):
        meeting, room, start = schedule[row, 0], schedule[row, 1], schedule[row, 2]
        if meeting < 0 or meeting >= n_meetings:
            return MEETING_OUT_OF_RANGE, meeting, row, 0, 0
        if seen[meeting]:
            return MEETING_REPEATED, meeting, row, 0, 0
        seen[meeting] = True
        if room < 0 or room >= n_rooms:
            return ROOM_OUT_OF_RANGE, room, meeting, 0, 0
        duration = durations[meeting]
        if start < day_start or start > day_end - duration:
            return OUTSIDE_DAY, meeting, start, 0, 0
        if (start - day_start) % slot != 0:
            return OFF_GRID, meeting, start, 0, 0
        size = attendee_ptr[meeting + 1] - attendee_ptr[meeting]
        if capacities[room] < size:
            return OVER_CAPACITY, room, meeting, 0, 0
        for position in range(attendee_ptr[meeting], attendee_ptr[meeting + 1]):
            attendee = attendee_ids[position]
            inside = False
            for interval in range(interval_ptr[attendee], interval_ptr[attendee + 1]):
                if (
                    interval_starts[interval] <= start
                    and start + duration <= interval_ends[interval]
                ):
                    inside = True
                    break
            if not inside:
                return UNAVAILABLE, attendee, meeting, start, 0
        total += size
    for first in range(rows):
        meeting_a, room_a, start_a = schedule[first, 0], schedule[first, 1], schedule[first, 2]
        end_a = start_a + durations[meeting_a]
        for second in range(first + 1, rows):
            meeting_b, room_b, start_b = (
                schedule[second, 0],
                schedule[second, 1],
                schedule[second, 2],
            )
            if not (start_a < start_b + durations[meeting_b] and start_b < end_a):
                continue
            if room_a == room_b:
                return ROOM_DOUBLE_BOOKED, room_a, meeting_a, meeting_b, 0
            i, j = attendee_ptr[meeting_a], attendee_ptr[meeting_b]
            while i < attendee_ptr[meeting_a + 1] and j < attendee_ptr[meeting_b + 1]:
                if attendee_ids[i] == attendee_ids[j]:
                    return ATTENDEE_DOUBLE_BOOKED, attendee_ids[i], meeting_a, meeting_b, 0
                if attendee_ids[i] < attendee_ids[j]:
                    i += 1
                else:
                    j += 1
    return OK, 0, 0, 0, total


@njit
def check_packed(packed: np.ndarray, schedule: np.ndarray) -> tuple[int, int, int, int, int]:
    """:func:`check_schedule` on an instance's ``packed`` array (its header, then the seven
    kernel arrays): the task's kernel, one array argument for the whole instance."""
    header = 3 + 8
    starts = packed[3:header] + header
    return check_schedule(
        schedule,
        packed[starts[0] : starts[1]],
        packed[starts[1] : starts[2]],
        packed[starts[2] : starts[3]],
        packed[starts[3] : starts[4]],
        packed[starts[4] : starts[5]],
        packed[starts[5] : starts[6]],
        packed[starts[6] : starts[7]],
        packed[0],
        packed[1],
        packed[2],
    )


@njit
def scan_check_packed(answer: bytes, packed: np.ndarray) -> tuple[int, int, int, int, int]:
    """Read the answer text and check it in one call (``NOT_SCANNED`` first unless it is a list
    of ``[meeting, room, start]`` rows)."""
    scanned, values, offsets = scan_rows(answer)
    if not scanned or first_row_not_of_length(offsets, 3) >= 0:
        return NOT_SCANNED, 0, 0, 0, 0
    return check_packed(packed, np.ascontiguousarray(values).reshape((offsets.shape[0] - 1, 3)))


def check_schedule_python(
    attendees: Sequence[Sequence[int]],
    durations: Sequence[int],
    availability: Sequence[Sequence[Sequence[int]]],
    capacities: Sequence[int],
    slot: int,
    day_start: int,
    day_end: int,
    schedule: list[list[int]],
) -> tuple[int, int, int, int, int]:
    """Pure-Python twin of :func:`check_schedule`, on the instance's plain values
    (``attendees[m]``: meeting m's sorted attendees), not on the kernel's arrays."""
    seen: set[int] = set()
    total = 0
    for row, (meeting, room, start) in enumerate(schedule):
        if not 0 <= meeting < len(attendees):
            return MEETING_OUT_OF_RANGE, meeting, row, 0, 0
        if meeting in seen:
            return MEETING_REPEATED, meeting, row, 0, 0
        seen.add(meeting)
        if not 0 <= room < len(capacities):
            return ROOM_OUT_OF_RANGE, room, meeting, 0, 0
        duration = durations[meeting]
        if not day_start <= start <= day_end - duration:
            return OUTSIDE_DAY, meeting, start, 0, 0
        if (start - day_start) % slot:
            return OFF_GRID, meeting, start, 0, 0
        if capacities[room] < len(attendees[meeting]):
            return OVER_CAPACITY, room, meeting, 0, 0
        for attendee in attendees[meeting]:
            if not any(a <= start and start + duration <= b for a, b in availability[attendee]):
                return UNAVAILABLE, attendee, meeting, start, 0
        total += len(attendees[meeting])
    for first, (meeting_a, room_a, start_a) in enumerate(schedule):
        for meeting_b, room_b, start_b in schedule[first + 1 :]:
            if not (
                start_a < start_b + durations[meeting_b]
                and start_b < start_a + durations[meeting_a]
            ):
                continue
            if room_a == room_b:
                return ROOM_DOUBLE_BOOKED, room_a, meeting_a, meeting_b, 0
            shared = set(attendees[meeting_a]) & set(attendees[meeting_b])
            if shared:
                return ATTENDEE_DOUBLE_BOOKED, min(shared), meeting_a, meeting_b, 0
    return OK, 0, 0, 0, total


def reason(
    code: int,
    a: int,
    b: int,
    c: int,
    meetings: Sequence[Meeting],
    rooms: Sequence[int],
    slot: int,
    day_start: int,
    day_end: int,
) -> str:
    """Explain a failed check (``a``, ``b``, ``c`` are the kernel's details) from the instance's
    fields."""
    if code == MEETING_OUT_OF_RANGE:
        return f"meeting {a} does not exist (meetings are 0 to {len(meetings) - 1})"
    if code == MEETING_REPEATED:
        return f"meeting {a} scheduled twice"
    if code == ROOM_OUT_OF_RANGE:
        return f"room {a} does not exist (rooms are 0 to {len(rooms) - 1})"
    if code == OUTSIDE_DAY:
        return (
            f"meeting {a} starting at {b} does not fit in the day: it must start at or after "
            f"{day_start} and end by {day_end} (it lasts {meetings[a].duration} minutes)"
        )
    if code == OFF_GRID:
        return f"meeting {a} starts at {b}, which is not a multiple of {slot}"
    if code == OVER_CAPACITY:
        return (
            f"room {a} capacity {rooms[a]} < {len(meetings[b].attendees)} attendees of meeting {b}"
        )
    if code == UNAVAILABLE:
        return f"attendee {a} unavailable at {c}-{c + meetings[b].duration} for meeting {b}"
    if code == ROOM_DOUBLE_BOOKED:
        return f"room {a} double-booked: meetings {b} and {c} overlap"
    if code == ATTENDEE_DOUBLE_BOOKED:
        return f"attendee {a} double-booked: meetings {b} and {c} overlap"
    return ""
