"""NP-Bench build and evaluation times.

    python bench/build_times.py              # full NP-Bench (100 per task) with 1 and 2 workers
    python bench/build_times.py --n 20 --workers 2

Prints the wall time of each build, the time summed over instances spent generating and in
references (heuristic + exact proof), the share of wall time that goes to references, and the
time to evaluate 1,000 completions (heuristic-agent answers, scored against the references).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from npgym.npbench.agents import agent_completions
from npgym.npbench.build import BuildSpec, build, read_dataset
from npgym.npbench.evaluate import Completions, evaluate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    args = parser.parse_args()
    spec = BuildSpec(n=args.n)
    with tempfile.TemporaryDirectory() as scratch:
        for workers in args.workers:
            folder = Path(scratch) / f"w{workers}"
            summary = build(spec, folder, workers=workers, progress=False)
            busy = summary.generation_seconds + summary.reference_seconds
            print(
                f"workers={workers}: wall {summary.wall_seconds:.1f} s for "
                f"{summary.computed} instances; generation {summary.generation_seconds:.1f} s, "
                f"references {summary.reference_seconds:.1f} s "
                f"({summary.reference_seconds / busy:.0%} of the work)"
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
