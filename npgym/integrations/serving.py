"""The OpenEnv server's limits and its reference workers (importable without ``openenv``).

Reference workers: processes that build the server's reset instances, references included.

A reset's cost is its reference (``task.reference``: seconds for an exact proof on a hard tier).
Computed in the server process it holds the GIL, so resets queue behind one core and every
other session's step waits for them. :class:`ReferencePool` runs each reset's ``env.reset``
in one of ``workers`` processes instead and hands back the instance, its reference kept in the
instance's cache, so the session plays exactly what a single-process env would have built for
that seed. The workers run at a lower priority (:data:`WORKER_NICENESS`) so the server's own
process, which answers steps, keeps the CPU it needs; they are replaced after
:data:`RESETS_PER_WORKER` resets each so that what a solver leaves behind (allocator
fragmentation, solver caches) cannot accumulate; they exit with the server, even on ``kill -9``.
(Computed in the server's threads, references also grew its memory: 414 to 558 MB over 300
TSP-hard episodes, with the allocator's per-thread arenas; in workers, the server stays flat.)
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import select
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
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


def _ready() -> int:
    """A task that only proves a worker is up (and warmed up): its process id."""
    return os.getpid()


def _start_method() -> str:
    """``forkserver`` where the platform has it (workers fork from a clean, single-threaded
    process that has imported npgym once), ``spawn`` elsewhere; never ``fork`` from the server,
    whose threads a fork would copy mid-operation."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


class ReferencePool:
    """``workers`` processes that build reset instances for one env id and its options.

    :meth:`build` awaits a worker without blocking the event loop. When a worker dies, every
    reset it (or the pool) had in hand fails with :class:`WorkerCrashedError`, saying so, and
    the pool starts new workers for the resets that follow. :meth:`close` kills the workers.
    """

    def __init__(self, env_id: str, env_options: dict[str, Any], workers: int) -> None:
        if check_workers(workers) < 1:
            raise ValueError("a reference pool needs at least one worker")
        self.env_id = env_id
        self.env_options = dict(env_options)
        self.task_name: str = gym.make(env_id, **env_options).unwrapped.task.name  # type: ignore[attr-defined]
        self.workers = workers
        self._closed = False
        self._builds = 0
        self._renewal: asyncio.Future[None] | None = None
        self._executor = self._new_executor()

    def _new_executor(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context(_start_method())
        if _start_method() == "forkserver":
            context.set_forkserver_preload([__name__])
        return ProcessPoolExecutor(
            self.workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(self.task_name, os.getpid()),
        )

    async def start(self) -> None:
        """Start every worker now and wait until each has warmed up (the server's start-up)."""
        await self._warm(self._executor)

    async def _warm(self, executor: ProcessPoolExecutor) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(executor, _ready) for _ in range(self.workers)))

    def _count_build(self) -> None:
        """Renew the workers after :data:`RESETS_PER_WORKER` resets each. (Not with
        ``max_tasks_per_child``: CPython 3.11's executor can deadlock replacing a worker.)"""
        self._builds += 1
        if self._builds >= RESETS_PER_WORKER * self.workers and self._renewal is None:
            self._renewal = asyncio.ensure_future(self._renew())

    async def _renew(self) -> None:
        """Warm up new workers, then send resets to them; the old ones finish what they hold
        and exit."""
        fresh = self._new_executor()
        try:
            await self._warm(fresh)
        except BaseException:
            _kill(fresh)
            raise
        finally:
            self._renewal = None
        if self._closed:
            _kill(fresh)
            return
        old, self._executor, self._builds = self._executor, fresh, 0
        old.shutdown(wait=False)

    async def build(self, seed: int) -> Instance:
        """The instance (with its reference) that ``seed`` gives, built in a worker."""
        if self._closed:
            raise RuntimeError("the reference pool is closed")
        executor = self._executor
        loop = asyncio.get_running_loop()
        self._count_build()
        try:
            return await loop.run_in_executor(
                executor, build_instance, self.env_id, self.env_options, seed
            )
        except BrokenProcessPool:
            self._replace(executor)
            raise WorkerCrashedError(
                f"the worker building seed {seed}'s reference died (killed or out of memory); "
                "new workers are ready: send reset again"
            ) from None

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """Swap a broken executor for a new one (once, however many resets it failed)."""
        if broken is self._executor and not self._closed:
            self._executor = self._new_executor()
        _kill(broken)

    def worker_pids(self) -> list[int]:
        """Process ids of the workers started so far (they start on demand)."""
        return [process.pid for process in _processes(self._executor) if process.pid]

    def close(self) -> None:
        """Kill the workers (a reference in progress is abandoned); later builds fail."""
        self._closed = True
        if self._renewal is not None:
            self._renewal.cancel()
        _kill(self._executor)


def _processes(executor: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The executor's worker processes (``concurrent.futures`` offers no public accessor)."""
    return list((executor._processes or {}).values())


def _kill(executor: ProcessPoolExecutor) -> None:
    """Stop ``executor`` now: kill its workers rather than wait for their references."""
    for process in _processes(executor):
        if process.is_alive():
            process.kill()
    executor.shutdown(wait=False, cancel_futures=True)
