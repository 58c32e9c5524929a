"""Compute references ahead of a trainer, in worker processes (opt-in).

A curriculum or a dataset stream that draws rows as a trainer asks for them would otherwise
compute each row's reference in the trainer's own process, on demand, so the trainer waits for
every one. A :class:`ReferencePool` runs ``workers`` processes that compute the references of the
rows about to be drawn, at most ``prefetch`` of them in flight (the prefetch depth): the caller
says which rows come next with :meth:`ReferencePool.keep`, and :meth:`ReferencePool.reference`
hands a row's reference over, waiting only when its worker has not finished it yet.

Rows and rewards stay byte for byte those of the pool-less path:

- a job names how to make its instance (task, seed, tier or difficulty, generator overrides) and
  which reference to compute; the worker regenerates the instance and returns its fingerprint
  with the reference's JSON, and a reference is used only for an instance with that fingerprint;
- references are deterministic (work limits, never wall time), so a worker computes what the
  trainer's process would have; a guess about future rows that turns out wrong (an adaptive
  curriculum's frontier moved) is never asked for, and :meth:`ReferencePool.keep` discards it;
- whatever goes wrong in the pool, the reference is computed again in the caller's process: a
  worker that died (the pool is rebuilt, at most :data:`MAX_RESTARTS` times, then the pool
  stays off and everything is computed in-process), a wait past ``wait_timeout`` seconds
  (default :data:`WAIT_TIMEOUT`; the pool is rebuilt, since its worker may hang), an error raised
  in the worker (raised again here, in the caller), or a fingerprint that does not match.

Workers are started with ``spawn`` (no state forked from a trainer that may hold threads or a
GPU context) on first use, so each imports the script that started it again: a script that makes
a pool at import time, without an ``if __name__ == "__main__":`` guard, would make every worker
run the script and fail. Such a worker exits quietly with :data:`UNGUARDED_MAIN_EXIT` instead,
and the pool warns once (:class:`ReferencePoolFallback`, naming the cause and the fix) and
computes every reference in-process; a pool switched off after :data:`MAX_RESTARTS` rebuilds
warns the same way. Workers exit when the process that started them dies (even by ``kill -9``),
and are stopped by :meth:`ReferencePool.close` (or leaving the ``with`` block) within
:data:`CLOSE_GRACE` seconds. :attr:`ReferencePool.stats` counts what happened, ``waits`` above
all: how often the caller found the reference it needed not ready.
"""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from multiprocessing.connection import wait as ready_objects
from multiprocessing.context import SpawnContext, SpawnProcess
from types import TracebackType
from typing import Any, TypeVar

from npgym.instance import Instance
from npgym.registry import get_task
from npgym.results import DEFAULT_TIME_LIMIT, Reference, reference_key

T = TypeVar("T")

DEFAULT_PREFETCH = 8
"""References in flight at most by default: a GRPO batch of 8 prompts, computed while the
previous batch generates."""
MAX_PREFETCH = 4096
"""Largest prefetch depth accepted (each job in flight holds one instance's reference)."""
MAX_WORKERS = 256
"""Most worker processes one pool may start."""
WAIT_TIMEOUT = 600.0
"""Seconds the caller waits for one reference before it stops trusting the pool, rebuilds it
and computes the reference itself: ten times the default work budget of a reference
(:data:`~npgym.results.DEFAULT_TIME_LIMIT`, 60 nominal seconds), so only a hung worker hits it."""
MAX_RESTARTS = 3
"""Pool rebuilds after a worker died or hung; past this, every reference is computed in-process."""
CLOSE_GRACE = 5.0
"""Seconds a worker has to exit after SIGTERM before :meth:`ReferencePool.close` kills it."""
UNGUARDED_MAIN_EXIT = 87
"""Exit status of a worker that, while importing its parent's script (``spawn``), was asked to
start a pool itself: the script has no ``if __name__ == "__main__":`` guard."""
WORKER_NAME = "npgym-reference-worker"
"""Name of the pool's worker processes (how a starting worker knows it is one)."""


