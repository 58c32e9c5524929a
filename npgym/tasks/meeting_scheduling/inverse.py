"""MeetingScheduling's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from typing import Any

from npgym.inverse import InverseProblem

MAX_ROOMS = 8
"""Most rooms of an ``Invert-MeetingScheduling`` answer."""
MAX_ATTENDEES = 12
"""Most attendees (availability rows) of an ``Invert-MeetingScheduling`` answer."""
MIN_SLOT = 30
"""Shortest start grid of an ``Invert-MeetingScheduling`` answer, in minutes (at most 20 starts
a day)."""


def over_caps(fields: dict[str, Any]) -> str:
    """The cap an answer's raw fields exceed, in words ("" when none); reads only list lengths
    and one integer."""
    rooms, availability, slot = fields.get("rooms"), fields.get("availability"), fields.get("slot")
    if isinstance(rooms, list) and len(rooms) > MAX_ROOMS:
        return f"at most {MAX_ROOMS} rooms"
    if isinstance(availability, list) and len(availability) > MAX_ATTENDEES:
        return f"at most {MAX_ATTENDEES} attendees"
    if isinstance(slot, int) and slot < MIN_SLOT:
        return f"slot must be at least {MIN_SLOT} minutes"
    return ""


INVERSE = InverseProblem(
    unit="meetings",
    size=lambda instance: instance.n_meetings,
    size_cap=8,
    fields='"meetings": a list of {"attendees": [attendee numbers], "duration": minutes}, '
    '"availability": for each attendee a sorted list of disjoint, non-touching [start, end] free '
    'intervals in minutes within 480..1080, "rooms": room capacities, "slot": the start-time '
    "grid in minutes (480 must be a multiple of it)",
    optimum="the largest total attendee count of meetings that can be scheduled (each in a room "
    "with enough capacity, at a start on the slot grid, every attendee free for the whole "
    "meeting, no room or attendee double-booked; the day is 480..1080)",
    extra_limits=f", at most {MAX_ROOMS} rooms, at most {MAX_ATTENDEES} attendees, slot at least "
    f"{MIN_SLOT}",
    over_caps=over_caps,
)
