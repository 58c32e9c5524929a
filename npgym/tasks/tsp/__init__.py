"""Traveling Salesman Problem (path planning, minimise tour length)."""

from npgym.tasks.tsp.generator import TSPConfig
from npgym.tasks.tsp.instance import TSPInstance
from npgym.tasks.tsp.task import TSPTask

__all__ = ["TSPConfig", "TSPInstance", "TSPTask"]