class ReferencePoolFallback(RuntimeWarning):
    """A :class:`ReferencePool` switched itself off: every reference is computed in the caller's
    process from then on (the rows stay the same, the trainer waits for each)."""


class _WorkerProcess(SpawnProcess):
    """A spawned worker named :data:`WORKER_NAME`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = f"{WORKER_NAME}-{self.name}"


class _WorkerContext(SpawnContext):
    Process = _WorkerProcess


def _importing_main_in_a_worker() -> bool:
    """Whether this process is one of a pool's workers still importing its parent's script
    (where starting processes raises ``RuntimeError``: the script is unguarded)."""
    process = multiprocessing.current_process()
    return bool(getattr(process, "_inheriting", False)) and process.name.startswith(WORKER_NAME)


@dataclass(frozen=True, slots=True)
class ReferenceJob:
    """One reference to compute, named by how to make its instance (workers regenerate it, so no
    instance crosses the pipe) and which reference it is (as :meth:`npgym.task.Task.reference`
    takes them). ``overrides`` is the generator overrides' JSON text (hashable)."""

    task: str
    seed: int
    tier: str | None = None
    difficulty: float | None = None
    overrides: str | None = None
    exact: bool = True
    time_limit: float | None = None

    @classmethod
    def make(
        cls,
        task: str,
        seed: int,
        tier: str | None = None,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | None = None,
        *,
        exact: bool = True,
        time_limit: float | None = None,
    ) -> ReferenceJob:
        """A job from :meth:`npgym.task.Task.generate`'s arguments and the reference's."""
        text = None if overrides is None else json.dumps(dict(overrides), sort_keys=True)
        return cls(task, int(seed), tier, difficulty, text, exact, time_limit)

    def instance(self) -> Instance:
        """The job's instance, generated afresh."""
        overrides = None if self.overrides is None else json.loads(self.overrides)
        return get_task(self.task).generate(self.seed, self.tier, self.difficulty, overrides)

    def solve(self, instance: Instance) -> Reference:
        """The job's reference of ``instance``, computed in this process (memoised on it)."""
        task = get_task(self.task)
        return task.reference(instance, exact=self.exact, time_limit=self.time_limit)


def _solve_job(job: ReferenceJob) -> tuple[str, str]:
    """Worker side: the fingerprint of the job's instance and its reference's JSON."""
    instance = job.instance()
    return instance.fingerprint(), job.solve(instance).model_dump_json()


def _start_worker(parent: int, tasks: tuple[str, ...]) -> None:
    """Worker initializer: exit with the parent, and load the tasks' kernels (one small
    reference each) so that the first real job does not pay for imports and compiles."""
    die_with_parent(parent)
    for name in tasks:
        task = get_task(name)
        task.reference(task.generate(0, tier="easy"), time_limit=1.0)


def _outside_npgym() -> int:
    """The ``stacklevel`` that points a warning issued by this module's caller at the first
    frame outside npgym (the user's line)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _main_script() -> str:
    """The script the process runs, as a worker would import it again."""
    main = sys.modules.get("__main__")
    return repr(getattr(main, "__file__", None) or "__main__")


def _worker_pid() -> int:
    return os.getpid()


def die_with_parent(parent: int) -> None:
    """Make a worker process exit when the process that started it dies, even by ``kill -9``.

    Linux delivers SIGKILL on the parent's death (``PR_SET_PDEATHSIG``); elsewhere a daemon
    thread polls the parent's pid.
    """
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(pr_set_pdeathsig, signal.SIGKILL) == 0:
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(1)
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="npgym-parent-watch").start()


@dataclass(slots=True)
class PoolStats:
    """What a pool did: every reference it handed over came from a worker (``from_pool``) or
    was computed in the caller's process (``in_process``)."""

    submitted: int = 0
    """Jobs sent to the workers."""
    from_pool: int = 0
    """References handed over from a worker."""
    waits: int = 0
    """Times the caller needed a reference that was not ready (not yet done, or never asked
    for): the pool ran dry and the trainer waited."""
    wait_seconds: float = 0.0
    """Wall time the caller spent in those waits."""
    in_process: int = 0
    """References computed in the caller's process (never asked for, or recovered)."""
    discarded: int = 0
    """Jobs dropped unused: guesses about future rows that turned out wrong."""
    recovered: int = 0
    """Jobs whose worker died, hung past ``wait_timeout``, raised, or answered for another
    instance; each was computed again in-process."""
    restarts: int = 0
    """Times the worker processes were rebuilt."""

    def to_dict(self) -> dict[str, float]:
        """The counts as a plain mapping (for logs)."""
        return asdict(self)


