"""Generation and reference times per instance (median and worst over many seeds).

    python bench/reference_times.py                      # every task, 100 benchmark seeds
    python bench/reference_times.py --tasks TSP --n 20 --tier hard

For each task: time to generate an instance, to compute the heuristic reference, and to compute
the exact reference (heuristic + proof); the share of exact references proven optimal; and the
mean gap of the heuristic to the exact objective. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import time

import npgym


def measure(task_name: str, tier: str, count: int, time_limit: float | None) -> dict[str, float]:
    """Timings and quality figures of one task over ``count`` seeds."""
    task = npgym.get_task(task_name)
    task.reference(task.generate(10**6, tier=tier))  # compile kernels outside the timings
    generation, heuristic, exact, gaps, proven = [], [], [], [], 0
    for seed in range(count):
        started = time.perf_counter()
        instance = task.generate(seed, tier=tier)
        generation.append(time.perf_counter() - started)
        started = time.perf_counter()
        quick = task.solve(instance, exact=False, time_limit=time_limit or 60.0)
        heuristic.append(time.perf_counter() - started)
        started = time.perf_counter()
        best = task.solve(instance, exact=True, time_limit=time_limit or 60.0)
        exact.append(time.perf_counter() - started)
        proven += best.proven_optimal
        if quick.objective is not None and best.objective:
            gaps.append(abs(quick.objective - best.objective) / best.objective)
    return {
        "gen_median_ms": 1e3 * statistics.median(generation),
        "heur_median_ms": 1e3 * statistics.median(heuristic),
        "exact_median_ms": 1e3 * statistics.median(exact),
        "exact_worst_ms": 1e3 * max(exact),
        "exact_total_s": sum(exact),
        "proven": proven / count,
        "heuristic_gap": statistics.mean(gaps) if gaps else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", default=npgym.list_tasks())
    parser.add_argument("--tier", default="benchmark", choices=npgym.TIERS)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--time-limit", type=float, default=None)
    args = parser.parse_args()
    print(
        f"| task | gen median ms | heuristic median ms | exact median ms | exact worst ms "
        f"| exact total s ({args.n}) | proven | heuristic gap |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for task_name in args.tasks:
        row = measure(task_name, args.tier, args.n, args.time_limit)
        print(
            f"| {task_name} | {row['gen_median_ms']:.2f} | {row['heur_median_ms']:.2f} "
            f"| {row['exact_median_ms']:.1f} | {row['exact_worst_ms']:.1f} "
            f"| {row['exact_total_s']:.1f} | {row['proven']:.0%} | {row['heuristic_gap']:.2%} |"
        )


if __name__ == "__main__":
    main()
