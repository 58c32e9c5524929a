"""NP-Bench build and evaluation times, and what more workers buy.

    python bench/build_times.py              # full NP-Bench (100 per task) with 1 and 2 workers
    python bench/build_times.py --n 10 --workers 1 2 4

Prints the wall time of each build, the time summed over instances spent generating and in
references (heuristic + exact proof), the share of wall time that goes to references, the
speed-up over the first worker count, and the time to evaluate 1,000 completions
(heuristic-agent answers, scored against the references).

Each build runs in a fresh interpreter, so every one pays for its imports and its kernels as a
user's first build does. The pool forks workers from a parent that has compiled the kernels
once, and caps them at the usable cores, so more workers should never be slower; a worker
count above the cores is reported with the count actually used.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from npgym.datasets import usable_cores, worker_count
from npgym.npbench.agents import agent_completions
from npgym.npbench.build import BuildSpec, read_dataset
from npgym.npbench.evaluate import Completions, evaluate

_ONE_BUILD = """
import json, sys, time
started = time.perf_counter()
from npgym.npbench.build import BuildSpec, build
spec = BuildSpec(n=int(sys.argv[1]))
summary = build(spec, sys.argv[2], workers=int(sys.argv[3]), progress=False)
print(json.dumps({"wall": time.perf_counter() - started, "computed": summary.computed,
                  "generation": summary.generation_seconds,
                  "references": summary.reference_seconds}))
"""


def timed_build(n: int, folder: Path, workers: int) -> dict[str, float]:
    """Build NP-Bench with ``n`` per task in a fresh interpreter; wall time includes start-up."""
    command = [sys.executable, "-c", _ONE_BUILD, str(n), str(folder), str(workers)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    spec = BuildSpec(n=args.n)
    print(f"{usable_cores()} usable cores; {args.n} instances per task")
    first_wall = None
    with tempfile.TemporaryDirectory() as scratch:
        for workers in args.workers:
            folder = Path(scratch) / f"w{workers}"
            timing = timed_build(args.n, folder, workers)
            busy = timing["generation"] + timing["references"]
            first_wall = first_wall or timing["wall"]
            used = worker_count(workers, len(spec.tasks) * args.n)
            print(
                f"workers={workers} (uses {used}): wall {timing['wall']:.1f} s for "
                f"{timing['computed']:.0f} instances, speed-up {first_wall / timing['wall']:.2f}x; "
                f"generation {timing['generation']:.1f} s, references "
                f"{timing['references']:.1f} s ({timing['references'] / busy:.0%} of the work)"
            )
        rows = list(read_dataset(folder))
        answers = agent_completions(rows, "heuristic").texts
        texts = [text for id_ in answers for text in answers[id_]]
        repeat = -(-1000 // len(texts))
        pooled = {f"{row['id']}": answers[row["id"]] * repeat for row in rows}
        started = time.perf_counter()
        report = evaluate(rows, Completions(pooled), source="heuristic")
        elapsed = time.perf_counter() - started
        scored = report["overall"]["samples"]
        print(
            f"evaluate: {scored} completions in {elapsed:.2f} s "
            f"({1e3 * elapsed / scored:.2f} ms each, references read from the files)"
        )


if __name__ == "__main__":
    main()
