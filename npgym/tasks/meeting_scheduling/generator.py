"""MeetingScheduling generator config, the published tiers, and the generator itself.

Construction (all times on the ``slot`` grid of the day ``[day_start, day_end)``):

1. Availability. Each attendee gets ``fragments_min..fragments_max`` free intervals covering a
   share ``coverage_min..coverage_max`` of the day: the free slots are split into that many
   non-empty runs, separated by non-empty gaps (so intervals never touch), with random gaps
   before the first and after the last. One fragment is continuous availability.
2. Meetings. Each meeting draws a duration (``duration_slots_min..duration_slots_max`` slots)
   and a target size (``meeting_size_min..meeting_size_max``, at most the number of attendees),
   then a window of that duration, uniformly among the windows where at least that many
   attendees are free, and its attendees among those free in it. When no window has enough
   free attendees the size shrinks to the best window's count (and the duration to one slot if
   nobody is free for longer), so every meeting can be scheduled on its own and its size never
   exceeds ``meeting_size_max``. Conflicts between meetings (shared attendees, popular times)
   are what make the optimum leave some out.
3. Rooms. Capacities are uniform in ``capacity_min..largest meeting + capacity_slack`` (the
   slack may be negative); if no room seats the largest meeting, a random room is enlarged to
   seat it, so every meeting fits some room. Small slack (the harder tiers) leaves few rooms
   for the large meetings. With the tiers' room counts, attendee conflicts rather than rooms
   usually decide which meetings the optimum leaves out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, model_validator

from npgym.config import GeneratorConfig, range_growth
from npgym.tasks.meeting_scheduling.instance import (
    MAX_ATTENDEES,
    MAX_MEETINGS,
    MAX_ROOMS,
    MINUTES_PER_DAY,
)


class MeetingSchedulingConfig(GeneratorConfig):
    """How MeetingScheduling instances are drawn (times in minutes after midnight)."""

    growth: ClassVar[Mapping[str, float]] = range_growth(meetings=1.0, attendees=1.0, rooms=1.0)

    meetings_min: int = Field(ge=1, le=MAX_MEETINGS)
    meetings_max: int = Field(ge=1, le=MAX_MEETINGS)
    attendees_min: int = Field(ge=1, le=MAX_ATTENDEES)
    attendees_max: int = Field(ge=1, le=MAX_ATTENDEES)
    rooms_min: int = Field(ge=1, le=MAX_ROOMS)
    rooms_max: int = Field(ge=1, le=MAX_ROOMS)
    meeting_size_min: int = Field(2, ge=1, le=MAX_ATTENDEES, description="target attendees")
    meeting_size_max: int = Field(ge=1, le=MAX_ATTENDEES)
    duration_slots_min: int = Field(1, ge=1, le=MINUTES_PER_DAY)
    duration_slots_max: int = Field(ge=1, le=MINUTES_PER_DAY)
    fragments_min: int = Field(1, ge=1, le=MINUTES_PER_DAY, description="free intervals each")
    fragments_max: int = Field(ge=1, le=MINUTES_PER_DAY)
    coverage_min: float = Field(ge=0.0, le=1.0, description="share of the day an attendee is free")
    coverage_max: float = Field(ge=0.0, le=1.0)
    capacity_min: int = Field(ge=1, le=MAX_ATTENDEES)
    capacity_slack: int = Field(
        ge=-MAX_ATTENDEES, le=MAX_ATTENDEES, description="rooms seat up to largest + slack"
    )
    slot: int = Field(30, ge=1, le=MINUTES_PER_DAY, description="start-time grid step (minutes)")
    day_start: int = Field(480, ge=0, le=MINUTES_PER_DAY, description="08:00")
    day_end: int = Field(1080, ge=0, le=MINUTES_PER_DAY, description="18:00")

    @model_validator(mode="after")
    def _day_fits_the_grid(self) -> MeetingSchedulingConfig:
        if self.day_start % self.slot:
            raise ValueError(
                f"day_start ({self.day_start}) must be a multiple of slot ({self.slot})"
            )
        if self.day_end - self.day_start < self.slot:
            raise ValueError("the day (day_start to day_end) must hold at least one slot")
        return self


TIERS: dict[str, MeetingSchedulingConfig] = {
    "easy": MeetingSchedulingConfig(
        meetings_min=4, meetings_max=5, attendees_min=3, attendees_max=5, rooms_min=3,
        rooms_max=4, meeting_size_max=3, duration_slots_max=3, fragments_max=1,
        coverage_min=0.45, coverage_max=0.75, capacity_min=3, capacity_slack=2,
    ),
    "medium": MeetingSchedulingConfig(
        meetings_min=5, meetings_max=6, attendees_min=4, attendees_max=6, rooms_min=4,
        rooms_max=5, meeting_size_max=4, duration_slots_max=3, fragments_max=2,
        coverage_min=0.4, coverage_max=0.65, capacity_min=2, capacity_slack=1,
    ),
    "hard": MeetingSchedulingConfig(
        meetings_min=6, meetings_max=7, attendees_min=5, attendees_max=7, rooms_min=5,
        rooms_max=6, meeting_size_max=4, duration_slots_max=4, fragments_max=3,
        coverage_min=0.4, coverage_max=0.7, capacity_min=2, capacity_slack=0,
    ),
    "benchmark": MeetingSchedulingConfig(
        meetings_min=8, meetings_max=10, attendees_min=7, attendees_max=9, rooms_min=6,
        rooms_max=7, meeting_size_max=5, duration_slots_max=4, fragments_min=2, fragments_max=3,
        coverage_min=0.35, coverage_max=0.65, capacity_min=2, capacity_slack=-1,
    ),
}  # fmt: skip


def build(rng: np.random.Generator, config: MeetingSchedulingConfig) -> dict[str, Any]:
    """Draw availability, meetings and rooms (see the module docstring)."""
    day_slots = (config.day_end - config.day_start) // config.slot
    n_meetings = int(rng.integers(config.meetings_min, config.meetings_max + 1))
    n_attendees = int(rng.integers(config.attendees_min, config.attendees_max + 1))
    n_rooms = int(rng.integers(config.rooms_min, config.rooms_max + 1))
    free = np.zeros((n_attendees, day_slots), dtype=np.bool_)
    for attendee in range(n_attendees):
        for first, last in _free_runs(rng, config, day_slots):
            free[attendee, first:last] = True
    meetings = [_draw_meeting(rng, config, free) for _ in range(n_meetings)]
    largest = max(len(attendees) for attendees, _ in meetings)
    low = min(config.capacity_min, largest)
    high = max(low, largest + config.capacity_slack)
    capacities = rng.integers(low, high + 1, size=n_rooms)
    if capacities.max() < largest:
        capacities[int(rng.integers(n_rooms))] = largest
    return {
        "meetings": tuple(
            {"attendees": attendees, "duration": slots * config.slot}
            for attendees, slots in meetings
        ),
        "availability": tuple(_intervals(row, config) for row in free),
        "rooms": tuple(int(c) for c in capacities),
        "slot": config.slot,
        "day_start": config.day_start,
        "day_end": config.day_end,
    }


def _free_runs(
    rng: np.random.Generator, config: MeetingSchedulingConfig, day_slots: int
) -> list[tuple[int, int]]:
    """Free runs ``[first, last)`` in slot units: non-empty, separated by non-empty gaps."""
    fragments = int(rng.integers(config.fragments_min, config.fragments_max + 1))
    fragments = min(fragments, (day_slots + 1) // 2)
    coverage = config.coverage_min + (config.coverage_max - config.coverage_min) * rng.random()
    free_slots = int(np.clip(round(coverage * day_slots), fragments, day_slots - fragments + 1))
    run_cuts = np.sort(rng.choice(free_slots - 1, size=fragments - 1, replace=False)) + 1
    runs = np.diff(np.concatenate([[0], run_cuts, [free_slots]]))
    spare = day_slots - free_slots - (fragments - 1)  # gap slots beyond the one between runs
    bars = np.sort(rng.choice(spare + fragments, size=fragments, replace=False))
    gaps = np.diff(np.concatenate([[-1], bars])) - 1  # stars and bars: k + 1 parts of ``spare``
    position, result = 0, []
    for index, length in enumerate(runs.tolist()):
        position += int(gaps[index]) + (1 if index else 0)
        result.append((position, position + length))
        position += length
    return result


def _draw_meeting(
    rng: np.random.Generator, config: MeetingSchedulingConfig, free: np.ndarray
) -> tuple[tuple[int, ...], int]:
    """A meeting whose attendees are all free in one window of its duration (see step 2)."""
    n_attendees, day_slots = free.shape
    slots = int(rng.integers(config.duration_slots_min, config.duration_slots_max + 1))
    slots = min(slots, day_slots)
    size_max = min(config.meeting_size_max, n_attendees)
    size = int(rng.integers(min(config.meeting_size_min, size_max), size_max + 1))
    windows = _free_throughout(free, slots)
    counts = windows.sum(axis=0)
    if counts.max() == 0:
        slots = 1
        windows = _free_throughout(free, slots)
        counts = windows.sum(axis=0)
    size = min(size, int(counts.max()))
    start = int(rng.choice(np.flatnonzero(counts >= size)))
    chosen = rng.choice(np.flatnonzero(windows[:, start]), size=size, replace=False)
    return tuple(sorted(int(a) for a in chosen)), slots


def _free_throughout(free: np.ndarray, slots: int) -> np.ndarray:
    """``[a, t]``: attendee a is free in every slot ``t .. t + slots - 1``."""
    n_attendees, day_slots = free.shape
    windows = np.ones((n_attendees, day_slots - slots + 1), dtype=np.bool_)
    for offset in range(slots):
        windows &= free[:, offset : offset + day_slots - slots + 1]
    return windows


def _intervals(row: np.ndarray, config: MeetingSchedulingConfig) -> tuple[tuple[int, int], ...]:
    """Maximal free runs of one attendee as ``(start, end)`` minutes (never touching)."""
    padded = np.concatenate([[False], row, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return tuple(
        (config.day_start + int(first) * config.slot, config.day_start + int(last) * config.slot)
        for first, last in edges.reshape(-1, 2)
    )
