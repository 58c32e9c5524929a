"""Scoring and loading speed, measured in one run on benchmark-tier instances.

    python -m bench.scoring            # all tables; exits 1 when a target is missed
    python -m bench.scoring --quick    # fewer repetitions

Targets (issue 27), CPU time per completion, the best of five runs, per task:

- ``score()`` on a distinct completion: at most :data:`DISTINCT_US` (3 us), for 16 completions
  whose reasoning and answers all differ;
- ``score_many`` on a GRPO group: at most :data:`REPEATED_US` (0.5 us) per repeated completion,
  for 16 completions whose reasoning differs and whose 4 answers repeat: the group's time less
  that of its first 4 completions (each answer once), over the 12 that repeat an answer;

each both with an ``Answer:`` marker (``Answer: [...]``) and without one (the list written
bare: a format failure). Then ``from_json`` and the part of it spent in the instance's own
validators (``from_json`` less the parse of a twin model with the same fields and no
validators), parsing throughput on long answers, the time to score 10 MB completions (only the
last 1 MiB is scanned) and the import time of ``import npgym`` and of ``gym.make`` (goals of
issue 10, printed: parsing at least 50 MB/s, a 10 MB completion under 1 s). Only public API is
used, so the script also runs against older trees (``PYTHONPATH=old-tree python -m
bench.scoring``) for before/after figures.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np
import pydantic

import npgym
from npgym import answer
from npgym.answer import extract_answer, parse_value

REASONING = "Let me work through the constraints one at a time and check each candidate. " * 30


DISTINCT_US = 3.0
"""Target: ``score()`` CPU microseconds per distinct completion."""
REPEATED_US = 0.5
"""Target: ``score_many`` CPU microseconds per completion that repeats an answer of its group."""
ANSWERS = 4
"""Distinct answers in the repeated group (each written by GROUP / ANSWERS completions)."""
GROUP = 16


def per_call_us(function: Callable[[], object], number: int) -> float:
    """Best of five runs of ``number`` calls, in CPU microseconds per call."""
    return min(timeit.repeat(function, number=number, repeat=5, timer=time.process_time)) / (
        number / 1e6
    )


def groups(task: npgym.Task, instance: npgym.Instance, marker: bool) -> tuple[list[str], ...]:
    """16 completions whose reasoning and answers all differ, and a GRPO-like group of 16 whose
    reasoning differs and whose 4 answers repeat; the answers after ``Answer:`` or bare."""
    rng = np.random.default_rng(0)
    answers = [task.format_answer(task.greedy_solution(instance))]
    answers += [task.format_answer(task.random_solution(instance, rng)) for _ in range(GROUP - 1)]
    if not marker:
        answers = [text.replace("Answer: ", "so it is ") for text in answers]
    distinct = [f"Attempt {index}: " + REASONING + answers[index] for index in range(GROUP)]
    repeated = [
        f"Attempt {index}: " + REASONING + answers[index % ANSWERS] for index in range(GROUP)
    ]
    return distinct, repeated


def task_row(name: str, number: int) -> tuple[str, list[str]]:
    """The task's line of the table and the targets it misses."""
    task = npgym.get_task(name)
    instance = task.generate(0, tier="benchmark")
    reference = task.reference(instance, exact=False)
    figures, misses = [], []
    for marker in (False, True):
        distinct, repeated = groups(task, instance, marker)
        scores = task.score_many(instance, distinct, reference)
        assert all(score.format_ok == marker for score in scores), name  # verified iff marked
        loop = per_call_us(
            lambda group=distinct: [task.score(instance, t, reference) for t in group], number
        )
        many = per_call_us(
            lambda group=repeated: task.score_many(instance, group, reference), number
        )
        once = per_call_us(
            lambda group=repeated[:ANSWERS]: task.score_many(instance, group, reference), number
        )
        repeat_us = (many - once) / (GROUP - ANSWERS)
        figures += [loop / GROUP, repeat_us]
        where = "with" if marker else "without"
        if loop / GROUP > DISTINCT_US:
            misses.append(f"{name} distinct {where} Answer: {loop / GROUP:.2f} us > {DISTINCT_US}")
        if repeat_us > REPEATED_US:
            misses.append(f"{name} repeated {where} Answer: {repeat_us:.2f} us > {REPEATED_US}")
    text = instance.to_json()
    twin = validator_free_twin(task.instance_type)
    json_us = per_call_us(lambda: task.from_json(text), max(number, 10))
    twin_us = per_call_us(lambda: twin.model_validate_json(text), max(number, 10))
    cells = " ".join(f"{figure:9.2f}" for figure in figures)
    return f"{name:18s} {cells} {json_us:12.1f} {json_us - twin_us:13.1f}", misses


