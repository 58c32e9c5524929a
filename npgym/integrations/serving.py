"""The OpenEnv server's limits and its reference workers (importable without ``openenv``).

Reference workers: processes that build the server's reset instances, references included.

A reset's cost is its reference (``task.reference``: seconds for an exact proof on a hard tier).
Computed in the server process it holds the GIL, so resets queue behind one core and every
other session's step waits for them. :class:`ReferencePool` runs each reset's ``env.reset``
in one of ``workers`` processes instead and hands back the instance, its reference kept in the
instance's cache, so the session plays exactly what a single-process env would have built for
that seed. The workers run at a lower priority (:data:`WORKER_NICENESS`) so the server's own
process, which answers steps, keeps the CPU it needs; each is replaced after
:data:`RESETS_PER_WORKER` resets so that what a solver leaves behind (allocator
fragmentation, solver caches) cannot accumulate; a worker whose reset nobody waits for any more
(its client hung up, its deadline passed) and that has not finished it within
:data:`CANCEL_GRACE_S` is killed and replaced; they exit with the
server, even on ``kill -9``. Each worker has a pipe of its own: the pool holds no shared queue
or semaphore, so a server stopped by SIGTERM leaves nothing behind.
(Computed in the server's threads, references also grew its memory: 414 to 558 MB over 300
TSP-hard episodes, with the allocator's per-thread arenas; in workers, the server stays flat.)
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import multiprocessing
import multiprocessing.forkserver
import os
import select
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

import gymnasium as gym

from npgym.datasets import usable_cores, warm_up
from npgym.instance import Instance

DEFAULT_MAX_SESSIONS = 64
"""Concurrent WebSocket sessions one server holds by default (``--max-sessions``)."""
DEFAULT_IDLE_TIMEOUT_S = 300.0
"""Seconds a session may go without sending a complete message before the server closes it
(``--idle-timeout``)."""
DEFAULT_MESSAGE_TIMEOUT_S = 300.0
"""Seconds the server may take to answer one message, a reset's wait for a worker included,
before it closes the session with an error (``--message-timeout``)."""
CLOSE_SEND_TIMEOUT_S = 5.0
"""Seconds the server spends telling a timed-out client why before it drops the connection."""
MAX_TIMEOUT_S = 86_400.0
"""Longest idle or message timeout a server accepts (one day)."""
MAX_WORKERS = 64
"""Most reference worker processes one server starts (``--workers``)."""
DEFAULT_WORKERS = max(1, min(4, usable_cores()))
"""Reference workers by default: one per usable core, at most 4."""
RESETS_PER_WORKER = 1000
"""Resets per worker after which the pool replaces its workers by fresh, warmed-up ones."""
WORKER_NICENESS = 10
"""How much lower than the server's the workers' CPU priority is (``os.nice`` increment)."""
CANCEL_GRACE_S = 1.0
"""Seconds a worker may go on with a reset nobody waits for any more (its client hung up, its
deadline passed) before it is killed and replaced: a quick build is cheaper to finish than a
new worker is to start, a long proof is not worth finishing."""
WORKER_START_TIMEOUT_S = 600.0
"""Seconds a new reference worker may take to start and warm up (a cold kernel compile on a
busy machine included) before the pool gives up."""

# --- what one client may send (every transport) -----------------------------------------------
MAX_MESSAGE_BYTES = 2 * 1024 * 1024
"""Largest WebSocket message or HTTP request body the server reads (2 MiB). It is refused
before it is parsed: a WebSocket closes with code 1009, an HTTP request gets 413. A step at the
1 Mi-character action cap fits when its JSON takes at most 2 MiB (any ASCII completion does)."""
MAX_HEADER_BYTES = 16 * 1024
"""Largest request line and headers the server reads (16 KiB); past it, 400 and a close."""
HEADER_TIMEOUT_S = 10.0
"""Seconds a connection has to send a complete request line and headers, from the moment it
opens or its previous response ends; then the server closes it (half-open connections)."""
KEEP_ALIVE_TIMEOUT_S = 5
"""Seconds an HTTP connection may stay open between requests with nothing sent."""
BODY_TIMEOUT_S = 30.0
"""Seconds an HTTP request has to send its whole body once its headers are in; then 408."""
REAPER_INTERVAL_S = 1.0
"""Seconds between two looks for idle sessions that no WebSocket holds (made over HTTP MCP)."""
TOKEN_ENV = "NPGYM_SERVE_TOKEN"
"""Environment variable that gives the server its ``--token``, and npgym's clients theirs."""
MIN_TOKEN_CHARS = 16
"""Shortest token the server accepts (a shorter one is too easy to guess)."""
MAX_TOKEN_CHARS = 512
"""Longest token the server accepts (it travels in a header)."""


