"""The adaptive curriculum in trainers: TRL in one process, verl across processes.

TRL (dataset and rewards run in the trainer's process)::

    from npgym.curriculum import AdaptiveCurriculum
    from npgym.integrations.curriculum import curriculum_dataset, curriculum_reward
    cur = AdaptiveCurriculum(["TSP", "Knapsack"], seed=0)
    trainer = GRPOTrainer(model, reward_funcs=[curriculum_reward(cur)],
                          train_dataset=curriculum_dataset(cur),
                          args=GRPOConfig(max_steps=..., shuffle_dataset=False))

Each row is drawn from the curriculum when the trainer asks for it and carries a
``curriculum_key`` column; the reward scores every completion and reports it under that key (a
GRPO group's samples are one report each). Keep ``shuffle_dataset=False``: TRL's buffered
shuffle would draw a thousand rows ahead, at a frontier that is stale by then.

verl computes rewards in other processes than the dataloader's (and its dataloader may run
several worker processes), so the curriculum lives in a :class:`CurriculumJournal`: an
append-only JSON-lines file on the machine, under an exclusive ``flock`` (across machines, a Ray
actor keeps the journal: :mod:`npgym.integrations.ray_curriculum`). Every draw and every
report is one line; each process keeps a replica of the curriculum and replays the lines it has
not seen before it draws, so all replicas agree and keys never collide. Replaying a draw
regenerates its instance (no reference), the one cost of sharing. The journal is also the
curriculum's checkpoint: a new replica replays it from the start and continues exactly.

The journal survives writers killed at any point (``kill -9``, a preempted run). Every line
goes out in one ``write`` (continued if the kernel writes part of it) under the lock, so while a
process holds the lock no live writer is mid-line: bytes after the last newline can only be a
line torn by a writer that died. Whoever takes the lock next (a replica or a reward worker)
truncates those bytes and warns with a :class:`JournalWarning` naming how many bytes it dropped;
every whole line is kept, and none is written twice. A report for a key the journal never issued
(a stale row from before a restart, or one older than the curriculum's ``memory``) is skipped
and counted in :attr:`CurriculumJournal.unknown_reports`, with a warning for the first and then
one per :data:`UNKNOWN_REPORT_WARNING_EVERY`. Lines are not ``fsync``-ed: a killed process loses
nothing it wrote (the kernel holds it), but a machine crash may lose the last lines, and leaves at
worst a torn tail. Any other malformed line is corruption and raises :class:`CurriculumError`.

:func:`report_to_journal` is what :func:`npgym.integrations.verl.compute_score` calls for rows
whose ``extra_info`` names a journal and a key (see :mod:`npgym.integrations.verl_curriculum`).
"""

from __future__ import annotations

import fcntl
import json
import os
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.datasets import ReferenceMode
from npgym.records import Row, make_record
from npgym.reference_pool import ReferenceJob, ReferencePool
from npgym.registry import get_task
from npgym.results import Reference, Score
from npgym.reward import DEFAULT_REWARD, RewardConfig

if TYPE_CHECKING:
    from npgym.integrations.trl import RewardFunction

KEY_FIELD = "curriculum_key"
"""The column (TRL) or ``extra_info`` field (verl) naming a row's curriculum item."""
JOURNAL_FIELD = "curriculum_journal"
"""The ``extra_info`` field naming the journal a verl row's reports go to."""

UNKNOWN_REPORT_WARNING_EVERY = 1000
"""A replica warns about its first report for a key the journal never issued, then once per this
many more (all of them are counted in :attr:`CurriculumJournal.unknown_reports`)."""


class JournalWarning(RuntimeWarning):
    """A journal's torn last line was dropped, or it holds reports for keys it never issued."""


class CurriculumPrefetch:
    """References of a curriculum's items from a :class:`ReferencePool`, computed ahead.

    Calling it with a just-drawn item asks the pool for that item's reference and for those of
    the ``pool.prefetch - 1`` draws that follow if no frontier moves
    (:meth:`AdaptiveCurriculum.upcoming`), discarding earlier guesses that no longer hold; it
    returns the item's reference, waiting only if a worker has not finished it. Call it for each
    item as soon as it is drawn, before the next draw: guesses for items drawn earlier and not
    yet asked for would be discarded (and computed in-process). Rows and rewards are those of
    the pool-less path: a guess is used only for the very instance it named.
    """

    def __init__(
        self, curriculum: AdaptiveCurriculum, pool: ReferencePool, reference: ReferenceMode
    ) -> None:
        if reference == "none":
            raise ValueError("a reference pool needs reference='exact' or 'heuristic'")
        self.curriculum = curriculum
        self.pool = pool
        self.exact = reference == "exact"

    def _job(self, task: str, seed: int, difficulty: float) -> ReferenceJob:
        return ReferenceJob.make(task, seed, difficulty=difficulty, exact=self.exact)

    def __call__(self, item: CurriculumItem) -> Reference:
        seed = item.instance.seed
        assert seed is not None, "a curriculum's instances always carry their seed"
        job = self._job(item.task, seed, item.difficulty)
        ahead = [self._job(*draw) for draw in self.curriculum.upcoming(self.pool.prefetch - 1)]
        self.pool.keep([job, *ahead])
        return self.pool.reference(job, item.instance)


