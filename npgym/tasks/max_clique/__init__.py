"""Maximum Clique (graph clustering, maximise the number of pairwise adjacent vertices)."""

from npgym.tasks.max_clique.generator import MaxCliqueConfig
from npgym.tasks.max_clique.instance import MaxCliqueInstance
from npgym.tasks.max_clique.task import MaxCliqueTask

__all__ = ["MaxCliqueConfig", "MaxCliqueInstance", "MaxCliqueTask"]
