"""Subset Sum, maximum-cardinality variant (subset selection, maximise the number of indices)."""

from npgym.tasks.subset_sum.generator import SubsetSumConfig
from npgym.tasks.subset_sum.instance import SubsetSumInstance
from npgym.tasks.subset_sum.task import SubsetSumTask

__all__ = ["SubsetSumConfig", "SubsetSumInstance", "SubsetSumTask"]
