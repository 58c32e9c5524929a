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

``--hostile [KIND ...]`` (every kind of :data:`HOSTILE_KINDS` by default) plays ``--rounds``
rounds on one server (a token required, as an exposed server would), each the load played by
honest clients alone, then beside hostile clients run from another process on every transport
(idle WebSockets, MCP sessions left open, slow request heads, HTTP resets dropped after 0.5 s,
16 MiB frames, unauthenticated WebSockets). It prints the median rates, their ratio and the
server process's CPU per honest episode, and exits 1 when the honest clients keep less than
:data:`HOSTILE_FLOOR` of their episodes/s alone:

    python bench/server_load.py --env npgym/Knapsack-easy --heuristic-reference --workers 1 \\
        --episodes 500 --clients 8 --rounds 5 --hostile
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import os
import secrets
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

import websockets

from npgym.integrations.openenv import NPGymAction, NPGymClient, local_server
from npgym.integrations.serving import TOKEN_ENV

STARTUP_TIMEOUT_S = 180.0
"""Seconds a server may take to answer ``/health`` before the bench gives up."""
ANSWER = "Answer: [0, 1]"
"""The completion every step sends: scoring is not what this bench measures."""
HOSTILE_FLOOR = 0.8
"""Share of their baseline episodes/s the honest clients must keep beside hostile ones."""
HOSTILE_IDLE = 8
"""Idle WebSocket sessions the hostile clients hold (they take slots until the idle timeout)."""
HOSTILE_MCP = 4
"""MCP sessions the hostile clients create and leave open."""
HOSTILE_HANG_UPS = 8
"""Hostile clients that each send HTTP resets in a loop and hang up :data:`HANG_UP_S` later."""
HANG_UP_S = 0.5
"""Seconds a hanging-up client waits before it drops its reset (the issue's 0.5 s)."""


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
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0  # a zombie (a replaced worker not yet reaped) holds no memory


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


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the server process itself has used so far (not its workers,
    which come and go)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


HOSTILE_KINDS = ("idle", "mcp", "slow", "hang-up", "huge", "no-token")
"""The hostile clients ``--hostile`` runs (all of them by default)."""


