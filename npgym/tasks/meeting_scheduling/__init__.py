"""Meeting Scheduling (resource scheduling, maximise attendee participations)."""

from npgym.tasks.meeting_scheduling.generator import MeetingSchedulingConfig
from npgym.tasks.meeting_scheduling.instance import Meeting, MeetingSchedulingInstance
from npgym.tasks.meeting_scheduling.task import MeetingSchedulingTask

__all__ = [
    "Meeting",
    "MeetingSchedulingConfig",
    "MeetingSchedulingInstance",
    "MeetingSchedulingTask",
]
