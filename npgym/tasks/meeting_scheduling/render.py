"""Picture of a MeetingScheduling answer: two timelines over the day. Top, one row per room:
each scheduled meeting as a box ``m<id> (<attendees>)``, red when it breaks a rule (room
double-booked, room too small, off the grid or outside the day, scheduled twice) with the rule
named. Bottom, one row per attendee: free time light green, their meetings blue, red where a
meeting falls outside their free time or overlaps another of theirs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from npgym.render import MISTAKE, PLAIN, two_panels

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from npgym.tasks.meeting_scheduling.instance import MeetingSchedulingInstance

FREE = "#d9f2d9"
ROOM_BAR = (0.8, 0.75, 6)
"""A meeting's bar on a room's row: height, opacity, label size."""
ATTENDEE_BAR = (0.6, 0.6, 5)
"""A meeting's bar on an attendee's row: thinner, over their free time."""
LABEL_PAD = 2.0
"""Points between a bar's label and the bar's edge."""
MIN_LABEL_FONT = 3.0
"""The smallest font a label is shrunk to when it fits neither in nor beside its bar."""
Bar = tuple[int, int, int, str, bool]
"""A meeting on a timeline row: ``(row, start, duration, label, breaks a rule)``."""


def problems(
    instance: MeetingSchedulingInstance, entries: list[tuple[int, int, int]]
) -> list[list[str]]:
    """For each ``(meeting, room, start)`` entry, the rules it breaks (short phrases)."""
    found: list[list[str]] = [[] for _ in entries]
    seen: dict[int, int] = {}
    for index, (meeting, room, start) in enumerate(entries):
        spec = instance.meetings[meeting]
        end = start + spec.duration
        if meeting in seen:
            found[index].append("scheduled twice")
        seen[meeting] = index
        if (start - instance.day_start) % instance.slot or start < instance.day_start:
            found[index].append("off the grid")
        if end > instance.day_end:
            found[index].append("ends after the day")
        if instance.rooms[room] < len(spec.attendees):
            found[index].append(f"room seats {instance.rooms[room]}")
        for attendee in spec.attendees:
            if not any(a <= start and end <= b for a, b in instance.availability[attendee]):
                found[index].append(f"attendee {attendee} unavailable")
        for other, (meeting2, room2, start2) in enumerate(entries[:index]):
            end2 = start2 + instance.meetings[meeting2].duration
            if not (start < end2 and start2 < end):
                continue
            if room2 == room:
                found[index].append(f"room clash with m{meeting2}")
                found[other].append(f"room clash with m{meeting}")
            shared = set(spec.attendees) & set(instance.meetings[meeting2].attendees)
            if shared:
                found[index].append(f"attendee {min(shared)} also in m{meeting2}")
                found[other].append(f"attendee {min(shared)} also in m{meeting}")
    return found


def draw(
    figure: Figure, instance: MeetingSchedulingInstance, schedule: np.ndarray | None, partial: bool
) -> None:
    rows = [] if schedule is None else [tuple(int(x) for x in row) for row in schedule]
    entries = [
        (m, r, s) for m, r, s in rows if 0 <= m < instance.n_meetings and 0 <= r < instance.n_rooms
    ]
    issues = problems(instance, entries)
    rooms_axes, people_axes = two_panels(figure, (instance.n_rooms, instance.n_attendees), 0.35)
    for axes in (rooms_axes, people_axes):
        axes.set_xlim(instance.day_start, instance.day_end)
    room_bars: list[Bar] = []
    for (meeting, room, start), found in zip(entries, issues, strict=True):
        spec = instance.meetings[meeting]
        label = f"m{meeting} ({len(spec.attendees)})" + (f": {found[0]}" if found else "")
        room_bars.append((room, start, spec.duration, label, bool(found)))
    _meeting_bars(rooms_axes, room_bars, ROOM_BAR)
    rooms_axes.set_yticks(range(instance.n_rooms))
    rooms_axes.set_yticklabels(
        [f"room {r} ({c})" for r, c in enumerate(instance.rooms)], fontsize=6
    )
    rooms_axes.set_ylim(instance.n_rooms - 0.5, -0.5)
    scheduled = {m for m, _, _ in entries}
    left_out = [m for m in range(instance.n_meetings) if m not in scheduled]
    broken = sum(1 for found in issues if found)
    rooms_axes.set_title(
        f"{len(entries)} meetings placed"
        + (f", {broken} breaking a rule (red)" if broken else "")
        + (f"; not scheduled: {left_out}" if left_out and not partial else ""),
        fontsize=8,
        color=MISTAKE if broken else "black",
    )
    for attendee, intervals in enumerate(instance.availability):
        people_axes.broken_barh(
            [(a, b - a) for a, b in intervals], (attendee - 0.45, 0.9), facecolors=FREE
        )
    attendee_bars: list[Bar] = []
    for (meeting, _, start), found in zip(entries, issues, strict=True):
        spec = instance.meetings[meeting]
        for attendee in spec.attendees:
            clash = any(f"attendee {attendee} " in phrase for phrase in found)
            attendee_bars.append((attendee, start, spec.duration, f"m{meeting}", clash))
    _meeting_bars(people_axes, attendee_bars, ATTENDEE_BAR)
    people_axes.set_yticks(range(instance.n_attendees))
    people_axes.set_yticklabels([f"attendee {a}" for a in range(instance.n_attendees)], fontsize=6)
    people_axes.set_ylim(instance.n_attendees - 0.5, -0.5)
    people_axes.set_title(
        "attendees: free time green, their meetings blue, conflicts red", fontsize=8
    )
    ticks = list(range(instance.day_start, instance.day_end + 1, 60))
    for axes in (rooms_axes, people_axes):
        axes.set_xticks(ticks)
        axes.set_xticklabels([f"{t // 60:02d}:{t % 60:02d}" for t in ticks], fontsize=6)
        axes.grid(axis="x", color="#eeeeee")
        axes.set_axisbelow(True)


def _meeting_bars(axes: Axes, bars: list[Bar], style: tuple[float, float, int]) -> None:
    """Each meeting's ``(row, start, duration, label, bad)`` as a bar on a timeline row, red
    when it breaks a rule, with its label never cut by a bar's edge: inside the bar where it
    fits, else beside it (right, then left) where the row is free, else shortened (the rule
    it breaks, then the attendee count, left out; the picture's attendee rows still show
    clashes in red), at last in a smaller font. The axes' x limits must be set. ``style`` is
    :data:`ROOM_BAR` or :data:`ATTENDEE_BAR`."""
    height, alpha, font = style
    renderer = axes.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    left, right = axes.get_xlim()
    per_pixel = (right - left) / axes.get_window_extent(renderer).width  # minutes
    pad = renderer.points_to_pixels(LABEL_PAD) * per_pixel
    for row, start, duration, _, bad in bars:
        axes.broken_barh(
            [(start, duration)],
            (row - height / 2, height),
            facecolors=MISTAKE if bad else PLAIN,
            edgecolors="black",
            alpha=alpha,
        )
    for index, (row, start, duration, label, _) in enumerate(bars):
        end = start + duration
        others = [(s, s + d) for i, (r, s, d, _, _) in enumerate(bars) if r == row and i != index]
        inner = min([s for s, _ in others if start <= s < end] + [end]) - start  # uncovered
        after = min([max(s, end) for s, e in others if e > end] + [right])  # free up to
        before = max([min(e, start) for s, e in others if s < start] + [left])  # free from
        text = axes.text(start + pad, row, label, fontsize=font, va="center", clip_on=True)
        # The whole label, then without the rule it breaks, then the meeting alone: inside
        # the bar, else beside it where the row is free; at last the meeting alone, shrunk.
        for words in dict.fromkeys((label, label.split(":")[0], label.split(" ")[0])):
            text.set_text(words)
            wide = text.get_window_extent(renderer).width * per_pixel + 2 * pad
            if wide <= inner:
                break
            if after - end >= wide:
                text.set_x(end + pad)
                break
            if start - before >= wide:
                text.set(x=start - pad, ha="right")
                break
        else:
            text.set_fontsize(max(MIN_LABEL_FONT, font * max(inner, pad) / wide))