def validator_free_twin(instance_type: type[pydantic.BaseModel]) -> type[pydantic.BaseModel]:
    """A model with ``instance_type``'s fields (types, constraints, defaults) and none of its
    validators: what reading the JSON costs before any check of the task's own."""
    fields: dict[str, Any] = {
        name: (field.annotation, field) for name, field in instance_type.model_fields.items()
    }
    config = pydantic.ConfigDict(frozen=True, extra="forbid")
    return pydantic.create_model(f"Twin{instance_type.__name__}", __config__=config, **fields)


def task_table(number: int) -> list[str]:
    """Print the per-task table (CPU us per completion); the targets missed."""
    print(
        f"CPU us per completion, best of 5; targets: distinct <= {DISTINCT_US}, "
        f"repeated (per completion repeating one of {ANSWERS} answers in a group of {GROUP}) "
        f"<= {REPEATED_US}"
    )
    print(f"{'':18s} {'no Answer: marker':^19s} {'with Answer:':^19s}")
    header = f"{'task':18s} {'distinct':>9s} {'repeated':>9s} {'distinct':>9s} {'repeated':>9s}"
    print(header + f" {'from_json us':>12s} {'validators us':>13s}")
    misses: list[str] = []
    for name in npgym.list_tasks():
        line, missed = task_row(name, number)
        print(line, flush=True)
        misses += missed
    return misses


def parse_throughput() -> None:
    rng = np.random.default_rng(0)
    flat = "Answer: [" + ", ".join(map(str, rng.permutation(10_000).tolist())) + "]"
    rows = rng.integers(0, 1000, size=(4_000, 3)).tolist()
    nested = "Answer: [" + ", ".join(f"[{a}, {b}, {c}]" for a, b, c in rows) + "]"
    fast = getattr(answer, "parse_value_fast", None)  # absent in trees before the scanner
    parsers = [("parse_value", parse_value)] + ([("parse_value_fast", fast)] if fast else [])
    for label, text in (("flat list", flat), ("list of lists", nested)):
        for parser_name, parser in parsers:
            rate = megabytes_per_second(parser, text)
            print(f"{parser_name:16s} {label:14s} {len(text) / 1e3:5.1f} kB: {rate:6.1f} MB/s")


def megabytes_per_second(parser: Callable[[str, int], object], text: str) -> float:
    """Throughput of extracting and parsing ``text`` (the cap raised to its length)."""
    limit = len(text)
    seconds = per_call_us(lambda: parser(extract_answer(text, limit), limit), 20) / 1e6
    return len(text) / seconds / 1e6


def long_completions() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, tier="benchmark")
    reference = task.reference(instance, exact=False)
    answer = task.format_answer(reference.solution)
    worst = 0.0
    for filler in ("x", "answer", "Answer ", "\u0130", "\\boxed{", "[1, "):
        text = filler * (10_000_000 // len(filler)) + answer
        started = time.perf_counter()
        task.score(instance, text, reference)
        worst = max(worst, time.perf_counter() - started)
    print(f"10 MB completion, slowest of 6 fillers: {worst * 1e3:.1f} ms")


def import_times(runs: int = 3) -> None:
    for label, code in (
        ("import npgym", "import npgym"),
        ("gym.make", "import gymnasium as gym, npgym; gym.make('npgym/TSP-easy')"),
    ):
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - started)
        print(f"{label:14s} {statistics.median(times) * 1e3:7.0f} ms (median of {runs} processes)")


def main() -> None:
    """Print every table; exit 1 when a scoring target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    misses = task_table(20 if args.quick else 100)
    parse_throughput()
    long_completions()
    import_times()
    for miss in misses:
        print(f"MISSED: {miss}")
    if misses:
        sys.exit(1)


if __name__ == "__main__":
    main()
