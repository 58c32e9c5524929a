"""Reference solvers for the npgym tasks, one module per task.

Every module works on plain numpy arrays and Python ints and imports nothing from the rest of
npgym, so the solvers can be used, tested and benchmarked on their own. The wheel ships this folder
as ``npgym.heuristics``.
"""
