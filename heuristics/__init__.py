"""Reference solvers for the npgym tasks, one module per task.

Every module works on plain numpy arrays and Python ints and imports nothing from the rest of
npgym, so the solvers can be used, tested and benchmarked on their own. The wheel ships this folder
as ``npgym.heuristics``.

Besides the per-task modules: :mod:`~npgym.heuristics.result` (``SolverResult``, the one result
type of the exact solvers, and ``relative_gap``, the one definition of ``gap``),
:mod:`~npgym.heuristics.budget` (work budgets and the wall-clock safety net) and
:mod:`~npgym.heuristics.jit` (the shared numba ``njit``, public: the verifiers use it too).
"""