def curriculum_record(
    item: CurriculumItem,
    reference: ReferenceMode = "exact",
    prefetch: CurriculumPrefetch | None = None,
) -> Row:
    """The npgym row of an issued item (its reference solved as ``reference`` asks, by
    ``prefetch`` when given: the same row, computed ahead in its pool)."""
    task = get_task(item.task)
    solved = None
    if prefetch is not None:
        solved = prefetch(item)
    elif reference != "none":
        solved = task.reference(item.instance, exact=reference == "exact")
    return make_record(f"curriculum/{item.key}", task, item.instance, solved)


# --- TRL ----------------------------------------------------------------------------------------


def curriculum_dataset(
    curriculum: AdaptiveCurriculum,
    reference: ReferenceMode = "exact",
    pool: ReferencePool | None = None,
) -> Any:
    """An endless ``datasets.IterableDataset`` drawn from ``curriculum`` as the trainer reads it.

    Rows are TRL rows (``prompt``, ``task``, ``instance``, ``reference``, ...) plus
    ``curriculum_key``. Set ``max_steps`` and ``shuffle_dataset=False`` in ``GRPOConfig``. It
    serves one trainer process (``WORLD_SIZE`` 1): it refuses a multi-process launch. With a
    ``pool`` (:class:`npgym.reference_pool.ReferencePool`, opt-in; give it a ``prefetch`` of at
    least the prompts per step) references are computed ahead in its workers while the trainer
    generates (:class:`CurriculumPrefetch`); the rows are the same, byte for byte.
    """
    prefetch = None if pool is None else CurriculumPrefetch(curriculum, pool, reference)
    from datasets import IterableDataset

    from npgym.trainer_rows import trl_row

    def rows() -> Iterator[dict[str, Any]]:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            raise RuntimeError(
                "curriculum_dataset serves one trainer process: with several, each would hold "
                "its own curriculum and see only its own reports"
            )
        while True:
            item = curriculum.next()
            row = curriculum_record(item, reference, prefetch)
            yield {**trl_row(row), KEY_FIELD: item.key}

    return IterableDataset.from_generator(rows)


def curriculum_reward(
    curriculum: AdaptiveCurriculum, weights: RewardConfig = DEFAULT_REWARD
) -> RewardFunction:
    """The npgym reward (as :func:`npgym.integrations.trl.make_reward`) that also reports each
    completion's :class:`Score` to ``curriculum`` under its row's ``curriculum_key``.

    It logs each task's frontier difficulty as ``npgym/curriculum/<task>/difficulty``.
    """
    from npgym.integrations.trl import LogMetric, batch_reward

    def rewards(
        scores: list[Score], columns: Mapping[str, Any], log_metric: LogMetric | None
    ) -> list[float]:
        for key, score in zip(columns[KEY_FIELD], scores, strict=True):
            curriculum.report(key, score)
        if log_metric is not None:
            for name in curriculum.tasks:
                log_metric(f"npgym/curriculum/{name}/difficulty", curriculum.difficulty(name))
        return [score.reward for score in scores]

    return batch_reward("npgym_reward", weights, rewards)


# --- a curriculum shared by the processes of one machine ----------------------------------------


_TAIL_CHUNK = 1 << 16
"""Bytes read at a time, backwards, when looking for the end of a journal's last whole line."""


@contextmanager
def _locked(path: Path, create: bool = False) -> Iterator[int]:
    """The journal's descriptor (read-write, appending) under an exclusive ``flock``, with any
    torn last line already dropped; closing it releases the lock, as a writer's death does."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _drop_torn_tail(fd, path)
        yield fd
    finally:
        os.close(fd)


def _drop_torn_tail(fd: int, path: Path) -> None:
    """Truncate the bytes after the last newline. The caller holds the lock, under which every
    line is written whole, so they are what a writer that died mid-line left behind."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    end = _whole_lines_end(fd, size)
    os.ftruncate(fd, end)
    warnings.warn(
        f"curriculum journal {path}: dropped a torn last line of {size - end} bytes (a writer "
        "died while writing it); the whole lines before it are kept",
        JournalWarning,
        stacklevel=4,
    )


