"""Minimum Bisection (graph partitioning, minimise the weight of the cut edges)."""

from npgym.tasks.min_bisection.generator import MinBisectionConfig
from npgym.tasks.min_bisection.instance import MinBisectionInstance
from npgym.tasks.min_bisection.task import MinBisectionTask

__all__ = ["MinBisectionConfig", "MinBisectionInstance", "MinBisectionTask"]
