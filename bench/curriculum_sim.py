"""Simulate a learner under the adaptive curriculum and under a fixed tier; plot both.

The simulated learner has one skill per task. It passes an item of difficulty ``d`` with
probability ``sigmoid((skill - d) / temperature)`` and its skill grows by ``learning_rate`` on
every pass, so it learns only where it sometimes succeeds. The curriculum is the real one
(:class:`npgym.curriculum.AdaptiveCurriculum`, real instances); the baseline draws every item at
the benchmark tier's difficulty. Writes ``curriculum_sim.json`` and ``curriculum_sim.png`` and
prints how close the curriculum's pass rate stays to its band, the final skills, and the
curriculum's overhead per ``next()`` + ``report()`` beside the cost of one exact reference.

    python bench/curriculum_sim.py --steps 3000 -o out/

``--pool`` measures the reference pool instead (:class:`npgym.reference_pool.ReferencePool`): a
GRPO-like loop at difficulty 1.5 draws ``--batch`` rows (with exact references), "generates" for
``--generation-seconds`` (a sleep: the GPU's time per batch, which the pool overlaps with its
reference work), then reports a simulated learner's results, so the frontier moves now and then.
It runs once without the pool and once with ``--workers`` workers and a prefetch depth of two
batches, checks that both gave the same rows byte for byte (exit 1 if not), and prints rows
delivered per wall-clock second, the time the trainer spent waiting for references and the
pool's counts (``waits``: how often the trainer found the reference it needed not ready).

    python bench/curriculum_sim.py --pool --batches 4 --batch 8 --generation-seconds 4
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import npgym
from npgym.curriculum import AdaptiveCurriculum
from npgym.integrations.curriculum import CurriculumPrefetch, curriculum_record
from npgym.reference_pool import ReferencePool

TASKS = ("TSP", "GraphColoring", "Knapsack")
BENCHMARK_DIFFICULTY = 0.8
BAND = (0.3, 0.7)


def _pass_probability(skill: float, difficulty: float, temperature: float) -> float:
    return 1.0 / (1.0 + math.exp(-(skill - difficulty) / temperature))


def simulate(steps: int, seed: int, temperature: float, learning_rate: float) -> dict:
    """Run the curriculum and the fixed-tier baseline side by side; return per-step traces."""
    rng = np.random.default_rng(seed)
    curriculum = AdaptiveCurriculum(list(TASKS), target=BAND, seed=seed, window=16, step=0.05)
    skill_curriculum = dict.fromkeys(TASKS, 0.3)
    skill_fixed = dict.fromkeys(TASKS, 0.3)
    trace: dict[str, list] = {"task": [], "difficulty": [], "passed": [], "fixed_passed": []}
    overhead = []
    for _ in range(steps):
        started = time.perf_counter()
        item = curriculum.next()
        issued = time.perf_counter()
        passed = rng.random() < _pass_probability(
            skill_curriculum[item.task], item.difficulty, temperature
        )
        before_report = time.perf_counter()
        curriculum.report(item, 2.0 if passed else -0.5)
        overhead.append((issued - started) + (time.perf_counter() - before_report))
        if passed:
            skill_curriculum[item.task] += learning_rate
        fixed_passed = rng.random() < _pass_probability(
            skill_fixed[item.task], BENCHMARK_DIFFICULTY, temperature
        )
        if fixed_passed:
            skill_fixed[item.task] += learning_rate
        trace["task"].append(item.task)
        trace["difficulty"].append(item.difficulty)
        trace["passed"].append(bool(passed))
        trace["fixed_passed"].append(bool(fixed_passed))
    return {
        "trace": trace,
        "final_skill_curriculum": skill_curriculum,
        "final_skill_fixed": skill_fixed,
        "stats": curriculum.stats(),
        "overhead_seconds": overhead,
    }


def _rolling(values: list[bool], width: int) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    kernel = np.ones(width) / width
    return np.convolve(array, kernel, mode="valid")


def _reference_seconds(task_name: str, difficulty: float, samples: int = 5) -> float:
    task = npgym.get_task(task_name)
    times = []
    for seed in range(samples):
        instance = task.generate(10_000 + seed, difficulty=difficulty)
        started = time.perf_counter()
        task.reference(instance)
        times.append(time.perf_counter() - started)
    return float(np.median(times))


POOL_DIFFICULTY = 1.5
"""Where the pool comparison runs: past the benchmark tier, where references cost the most."""


def trainer_loop(
    batches: int, batch: int, generation_seconds: float, pool: ReferencePool | None
) -> tuple[list[dict], float, float]:
    """A GRPO-like loop on the curriculum: draw a batch of rows (with exact references), sleep
    for the generation, report a simulated learner. Returns the rows, the wall seconds of the
    whole loop and those spent drawing rows (where the trainer waits for references)."""
    curriculum = AdaptiveCurriculum(
        list(TASKS), seed=0, start=POOL_DIFFICULTY, window=batch, step=0.05
    )
    prefetch = None if pool is None else CurriculumPrefetch(curriculum, pool, "exact")
    learner = np.random.default_rng(0)
    rows, drawing = [], 0.0
    started = time.perf_counter()
    for _ in range(batches):
        drawn = time.perf_counter()
        items = []
        for _ in range(batch):  # as a streaming dataset does: each row made as it is drawn
            items.append(curriculum.next())
            rows.append(curriculum_record(items[-1], "exact", prefetch))
        drawing += time.perf_counter() - drawn
        time.sleep(generation_seconds)
        for item in items:
            chance = _pass_probability(POOL_DIFFICULTY, item.difficulty, 0.05)
            curriculum.report(item, 2.0 if learner.random() < chance else -0.5)
    return rows, time.perf_counter() - started, drawing


def pool_comparison(args: argparse.Namespace) -> int:
    """Rows per second with and without the pool (see the module docstring); 1 if rows differ."""
    for name in TASKS:  # compile the kernels before either run
        task = npgym.get_task(name)
        task.reference(task.generate(0, difficulty=POOL_DIFFICULTY))
    plain, plain_seconds, plain_drawing = trainer_loop(
        args.batches, args.batch, args.generation_seconds, None
    )
    with ReferencePool(workers=args.workers, prefetch=2 * args.batch, tasks=TASKS) as pool:
        pool.start()  # a trainer starts its pool before the first step
        pooled, pooled_seconds, pooled_drawing = trainer_loop(
            args.batches, args.batch, args.generation_seconds, pool
        )
        stats = pool.stats.to_dict()
    rows = len(plain)
    print(
        f"difficulty {POOL_DIFFICULTY}, tasks {', '.join(TASKS)}, {args.batches} batches of "
        f"{args.batch} rows, {args.generation_seconds:g} s generation per batch\n"
    )
    print("| run | rows/s | wall s | waiting for rows s | pool waits |")
    print("|---|---|---|---|---|")
    print(
        f"| no pool | {rows / plain_seconds:.2f} | {plain_seconds:.1f} | {plain_drawing:.1f} | - |"
    )
    print(
        f"| pool ({args.workers} workers, prefetch {2 * args.batch}) "
        f"| {rows / pooled_seconds:.2f} | {pooled_seconds:.1f} | {pooled_drawing:.1f} "
        f"| {stats['waits']} of {rows} |"
    )
    print(f"\npool stats: {json.dumps(stats)}")
    if pooled != plain:
        print("FAIL: the pool changed the rows")
        return 1
    print("rows identical with and without the pool")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", action="store_true", help="measure the reference pool instead")
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--generation-seconds", type=float, default=4.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=0.08)
    parser.add_argument("--learning-rate", type=float, default=0.0005)
    parser.add_argument("-o", "--output", type=Path, default=Path("out"))
    args = parser.parse_args()
    if args.pool:
        return pool_comparison(args)
    result = simulate(args.steps, args.seed, args.temperature, args.learning_rate)
    trace = result["trace"]
    width = min(200, max(10, args.steps // 10))
    curriculum_rate = _rolling(trace["passed"], width)
    fixed_rate = _rolling(trace["fixed_passed"], width)
    settled = curriculum_rate[len(curriculum_rate) // 5 :]
    in_band = float(np.mean((settled >= BAND[0] - 0.05) & (settled <= BAND[1] + 0.05)))
    overhead = np.asarray(result["overhead_seconds"])
    generation = []
    for task_name in TASKS:
        task = npgym.get_task(task_name)
        started = time.perf_counter()
        for seed in range(50):
            task.generate(20_000 + seed, difficulty=0.5)
        generation.append((time.perf_counter() - started) / 50)
    reference = {name: _reference_seconds(name, 0.5) for name in TASKS}
    summary = {
        "steps": args.steps,
        "band": BAND,
        "rolling_window": width,
        "curriculum_mean_pass_rate": float(np.mean(trace["passed"])),
        "fixed_tier_mean_pass_rate": float(np.mean(trace["fixed_passed"])),
        "share_of_steps_in_band_after_warmup": in_band,
        "final_skill_curriculum": result["final_skill_curriculum"],
        "final_skill_fixed": result["final_skill_fixed"],
        "frontiers": result["stats"],
        "overhead_median_ms": float(np.median(overhead) * 1e3),
        "generation_median_ms": float(np.median(generation) * 1e3),
        "curriculum_only_ms": float((np.median(overhead) - np.median(generation)) * 1e3),
        "exact_reference_median_ms": {name: seconds * 1e3 for name, seconds in reference.items()},
    }
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "curriculum_sim.json").write_text(
        json.dumps({"summary": summary, "trace": trace}, indent=1)
    )
    _plot(trace, curriculum_rate, fixed_rate, width, args.output / "curriculum_sim.png")
    print(json.dumps(summary, indent=1))
    return 0


def _plot(
    trace: dict, curriculum_rate: np.ndarray, fixed_rate: np.ndarray, width: int, path: Path
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    steps = np.arange(len(trace["difficulty"]))
    for task_name in TASKS:
        mask = np.asarray(trace["task"]) == task_name
        top.plot(steps[mask], np.asarray(trace["difficulty"])[mask], label=task_name, lw=1)
    top.axhline(BENCHMARK_DIFFICULTY, color="grey", ls="--", lw=1, label="fixed tier (benchmark)")
    top.set_ylabel("difficulty")
    top.legend(loc="upper left", fontsize=8)
    x = np.arange(width - 1, width - 1 + len(curriculum_rate))
    bottom.plot(x, curriculum_rate, label="adaptive curriculum")
    bottom.plot(x, fixed_rate, label="fixed benchmark tier")
    bottom.axhspan(*BAND, color="green", alpha=0.1, label="target band")
    bottom.set_ylim(0, 1)
    bottom.set_ylabel(f"pass rate (rolling {width})")
    bottom.set_xlabel("step")
    bottom.legend(loc="upper left", fontsize=8)
    figure.suptitle("Simulated learner: adaptive curriculum vs fixed tier")
    figure.tight_layout()
    figure.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
