"""MeetingScheduling's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.meeting_scheduling.structured.MeetingSchedulingEpisode` with the batch
first, stepped in one numba call.

Each slot places or skips its meetings in order. The single episode checks clashes on exact
minute intervals; since every meeting starts on the slot grid, two meetings overlap exactly when
a grid start lies in both, so the busy tables of the observation (a slot is busy when a booking
covers its start) decide clashes here. Availability needs the minutes: ``until[a, s]`` is the end
of attendee a's free interval that holds the start of slot s (-1 when none), and a meeting of
duration d fits attendee a at slot s when ``start + d <= until[a, s]``.

With the objective reward, instances are drawn in compiled code
(:meth:`MeetingSchedulingBatch.load_seeded`): drawing one through ``task.generate`` costs more
than a whole episode's steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.streams import choice_without_replacement, integer, uniform
from npgym.tasks.meeting_scheduling.generator import MeetingSchedulingConfig
from npgym.tasks.meeting_scheduling.instance import MeetingSchedulingInstance
from npgym.tasks.meeting_scheduling.structured import MeetingSchedulingEpisode
from npgym.vector import BatchedEpisode, mark_real, seeded_slot


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    numbers: tuple[int, ...],
    coverage: tuple[float, float],
    attendance: np.ndarray,
    durations: np.ndarray,
    capacities: np.ndarray,
    free: np.ndarray,
    until: np.ndarray,
    counts: np.ndarray,
    times: np.ndarray,
) -> None:
    """Each slot's instance as :func:`~npgym.tasks.meeting_scheduling.generator.build` draws
    it from ``task.generate``'s stream for its seed, numpy's draws reproduced by
    :mod:`npgym.streams` (every population it samples is small enough for Floyd's algorithm).
    ``numbers`` holds the config's integer fields in :meth:`MeetingSchedulingBatch.load_seeded`'s
    order, ``coverage`` its ``(coverage_min, coverage_max)``."""
    (
        meetings_min,
        meetings_max,
        attendees_min,
        attendees_max,
        rooms_min,
        rooms_max,
        size_min,
        size_max,
        duration_min,
        duration_max,
        fragments_min,
        fragments_max,
        capacity_min,
        capacity_slack,
        length,
        day_start,
        day_end,
    ) = numbers
    day_slots = (day_end - day_start) // length
    starts = day_start + length * np.arange(day_slots + 1)
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        meetings = integer(state, meetings_min, meetings_max + 1)
        attendees = integer(state, attendees_min, attendees_max + 1)
        rooms = integer(state, rooms_min, rooms_max + 1)
        free[slot] = 0
        until[slot] = -1
        for attendee in range(attendees):
            _free_runs(
                state,
                fragments_min,
                fragments_max,
                coverage,
                day_slots,
                starts,
                free[slot, attendee],
                until[slot, attendee],
            )
        attendance[slot] = 0
        durations[slot] = 0
        largest = 0
        for meeting in range(meetings):
            taken = _draw_meeting(
                state,
                duration_min,
                duration_max,
                size_min,
                size_max,
                free[slot, :attendees, :day_slots],
                attendance[slot, meeting],
            )
            durations[slot, meeting] = taken * length
            largest = max(largest, attendance[slot, meeting].sum())
        low = min(capacity_min, largest)
        high = max(low, largest + capacity_slack)
        capacities[slot] = 0
        for room in range(rooms):
            capacities[slot, room] = integer(state, low, high + 1)
        if capacities[slot, :rooms].max() < largest:
            capacities[slot, integer(state, 0, rooms)] = largest
        counts[slot, 0] = meetings
        counts[slot, 1] = attendees
        counts[slot, 2] = rooms
        counts[slot, 3] = day_slots
        times[slot, 0] = day_start
        times[slot, 1] = length
        times[slot, 2] = day_end


@njit
def _free_runs(
    state: np.ndarray,
    fragments_min: int,
    fragments_max: int,
    coverage: tuple[float, float],
    day_slots: int,
    starts: np.ndarray,
    free: np.ndarray,
    until: np.ndarray,
) -> None:
    """One attendee's free slots as the generator's ``_free_runs`` draws them: non-empty runs
    separated by non-empty gaps; ``until`` of each free slot is its run's end (minutes, from
    the grid ``starts``)."""
    fragments = min(integer(state, fragments_min, fragments_max + 1), (day_slots + 1) // 2)
    share = coverage[0] + (coverage[1] - coverage[0]) * uniform(state)
    rounded = np.int64(np.rint(share * day_slots))  # half to even, as Python's round
    free_slots = min(max(rounded, fragments), day_slots - fragments + 1)
    cuts = np.sort(choice_without_replacement(state, free_slots - 1, fragments - 1)) + 1
    spare = day_slots - free_slots - (fragments - 1)
    bars = np.sort(choice_without_replacement(state, spare + fragments, fragments))
    position = 0
    for index in range(fragments):
        run_start = cuts[index - 1] if index else 0
        run_end = cuts[index] if index < fragments - 1 else free_slots
        gap = bars[index] - (bars[index - 1] if index else -1) - 1
        position += gap + (1 if index else 0)
        last = position + run_end - run_start
        free[position:last] = 1
        until[position:last] = starts[last]
        position = last


@njit
def _draw_meeting(
    state: np.ndarray,
    duration_min: int,
    duration_max: int,
    size_min: int,
    size_max: int,
    free: np.ndarray,
    attendance: np.ndarray,
) -> int:
    """One meeting as the generator's ``_draw_meeting`` draws it, from the attendees' ``free``
    slots: its attendees set in ``attendance``; returns its duration in slots."""
    attendees, day_slots = free.shape
    taken = min(integer(state, duration_min, duration_max + 1), day_slots)
    largest = min(size_max, attendees)
    size = integer(state, min(size_min, largest), largest + 1)
    windows = _free_throughout(free, taken)
    if windows.sum(axis=0).max() == 0:
        taken = 1
        windows = _free_throughout(free, taken)
    tally = windows.sum(axis=0)
    size = min(size, tally.max())
    candidates = np.flatnonzero(tally >= size)
    start = candidates[integer(state, 0, candidates.shape[0])]
    available = np.flatnonzero(windows[:, start])
    for chosen in choice_without_replacement(state, available.shape[0], size):
        attendance[available[chosen]] = 1
    return taken


@njit
def _free_throughout(free: np.ndarray, taken: int) -> np.ndarray:
    """``[a, t]``: attendee a is free in every slot ``t .. t + taken - 1``."""
    attendees, day_slots = free.shape
    windows = np.ones((attendees, day_slots - taken + 1), np.int64)
    for offset in range(taken):
        windows &= free[:, offset : offset + day_slots - taken + 1]
    return windows


@njit
def _restart(
    slots: np.ndarray,
    counts: np.ndarray,
    times: np.ndarray,
    attendance: np.ndarray,
    durations: np.ndarray,
    capacities: np.ndarray,
    until: np.ndarray,
    meeting_mask: np.ndarray,
    attendee_mask: np.ndarray,
    room_mask: np.ndarray,
    slot_mask: np.ndarray,
    schedule: np.ndarray,
    room_busy: np.ndarray,
    attendee_busy: np.ndarray,
    meeting: np.ndarray,
    action_mask: np.ndarray,
    value: np.ndarray,
) -> None:
    """Empty schedules in ``slots``, the first meeting to place."""
    for slot in slots:
        mark_real(meeting_mask[slot], counts[slot, 0])
        mark_real(attendee_mask[slot], counts[slot, 1])
        mark_real(room_mask[slot], counts[slot, 2])
        mark_real(slot_mask[slot], counts[slot, 3])
        schedule[slot] = -1
        attendee_busy[slot] = 0
        room_busy[slot] = 0
        meeting[slot, 0] = 0
        value[slot] = 0
        _fill_mask(
            slot,
            counts,
            times,
            attendance,
            durations,
            capacities,
            until,
            room_busy,
            attendee_busy,
            meeting,
            action_mask,
        )


@njit
def _fill_mask(
    slot: int,
    counts: np.ndarray,
    times: np.ndarray,
    attendance: np.ndarray,
    durations: np.ndarray,
    capacities: np.ndarray,
    until: np.ndarray,
    room_busy: np.ndarray,
    attendee_busy: np.ndarray,
    meeting: np.ndarray,
    action_mask: np.ndarray,
) -> None:
    """The legal moves of ``slot``'s next meeting: skipping, and every room and start where it
    ends by the day's end, the room seats it, its attendees are free, and nothing clashes."""
    width = room_busy.shape[2]
    attendees, rooms, slot_count = counts[slot, 1], counts[slot, 2], counts[slot, 3]
    day_start, length, day_end = times[slot, 0], times[slot, 1], times[slot, 2]
    current = meeting[slot, 0]
    duration = durations[slot, current]
    size = 0
    for attendee in range(attendees):
        size += attendance[slot, current, attendee]
    action_mask[slot, :] = 0
    action_mask[slot, 0] = 1
    for start in range(slot_count):
        end = day_start + start * length + duration
        if end > day_end:
            break
        last = start  # the slots whose start the meeting covers: start..last
        while last + 1 < slot_count and day_start + (last + 1) * length < end:
            last += 1
        fits = True
        for attendee in range(attendees):
            if attendance[slot, current, attendee] == 0:
                continue
            if end > until[slot, attendee, start]:
                fits = False
            for covered in range(start, last + 1):
                if attendee_busy[slot, attendee, covered]:
                    fits = False
            if not fits:
                break
        if not fits:
            continue
        for room in range(rooms):
            free = capacities[slot, room] >= size
            for covered in range(start, last + 1):
                free = free and room_busy[slot, room, covered] == 0
            action_mask[slot, 1 + room * width + start] = free


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    counts: np.ndarray,
    times: np.ndarray,
    attendance: np.ndarray,
    durations: np.ndarray,
    capacities: np.ndarray,
    until: np.ndarray,
    schedule: np.ndarray,
    room_busy: np.ndarray,
    attendee_busy: np.ndarray,
    meeting: np.ndarray,
    action_mask: np.ndarray,
    value: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Skip or place the next meeting of each slot in ``slots``; flag finished schedules."""
    width = room_busy.shape[2]
    for slot in slots:
        action = actions[slot]
        current = meeting[slot, 0]
        if action > 0:
            room, start = divmod(action - 1, width)
            day_start, length = times[slot, 0], times[slot, 1]
            end = day_start + start * length + durations[slot, current]
            covered = start
            while covered < counts[slot, 3] and day_start + covered * length < end:
                room_busy[slot, room, covered] = 1
                for attendee in range(counts[slot, 1]):
                    if attendance[slot, current, attendee]:
                        attendee_busy[slot, attendee, covered] = 1
                covered += 1
            for attendee in range(counts[slot, 1]):
                value[slot] += attendance[slot, current, attendee]
            schedule[slot, current, 0] = room
            schedule[slot, current, 1] = start
        meeting[slot, 0] = current + 1
        if current + 1 == counts[slot, 0]:
            finished[slot] = True
        else:
            _fill_mask(
                slot,
                counts,
                times,
                attendance,
                durations,
                capacities,
                until,
                room_busy,
                attendee_busy,
                meeting,
                action_mask,
            )


class MeetingSchedulingBatch(BatchedEpisode):
    """B schedules built meeting by meeting."""

    episode = MeetingSchedulingEpisode

    static_keys = (
        "attendance",
        "durations",
        "capacities",
        "free",
        "meeting_mask",
        "attendee_mask",
        "room_mask",
        "slot_mask",
    )

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)
    draw_kernel = staticmethod(_draw_into)

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        attendees, slots = limits["attendees"], limits["slots"]
        self.until = np.full((batch_size, attendees, slots), -1, np.int64)
        self.counts = np.zeros((batch_size, 4), np.int64)
        """Meetings, attendees, rooms and slots of each slot's instance."""
        self.times = np.zeros((batch_size, 3), np.int64)
        """``day_start``, ``slot`` and ``day_end`` of each slot's instance (minutes)."""
        self.value = np.zeros(batch_size, np.int64)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, MeetingSchedulingInstance)
        slot_count = (instance.day_end - instance.day_start) // instance.slot
        starts = instance.day_start + instance.slot * np.arange(slot_count)
        free = np.zeros((instance.n_attendees, slot_count), np.int8)
        until = np.full((instance.n_attendees, slot_count), -1, np.int64)
        for attendee, intervals in enumerate(instance.availability):
            for start, end in intervals:
                free[attendee] |= (starts >= start) & (starts + instance.slot <= end)
                until[attendee, (starts >= start) & (starts < end)] = end
        attendance = np.zeros((instance.n_meetings, instance.n_attendees), np.int8)
        for index, meeting in enumerate(instance.meetings):
            attendance[index, list(meeting.attendees)] = 1
        return {
            "attendance": attendance,
            "durations": np.array([m.duration for m in instance.meetings], np.int64),
            "capacities": np.array(instance.rooms, np.int64),
            "free": free,
            "until": until,
            "times": (instance.day_start, instance.slot, instance.day_end),
        }

    def load(self, slots: np.ndarray, arrays: Sequence[dict[str, Any]]) -> None:
        buffers = self.buffers
        for slot, drawn in zip(slots, arrays, strict=True):
            k, a = drawn["attendance"].shape
            r, s = len(drawn["capacities"]), drawn["free"].shape[1]
            for key in ("attendance", "durations", "capacities", "free"):
                buffers[key][slot] = 0
            buffers["attendance"][slot, :k, :a] = drawn["attendance"]
            buffers["durations"][slot, :k] = drawn["durations"]
            buffers["capacities"][slot, :r] = drawn["capacities"]
            buffers["free"][slot, :a, :s] = drawn["free"]
            self.until[slot] = -1
            self.until[slot, :a, :s] = drawn["until"]
            self.counts[slot] = (k, a, r, s)
            self.times[slot] = drawn["times"]
        self.restart(slots)

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        assert isinstance(config, MeetingSchedulingConfig)
        return (
            (
                config.meetings_min,
                config.meetings_max,
                config.attendees_min,
                config.attendees_max,
                config.rooms_min,
                config.rooms_max,
                config.meeting_size_min,
                config.meeting_size_max,
                config.duration_slots_min,
                config.duration_slots_max,
                config.fragments_min,
                config.fragments_max,
                config.capacity_min,
                config.capacity_slack,
                config.slot,
                config.day_start,
                config.day_end,
            ),
            (config.coverage_min, config.coverage_max),
        )

    def objectives(self) -> np.ndarray:
        return self.value.astype(np.float64)

    def solution(self, slot: int) -> list[list[int]]:
        day_start, length, _ = self.times[slot].tolist()
        placed = self.buffers["schedule"][slot, : self.buffers["meeting"][slot, 0]].tolist()
        return [
            [meeting, room, day_start + start * length]
            for meeting, (room, start) in enumerate(placed)
            if room >= 0
        ]
