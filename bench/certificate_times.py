"""How long the independent checker takes over a built dataset's certificates (issue 36's target:
every certificate of NP-Bench checked in at most 2 s on 2 cores).

    python bench/certificate_times.py np-bench            # a folder built by npgym bench build

Prints a markdown table: per task, the rows certified, the certificates' total size, and the
CPU seconds their checks took; then the wall time of the whole check as ``npgym eval`` runs it.
Exits 1 when a certificate is refused, or when the whole check takes longer than ``--target``
seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from npgym.npbench.build import verify_dataset
from npgym.npbench.certificates import check_row, check_rows, read_certificates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--target", type=float, default=2.0, help="Seconds for the whole check.")
    args = parser.parse_args(argv)
    rows = verify_dataset(args.dataset)
    found = read_certificates(args.dataset) or {}
    per_task: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    refused = 0
    for row in rows:
        certificate = found.get(str(row["id"]))
        started = time.process_time()
        task, status, reason = check_row(row, certificate)
        per_task.setdefault(task, []).append(time.process_time() - started)
        sizes[task] = sizes.get(task, 0) + len(json.dumps(certificate, separators=(",", ":")))
        if status == "refused":
            refused += 1
            print(f"refused {row['id']}: {reason}", file=sys.stderr)
    print("| task | rows | certificates (KiB) | check CPU-s | worst row (ms) |")
    print("|---|---|---|---|---|")
    for task, seconds in sorted(per_task.items()):
        print(
            f"| {task} | {len(seconds)} | {sizes[task] / 1024:.0f} | {sum(seconds):.3f} | "
            f"{max(seconds) * 1000:.1f} |"
        )
    total = sum(sum(seconds) for seconds in per_task.values())
    print(f"| all | {len(rows)} | {sum(sizes.values()) / 1024:.0f} | {total:.3f} | |")
    started = time.perf_counter()
    report = check_rows(rows, found)
    wall = time.perf_counter() - started
    print(f"\nwhole check as npgym eval runs it: {wall:.2f} s wall ({report.summary()})")
    if refused or report.refused:
        print("Error: certificates refused (above)", file=sys.stderr)
        return 1
    if wall > args.target:
        print(f"Error: the check took {wall:.2f} s, over the {args.target} s target")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
