"""Scoring and loading speed, measured in one run on benchmark-tier instances.

    python -m bench.scoring            # all tables
    python -m bench.scoring --quick    # fewer repetitions

Prints, per task: ``score()`` on an optimal completion and on a garbage one, ``score_many`` per
completion against ``score()`` in a loop (a GRPO-like group of 16 completions whose reasoning
differs and whose answers repeat, and a group of 16 distinct answers), ``from_json``, and the
part of it spent in the instance's own validators (``from_json`` less the parse of a twin model
with the same fields and no validators: pydantic's reading of the JSON is not counted). Then
parsing throughput on long answers, the time to score 10 MB completions (only the last 1 MiB is
scanned) and the import time of ``import npgym`` and of ``gym.make``. Goals (issue 10): garbage
under 2 us, parsing at least 50 MB/s, ``score_many`` at least 5x faster per completion, a 10 MB
completion under 1 s. Only public API is used, so the script also runs against older trees
(``PYTHONPATH=old-tree python -m bench.scoring``) for before/after figures.
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
GARBAGE = REASONING + "Answer: I am not sure."


def per_call_us(function: Callable[[], object], number: int) -> float:
    """Best of five runs of ``number`` calls, in microseconds per call."""
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6


def groups(task: npgym.Task, instance: npgym.Instance) -> tuple[list[str], list[str]]:
    """A GRPO-like group (16 completions, 4 distinct answers, each reasoning different) and a
    group of 16 distinct answers."""
    rng = np.random.default_rng(0)
    answers = [task.format_answer(task.greedy_solution(instance))]
    answers += [task.format_answer(task.random_solution(instance, rng)) for _ in range(15)]
    grpo = [f"Attempt {index}: " + REASONING + answers[index % 4] for index in range(16)]
    distinct = [f"Attempt {index}: " + REASONING + answers[index] for index in range(16)]
    return grpo, distinct


def many_ratio(
    task: npgym.Task, instance: npgym.Instance, reference: npgym.Reference, group: list[str]
) -> float:
    """Time per completion of ``score()`` in a loop divided by that of ``score_many``."""
    loop = per_call_us(lambda: [task.score(instance, text, reference) for text in group], 50)
    many = per_call_us(lambda: task.score_many(instance, group, reference), 50)
    return loop / many


def task_row(name: str, number: int) -> str:
    task = npgym.get_task(name)
    instance = task.generate(0, tier="benchmark")
    reference = task.reference(instance, exact=False)
    optimal = REASONING + task.format_answer(reference.solution)
    assert task.score(instance, optimal, reference).feasible
    score_us = per_call_us(lambda: task.score(instance, optimal, reference), number)
    garbage_us = per_call_us(lambda: task.score(instance, GARBAGE, reference), number)
    grpo, distinct = (many_ratio(task, instance, reference, g) for g in groups(task, instance))
    text = instance.to_json()
    twin = validator_free_twin(task.instance_type)
    json_us = per_call_us(lambda: task.from_json(text), max(number // 10, 10))
    twin_us = per_call_us(lambda: twin.model_validate_json(text), max(number // 10, 10))
    return (
        f"{name:18s} {score_us:9.1f} {garbage_us:10.2f} {grpo:13.1f} {distinct:17.1f}"
        f" {json_us:12.1f} {json_us - twin_us:13.1f}"
    )


def validator_free_twin(instance_type: type[pydantic.BaseModel]) -> type[pydantic.BaseModel]:
    """A model with ``instance_type``'s fields (types, constraints, defaults) and none of its
    validators: what reading the JSON costs before any check of the task's own."""
    fields: dict[str, Any] = {
        name: (field.annotation, field) for name, field in instance_type.model_fields.items()
    }
    config = pydantic.ConfigDict(frozen=True, extra="forbid")
    return pydantic.create_model(f"Twin{instance_type.__name__}", __config__=config, **fields)


def task_table(number: int) -> None:
    header = f"{'task':18s} {'score us':>9s} {'garbage us':>10s} {'many x (GRPO)':>13s}"
    print(header + f" {'many x (distinct)':>17s} {'from_json us':>12s} {'validators us':>13s}")
    for name in npgym.list_tasks():
        print(task_row(name, number), flush=True)


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    task_table(200 if args.quick else 1000)
    parse_throughput()
    long_completions()
    import_times()


if __name__ == "__main__":
    main()
