"""The MeetingScheduling instance: meetings, attendee availability, room capacities, a time grid.

Times are minutes after midnight. An attendee's availability is a sorted list of ``[start, end]``
intervals that are disjoint and never touch (touching intervals would be one interval), so
"available for the whole meeting" means inside one of them. A meeting of duration ``d`` that
starts at ``s`` occupies the half-open interval ``[s, s + d)``.
"""

from __future__ import annotations

import itertools
from typing import Annotated, ClassVar, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from npgym.instance import Instance, Int, derived, read_only

MINUTES_PER_DAY = 1440
MAX_MEETINGS = 200
MAX_ATTENDEES = 500
MAX_ROOMS = 100
MAX_CAPACITY = 10**6

PositiveInt = Annotated[int, Field(strict=True, ge=1)]


class Meeting(BaseModel):
    """One meeting: who must attend (distinct ids, stored sorted) and how long it lasts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attendees: tuple[Int, ...]
    duration: PositiveInt

    @field_validator("attendees", mode="after")
    @classmethod
    def _sorted_distinct(cls, attendees: tuple[int, ...]) -> tuple[int, ...]:
        ordered = tuple(sorted(attendees))
        if not ordered:
            raise ValueError("a meeting needs at least one attendee")
        for previous, current in itertools.pairwise(ordered):
            if previous == current:
                raise ValueError(f"attendee {current} listed twice in one meeting")
        return ordered


class ScheduleArrays(NamedTuple):
    """The instance as flat int64 arrays for the verifier kernel (CSR lists)."""

    attendee_ptr: np.ndarray
    """Meeting m's attendees are ``attendee_ids[attendee_ptr[m]:attendee_ptr[m + 1]]``."""
    attendee_ids: np.ndarray
    durations: np.ndarray
    interval_ptr: np.ndarray
    """Attendee a's intervals are rows ``interval_ptr[a]:interval_ptr[a + 1]`` of the next two."""
    interval_starts: np.ndarray
    interval_ends: np.ndarray
    capacities: np.ndarray


class MeetingSchedulingInstance(Instance):
    """Meetings to place into rooms at grid start times within one day.

    ``availability[a]`` lists attendee a's free intervals; ``rooms[r]`` is room r's capacity;
    starts must be multiples of ``slot`` with ``day_start <= start`` and
    ``start + duration <= day_end``.
    """

    task: Literal["MeetingScheduling"] = "MeetingScheduling"
    meetings: tuple[Meeting, ...] = Field(min_length=1, max_length=MAX_MEETINGS)
    availability: tuple[tuple[tuple[Int, Int], ...], ...] = Field(
        min_length=1, max_length=MAX_ATTENDEES
    )
    rooms: tuple[Annotated[int, Field(strict=True, ge=1, le=MAX_CAPACITY)], ...] = Field(
        min_length=1, max_length=MAX_ROOMS
    )
    slot: Annotated[int, Field(strict=True, ge=1, le=MINUTES_PER_DAY)]
    day_start: Annotated[int, Field(strict=True, ge=0, le=MINUTES_PER_DAY)] = 480
    day_end: Annotated[int, Field(strict=True, ge=0, le=MINUTES_PER_DAY)] = 1080

    canonical_fields: ClassVar[tuple[str, ...]] = ("meetings", "availability", "rooms", "slot")

    @model_validator(mode="after")
    def _consistent(self) -> MeetingSchedulingInstance:
        if self.day_start >= self.day_end:
            raise ValueError(
                f"day_start ({self.day_start}) must be before day_end ({self.day_end})"
            )
        if self.day_start % self.slot:
            raise ValueError(
                f"day_start ({self.day_start}) must be a multiple of slot ({self.slot})"
            )
        day_length = self.day_end - self.day_start
        attendees = len(self.availability)
        for index, meeting in enumerate(self.meetings):
            if meeting.attendees[-1] >= attendees or meeting.attendees[0] < 0:
                raise ValueError(f"meeting {index} has an attendee outside 0..{attendees - 1}")
            if meeting.duration > day_length:
                raise ValueError(f"meeting {index} is longer than the day ({day_length} minutes)")
        for attendee, intervals in enumerate(self.availability):
            previous_end = -1
            for start, end in intervals:
                if not self.day_start <= start < end <= self.day_end:
                    raise ValueError(
                        f"attendee {attendee} interval [{start}, {end}] must satisfy "
                        f"{self.day_start} <= start < end <= {self.day_end}"
                    )
                if start <= previous_end:
                    raise ValueError(
                        f"attendee {attendee} intervals must be sorted, disjoint and not touching"
                    )
                previous_end = end
        return self

    @property
    def n_meetings(self) -> int:
        return len(self.meetings)

    @property
    def n_attendees(self) -> int:
        return len(self.availability)

    @property
    def n_rooms(self) -> int:
        return len(self.rooms)

    @derived
    def arrays(self) -> ScheduleArrays:
        """Read-only kernel arrays (built once per instance)."""
        return self._build_arrays()

    @derived
    def packed(self) -> np.ndarray:
        """``slot``, ``day_start``, ``day_end``, then the start of each of :attr:`arrays` (and the
        end of the last) counted after this header, then the arrays: one read-only int64 array,
        so that the fused kernel takes two arguments (numba's dispatch checks the type of every
        argument: 1.2 us for eleven, against a third of a microsecond of work on a benchmark
        answer)."""
        arrays = self.arrays
        starts = np.cumsum([0, *(array.size for array in arrays)])
        header = np.array([self.slot, self.day_start, self.day_end, *starts.tolist()], np.int64)
        return read_only(np.concatenate([header, *arrays]))

    def _build_arrays(self) -> ScheduleArrays:
        def frozen(values: list[int]) -> np.ndarray:
            return read_only(np.array(values, dtype=np.int64))

        sizes = [len(meeting.attendees) for meeting in self.meetings]
        counts = [len(intervals) for intervals in self.availability]
        flat = [interval for intervals in self.availability for interval in intervals]
        return ScheduleArrays(
            attendee_ptr=frozen([0, *np.cumsum(sizes).tolist()]),
            attendee_ids=frozen([a for meeting in self.meetings for a in meeting.attendees]),
            durations=frozen([meeting.duration for meeting in self.meetings]),
            interval_ptr=frozen([0, *np.cumsum(counts).tolist()]),
            interval_starts=frozen([start for start, _ in flat]),
            interval_ends=frozen([end for _, end in flat]),
            capacities=frozen(list(self.rooms)),
        )
