"""Graph colouring (graph clustering, minimise the number of colours)."""

from npgym.tasks.graph_coloring.generator import GraphColoringConfig
from npgym.tasks.graph_coloring.instance import GraphColoringInstance
from npgym.tasks.graph_coloring.task import GraphColoringTask

__all__ = ["GraphColoringConfig", "GraphColoringInstance", "GraphColoringTask"]
