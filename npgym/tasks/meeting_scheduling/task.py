"""The MeetingScheduling task: the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from npgym.answer import INT_LIMIT, AnswerFormatError, IntRows, as_int_array, as_list
from npgym.heuristics import meeting_scheduling as solvers
from npgym.named_arguments import named_values, parameter_names
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.meeting_scheduling import generator, prompt
from npgym.tasks.meeting_scheduling.instance import MeetingSchedulingInstance
from npgym.tasks.meeting_scheduling.verifier import (
    check_packed,
    check_schedule_python,
    reason,
    scan_check_packed,
)

ENTRY = "[meeting, room, start]"


class MeetingSchedulingTask(
    KernelTask[MeetingSchedulingInstance, generator.MeetingSchedulingConfig]
):
    """Place meetings into rooms at grid times to maximise attendee participations.

    Conventions: times are minutes after midnight (default day 480-1080, i.e. 08:00-18:00);
    starts are multiples of ``slot`` (default 30); a meeting occupies ``[start, start +
    duration)``, so back-to-back meetings do not overlap; an attendee is available for a meeting
    when one of their intervals ``[a, b]`` has ``a <= start`` and ``start + duration <= b``.
    Meetings that do not fit are left out; the objective is the sum of the scheduled meetings'
    attendee counts.

    Answer: ``[[meeting, room, start], ...]`` (``[]`` schedules nothing). The verifier rejects
    unknown or repeated meetings, unknown rooms, starts off the grid or outside the day,
    unavailable attendees, rooms too small, and overlaps in a room or for an attendee.

    Reference: the best of a few greedy orders with a swap search; then, unless that already
    meets the bound "every individually schedulable meeting" or the time-indexed LP bound, an
    exact CP-SAT model (time-indexed starts, at most one meeting per attendee at each grid instant,
    interval no-overlap per room) proves the optimum with one deterministic worker. CP-SAT's word
    is no proof: the reference carries a certificate (:mod:`npgym.certificates.meeting_scheduling`:
    rounded LP duals at the leaves of a branching tree over meetings' placements) that the
    independent checker verifies; one too large to build leaves the reference unproven with the
    bound it certifies.
    Generator: see :mod:`npgym.tasks.meeting_scheduling.generator`.
    """

    name = "MeetingScheduling"
    category = "resource scheduling"
    sense = "max"
    objective_name = "attendee participations"
    instance_type = MeetingSchedulingInstance
    tiers: ClassVar[dict[str, generator.MeetingSchedulingConfig]] = generator.TIERS
    episode = "npgym.tasks.meeting_scheduling.structured:MeetingSchedulingEpisode"
    vector = "npgym.tasks.meeting_scheduling.vector:MeetingSchedulingBatch"
    drawer = "npgym.tasks.meeting_scheduling.render:draw"
    variant_maker = "npgym.tasks.meeting_scheduling.variants:make_variant"
    inverse = "npgym.tasks.meeting_scheduling.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_packed)
    fused_kernel = staticmethod(scan_check_packed)
    reason = staticmethod(reason)
    twin = staticmethod(check_schedule_python)
    answer_name = "schedule"

    def to_solution(self, value: Any) -> np.ndarray:
        """A ``(k, 3)`` int64 array of ``[meeting, room, start]`` rows."""
        if isinstance(value, np.ndarray) and value.ndim == 2 and value.dtype.kind in "iu":
            if value.shape[1] != 3:
                raise AnswerFormatError(f"each schedule entry must be {ENTRY}")
            if value.size and int(np.abs(value).max()) >= INT_LIMIT:
                raise AnswerFormatError("integer out of range in the schedule")
            return np.ascontiguousarray(value, dtype=np.int64)
        if isinstance(value, IntRows):  # the parser's list of lists: check the row lengths at once
            index = value.first_row_not_of_length(3)
            if index >= 0:
                length = value.row_length(index)
                raise AnswerFormatError(
                    f"schedule entry {index} has {length} values; each entry must be {ENTRY}"
                )
            return value.values.reshape(-1, 3)
        rows = as_list(value, self.answer_name)
        flat: list[Any] = []
        for index, row in enumerate(rows):
            if not isinstance(row, (list, tuple, np.ndarray)):
                raise AnswerFormatError(
                    f"schedule entry {index} is not a list; each entry must be {ENTRY}"
                )
            entry = as_list(row, "schedule entry")
            if len(entry) != 3:
                raise AnswerFormatError(
                    f"schedule entry {index} has {len(entry)} values; each entry must be {ENTRY}"
                )
            flat.extend(entry)
        return as_int_array(flat, self.answer_name).reshape(-1, 3)

    def twin_arguments(self, instance: MeetingSchedulingInstance) -> tuple[Any, ...]:
        """The twin's arguments: the instance's plain values (the solvers' form, by the twin's
        parameter names), not the kernel's packed array, so the two checks share no data."""
        return named_values(parameter_names(self.twin)[:-1], _problem(instance))

    def random_solution(
        self, instance: MeetingSchedulingInstance, rng: np.random.Generator
    ) -> list[list[int]]:
        slots = (instance.day_end - instance.day_start) // instance.slot
        return [
            [
                meeting,
                int(rng.integers(len(instance.rooms))),
                instance.day_start + instance.slot * int(rng.integers(slots)),
            ]
            for meeting in range(len(instance.meetings))
            if rng.random() < 0.5
        ]

    def greedy_solution(self, instance: MeetingSchedulingInstance) -> list[list[int]]:
        return [list(entry) for entry in solvers.first_fit_schedule(_problem(instance))]

    def baseline_solution(self, instance: MeetingSchedulingInstance) -> list[list[int]] | None:
        """One meeting: the lowest-numbered one that fits, at its first free start in the smallest
        room that holds it (``None`` if no meeting fits anywhere)."""
        schedule = solvers.first_fit_schedule(_problem(instance))
        return [list(schedule[0])] if schedule else None

    def solve(
        self, instance: MeetingSchedulingInstance, *, exact: bool, time_limit: float
    ) -> Reference:
        problem = _problem(instance)
        schedule = solvers.greedy_schedule(problem, effort=time_limit)
        value = solvers.participations(problem, schedule)
        if not exact:
            return Reference(
                objective=value,
                solution=[list(entry) for entry in schedule],
                proven_optimal=False,
                method="heuristic",
                solver="greedy+swap",
            )
        result = solvers.cp_sat_schedule(problem, time_limit, hint=schedule)
        return Reference.from_result(
            result,
            [list(entry) for entry in result.witness],
            "greedy+swap, then CP-SAT (time-indexed, room no-overlap)",
        )


def _problem(instance: MeetingSchedulingInstance) -> solvers.Problem:
    """The instance in the solvers' plain form."""
    return solvers.Problem(
        attendees=tuple(meeting.attendees for meeting in instance.meetings),
        durations=tuple(meeting.duration for meeting in instance.meetings),
        availability=instance.availability,
        capacities=instance.rooms,
        slot=instance.slot,
        day_start=instance.day_start,
        day_end=instance.day_end,
    )
