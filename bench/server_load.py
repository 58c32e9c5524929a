"""``npgym serve`` under load: episodes/s, reset and step latency, server memory.

    python bench/server_load.py                                   # TSP-hard, 1, 2 and 4 workers
    python bench/server_load.py --workers 0 1 --episodes 100      # 0: references in the server
    python bench/server_load.py --env npgym/Knapsack-easy --heuristic-reference \\
        --workers 2 --episodes 10000 --clients 8                  # memory over 10,000 episodes

For each ``--workers`` value: start ``npgym serve`` on 127.0.0.1, then ``--clients`` OpenEnv
clients play ``--episodes`` episodes between them (seeds 0, 1, ...), each a reset and one
step, on a fresh WebSocket session every ``--episodes-per-session`` episodes. Reports
episodes/s, reset latency p50/p99 and step latency p50/p99 (the steps run while the other
clients reset) in ms, and the server's resident memory (its own process, and its reference
workers) after the first ``--warm-up`` episodes and at the end, in MB. Exits non-zero when an
episode fails. Linux only (memory comes from /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from npgym.integrations.openenv import NPGymAction, NPGymClient, local_server

STARTUP_TIMEOUT_S = 180.0
"""Seconds a server may take to answer ``/health`` before the bench gives up."""
ANSWER = "Answer: [0, 1]"
"""The completion every step sends: scoring is not what this bench measures."""


@dataclass
class Load:
    """What the clients measured."""

    reset_ms: list[float] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    rss_start: tuple[float, float] = (0.0, 0.0)


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the reference workers and their fork server)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(OSError):
                children = [int(c) for c in (task / "children").read_text().split()]
                found += children
                todo += children
    return found


def server_rss(pid: int) -> tuple[float, float]:
    """(the server process's RSS, its workers' total RSS) in MB."""
    return rss_mb(pid), sum(rss_mb(child) for child in descendants(pid))


@contextlib.contextmanager
def running_server(env_id: str, workers: int, options: list[str]) -> Iterator[tuple[str, int]]:
    """``npgym serve`` on a free port: (its URL, its pid), until the block ends."""
    log = Path(tempfile.mkdtemp(prefix="npgym-server-load-")) / "server.log"
    options = ["--workers", str(workers), *options]
    serving = local_server(env_id, options, log=log, startup_timeout_s=STARTUP_TIMEOUT_S)
    try:
        with serving as (url, server):
            yield url, server.pid
    finally:
        print(f"server log: {log}", file=sys.stderr)


async def play(
    url: str, seeds: Iterator[int], per_session: int, load: Load, pid: int, warm_up: int
) -> None:
    """One client: episodes on fresh sessions until the seeds run out."""
    while True:
        batch = list(itertools.islice(seeds, per_session))
        if not batch:
            return
        try:
            async with NPGymClient(base_url=url, message_timeout_s=600) as env:
                for seed in batch:
                    if seed == warm_up:
                        load.rss_start = server_rss(pid)
                    started = time.perf_counter()
                    await env.reset(seed=seed)
                    reset_done = time.perf_counter()
                    await env.step(NPGymAction(text=ANSWER))
                    load.reset_ms.append((reset_done - started) * 1000)
                    load.step_ms.append((time.perf_counter() - reset_done) * 1000)
        except Exception as error:  # counted and reported: a failed episode is not a result
            load.failures.append(f"seeds {batch[0]}..{batch[-1]}: {error}")


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile of ``values`` (0 when there are none)."""
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def run(args: argparse.Namespace, workers: int) -> tuple[str, bool]:
    """One server, one load: its markdown table row and whether every episode succeeded."""
    options = ["--max-sessions", str(max(64, args.clients))]
    if args.heuristic_reference:
        options.append("--heuristic-reference")
    with running_server(args.env, workers, options) as (url, pid):
        load = Load(rss_start=server_rss(pid))
        seeds = iter(range(args.episodes))
        clients = min(args.clients, args.episodes)

        async def everyone() -> None:
            await asyncio.gather(
                *(
                    play(url, seeds, args.episodes_per_session, load, pid, args.warm_up)
                    for _ in range(clients)
                )
            )

        started = time.perf_counter()
        asyncio.run(everyone())
        elapsed = time.perf_counter() - started
        rss_end = server_rss(pid)
    done = len(load.reset_ms)
    row = (
        f"| {workers} | {args.clients} | {done} | {done / elapsed:.1f} "
        f"| {percentile(load.reset_ms, 0.5):.1f} | {percentile(load.reset_ms, 0.99):.1f} "
        f"| {percentile(load.step_ms, 0.5):.2f} | {percentile(load.step_ms, 0.99):.2f} "
        f"| {load.rss_start[0]:.0f} | {rss_end[0]:.0f} | {rss_end[0] - load.rss_start[0]:+.0f} "
        f"| {load.rss_start[1]:.0f} | {rss_end[1]:.0f} |"
    )
    for failure in load.failures[:5]:
        print(f"FAILED ({workers} workers): {failure}", file=sys.stderr)
    return row, not load.failures and done == args.episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="npgym/TSP-hard")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--episodes-per-session", type=int, default=10)
    parser.add_argument(
        "--warm-up",
        type=int,
        default=None,
        help="episodes before the start RSS is read (default: 4 per client)",
    )
    parser.add_argument("--heuristic-reference", action="store_true")
    args = parser.parse_args()
    if args.warm_up is None:
        args.warm_up = min(args.episodes - 1, 4 * args.clients)
    print(
        f"{args.env}, {args.episodes} episodes, {args.clients} clients, "
        f"{args.episodes_per_session} episodes per session"
        f"{', heuristic references' if args.heuristic_reference else ''}\n"
    )
    print(
        "| workers | clients | episodes | episodes/s | reset p50 ms | reset p99 ms "
        "| step p50 ms | step p99 ms | server MB start | end | growth | workers MB start "
        "| end |"
    )
    print("|---:" * 13 + "|")
    ok = True
    for workers in args.workers:
        row, succeeded = run(args, workers)
        print(row, flush=True)
        ok = ok and succeeded
    if not ok:
        sys.exit("some episodes failed (see above)")


if __name__ == "__main__":
    main()
