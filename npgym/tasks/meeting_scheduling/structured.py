"""MeetingScheduling in classic-RL form: for meetings 0, 1, 2... in order, a room and a start.

Sizes: K meetings, A attendees, R rooms and S start slots (``(day_end - day_start) / slot``),
each the tier's largest. Observation: ``attendance`` (K, A) int8 (attendee a must attend meeting
m), ``durations`` (K,) int64 minutes, ``capacities`` (R,) int64, ``free`` (A, S) int8 (attendee
free for the whole slot s), ``meeting_mask`` (K,), ``attendee_mask`` (A,), ``room_mask`` (R,),
``slot_mask`` (S,) int8 real entries, ``schedule`` (K, 2) int64 room and start slot of each
meeting so far (-1 when skipped or not yet decided), ``room_busy`` (R, S) and ``attendee_busy``
(A, S) int8 slots already taken, ``meeting`` (1,) int64 the meeting to decide next.

Action: Discrete(1 + R * S); 0 skips the meeting, ``1 + r * S + s`` puts it in room r starting
at ``day_start + s * slot``. A placement is legal when it ends by ``day_end``, the room seats every
attendee, every attendee is available for the whole meeting, and neither the room nor an
attendee is busy then (exact minute intervals), so every finished schedule is feasible.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pydantic import BaseModel

from npgym.structured import Episode, first_n, flags, integers, padded
from npgym.tasks.meeting_scheduling.instance import (
    MAX_CAPACITY,
    MINUTES_PER_DAY,
    MeetingSchedulingInstance,
)


class MeetingSchedulingEpisode(Episode[MeetingSchedulingInstance]):
    """Place or skip each meeting in turn, never clashing with what is placed."""

    @classmethod
    def limits_for(cls, config: BaseModel) -> dict[str, int]:
        return {
            "meetings": config.meetings_max,  # type: ignore[attr-defined]
            "attendees": config.attendees_max,  # type: ignore[attr-defined]
            "rooms": config.rooms_max,  # type: ignore[attr-defined]
            "slots": (config.day_end - config.day_start) // config.slot,  # type: ignore[attr-defined]
        }

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        k, a, r, s = (limits[key] for key in ("meetings", "attendees", "rooms", "slots"))
        return {
            "attendance": flags((k, a)),
            "durations": integers(0, MINUTES_PER_DAY, (k,)),
            "capacities": integers(0, MAX_CAPACITY, (r,)),
            "free": flags((a, s)),
            "meeting_mask": flags((k,)),
            "attendee_mask": flags((a,)),
            "room_mask": flags((r,)),
            "slot_mask": flags((s,)),
            "schedule": integers(-1, max(r, s), (k, 2)),
            "room_busy": flags((r, s)),
            "attendee_busy": flags((a, s)),
            "meeting": integers(0, k, (1,)),
        }

    @classmethod
    def action_count(cls, limits: Mapping[str, int]) -> int:
        return 1 + limits["rooms"] * limits["slots"]

    @classmethod
    def sizes_of(cls, instance: MeetingSchedulingInstance) -> dict[str, int]:  # type: ignore[override]
        return {
            "meetings": instance.n_meetings,
            "attendees": instance.n_attendees,
            "rooms": instance.n_rooms,
            "slots": (instance.day_end - instance.day_start) // instance.slot,
        }

    def __init__(self, instance: MeetingSchedulingInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        k, a, r, s = (limits[key] for key in ("meetings", "attendees", "rooms", "slots"))
        self.slot_count = (instance.day_end - instance.day_start) // instance.slot
        self.starts = instance.day_start + instance.slot * np.arange(self.slot_count)
        self.schedule = np.full((k, 2), -1, np.int64)
        self.meeting = 0
        self.room_booked: list[list[tuple[int, int]]] = [[] for _ in range(instance.n_rooms)]
        self.attendee_booked: list[list[tuple[int, int]]] = [
            [] for _ in range(instance.n_attendees)
        ]
        attendance = np.zeros((instance.n_meetings, instance.n_attendees), np.int8)
        for index, meeting in enumerate(instance.meetings):
            attendance[index, list(meeting.attendees)] = 1
        self.static = {
            "attendance": padded(attendance, (k, a), np.int8),
            "durations": padded([m.duration for m in instance.meetings], (k,)),
            "capacities": padded(instance.rooms, (r,)),
            "free": padded(self._slot_table(instance.availability), (a, s), np.int8),
            "meeting_mask": first_n(instance.n_meetings, k),
            "attendee_mask": first_n(instance.n_attendees, a),
            "room_mask": first_n(instance.n_rooms, r),
            "slot_mask": first_n(self.slot_count, s),
        }

    def _slot_table(self, intervals_by_row: Any) -> np.ndarray:
        """``[row, s]`` 1 when one of the row's intervals covers slot s entirely."""
        table = np.zeros((len(intervals_by_row), self.slot_count), np.int8)
        ends = self.starts + self.instance.slot
        for row, intervals in enumerate(intervals_by_row):
            for start, end in intervals:
                table[row] |= (self.starts >= start) & (ends <= end)
        return table

    def _busy_table(self, bookings: list[list[tuple[int, int]]]) -> np.ndarray:
        """``[row, s]`` 1 when a booking overlaps slot s."""
        table = np.zeros((len(bookings), self.slot_count), np.int8)
        ends = self.starts + self.instance.slot
        for row, booked in enumerate(bookings):
            for start, end in booked:
                table[row] |= (self.starts < end) & (ends > start)
        return table

    def observation(self) -> dict[str, np.ndarray]:
        r, a, s = (self.limits[key] for key in ("rooms", "attendees", "slots"))
        return {
            **self.static,
            "schedule": self.schedule.copy(),
            "room_busy": padded(self._busy_table(self.room_booked), (r, s), np.int8),
            "attendee_busy": padded(self._busy_table(self.attendee_booked), (a, s), np.int8),
            "meeting": np.array([self.meeting], np.int64),
        }

    def _fits(self, room: int, start: int) -> bool:
        instance = self.instance
        meeting = instance.meetings[self.meeting]
        end = start + meeting.duration
        if end > instance.day_end or instance.rooms[room] < len(meeting.attendees):
            return False
        if any(start < b and a < end for a, b in self.room_booked[room]):
            return False
        for attendee in meeting.attendees:
            if not any(a <= start and end <= b for a, b in instance.availability[attendee]):
                return False
            if any(start < b and a < end for a, b in self.attendee_booked[attendee]):
                return False
        return True

    def mask(self) -> np.ndarray:
        legal = np.zeros(self.action_count(self.limits), np.bool_)
        if self.meeting >= self.instance.n_meetings:
            return legal
        legal[0] = True
        width = self.limits["slots"]
        for room in range(self.instance.n_rooms):
            for slot, start in enumerate(self.starts.tolist()):
                legal[1 + room * width + slot] = self._fits(room, start)
        return legal

    def apply(self, action: int) -> bool:
        if action:
            room, slot = divmod(action - 1, self.limits["slots"])
            start = int(self.starts[slot])
            meeting = self.instance.meetings[self.meeting]
            booking = (start, start + meeting.duration)
            self.room_booked[room].append(booking)
            for attendee in meeting.attendees:
                self.attendee_booked[attendee].append(booking)
            self.schedule[self.meeting] = (room, slot)
        self.meeting += 1
        return self.meeting == self.instance.n_meetings

    def solution(self) -> list[list[int]]:
        return [
            [meeting, int(room), int(self.starts[slot])]
            for meeting, (room, slot) in enumerate(self.schedule[: self.meeting].tolist())
            if room >= 0
        ]

    def partial_objective(self) -> float:
        return float(
            sum(
                len(self.instance.meetings[meeting].attendees)
                for meeting, (room, _) in enumerate(self.schedule[: self.meeting].tolist())
                if room >= 0
            )
        )

    def greedy_action(self) -> int:
        """The earliest legal start in the smallest room that seats the meeting; else skip."""
        legal = self.mask()
        width = self.limits["slots"]
        for room in np.argsort(self.instance.rooms, kind="stable").tolist():
            row = legal[1 + room * width : 1 + (room + 1) * width]
            if row.any():
                return 1 + room * width + int(np.argmax(row))
        return 0
