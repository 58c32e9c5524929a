"""Mechanics shared by the per-task test files.

Each ``tests/test_<task>.py`` keeps its own hand-checked instances and expected values; the
checks that read the same for every task (a verdict's three fields, an unproven reference's gap,
a tier's sizes, a kernel against its Python twin) live here once and take those values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

import npgym
from npgym import Reference, Task


def int64s(values: Iterable[Any]) -> np.ndarray:
    """``values`` as the int64 array a numba kernel takes (answers, ids, weights)."""
    return np.array(values, dtype=np.int64)


def ints(kernel_result: Iterable[Any]) -> tuple[int, ...]:
    """A kernel's result tuple as plain ints, comparable with its Python twin's."""
    return tuple(int(value) for value in kernel_result)


def assert_kernel_matches_twin(
    kernel: Callable[..., Any], twin: Callable[..., tuple[int, ...]], *args: Any
) -> None:
    """The numba ``kernel`` and its pure-Python ``twin`` return the same result for ``args``: the
    kernel gets each list as an int64 array, the twin each array as nested lists, and both get
    any other value as it is."""
    kernel_args = [int64s(arg) if isinstance(arg, list) else arg for arg in args]
    twin_args = [arg.tolist() if isinstance(arg, np.ndarray) else arg for arg in args]
    assert ints(kernel(*kernel_args)) == twin(*twin_args)


def random_adjacency(rng: np.random.Generator, n: int, density: float) -> np.ndarray:
    """A symmetric boolean adjacency matrix of G(n, density), no self-loops."""
    upper = np.triu(rng.random((n, n)) < density, 1)
    return upper | upper.T


@st.composite
def graphs_and_vertex_lists(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    """A graph of 1 to 8 vertices and a vertex list for it: any ids (repeats and ids outside the
    graph included) or distinct valid ones."""
    n = draw(st.integers(1, 8))
    bits = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    upper = np.triu(np.array(bits, dtype=np.bool_).reshape(n, n), 1)
    ids = draw(
        st.lists(st.integers(-2, n + 1), max_size=n + 3)
        | st.lists(st.integers(0, n - 1), unique=True, max_size=n)
    )
    return upper | upper.T, ids


def random_sizes(rng: np.random.Generator, count: int, sizes: tuple[int, int]) -> Iterator[int]:
    """``count`` instance sizes drawn from ``rng`` in ``[low, high)``; the caller draws each
    instance from ``rng`` before the next size is drawn."""
    for _ in range(count):
        yield int(rng.integers(*sizes))


def random_graphs(
    rng: np.random.Generator, count: int, sizes: tuple[int, int]
) -> Iterator[np.ndarray]:
    """``count`` random graphs from ``rng``, each with n in ``[low, high)`` vertices and its own
    density in [0, 1); the caller may draw from ``rng`` between them."""
    for n in random_sizes(rng, count, sizes):
        yield random_adjacency(rng, n, float(rng.random()))


def pinned(**sizes: int) -> dict[str, int]:
    """Config fields that pin each named range to one value: ``pinned(n=8)`` is
    ``{"n_min": 8, "n_max": 8}``."""
    return {f"{name}_{end}": value for name, value in sizes.items() for end in ("min", "max")}


def assert_chance_can_beat_the_plant(
    task: Task[Any, Any], overrides: dict[str, Any], planted: int, seeds: int = 10
) -> None:
    """The planted structure (of size ``planted``) is a bound, not the answer: every optimum of
    the instances drawn with ``overrides`` for seeds 0 to ``seeds - 1`` reaches it, and on some
    seed the random edges make a larger one."""
    optima = [
        task.reference(task.generate(seed, overrides=overrides)).objective for seed in range(seeds)
    ]
    assert min(optima) >= planted and max(optima) > planted, optima


def assert_verdict(
    task: Task[Any, Any],
    instance: Any,
    answer: object,
    expected: tuple[bool, object, str],
) -> None:
    """``task.verify`` gives ``answer`` exactly the expected (feasible, objective, reason)."""
    verdict = task.verify(instance, answer)
    assert (verdict.feasible, verdict.objective, verdict.reason) == expected


def assert_exact_reference(
    task: Task[Any, Any], instance: Any, objective: object, solutions: list[Any]
) -> Reference:
    """The reference of a hand-checked instance: proven by the exact solver, with the known
    optimum and one of the known optimal solutions. Returns it for further checks."""
    reference = task.reference(instance)
    assert reference.proven_optimal and reference.method == "exact"
    assert reference.objective == objective and reference.solution in solutions, reference
    return reference


def assert_rewards(task: Task[Any, Any], instance: Any, expected: dict[str, object]) -> None:
    """Each completion scores exactly its expected reward (a value may be ``pytest.approx``)."""
    assert {text: task.score(instance, text).reward for text in expected} == expected


def assert_unproven_reference(task: Task[Any, Any], instance: Any, reference: Reference) -> None:
    """A reference cut short by its time limit: no proof, method "heuristic", the gap is the
    distance from its objective to its bound relative to the objective, and its solution
    verifies to its objective. Which side of the objective the bound lies on is the caller's
    check (it depends on the task's sense)."""
    if reference.proven_optimal:
        pytest.fail(
            "the reference proved optimality in its time limit; the test needs a harder one"
        )
    assert reference.method == "heuristic"
    assert reference.objective is not None and reference.bound is not None
    assert reference.gap == pytest.approx(
        abs(reference.bound - reference.objective) / reference.objective
    )
    assert task.verify(instance, reference.solution).objective == reference.objective


def solved_twice(
    task: Task[Any, Any], instance: Any, exact: bool = True, time_limit: float = 60.0
) -> Reference:
    """``task.solve`` on ``instance``, after checking that solving its JSON round trip gives the
    same reference (a reference depends on the instance alone, not on the run)."""
    first = task.solve(instance, exact=exact, time_limit=time_limit)
    again = task.solve(task.from_json(instance.to_json()), exact=exact, time_limit=time_limit)
    assert first == again
    return first


def assert_exact_references_are_deterministic(task: Task[Any, Any], seed: int = 7) -> None:
    """On every tier the exact reference is the same solved twice (the second time from the
    instance's JSON), and its solution, a set, is listed in increasing order."""
    for tier in npgym.TIERS:
        first = solved_twice(task, task.generate(seed, tier=tier))
        assert first.solution == sorted(first.solution)


def tier_instances(task: Task[Any, Any], tier: str, seeds: int) -> Iterator[tuple[Any, Any]]:
    """The tier's config with each of its instances for seeds 0 to ``seeds - 1``, after checking
    that the instance's size ``n`` lies within the config's ``n_min`` and ``n_max``."""
    config = task.tiers[tier]
    for seed in range(seeds):
        instance = task.generate(seed, tier=tier)
        assert config.n_min <= instance.n <= config.n_max
        yield config, instance


def assert_prompt_has_lines(task: Task[Any, Any], instance: Any, lines: Iterable[str]) -> str:
    """Each of ``lines`` is a whole line inside the instance's prompt; returns the prompt."""
    prompt = task.prompt(instance)
    for line in lines:
        assert f"\n{line}\n" in prompt, line
    return prompt


def assert_prompt_lists_neighbours(task: Task[Any, Any], instance: Any) -> str:
    """The prompt has a line ``v: u, w`` (or ``v: none``) for every vertex; returns the prompt."""
    lines = [
        f"{vertex}: {', '.join(map(str, neighbours)) if neighbours else 'none'}"
        for vertex, neighbours in enumerate(instance.neighbours())
    ]
    return assert_prompt_has_lines(task, instance, lines)


def assert_overrides_rejected(
    task: Task[Any, Any], tier: str, cases: dict[str, dict[str, object]]
) -> None:
    """Each set of overrides makes ``task.config(tier, ...)`` raise a ValueError whose text
    matches its key."""
    for message, overrides in cases.items():
        with pytest.raises(ValueError, match=message):
            task.config(tier, overrides=overrides)


def assert_rejected(make: Callable[..., object], message: str, **fields: object) -> None:
    """``make(**fields)`` raises a ValueError whose text matches ``message``."""
    with pytest.raises(ValueError, match=message):
        make(**fields)
