"""The MeetingScheduling prompt: the day and its grid, availability, rooms, meetings, the rules."""

from __future__ import annotations

from npgym.tasks.meeting_scheduling.instance import MeetingSchedulingInstance


def clock(minutes: int) -> str:
    """Minutes after midnight as ``HH:MM``."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def render(instance: MeetingSchedulingInstance) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction."""
    day_start, day_end, slot = instance.day_start, instance.day_end, instance.slot
    availability = [
        f"attendee {attendee}: "
        + (", ".join(f"{start}-{end}" for start, end in intervals) if intervals else "never")
        for attendee, intervals in enumerate(instance.availability)
    ]
    rooms = [f"room {room}: {capacity}" for room, capacity in enumerate(instance.rooms)]
    meetings = [
        f"meeting {index}: {meeting.duration} minutes, {len(meeting.attendees)} attendees: "
        + ", ".join(map(str, meeting.attendees))
        for index, meeting in enumerate(instance.meetings)
    ]
    return "\n".join(
        [
            "Meeting Scheduling.",
            "",
            "Schedule meetings into rooms during one day. All times are in minutes after "
            f"midnight (for example 540 is 09:00 and 750 is 12:30). The day runs from "
            f"{day_start} ({clock(day_start)}) to {day_end} ({clock(day_end)}).",
            "",
            f"Attendees 0 to {instance.n_attendees - 1} are free only during these intervals "
            "(a-b means free from time a until time b):",
            *availability,
            "",
            f"Rooms 0 to {instance.n_rooms - 1} and their capacities (the most attendees a "
            "room seats):",
            *rooms,
            "",
            f"Meetings 0 to {instance.n_meetings - 1}, each with its duration and attendees:",
            *meetings,
            "",
            "Rules for a schedule:",
            "- Each scheduled meeting gets one room and one start time, and is scheduled at "
            "most once. Meetings you cannot fit may be left out.",
            f"- A start time must be a multiple of {slot}, at or after {day_start}, and the "
            f"meeting must end by {day_end}. A meeting of duration d that starts at s occupies "
            "the time from s up to s + d; another meeting may start exactly at s + d.",
            "- Every attendee of a scheduled meeting must be free for all of it: for one of "
            "their intervals a-b, a <= s and s + d <= b.",
            "- The room's capacity must be at least the meeting's number of attendees.",
            "- Two meetings overlap when each starts before the other ends. Overlapping "
            "meetings must not share a room, and must not share an attendee.",
            "",
            "Objective: maximise the total number of attendee participations, that is the sum "
            "over the scheduled meetings of their numbers of attendees.",
            "",
            "Answer format: a list of [meeting, room, start] triples, one per scheduled "
            "meeting, for example [[0, 2, 540], [3, 1, 600]] (this example only shows the "
            "format). The empty list [] (no meeting) is not a solution.",
            "",
            "Think step by step, then finish your response with the final answer on its own "
            "line in the form: Answer: [[meeting, room, start], ...]",
        ]
    )
