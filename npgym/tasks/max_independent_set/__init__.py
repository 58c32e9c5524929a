"""Maximum Independent Set (graph clustering, maximise the number of pairwise non-adjacent
vertices)."""

from npgym.tasks.max_independent_set.generator import MaxIndependentSetConfig
from npgym.tasks.max_independent_set.instance import MaxIndependentSetInstance
from npgym.tasks.max_independent_set.task import MaxIndependentSetTask

__all__ = ["MaxIndependentSetConfig", "MaxIndependentSetInstance", "MaxIndependentSetTask"]
