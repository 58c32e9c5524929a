"""How hard each tier and difficulty is for the shipped greedy baseline.

For every task and tier (or difficulty), over a run of seeds: the share of instances where
``task.greedy_solution`` is already optimal (as good as the reference) and the mean greedy
ratio (clipped to [0, 1]; an infeasible greedy answer counts 0), the share of references proven
and the median gap of the others, and generation and reference times (median and worst). The
reference is exact at the published tiers and, above the benchmark tier, the best one found
within ``--time-limit`` seconds (the heuristic reference where an exact solver fails; the
failures are listed).
``--distinct N`` also counts distinct fingerprints among N seeds of each easy tier.

    python bench/tier_difficulty.py --seeds 100
    python bench/tier_difficulty.py --seeds 20 --difficulties 0.8 1.2 2.0 --time-limit 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import npgym
from npgym.testing import greedy_ratio


def greedy_stats(
    task_name: str, seeds: range, *, tier: str | None, difficulty: float | None, time_limit: float
) -> dict[str, Any]:
    """Over ``seeds``: greedy-optimal share, mean greedy ratio, share of references proven,
    median ``Reference.gap`` of the unproven ones, and generation and reference times (median
    and worst, seconds)."""
    task = npgym.get_task(task_name)
    warm = task.generate(0, tier="easy")  # compile the kernels outside the timings
    task.reference(warm)
    task.verify(warm, task.greedy_solution(warm))
    optimal, ratios, proven = 0, [], 0
    generate_seconds: list[float] = []
    reference_seconds: list[float] = []
    open_gaps: list[float] = []
    failures: list[str] = []
    for seed in seeds:
        start = time.perf_counter()
        instance = task.generate(seed, tier=tier, difficulty=difficulty)
        generate_seconds.append(time.perf_counter() - start)
        start = time.perf_counter()
        try:
            reference = task.reference(instance, time_limit=time_limit)
        except Exception as error:  # an exact solver's bug must not stop the measurement
            failures.append(f"seed {seed}: {type(error).__name__}: {error}")
            reference = task.reference(instance, exact=False)
        reference_seconds.append(time.perf_counter() - start)
        proven += bool(reference.proven_optimal)
        if not reference.proven_optimal and reference.gap is not None:
            open_gaps.append(reference.gap)
        ratio = greedy_ratio(task, instance, reference)
        optimal += ratio >= 1.0
        ratios.append(ratio)
    count = len(ratios)
    return {
        "greedy_optimal": optimal / count,
        "mean_ratio": sum(ratios) / count,
        "proven": proven / count,
        "median_open_gap": statistics.median(open_gaps) if open_gaps else None,
        "generate_median": statistics.median(generate_seconds),
        "generate_worst": max(generate_seconds),
        "reference_median": statistics.median(reference_seconds),
        "reference_worst": max(reference_seconds),
        "exact_failures": failures,
    }


def distinct(task_name: str, tier: str, count: int) -> int:
    """How many distinct instances (by fingerprint) seeds ``0..count-1`` of a tier give."""
    task = npgym.get_task(task_name)
    return len({task.generate(seed, tier=tier).fingerprint() for seed in range(count)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", default=npgym.list_tasks())
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--difficulties", nargs="*", type=float, default=None)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--distinct", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    levels: list[tuple[str | None, float | None]] = (
        [(None, d) for d in args.difficulties]
        if args.difficulties
        else [(tier, None) for tier in npgym.TIERS]
    )
    results: dict[str, dict[str, Any]] = {}
    for task_name in args.tasks:
        for tier, difficulty in levels:
            key = f"{task_name}/{tier or difficulty}"
            stats = greedy_stats(
                task_name, seeds, tier=tier, difficulty=difficulty, time_limit=args.time_limit
            )
            if args.distinct and tier == "easy":
                stats["distinct"] = distinct(task_name, tier, args.distinct)
            results[key] = stats
            shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in stats.items()}
            print(key, json.dumps(shown), flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