def _whole_lines_end(fd: int, size: int) -> int:
    """The offset just after the last newline in the first ``size`` bytes (0 when none)."""
    end = size
    while end > 0:
        start = max(end - _TAIL_CHUNK, 0)
        newline = os.pread(fd, end - start, start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


def _append(fd: int, line: bytes) -> int:
    """Write ``line`` at the journal's end (the caller holds the lock) and return the offset
    after it. A short write goes on from where it stopped, still under the lock; a writer that
    dies part way leaves a torn tail for the next lock holder to drop."""
    data = memoryview(line)
    while data:
        data = data[os.write(fd, data) :]
    return os.lseek(fd, 0, os.SEEK_CUR)


def _line(event: Mapping[str, Any]) -> bytes:
    return (json.dumps(event, separators=(",", ":")) + "\n").encode("utf-8")


def _report_line(key: str, score: Score) -> bytes:
    return _line({"report": key, "score": score.to_dict()})


def report_to_journal(extra_info: Mapping[str, Any], score: Score) -> bool:
    """Append ``score`` to the journal a row's ``extra_info`` names; ``False`` when it names
    none (a row not drawn from a curriculum). Safe to call from any process."""
    journal, key = extra_info.get(JOURNAL_FIELD), extra_info.get(KEY_FIELD)
    if not journal or not key:
        return False
    path = Path(journal)
    line = _report_line(str(key), score)
    try:
        with _locked(path) as fd:
            _append(fd, line)
    except (FileNotFoundError, IsADirectoryError) as error:
        raise CurriculumError(
            f"curriculum journal {path} not found: rewards must be computed on the machine "
            "whose dataset drew the row (the journal is a local file)"
        ) from error
    return True


class CurriculumJournal:
    """A replica of an :class:`AdaptiveCurriculum` kept in step through a journal file.

    ``curriculum`` must be fresh (nothing issued); its options are the journal's first line, and
    opening a journal written with other options is refused. :meth:`next` replays the lines
    other processes appended, then draws and appends its own draw, all under the file lock.
    Torn lines and reports for unknown keys are handled as the module docstring says.
    """

    def __init__(self, curriculum: AdaptiveCurriculum, path: str | Path) -> None:
        if any(stat["issued"] for stat in curriculum.stats().values()):
            raise CurriculumError("a journal replica needs a fresh curriculum (nothing issued)")
        state = curriculum.state_dict()
        self.header = {"curriculum": {key: state[key] for key in ("version", "tasks", "options")}}
        self.curriculum = curriculum
        self.path = Path(path)
        self.unknown_reports = 0
        """Reports this replica skipped because their key was never issued (or is older than
        the curriculum's memory)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._offset = 0
        with _locked(self.path, create=True) as fd:
            if os.fstat(fd).st_size == 0:
                _append(fd, _line(self.header))
            self._replay(fd)

    def next(self) -> CurriculumItem:
        """Catch up with the journal, draw the next item and record the draw."""
        with _locked(self.path) as fd:
            self._replay(fd)
            item = self.curriculum.next()
            self._offset = _append(fd, _line({"issue": item.key}))
        return item

    def report(self, key: str, score: Score) -> None:
        """Append a report, then replay it with any lines before it (an unknown key is counted
        and warned about, as in replay)."""
        with _locked(self.path) as fd:
            _append(fd, _report_line(key, score))
            self._replay(fd)

    def sync(self) -> None:
        """Replay the lines appended since the last call (reports, other replicas' draws)."""
        with _locked(self.path) as fd:
            self._replay(fd)

    def _replay(self, fd: int) -> None:
        """Apply the lines after ``_offset`` (the caller holds the lock: they are all whole)."""
        os.lseek(fd, self._offset, os.SEEK_SET)
        with open(fd, "rb", closefd=False) as lines:
            for line in lines:
                where = f"{self.path} (the line at byte {self._offset})"
                try:
                    self._apply(json.loads(line), where)
                except CurriculumError:
                    raise
                except (KeyError, TypeError, ValueError) as error:
                    raise CurriculumError(f"{where}: malformed journal line: {error}") from error
                self._offset += len(line)

    def _apply(self, event: dict[str, Any], where: str) -> None:
        if "curriculum" in event:
            if event != self.header:
                raise CurriculumError(
                    f"{where}: the journal was written by a curriculum with other options "
                    f"({event['curriculum']}); use a new journal file"
                )
        elif "issue" in event:
            item = self.curriculum.next()
            if item.key != event["issue"]:
                raise CurriculumError(
                    f"{where}: replaying draw {event['issue']!r} gave {item.key!r}: the journal "
                    "and this replica have diverged"
                )
        elif "report" in event:
            key, score = event["report"], Score(**event["score"])
            if self.curriculum.accepts(key):
                self.curriculum.report(key, score)
            else:
                self._skip_unknown(key, where)
        else:
            raise CurriculumError(f"{where}: not a curriculum journal line: {event!r}")

    def _skip_unknown(self, key: object, where: str) -> None:
        """Count a report for a key never issued; warn for the first and then once per
        :data:`UNKNOWN_REPORT_WARNING_EVERY`."""
        self.unknown_reports += 1
        if (self.unknown_reports - 1) % UNKNOWN_REPORT_WARNING_EVERY == 0:
            warnings.warn(
                f"{where}: skipped a report for {key!r}, which this journal never issued (a stale "
                f"row, or older than the curriculum's memory of {self.curriculum.memory} items); "
                f"{self.unknown_reports} such reports so far (warned once per "
                f"{UNKNOWN_REPORT_WARNING_EVERY})",
                JournalWarning,
                stacklevel=2,
            )