class WorkerCrashedError(RuntimeError):
    """A reference worker died while building a reset (killed, out of memory, a crash)."""


def check_workers(workers: int) -> int:
    """``workers`` when it is an integer from 0 (no pool) to :data:`MAX_WORKERS`."""
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"workers must be an integer, got {workers!r}")
    if not 0 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be from 0 to {MAX_WORKERS}, got {workers}")
    return workers


def check_timeout(name: str, seconds: float) -> float:
    """``seconds`` as a float when it is a number of seconds in (0, :data:`MAX_TIMEOUT_S`]."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, got {seconds!r}")
    if not 0 < seconds <= MAX_TIMEOUT_S:
        raise ValueError(f"{name} must be more than 0 and at most {MAX_TIMEOUT_S:g} seconds")
    return float(seconds)


def check_token(token: str) -> str:
    """``token`` when it is :data:`MIN_TOKEN_CHARS` to :data:`MAX_TOKEN_CHARS` printable ASCII
    characters without spaces (it travels in a header)."""
    if not isinstance(token, str):
        raise TypeError(f"the token must be a string, got {type(token).__name__}")
    if not MIN_TOKEN_CHARS <= len(token) <= MAX_TOKEN_CHARS:
        raise ValueError(
            f"the token must have {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS} characters, "
            f"got {len(token)}"
        )
    if not all("!" <= character <= "~" for character in token):
        raise ValueError("the token must be printable ASCII without spaces")
    return token


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address to bind) reaches this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def build_instance(env_id: str, env_options: dict[str, Any], seed: int) -> Instance:
    """What ``gym.make(env_id, **env_options).reset(seed=seed)`` plays: the instance, with its
    reference (and the arrays derived for it) in its cache, which travels with it when pickled."""
    env = gym.make(env_id, **env_options)
    try:
        _, info = env.reset(seed=seed)
    finally:
        env.close()
    instance: Instance = info["instance"]
    return instance


def _start_worker(task_name: str, server: int) -> None:
    """Exit with the server (even on ``kill -9``), run at a lower CPU priority than it, and load
    the task's kernels so that no reset pays for them."""
    threading.Thread(target=_exit_with, args=(server,), daemon=True, name="npgym-server").start()
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)
    warm_up([task_name])


def _exit_with(server: int) -> None:
    """Wait for process ``server`` to end (a pidfd where Linux has one, else polling its pid:
    a worker's parent is the fork server, not the server), then end this process."""
    try:
        handle = os.pidfd_open(server)
    except (AttributeError, OSError):
        while _running(server):
            time.sleep(1.0)
    else:
        select.select([handle], [], [])
    os._exit(1)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's (the pid was reused)
        return False
    return True


def _worker_main(
    connection: Connection, env_id: str, env_options: dict[str, Any], task_name: str, server: int
) -> None:
    """A reference worker: warm up, say its pid, then build one instance per seed received
    (``(True, instance)``, or ``(False, "the error")``) until the server closes the pipe."""
    _start_worker(task_name, server)
    connection.send(os.getpid())
    while True:
        try:
            seed = connection.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[bool, Any] = (True, build_instance(env_id, env_options, seed))
        except Exception as error:  # the reset's error, told to the client; the worker goes on
            reply = (False, f"{type(error).__name__}: {error}")
        connection.send(reply)


