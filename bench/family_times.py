"""Speed of the task families at their hard tier: generation + reference, scoring, inverse checks.

    python bench/family_times.py                 # 10 seeds per family task
    python bench/family_times.py --n 3 --names Compose-Chain3 Invert-TSP

For each family task: the time to generate an instance and compute its reference, and the time
to score a completion (the reference answer and the greedy answer; the reference is computed
once per instance, as in training). For the inverse tasks also the checking time per answer at
the stated caps: the witness, a random instance of the stated size, and an oversized answer
(a 10^6-vertex or 10^5-number instance). For variants, per base task: the time to make a
variant and compute its reference, and to score its answer on the original. Prints markdown
tables (median and worst).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import npgym
from npgym.families import family_env_names
from npgym.instance import Instance
from npgym.results import Reference
from npgym.task import Task
from npgym.variants import variant


def _score_time(task: Task, instance: Instance, text: str, reference: Reference | None) -> float:
    """Seconds that ``task.score`` takes on one completion."""
    started = time.perf_counter()
    task.score(instance, text, reference)
    return time.perf_counter() - started


def measure(name: str, tier: str, count: int) -> dict[str, float]:
    """Generation + reference and scoring times of one family task over ``count`` seeds."""
    task = npgym.get_task(name)
    warm = task.generate(10**6, tier=tier)  # compile kernels outside the timings
    task.score(warm, task.format_answer(task.reference(warm).solution))
    build, score = [], []
    for seed in range(count):
        started = time.perf_counter()
        instance = task.generate(seed, tier=tier)
        reference = task.reference(instance)
        build.append(time.perf_counter() - started)
        for answer in (reference.solution, task.greedy_solution(instance)):
            text = task.format_answer(answer)
            score.append(_score_time(task, instance, text, reference))
    return {
        "build_median_ms": 1e3 * statistics.median(build),
        "build_worst_ms": 1e3 * max(build),
        "score_median_ms": 1e3 * statistics.median(score),
        "score_worst_ms": 1e3 * max(score),
    }


def variant_times(base: str, tier: str, count: int) -> dict[str, float]:
    """Variant-making + reference time and the time to score a variant's answer on the original
    (the reference of the original is computed before the timing, as in training)."""
    task = npgym.get_task(base)
    build, score = [], []
    for seed in range(-1, count):  # seed -1 only warms up the kernels
        original = task.generate(abs(seed) * 10**6 if seed < 0 else seed, tier=tier)
        task.reference(original)
        started = time.perf_counter()
        twin = variant(original, seed + 1)
        best = task.reference(twin.instance)
        made = time.perf_counter() - started
        text = task.format_answer(best.solution)
        started = time.perf_counter()
        twin.score_on_original(text)
        if seed >= 0:
            build.append(made)
            score.append(time.perf_counter() - started)
    return {
        "build_median_ms": 1e3 * statistics.median(build),
        "build_worst_ms": 1e3 * max(build),
        "score_median_ms": 1e3 * statistics.median(score),
        "score_worst_ms": 1e3 * max(score),
    }


def _oversized(base: str) -> str:
    if base in ("Knapsack",):
        return json.dumps({"weights": [1] * 100_000, "values": [1] * 100_000, "capacity": 1})
    if base == "SubsetSum":
        return json.dumps({"numbers": [1] * 100_000, "target": 1})
    if base == "TSP":
        return json.dumps({"distances": [[0] * 1000] * 1000})
    if base == "SetCover":
        return json.dumps({"universe_size": 10**6, "subsets": [[0]]})
    if base == "MeetingScheduling":
        meeting = {"attendees": [0], "duration": 30}
        return json.dumps(
            {
                "meetings": [meeting] * 10**5,
                "availability": [[[480, 1080]]],
                "rooms": [1],
                "slot": 30,
            }
        )
    return json.dumps({"n": 10**6, "edges": [[0, 1]]})


def inverse_checks(base: str, tier: str, count: int) -> dict[str, float]:
    """Per-answer checking times of ``Invert-<base>`` at the stated caps."""
    task = npgym.get_task(f"Invert-{base}")
    rng = np.random.default_rng(0)
    valid, oversized = [], []
    task.score(task.generate(10**6, tier=tier), "Answer: {}")
    for seed in range(count):
        instance = task.generate(seed, tier=tier)
        for answer in (task.reference(instance).solution, task.random_solution(instance, rng)):
            text = task.format_answer(answer)
            valid.append(_score_time(task, instance, text, None))
        text = "Answer: " + _oversized(base)
        oversized.append(_score_time(task, instance, text, None))
    return {
        "check_median_ms": 1e3 * statistics.median(valid),
        "check_worst_ms": 1e3 * max(valid),
        "oversized_worst_ms": 1e3 * max(oversized),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", nargs="*", default=family_env_names())
    parser.add_argument("--tier", default="hard", choices=npgym.TIERS)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--no-variants", dest="variants", action="store_false")
    args = parser.parse_args()
    print(f"Family tasks at tier {args.tier}, {args.n} seeds each.\n")
    print("| task | gen+ref median ms | gen+ref worst ms | score median ms | score worst ms |")
    print("|---|---|---|---|---|")
    for name in args.names:
        row = measure(name, args.tier, args.n)
        print(
            f"| {name} | {row['build_median_ms']:.1f} | {row['build_worst_ms']:.1f} "
            f"| {row['score_median_ms']:.2f} | {row['score_worst_ms']:.2f} |",
            flush=True,
        )
    if args.variants:
        print(
            "\n| variant of | variant+ref median ms | variant+ref worst ms | score on original "
            "median ms | worst ms |"
        )
        print("|---|---|---|---|---|")
        for base in npgym.list_tasks():
            row = variant_times(base, args.tier, args.n)
            print(
                f"| {base} | {row['build_median_ms']:.1f} | {row['build_worst_ms']:.1f} "
                f"| {row['score_median_ms']:.2f} | {row['score_worst_ms']:.2f} |",
                flush=True,
            )
    inverse = [name.removeprefix("Invert-") for name in args.names if name.startswith("Invert-")]
    if inverse:
        print("\n| inverse task | check median ms | check worst ms | oversized answer worst ms |")
        print("|---|---|---|---|")
        for base in inverse:
            row = inverse_checks(base, args.tier, args.n)
            print(
                f"| Invert-{base} | {row['check_median_ms']:.2f} | {row['check_worst_ms']:.2f} "
                f"| {row['oversized_worst_ms']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
