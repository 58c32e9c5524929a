"""0/1 Knapsack (subset selection, maximise the total value within the capacity)."""

from npgym.tasks.knapsack.generator import KnapsackConfig
from npgym.tasks.knapsack.instance import KnapsackInstance
from npgym.tasks.knapsack.task import KnapsackTask

__all__ = ["KnapsackConfig", "KnapsackInstance", "KnapsackTask"]