async def hostile(
    url: str, stop: asyncio.Event, counts: dict[str, int], kinds: Sequence[str] = HOSTILE_KINDS
) -> None:
    """Hostile clients of ``kinds`` until ``stop`` is set; ``counts`` what each did."""
    host, port = url.removeprefix("http://").split(":")
    ws = url.replace("http", "ws") + "/ws"
    auth = {"Authorization": f"Bearer {os.environ[TOKEN_ENV]}"}

    def tally(kind: str) -> None:
        counts[kind] = counts.get(kind, 0) + 1

    async def idle() -> None:
        with contextlib.suppress(Exception):
            async with websockets.connect(ws, additional_headers=auth) as connection:
                tally("idle")
                await connection.wait_closed()

    async def slow_head() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                reader, writer = await asyncio.open_connection(host, int(port))
                writer.write(b"POST /reset HTTP/1.1\r\n")
                tally("slow")
                with contextlib.suppress(Exception):
                    while not stop.is_set() and not reader.at_eof():
                        writer.write(b"X")  # one byte a second: never a whole head
                        await writer.drain()
                        await asyncio.sleep(1)
                writer.close()

    async def hang_up() -> None:
        body = json.dumps({"seed": 1}).encode()
        head = (
            f"POST /reset HTTP/1.1\r\nHost: x\r\nAuthorization: {auth['Authorization']}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        while not stop.is_set():
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection(host, int(port))
                writer.write(head + body)
                await asyncio.sleep(HANG_UP_S)
                writer.close()  # dropped, answered or not
                tally("hang-up")

    async def huge() -> None:
        frame = "x" * (16 << 20)
        while not stop.is_set():
            with contextlib.suppress(Exception):
                async with websockets.connect(ws, additional_headers=auth, max_size=None) as c:
                    await c.send(frame)
                    await c.wait_closed()
            tally("16 MiB frame")
            await asyncio.sleep(0.2)

    async def unauthenticated() -> None:
        while not stop.is_set():
            with contextlib.suppress(Exception):
                await websockets.connect(ws)
            tally("no token")
            await asyncio.sleep(0.05)

    def mcp_session() -> None:
        request = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            body = json.dumps(request).encode()
            raw.sendall(
                f"POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: {auth['Authorization']}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            raw.recv(4096)
        tally("mcp session")

    for _ in range(HOSTILE_MCP if "mcp" in kinds else 0):
        await asyncio.to_thread(mcp_session)
    tasks = [asyncio.ensure_future(idle()) for _ in range(HOSTILE_IDLE if "idle" in kinds else 0)]
    tasks += [asyncio.ensure_future(slow_head()) for _ in range(8 if "slow" in kinds else 0)]
    hang_ups = HOSTILE_HANG_UPS if "hang-up" in kinds else 0
    tasks += [asyncio.ensure_future(hang_up()) for _ in range(hang_ups)]
    tasks += [asyncio.ensure_future(huge()) for _ in range("huge" in kinds)]
    tasks += [asyncio.ensure_future(unauthenticated()) for _ in range("no-token" in kinds)]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def hostile_process(url: str, connection: Connection, kinds: Sequence[str]) -> None:
    """:func:`hostile` in a process of its own: says when it has started, stops when told,
    then sends back its counts."""
    counts: dict[str, int] = {}

    async def attack() -> None:
        stop = asyncio.Event()
        running = asyncio.ensure_future(hostile(url, stop, counts, kinds))
        await asyncio.sleep(1.0)
        connection.send("started")
        await asyncio.to_thread(connection.recv)
        stop.set()
        await running

    started = time.process_time()
    asyncio.run(attack())
    counts["own CPU ms"] = round(1000 * (time.process_time() - started))
    connection.send(counts)


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile of ``values`` (0 when there are none)."""
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def run(args: argparse.Namespace, workers: int) -> tuple[str, bool]:
    """One server, one load: its markdown table row and whether every episode succeeded
    (with ``--hostile``, also whether the honest clients kept their rate)."""
    slots = max(64, args.clients + (HOSTILE_IDLE + HOSTILE_MCP + 8 if args.hostile else 0))
    options = ["--max-sessions", str(slots)]
    if args.heuristic_reference:
        options.append("--heuristic-reference")
    if args.hostile:
        os.environ.setdefault(TOKEN_ENV, secrets.token_urlsafe(24))  # the server's and ours
    with running_server(args.env, workers, options) as (url, pid):
        kept = True
        if not args.hostile:
            load = Load(rss_start=server_rss(pid))
            elapsed = measure(args, url, pid, load, hostile_too=False)
        else:  # alternate (alone, beside hostile clients) rounds: the machine's noise hits both
            rates: dict[bool, list[float]] = {False: [], True: []}
            cpu: dict[bool, list[float]] = {False: [], True: []}
            measure(args, url, pid, Load(), hostile_too=False)  # warm-up, not counted
            for _ in range(args.rounds):
                for hostile_too in (False, True):
                    load = Load(rss_start=server_rss(pid))
                    used = cpu_seconds(pid)
                    elapsed = measure(args, url, pid, load, hostile_too=hostile_too)
                    rates[hostile_too].append(len(load.reset_ms) / elapsed)
                    used = cpu_seconds(pid) - used
                    cpu[hostile_too].append(1000 * used / max(1, len(load.reset_ms)))
            alone, beside = statistics.median(rates[False]), statistics.median(rates[True])
            print(
                "server process CPU ms per honest episode (median): "
                f"{statistics.median(cpu[False]):.2f} alone, "
                f"{statistics.median(cpu[True]):.2f} beside hostile clients",
                file=sys.stderr,
            )
            ratio = beside / alone
            kept = ratio >= HOSTILE_FLOOR
            print(
                f"honest episodes/s (median of {args.rounds} rounds): {alone:.1f} alone, "
                f"{beside:.1f} beside hostile clients: ratio {ratio:.2f} "
                f"(floor {HOSTILE_FLOOR})",
                file=sys.stderr,
            )
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
    return row, kept and not load.failures and done == args.episodes


def measure(args: argparse.Namespace, url: str, pid: int, load: Load, hostile_too: bool) -> float:
    """Play ``args.episodes`` episodes (beside hostile clients if ``hostile_too``): seconds."""
    seeds = iter(range(args.episodes))
    clients = min(args.clients, args.episodes)
    counts: dict[str, int] = {}

    async def everyone() -> None:
        await asyncio.gather(
            *(
                play(url, seeds, args.episodes_per_session, load, pid, args.warm_up)
                for _ in range(clients)
            )
        )

    attack = None
    if hostile_too:  # in a process of its own: its work does not slow the honest clients' loop
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        kinds = args.hostile
        attack = context.Process(target=hostile_process, args=(url, theirs, kinds), daemon=True)
        attack.start()
        ours.recv()  # the hostile clients are at it before the honest ones start
    started = time.perf_counter()
    asyncio.run(everyone())
    elapsed = time.perf_counter() - started
    if attack is not None:
        ours.send("stop")
        counts = ours.recv()
        attack.join(30)
    rate = len(load.reset_ms) / elapsed
    print(
        f"{'beside hostile clients' if hostile_too else 'alone'}: {rate:.1f} episodes/s "
        f"({len(load.failures)} failed sessions)",
        file=sys.stderr,
        flush=True,
    )
    if counts:
        print(f"hostile clients: {counts}", file=sys.stderr, flush=True)
    return elapsed


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
    parser.add_argument(
        "--rounds", type=int, default=3, help="--hostile: rounds of (alone, beside hostile)"
    )
    parser.add_argument(
        "--hostile",
        nargs="*",
        choices=HOSTILE_KINDS,
        default=None,
        help=f"measure beside hostile clients; exit 1 below {HOSTILE_FLOOR} of the baseline",
    )
    args = parser.parse_args()
    if args.hostile == []:  # --hostile alone: every kind
        args.hostile = list(HOSTILE_KINDS)
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
