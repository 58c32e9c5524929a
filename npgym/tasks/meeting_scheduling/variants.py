"""MeetingScheduling's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.variants import Variant, map_ids, permutation, rebuild


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_meeting_of_new = permutation(rng, instance.n_meetings)
    _, old_room_of_new = permutation(rng, instance.n_rooms)
    new_attendee_of_old, old_attendee_of_new = permutation(rng, instance.n_attendees)
    meetings = [
        {
            "attendees": new_attendee_of_old[list(instance.meetings[old].attendees)].tolist(),
            "duration": instance.meetings[old].duration,
        }
        for old in old_meeting_of_new.tolist()
    ]

    def back(solution: Any) -> Any:
        rows = np.asarray(solution, dtype=np.int64).reshape(-1, 3).copy()
        rows[:, 0] = map_ids(rows[:, 0], old_meeting_of_new)
        rows[:, 1] = map_ids(rows[:, 1], old_room_of_new)
        return rows

    return Variant(
        rebuild(
            instance,
            meetings=meetings,
            availability=[instance.availability[old] for old in old_attendee_of_new.tolist()],
            rooms=[instance.rooms[old] for old in old_room_of_new.tolist()],
        ),
        instance,
        back,
        transforms=("relabel meetings", "relabel rooms", "relabel attendees"),
    )
