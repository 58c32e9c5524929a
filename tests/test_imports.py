"""Import cost: ``import npgym``, ``gym.make`` and scoring load none of the heavy optional stacks.

pyarrow (parquet export), matplotlib (plots), ray (distributed builds), scipy's solvers and
OR-Tools (exact references) load when a feature needs them. Each check runs in a fresh
interpreter, since this test process has imported everything already. numba itself imports the
bare ``scipy`` package to check its version, so only scipy's solver modules are counted.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "pyarrow",
    "matplotlib",
    "ray",
    "pandas",
    "scipy.optimize",
    "scipy.sparse",
    "ortools",
    "networkx",
    "torch",
    "datasets",
    "verifiers",  # npgym exports verifiers' taskset classes lazily (vf-eval npgym)
)


def _loaded_after(code: str) -> list[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return [name for name in HEAVY if name in modules]


def test_import_npgym_is_light() -> None:
    modules = _loaded_after("import npgym")
    assert not _heavy(modules)
    assert "numba" not in modules  # the kernels load with the first task


def test_gym_make_and_scoring_load_no_heavy_stack() -> None:
    code = """
import gymnasium as gym
import npgym
for name in npgym.list_tasks():
    gym.make(f"npgym/{name}-easy")
    task = npgym.get_task(name)
    instance = task.generate(0, tier="easy")
    score = task.score(instance, "Answer: [0, 1]", reference=1)
    assert score.reward is not None
"""
    assert not _heavy(_loaded_after(code))


def test_the_self_play_pool_loads_no_heavy_stack() -> None:
    """``import npgym.selfplay`` and an offer of a task without a relabelling key load none of
    the heavy stacks (networkx loads only for the NP-Bench check of the tasks that need it)."""
    code = """
import npgym.selfplay
pool = npgym.selfplay.SelfPlayPool(["Knapsack"], stream_seeds=2)
answer = 'Answer: {"weights": [1, 2], "values": [3, 4], "capacity": 3}'
assert pool.offer("npgym/Knapsack-easy", answer).reason == "trivial"
"""
    assert not _heavy(_loaded_after(code))


def test_the_check_catches_a_heavy_import() -> None:
    """The check can fail: a script that imports a heavy module is caught."""
    assert "scipy.optimize" in _heavy(_loaded_after("import scipy.optimize"))


def test_star_import_works_with_or_without_verifiers() -> None:
    """``from npgym import *`` lists verifiers' classes only where verifiers is installed (where
    ``vf-eval npgym`` looks for them); without it, the star import must not fail."""
    code = (
        "import importlib.util, json\n"
        "namespace = {}\n"
        "exec('from npgym import *', namespace)\n"
        "print(json.dumps([importlib.util.find_spec('verifiers') is not None,\n"
        "                  'NPGymTaskset' in namespace, 'get_task' in namespace]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    installed, exported, core = json.loads(result.stdout.strip().splitlines()[-1])
    assert core and exported == installed
