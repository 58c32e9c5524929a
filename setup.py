"""Package layout that pyproject.toml cannot express on its own.

The reference solvers live in the top-level ``heuristics/`` folder of the repository but ship
inside the wheel as ``npgym.heuristics`` (never as a bare ``heuristics`` module: a PyPI package of
that name exists). Task packages under ``npgym/tasks/`` are discovered automatically, so adding a
task needs no change here.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["npgym", "npgym.*"]), "npgym.heuristics"],
    package_dir={"npgym.heuristics": "heuristics"},
    # py.typed: PEP 561, the package's type hints are for users too; the digests of the official
    # NP-Bench versions, which eval compares every dataset with (npgym.npbench.certify)
    package_data={"npgym": ["py.typed", "npbench/digests/*.json"]},
)
