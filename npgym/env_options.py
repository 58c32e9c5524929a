"""What the options shared by the text and structured envs mean: the reference's time limit at
``gym.make`` and the instance a ``reset`` may be given (one module that both envs import, so
neither imports the other)."""

from __future__ import annotations

import math
from typing import Any

from npgym.instance import Instance
from npgym.task import Task


def check_reference_time_limit(seconds: float | None) -> float | None:
    """``seconds`` as a float when it is a positive finite number (``None``: the task's
    default); anything else is refused with a clear error at ``gym.make``."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"reference_time_limit must be a number of seconds, got {seconds!r}")
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(
            f"reference_time_limit must be a positive finite number of seconds, got {seconds!r}"
        )
    return float(seconds)


def given_instance(task: Task[Any, Any], options: dict[str, Any] | None) -> Instance | None:
    """The instance that ``reset(options={"instance": ...})`` asks an env to play, or None;
    a ``TypeError`` when it is not one of the task's."""
    given = (options or {}).get("instance")
    if given is not None and not isinstance(given, task.instance_type):
        raise TypeError(f"options['instance'] must be a {task.name} instance")
    return given
