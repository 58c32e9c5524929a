"""Composition of base instances, parallel and chained (see :mod:`npgym.families.compose`)."""

from npgym.families.compose import ComposeConfig, ComposeInstance, ComposeTask, compose_task

__all__ = ["ComposeConfig", "ComposeInstance", "ComposeTask", "compose_task"]