class ReferencePool:
    """Worker processes that compute references ahead of the caller (see the module docstring).

    >>> with ReferencePool(workers=2, prefetch=8) as pool:  # doctest: +SKIP
    ...     pool.keep([job, *upcoming_jobs])
    ...     reference = pool.reference(job, instance)
    """

    def __init__(
        self,
        workers: int = 2,
        prefetch: int = DEFAULT_PREFETCH,
        *,
        wait_timeout: float = WAIT_TIMEOUT,
        tasks: Iterable[str] = (),
    ) -> None:
        for name, value, most in (
            ("workers", workers, MAX_WORKERS),
            ("prefetch", prefetch, MAX_PREFETCH),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                raise ValueError(f"{name} must be an integer in [1, {most}], got {value!r}")
        if not (isinstance(wait_timeout, (int, float)) and 0 < wait_timeout < float("inf")):
            raise ValueError(
                f"wait_timeout must be a positive number of seconds, got {wait_timeout!r}"
            )
        self.workers = workers
        self.prefetch = prefetch
        self.wait_timeout = float(wait_timeout)
        self.tasks = tuple(get_task(name).name for name in tasks)
        """Tasks whose kernels each worker loads as it starts."""
        self.stats = PoolStats()
        self._executor: ProcessPoolExecutor | None = None
        self._futures: OrderedDict[ReferenceJob, Future[tuple[str, str]]] = OrderedDict()
        self._closed = False
        self._disabled = False

    # --- feeding the workers --------------------------------------------------------------------

    def keep(self, jobs: Iterable[ReferenceJob]) -> None:
        """Have the first ``prefetch`` of ``jobs`` (the rows about to be needed, soonest first)
        in flight: start those not yet started and discard every other job in flight."""
        if self._closed:
            raise RuntimeError("this ReferencePool is closed")
        wanted: list[ReferenceJob] = []
        for job in jobs:
            if job not in wanted:
                wanted.append(job)
            if len(wanted) == self.prefetch:
                break
        for job in [job for job in self._futures if job not in wanted]:
            self._futures.pop(job).cancel()
            self.stats.discarded += 1
        for job in wanted:
            if job not in self._futures and not self._disabled:
                self._submit(job)

    def _submit(self, job: ReferenceJob) -> None:
        """Send ``job`` to the workers; if they died since the last job, rebuild them first
        (the jobs they held are lost and computed in-process when asked for)."""
        try:
            self._futures[job] = self._pool().submit(_solve_job, job)
        except BrokenProcessPool:
            self._restart()
            if self._disabled:
                return
            self._futures[job] = self._pool().submit(_solve_job, job)
        self.stats.submitted += 1

    def _pool(self) -> ProcessPoolExecutor:
        if _importing_main_in_a_worker():
            os._exit(UNGUARDED_MAIN_EXIT)  # the parent's pool sees it and warns once
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=_WorkerContext(),
                initializer=_start_worker,
                initargs=(os.getpid(), self.tasks),
            )
        return self._executor

    def start(self) -> None:
        """Start every worker now and wait until each has loaded its tasks' kernels (at most
        ``wait_timeout`` seconds), so that a trainer pays the start-up before its first step.
        Optional: workers otherwise start with the first jobs."""
        if self._closed:
            raise RuntimeError("this ReferencePool is closed")
        if self._disabled:
            return
        started = [self._pool().submit(_worker_pid) for _ in range(self.workers)]
        for future in started:
            self._await(future)

    # --- handing references over ----------------------------------------------------------------

    def reference(self, job: ReferenceJob, instance: Instance) -> Reference:
        """The reference of ``instance`` (made as ``job`` says), from the pool when a worker has
        it (waiting for it when it is still running) and else computed here. It is memoised on
        ``instance`` as :meth:`npgym.task.Task.reference` memoises its own."""
        future = self._futures.pop(job, None)
        if future is None:
            self.stats.waits += 1
            started = time.monotonic()
            reference = self._here(job, instance)
            self.stats.wait_seconds += time.monotonic() - started
            return reference
        if not future.done():
            self.stats.waits += 1
            started = time.monotonic()
            answer = self._await(future)
            self.stats.wait_seconds += time.monotonic() - started
        else:
            answer = self._await(future)
        if answer is None or answer[0] != instance.fingerprint():
            self.stats.recovered += 1
            return self._here(job, instance)
        reference = Reference.model_validate_json(answer[1])
        limit = DEFAULT_TIME_LIMIT if job.time_limit is None else float(job.time_limit)
        self.stats.from_pool += 1
        return instance.cached(reference_key(job.exact, limit), lambda: reference)

    def _await(self, future: Future[T]) -> T | None:
        """The worker's answer, or ``None`` when it died, hung or raised (rebuilding the pool
        when a worker may be gone or stuck)."""
        try:
            return future.result(timeout=self.wait_timeout)
        except (BrokenProcessPool, FutureTimeout):
            self._restart()
            return None
        except Exception:  # cancelled, or raised in the worker: computed again in-process
            return None

    def _here(self, job: ReferenceJob, instance: Instance) -> Reference:
        self.stats.in_process += 1
        return job.solve(instance)

    # --- lifecycle ------------------------------------------------------------------------------

    def _restart(self) -> None:
        """Stop the workers (a new set starts on the next job), or switch the pool off for good
        when they cannot start (an unguarded script) or after :data:`MAX_RESTARTS` rebuilds,
        with one warning. Jobs in flight are lost and computed here later."""
        if self._disabled:
            return
        unguarded = UNGUARDED_MAIN_EXIT in self._exit_codes()
        self._stop()
        self.stats.restarts += 1
        if unguarded:
            self._switch_off(
                f"its worker processes could not start, since they import the script "
                f"{_main_script()} again (start method 'spawn'), and it makes the pool without "
                f'an `if __name__ == "__main__":` guard. Fix: put the script\'s code under '
                f'`if __name__ == "__main__":`'
            )
        elif self.stats.restarts > MAX_RESTARTS:
            self._switch_off(
                f"its workers died or hung {self.stats.restarts} times (more than MAX_RESTARTS="
                f"{MAX_RESTARTS})"
            )

    def _switch_off(self, cause: str) -> None:
        """Compute every reference in-process from now on, and say why (once: the pool stays
        off)."""
        self._disabled = True
        warnings.warn(
            f"ReferencePool switched off (every reference is computed in this process from now "
            f"on): {cause}.",
            ReferencePoolFallback,
            stacklevel=_outside_npgym(),
        )

    def _exit_codes(self) -> list[int]:
        """Exit statuses of the workers that have exited. A worker's status can lag its exit
        (the executor's thread may be reaping it), so each is awaited, at most
        :data:`CLOSE_GRACE` seconds."""
        processes = list((getattr(self._executor, "_processes", None) or {}).values())
        exited = [process for process in processes if ready_objects([process.sentinel], timeout=0)]
        deadline = time.monotonic() + CLOSE_GRACE
        while any(process.exitcode is None for process in exited) and time.monotonic() < deadline:
            time.sleep(0.01)
        return [process.exitcode for process in exited if process.exitcode is not None]

    def _stop(self) -> None:
        executor, self._executor = self._executor, None
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()
        if executor is None:
            return
        # ProcessPoolExecutor cannot stop a running job before Python 3.14's terminate_workers:
        # take its processes, let it stop the idle ones, and terminate the rest.
        processes = list(getattr(executor, "_processes", {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
            process.join(CLOSE_GRACE)
            if process.is_alive():
                process.kill()
                process.join()

    def close(self) -> None:
        """Stop the workers (no process outlives this call) and refuse further jobs."""
        if not self._closed:
            self._closed = True
            self._stop()

    def __enter__(self) -> ReferencePool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
