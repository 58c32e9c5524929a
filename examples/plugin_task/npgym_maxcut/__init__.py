"""An npgym plug-in: the MaxCut task, registered through the ``npgym.tasks`` entry point."""

from npgym_maxcut.task import MaxCutConfig, MaxCutInstance, MaxCutTask

__all__ = ["MaxCutConfig", "MaxCutInstance", "MaxCutTask"]
