"""Simulate the self-play loop on CPU: a scripted author writes problems, a scripted solver
solves what the curriculum serves, and every admission is checked independently.

The loop is the real one: a journal-backed :class:`npgym.selfplay.SelfPlayPool` (tasks
Knapsack and SubsetSum) attached to an :class:`npgym.curriculum.AdaptiveCurriculum` (Knapsack),
served by a :class:`npgym.selfplay.serving.SelfPlayCurriculum` (``pool_ratio`` 0.5), every
answer scored by npgym. Each step the author makes one offer, in a fixed cycle of kinds:

- ``correct``: a Knapsack instance of the author's current size on which the greedy is not
  optimal (the author searches random draws for one; it should be admitted);
- ``incorrect``: malformed JSON, a negative weight, or more items than the cap (refused);
- ``duplicate``: an admitted instance again, its fields reordered (refused);
- ``benchmark``: a copy of an NP-Bench SubsetSum instance, exact or relabelled and rescaled,
  or of a Knapsack one (over the cap) (refused);
- ``stream``: an instance of the generator's stream, or one the curriculum served (refused);
- ``trivial``: a Knapsack whose capacity holds every item, so greedy is optimal (refused);

then the solver answers ``--batch`` forward items. It passes an item of ``n`` items with
probability ``sigmoid((skill - n) / temperature)`` (it answers the reference's optimal
selection; else the optimal selection less one item, feasible and worse). The author follows
SvS's signal: when its latest rated entry's pass rate is above the band it writes one item
more, below it one fewer.

It reports the offers per kind and reason, the pool's size, the solver's pass rate in the final
window (all forward items, pool items and generated ones) against the band, and whether two
runs with the same seed gave the same pool journal bytes, draws and counts. Exit status 1 on a
leak (an admitted instance that is NP-Bench's, a relabelling of one, the stream's or the
curriculum's), a wrongly admitted instance (any kind but ``correct``, unproven, without its
certificate, trivial, or a duplicate), a final-window pass rate outside the band, or a
difference between the two runs.

    python bench/selfplay_sim.py            # 240 steps
    python bench/selfplay_sim.py --short    # CI: 60 steps, a 200-seed stream
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import npgym
from npgym import certificates
from npgym.config import TIERS
from npgym.curriculum import AdaptiveCurriculum
from npgym.datasets import BENCH_SIZE, DatasetSpec, benchmark_fingerprints, drawn
from npgym.families.invert import greedy_objective
from npgym.records import load_row
from npgym.selfplay import SelfPlayPool, relabelling_key
from npgym.selfplay.serving import SelfPlayCurriculum

TASK = "Knapsack"
COPIED = "SubsetSum"
"""The task whose NP-Bench instances are small enough to be written (copies are refused)."""
BAND = (0.3, 0.7)
KINDS = (
    "correct",
    "correct",
    "correct",
    "incorrect",
    "duplicate",
    "benchmark",
    "stream",
    "trivial",
)
"""One cycle of the author's offers."""
SIZE_CAP = 40
"""Knapsack's Invert size cap: the author writes between 4 and this many items."""


@dataclass
class Run:
    """What one run of the loop produced."""

    offers: Counter[tuple[str, str]] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    reports: list[tuple[str, bool]] = field(default_factory=list)
    draws: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    pool_size: int = 0
    journal_sha256: str = ""
    seconds: float = 0.0


def _answer(fields: dict[str, Any]) -> str:
    return "I wrote this one.\nAnswer: " + json.dumps(fields)


