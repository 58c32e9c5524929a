"""Generation and reference times per instance (median and worst over many seeds).

    python bench/reference_times.py                      # every task, 100 benchmark seeds
    python bench/reference_times.py --tasks TSP --n 20 --tier hard
    python bench/reference_times.py --scale 5 10 --n 3 --time-limit 20   # headroom sizes
    python bench/reference_times.py --tasks MeetingScheduling --difficulties 1.2 2.0 --n 10

For each task: time to generate an instance, to compute the heuristic reference, and to compute
the exact reference (heuristic + proof); the share of exact references proven optimal; the mean
gap of the heuristic to the exact objective; and the median and worst ``Reference.gap`` (the
certified distance to the optimum, 0 when proven). ``--scale k`` multiplies the benchmark tier's
size fields by k (capped at the generator's limits, which the table reports) to measure how the
references hold up above the published tiers; ``--difficulties d ...`` draws at those difficulty
knob values instead of the tier. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from typing import Any

from pydantic import ValidationError

import npgym

SIZE_FIELDS = {
    "TSP": ("n_min", "n_max"),
    "MaxClique": ("n_min", "n_max", "clique_min", "clique_max"),
    "MaxIndependentSet": ("n_min", "n_max", "set_min", "set_max"),
    "GraphColoring": ("n_min", "n_max"),
    "MeetingScheduling": (
        "meetings_min",
        "meetings_max",
        "attendees_min",
        "attendees_max",
        "rooms_min",
        "rooms_max",
    ),
    "HamiltonianCycle": ("n_min", "n_max"),
    "SubsetSum": ("n_min", "n_max", "solution_size_min", "solution_size_max"),
    "SetCover": ("universe_size_min", "universe_size_max", "subsets_min", "subsets_max"),
    "Knapsack": ("items_min", "items_max", "planted_min", "planted_max"),
    "MinBisection": ("n_min", "n_max", "traitors", "double_agents"),
}
"""The benchmark config fields that ``--scale`` multiplies."""


def scaled_config(task_name: str, scale: float) -> tuple[dict[str, Any], str]:
    """The benchmark config with its size fields times ``scale``, each lowered to its field's
    maximum when the generator refuses it; and a note naming the capped fields."""
    task = npgym.get_task(task_name)
    base = task.config("benchmark").model_dump()
    config = {**base, **{f: round(base[f] * scale) for f in SIZE_FIELDS[task_name]}}
    capped = []
    for field in SIZE_FIELDS[task_name]:
        limit = type(task.config("benchmark")).model_fields[field].metadata
        for item in limit:
            maximum = getattr(item, "le", None)
            if maximum is not None and config[field] > maximum:
                config[field] = maximum
                capped.append(f"{field}={maximum}")
    try:
        task.config("benchmark", overrides=config)
    except ValidationError as error:
        raise SystemExit(f"{task_name} x{scale}: {error}") from error
    return config, ", ".join(capped)


def measure(
    task_name: str,
    tier: str,
    count: int,
    time_limit: float | None,
    scale: float | None = None,
    difficulty: float | None = None,
) -> dict[str, Any]:
    """Timings and quality figures of one task over ``count`` seeds (at ``difficulty`` when given,
    else at ``tier``)."""
    task = npgym.get_task(task_name)
    config, note = scaled_config(task_name, scale) if scale else (None, "")
    limit = time_limit or 60.0
    task.reference(task.generate(10**6, tier="easy"))  # compile kernels outside the timings
    generation, heuristic, exact, gaps, certified, proven = [], [], [], [], [], 0
    deadline_hits = 0
    for seed in range(count):
        started = time.perf_counter()
        if difficulty is None:
            instance = task.generate(seed, tier=tier, overrides=config)
        else:
            instance = task.generate(seed, difficulty=difficulty, overrides=config)
        generation.append(time.perf_counter() - started)
        started = time.perf_counter()
        quick = task.solve(instance, exact=False, time_limit=limit)
        heuristic.append(time.perf_counter() - started)
        started = time.perf_counter()
        best = task.solve(instance, exact=True, time_limit=limit)
        exact.append(time.perf_counter() - started)
        proven += best.proven_optimal
        deadline_hits += "safety net" in best.solver
        if best.gap is not None:
            certified.append(best.gap)
        if quick.objective is not None and best.objective:
            gaps.append(abs(quick.objective - best.objective) / best.objective)
    open_gaps = [gap for gap in certified if gap > 0]
    return {
        "gen_median_ms": 1e3 * statistics.median(generation),
        "heur_median_ms": 1e3 * statistics.median(heuristic),
        "exact_median_ms": 1e3 * statistics.median(exact),
        "exact_worst_ms": 1e3 * max(exact),
        "exact_total_s": sum(exact),
        "proven": proven / count,
        "heuristic_gap": statistics.mean(gaps) if gaps else 0.0,
        "gap_median_unproven": statistics.median(open_gaps) if open_gaps else 0.0,
        "gap_worst": max(certified) if certified else 0.0,
        "deadline_hits": deadline_hits,
        "note": note,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", default=npgym.list_tasks())
    parser.add_argument("--tier", default="benchmark", choices=npgym.TIERS)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--scale", type=float, nargs="*", default=None)
    parser.add_argument("--difficulties", type=float, nargs="*", default=None)
    args = parser.parse_args()
    print(
        f"| task | scale | gen median ms | heuristic median ms | exact median ms | exact worst ms "
        f"| exact total s ({args.n}) | proven | heuristic gap | median gap (unproven) "
        f"| worst gap | safety net | capped |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for task_name in args.tasks:
        for scale, difficulty in itertools.product(
            args.scale or [None], args.difficulties or [None]
        ):
            row = measure(task_name, args.tier, args.n, args.time_limit, scale, difficulty)
            level = f"{scale or 1:g}x" + ("" if difficulty is None else f" d={difficulty:g}")
            print(
                f"| {task_name} | {level} | {row['gen_median_ms']:.2f} "
                f"| {row['heur_median_ms']:.2f} | {row['exact_median_ms']:.1f} "
                f"| {row['exact_worst_ms']:.1f} | {row['exact_total_s']:.1f} | {row['proven']:.0%} "
                f"| {row['heuristic_gap']:.2%} | {row['gap_median_unproven']:.2%} "
                f"| {row['gap_worst']:.2%} | {row['deadline_hits']} | {row['note']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