def _start_method() -> str:
    """``forkserver`` where the platform has it (workers fork from a clean, single-threaded
    process that has imported npgym once), ``spawn`` elsewhere; never ``fork`` from the server,
    whose threads a fork would copy mid-operation."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _context() -> multiprocessing.context.BaseContext:
    """The workers' start context. The fork server is started with ``PYTHONSAFEPATH=1``: it
    runs as ``python -c``, whose ``sys.path[0]`` would otherwise be the working directory, so
    a folder there named ``npgym`` (a clone) would be imported instead of the installed package
    and every reset would fail. (Python 3.10 has no safe-path mode: there the fork server
    preloads nothing and each worker imports npgym through the server's own ``sys.path``.)"""
    method = _start_method()
    context = multiprocessing.get_context(method)
    if method == "forkserver" and sys.version_info >= (3, 11):
        context.set_forkserver_preload([__name__])
        previous = os.environ.get("PYTHONSAFEPATH")
        os.environ["PYTHONSAFEPATH"] = "1"
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            if previous is None:
                del os.environ["PYTHONSAFEPATH"]
            else:
                os.environ["PYTHONSAFEPATH"] = previous
    return context


class _Worker:
    """One reference worker process and the server's end of its pipe."""

    def __init__(
        self, process: multiprocessing.process.BaseProcess, connection: Connection
    ) -> None:
        self.process = process
        self.connection = connection
        self.builds = 0
        self.retire = False  # replaced: leaves once it is idle


class ReferencePool:
    """``workers`` processes that build reset instances for one env id and its options.

    Each worker is a process of its own with its own pipe (no shared queue, no semaphore),
    so one can be killed without touching the others. :meth:`build` waits for an idle worker
    without blocking the event loop (a reset cancelled while it waits costs nothing). A reset
    cancelled while its worker builds it (its client hung up, or its deadline passed) gets
    :data:`CANCEL_GRACE_S` to finish; then that worker, whose work nobody wants any more, is
    killed and a fresh worker takes its place. A
    worker that dies fails its reset with :class:`WorkerCrashedError`, saying so, and is
    replaced likewise. :meth:`close` kills the workers.
    """

    def __init__(self, env_id: str, env_options: dict[str, Any], workers: int) -> None:
        if check_workers(workers) < 1:
            raise ValueError("a reference pool needs at least one worker")
        self.env_id = env_id
        self.env_options = dict(env_options)
        self.task_name: str = gym.make(env_id, **env_options).unwrapped.task.name  # type: ignore[attr-defined]
        self.workers = workers
        self._closed = False
        self._started = False
        self._failure: str | None = None
        self._context: multiprocessing.context.BaseContext | None = None
        self._live: set[_Worker] = set()
        self._idle: collections.deque[_Worker] = collections.deque()
        self._waiting: collections.deque[asyncio.Future[_Worker]] = collections.deque()
        self._spawning: set[asyncio.Future[None]] = set()
        self._abandoning: set[asyncio.Future[None]] = set()
        # each worker has at most one blocking pipe read in flight, plus its start-up
        self._threads = ThreadPoolExecutor(2 * workers + 2, thread_name_prefix="npgym-pool")

    async def start(self) -> None:
        """Start every worker now and wait until each has warmed up (the server's start-up)."""
        self._started = True
        await asyncio.gather(*(self._add_worker() for _ in range(self.workers)))

    async def _add_worker(self, replacing: _Worker | None = None) -> None:
        """Start one worker; it joins the idle ones once it has warmed up, and the worker it
        is ``replacing`` (which went on serving meanwhile) leaves."""
        loop = asyncio.get_running_loop()
        if self._context is None:
            self._context = await loop.run_in_executor(self._threads, _context)
        ours, theirs = self._context.Pipe()
        process = self._context.Process(  # type: ignore[attr-defined]
            target=_worker_main,
            args=(theirs, self.env_id, self.env_options, self.task_name, os.getpid()),
            name="npgym-reference-worker",
            daemon=True,
        )
        worker = _Worker(process, ours)
        self._live.add(worker)
        try:
            await loop.run_in_executor(self._threads, process.start)
            theirs.close()
            await asyncio.wait_for(
                loop.run_in_executor(self._threads, ours.recv), WORKER_START_TIMEOUT_S
            )
        except (EOFError, OSError, asyncio.TimeoutError) as error:
            self._discard(worker)
            self._failure = (
                f"a reference worker for {self.env_id} did not start within "
                f"{WORKER_START_TIMEOUT_S:g} s (exit code {process.exitcode}; see the server's "
                f"log): {type(error).__name__}"
            )
            raise WorkerCrashedError(self._failure) from None
        except BaseException:
            self._discard(worker)
            raise
        if self._closed:
            self._discard(worker)
            return
        self._failure = None
        self._give(worker)
        if replacing is not None:
            replacing.retire = True
            if replacing in self._idle:
                self._discard(replacing)

    def _replace_later(self, replacing: _Worker | None = None) -> None:
        """Start a worker in the background to take a discarded (or ``replacing``) one's
        place."""
        if self._closed:
            return
        spawn = asyncio.ensure_future(self._add_worker(replacing))
        self._spawning.add(spawn)
        spawn.add_done_callback(self._spawned)

    def _spawned(self, spawn: asyncio.Future[None]) -> None:
        self._spawning.discard(spawn)
        if not spawn.cancelled() and spawn.exception() is not None:  # said in self._failure
            for waiter in self._waiting:
                if not waiter.done():
                    waiter.set_exception(WorkerCrashedError(str(spawn.exception())))
            self._waiting.clear()

    def _give(self, worker: _Worker) -> None:
        """Hand an idle worker to the longest-waiting reset, or keep it idle."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        self._idle.append(worker)

    async def _take(self) -> _Worker:
        """An idle worker, once there is one."""
        if self._idle:
            return self._idle.popleft()
        if self._failure is not None and not self._spawning:
            raise WorkerCrashedError(self._failure)
        waiter: asyncio.Future[_Worker] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed over as we were cancelled
                self._give(waiter.result())
            raise

    def _discard(self, worker: _Worker) -> None:
        """Kill a worker (whatever it was doing) and forget it."""
        self._live.discard(worker)
        with contextlib.suppress(ValueError):
            self._idle.remove(worker)
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if worker.process.is_alive():
                worker.process.kill()
        worker.connection.close()
        with contextlib.suppress(RuntimeError):  # the pool's threads are gone: close() reaps
            self._threads.submit(_reap, worker.process)

    async def build(self, seed: int) -> Instance:
        """The instance (with its reference) that ``seed`` gives, built in a worker."""
        if self._closed:
            raise RuntimeError("the reference pool is closed")
        if not self._started:
            await self.start()
        worker = await self._take()
        loop = asyncio.get_running_loop()
        try:
            worker.connection.send(seed)
            reply = loop.run_in_executor(self._threads, worker.connection.recv)
            reply.add_done_callback(_retrieved)
            done, value = await asyncio.shield(reply)
        except asyncio.CancelledError:  # nobody wants this reset any more
            self._abandoning.add(asyncio.ensure_future(self._abandon(worker, reply)))
            raise
        except (EOFError, OSError):
            self._discard(worker)
            self._replace_later()
            raise WorkerCrashedError(
                f"the worker building seed {seed}'s reference died (killed or out of memory); "
                "a new worker is starting: send reset again"
            ) from None
        self._finished(worker)
        if not done:
            raise RuntimeError(value)
        instance: Instance = value
        return instance

    async def _abandon(self, worker: _Worker, reply: asyncio.Future[Any]) -> None:
        """A reset nobody waits for: its worker gets :data:`CANCEL_GRACE_S` to finish (a
        quick build costs less than a new worker), then it is killed and replaced."""
        try:
            await asyncio.wait_for(asyncio.shield(reply), CANCEL_GRACE_S)
        except (asyncio.TimeoutError, EOFError, OSError):
            self._discard(worker)
            self._replace_later()
        else:
            self._finished(worker)
        finally:
            self._abandoning.discard(asyncio.current_task())  # type: ignore[arg-type,unused-ignore]

    def _finished(self, worker: _Worker) -> None:
        """A worker is done with a build: back to the idle ones; after
        :data:`RESETS_PER_WORKER` builds a fresh worker is started to replace it."""
        worker.builds += 1
        if worker.retire:
            self._discard(worker)
            return
        if worker.builds == RESETS_PER_WORKER:  # a fresh one warms up while this one serves
            self._replace_later(replacing=worker)
        if not self._closed:
            self._give(worker)

    def worker_pids(self) -> list[int]:
        """Process ids of the workers started so far."""
        return [worker.process.pid for worker in self._live if worker.process.pid]

    def close(self) -> None:
        """Kill the workers (a reference in progress is abandoned); later builds fail."""
        self._closed = True
        for spawn in [*self._spawning, *self._abandoning]:
            spawn.cancel()
        for worker in list(self._live):
            self._discard(worker)
        for waiter in self._waiting:
            if not waiter.done():
                waiter.set_exception(RuntimeError("the reference pool is closed"))
        self._waiting.clear()
        self._threads.shutdown(wait=False)


def _retrieved(reply: asyncio.Future[Any]) -> None:
    """Mark a pipe read's error as seen (a killed worker's read ends in EOFError)."""
    if not reply.cancelled():
        reply.exception()


def _reap(process: multiprocessing.process.BaseProcess) -> None:
    """Wait for a killed worker to end, so that it leaves no zombie."""
    process.join(WORKER_START_TIMEOUT_S)


class BodyTooLargeError(Exception):
    """An HTTP request body past the limit :func:`read_body` was given."""


async def read_body(
    receive: Callable[[], Awaitable[Mapping[str, Any]]], max_bytes: int
) -> bytes | None:
    """A whole ASGI request body (``None`` if the client hung up first); past ``max_bytes`` a
    :class:`BodyTooLargeError`, raised before the chunk that crosses it is kept."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLargeError
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
