"""Hamiltonian Cycle (path planning, maximise the number of vertices on a simple cycle)."""

from npgym.tasks.hamiltonian_cycle.generator import HamiltonianCycleConfig
from npgym.tasks.hamiltonian_cycle.instance import HamiltonianCycleInstance
from npgym.tasks.hamiltonian_cycle.task import HamiltonianCycleTask

__all__ = ["HamiltonianCycleConfig", "HamiltonianCycleInstance", "HamiltonianCycleTask"]