def _knapsack(rng: np.random.Generator, n: int) -> dict[str, Any]:
    weights = rng.integers(5, 100, n).tolist()
    values = rng.integers(5, 100, n).tolist()
    return {"weights": weights, "values": values, "capacity": int(sum(weights) // 2)}


def _hard_knapsack(rng: np.random.Generator, n: int) -> dict[str, Any]:
    """A random Knapsack of ``n`` items on which the greedy is not optimal (the author's own
    search: it may use npgym's checks before it writes)."""
    task = npgym.get_task(TASK)
    while True:
        fields = _knapsack(rng, n)
        instance = task.instance_type.model_validate(fields)
        greedy, optimum = greedy_objective(task, instance), task.reference(instance).objective
        if greedy is not None and optimum is not None and greedy < optimum:
            return fields


def _fields(instance: Any) -> dict[str, Any]:
    canonical = set(instance.canonical_fields)
    fields: dict[str, Any] = json.loads(instance.model_dump_json(include=canonical))
    return fields


class Author:
    """The scripted author: one offer per step, in the cycle :data:`KINDS`."""

    def __init__(self, seed: int, benchmark: dict[str, list[Any]]) -> None:
        self.rng = np.random.default_rng(seed)
        self.size = 10
        self.benchmark = benchmark
        self.admitted: list[dict[str, Any]] = []
        self.served: list[dict[str, Any]] = []

    def write(self, step: int, stream_seeds: int) -> tuple[str, str, str]:
        """The kind, env id and completion of this step's offer."""
        kind = KINDS[step % len(KINDS)]
        turn = step // len(KINDS)
        env = f"npgym/{TASK}-easy"
        if kind == "correct":
            return kind, env, _answer(_hard_knapsack(self.rng, self.size))
        if kind == "incorrect":
            broken = _knapsack(self.rng, self.size)
            if turn % 3 == 0:
                return kind, env, "Answer: " + json.dumps(broken)[:-2]
            if turn % 3 == 1:
                broken["weights"][0] = -broken["weights"][0]
                return kind, env, _answer(broken)
            return kind, env, _answer(_knapsack(self.rng, SIZE_CAP + 1))
        if kind == "duplicate" and self.admitted:
            copy = self.admitted[turn % len(self.admitted)]
            return kind, env, _answer(dict(reversed(list(copy.items()))))
        if kind == "benchmark" or kind == "duplicate":
            kind = "benchmark"
            which = turn % 3
            if which == 2:
                copy = _fields(self.benchmark[TASK][turn % len(self.benchmark[TASK])])
                return kind, env, _answer(copy)
            copy = _fields(self.benchmark[COPIED][turn % len(self.benchmark[COPIED])])
            if which == 1:  # relabelled and rescaled: the same problem
                copy = {
                    "numbers": [3 * x for x in reversed(copy["numbers"])],
                    **{"target": 3 * copy["target"]},
                }
            return kind, f"npgym/{COPIED}-easy", _answer(copy)
        if kind == "stream":
            if turn % 2 and self.served:
                return kind, env, _answer(self.served[turn % len(self.served)])
            seed = int(self.rng.integers(stream_seeds))
            tier = TIERS[turn % 2]  # easy and medium are within the cap
            return kind, env, _answer(_fields(npgym.get_task(TASK).generate(seed, tier=tier)))
        assert kind == "trivial"
        easy = _knapsack(self.rng, self.size)
        easy["capacity"] = sum(easy["weights"])
        return kind, env, _answer(easy)

    def follow(self, pass_rate: float | None) -> None:
        """SvS's signal: write larger problems when the solver passes too often, smaller when
        too rarely."""
        if pass_rate is None:
            return
        if pass_rate > BAND[1]:
            self.size = min(self.size + 1, SIZE_CAP)
        elif pass_rate < BAND[0]:
            self.size = max(self.size - 1, 4)


def _solver_answer(task: Any, row: dict[str, Any], passes: bool) -> str:
    solution = json.loads(row["reference"])["solution"]
    if not passes:
        solution = solution[1:]  # feasible, one item short of the optimum
    text: str = task.format_answer(solution)
    return text


def simulate(args: argparse.Namespace, journal: Path) -> Run:
    """One run of the loop (the module docstring), its pool kept in ``journal``."""
    started = time.perf_counter()
    run = Run()
    curriculum = AdaptiveCurriculum([TASK], target=BAND, seed=args.seed, window=16, start=0.1)
    pool = SelfPlayPool(
        [TASK, COPIED], journal=journal, stream_seeds=args.stream_seeds, curriculum=curriculum
    )
    serving = SelfPlayCurriculum(curriculum, pool, pool_ratio=0.5, seed=args.seed, band=BAND)
    benchmark = {
        name: [i for _, i in drawn(DatasetSpec(tasks=(name,), count=BENCH_SIZE), {})]
        for name in (TASK, COPIED)
    }
    author = Author(args.seed, benchmark)
    known = Known(benchmark, range(pool.stream_seed, pool.stream_seed + pool.stream_seeds))
    solver = np.random.default_rng(args.seed + 1)
    task = npgym.get_task(TASK)
    for step in range(args.steps):
        kind, env, completion = author.write(step, args.stream_seeds)
        admission = pool.offer(env, completion, step=step, model="scripted-author")
        run.offers[(kind, admission.reason)] += 1
        if admission.admitted and admission.entry is not None:
            run.problems += _check_admitted(admission.entry, kind, pool, curriculum, known)
            run.sizes.append(len(admission.entry.instance.weights))  # type: ignore[attr-defined]
            author.admitted.append(_fields(admission.entry.instance))
        for _ in range(args.batch):
            item = serving.next()
            row = dict(serving.record(item, "exact"))
            size = len(item.instance.weights)  # type: ignore[attr-defined]
            chance = 1.0 / (1.0 + math.exp(-(args.skill - size) / args.temperature))
            answer = _solver_answer(task, row, bool(solver.random() < chance))
            _, _, reference = load_row(row)
            passed = serving.report(item, task.score(item.instance, answer, reference))
            run.reports.append((item.key, passed))
            run.draws.append(f"{item.key}:{item.instance.fingerprint()}")
            if serving.entry(item) is None and len(author.served) < 64:
                author.served.append(_fields(item.instance))
        rated = [serving.pass_rate(i) for i in range(len(pool))]
        author.follow(next((rate for rate in reversed(rated) if rate is not None), None))
    run.counts = pool.counts()
    run.pool_size = len(pool)
    run.journal_sha256 = hashlib.sha256(journal.read_bytes()).hexdigest()
    run.seconds = time.perf_counter() - started
    return run


class Known:
    """What no admitted instance may be, computed here (not by the pool) once per task: NP-Bench's
    instances and their relabelling keys, and the generator's stream for the pool's seeds."""

    def __init__(self, benchmark: dict[str, list[Any]], seeds: range) -> None:
        self.benchmark = benchmark
        self.seeds = seeds
        self._relabelled: dict[str, set[str]] = {}
        self._stream: dict[str, set[str]] = {}

    def relabelled(self, task: str) -> set[str]:
        if task not in self._relabelled:
            self._relabelled[task] = {relabelling_key(i) for i in self.benchmark.get(task, [])}
        return self._relabelled[task]

    def stream(self, task: str) -> set[str]:
        if task not in self._stream:
            base = npgym.get_task(task)
            self._stream[task] = {
                base.generate(seed, tier=tier).fingerprint()
                for seed in self.seeds
                for tier in TIERS
            }
        return self._stream[task]


def _check_admitted(
    entry: Any, kind: str, pool: SelfPlayPool, curriculum: AdaptiveCurriculum, known: Known
) -> list[str]:
    """Every reason this admission is wrong, checked independently of the pool's own checks."""
    problems = []
    where = f"pool entry {entry.index} ({kind})"
    if kind != "correct":
        problems.append(f"{where}: a {kind} instance was admitted")
    instance, reference, base = entry.instance, entry.reference, npgym.get_task(entry.task)
    if entry.fingerprint in benchmark_fingerprints([entry.task]):
        problems.append(f"{where}: LEAK, one of NP-Bench's instances")
    if relabelling_key(instance) in known.relabelled(entry.task):
        problems.append(f"{where}: LEAK, a relabelling of one of NP-Bench's instances")
    if entry.fingerprint in known.stream(entry.task):
        problems.append(f"{where}: LEAK, an instance of the generator's stream")
    if curriculum.issued(entry.fingerprint):
        problems.append(f"{where}: LEAK, an instance the curriculum served")
    if not reference.proven_optimal:
        problems.append(f"{where}: its reference is not proven optimal")
    if certificates.has_checker(entry.task):
        if reference.certificate is None:
            problems.append(f"{where}: no certificate")
        else:
            fields = json.loads(instance.to_json())
            checked = certificates.check(
                entry.task, fields, reference.solution, reference.certificate
            )
            if not checked.proven or checked.objective != reference.objective:
                problems.append(f"{where}: its certificate does not prove the reference")
    greedy = greedy_objective(base, instance)
    if greedy is None or base.ratio(greedy, reference.objective) >= 1.0:
        problems.append(f"{where}: trivial (the greedy is optimal)")
    if sum(e.fingerprint == entry.fingerprint for e in pool.entries()) != 1:
        problems.append(f"{where}: a duplicate")
    return problems


def _rate(reports: list[tuple[str, bool]]) -> float | None:
    return sum(passed for _, passed in reports) / len(reports) if reports else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="CI mode: 60 steps, 200 seeds")
    parser.add_argument("--steps", type=int, default=240)
    parser.add_argument("--batch", type=int, default=8, help="forward items per step")
    parser.add_argument("--stream-seeds", type=int, default=1000)
    parser.add_argument("--window", type=int, default=200, help="final window, in reports")
    parser.add_argument("--skill", type=float, default=22.0)
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.short:
        args.steps, args.stream_seeds, args.window = 60, 200, 160
    with tempfile.TemporaryDirectory() as folder:
        first = simulate(args, Path(folder) / "first.jsonl")
        second = simulate(args, Path(folder) / "second.jsonl")
    failures = list(first.problems)
    window = first.reports[-args.window :]
    pool_window = [r for r in window if r[0].startswith("selfplay/")]
    generated_window = [r for r in window if not r[0].startswith("selfplay/")]
    rate = _rate(window)
    held = rate is not None and BAND[0] <= rate <= BAND[1]
    if not held:
        failures.append(f"final-window pass rate {rate} outside the band {BAND}")
    same = (first.journal_sha256, first.draws, first.counts) == (
        second.journal_sha256,
        second.draws,
        second.counts,
    )
    if not same:
        failures.append("two runs with the same seed differ")
    summary = {
        "steps": args.steps,
        "forward_items_per_step": args.batch,
        "offers_by_kind_and_reason": {
            f"{kind} -> {reason}": count for (kind, reason), count in sorted(first.offers.items())
        },
        "pool_counts": first.counts,
        "pool_size": first.pool_size,
        "admitted_sizes": first.sizes,
        "band": BAND,
        "final_window_reports": len(window),
        "final_window_pass_rate": rate,
        "final_window_pool_pass_rate": _rate(pool_window),
        "final_window_generated_pass_rate": _rate(generated_window),
        "band_held": held,
        "deterministic": same,
        "journal_sha256": first.journal_sha256,
        "seconds_per_run": [round(first.seconds, 1), round(second.seconds, 1)],
        "failures": failures,
    }
    print(json.dumps(summary, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
