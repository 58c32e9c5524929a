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

**Where the journal comes from.** Never from a row: a row is data (a parquet file may come from
anyone), so it carries only its ``curriculum_key``. The journal is the trainer's configuration:
the :class:`CurriculumJournal` a dataset was built with, and for reward workers (other
processes) the environment variable ``NPGYM_CURRICULUM_JOURNAL`` (:data:`JOURNAL_ENV`), an
absolute path. :func:`npgym.integrations.verl_curriculum.curriculum_draws` sets it in its own
process, so reward functions run there or in processes started from it (forked DataLoader
workers, ``multiprocessing`` children) find it; processes started elsewhere (Ray workers on any
node) need it in their environment: export it before starting the trainer (and Ray), or give it
to Ray (``+ray_kwargs.ray_init.runtime_env.env_vars.NPGYM_CURRICULUM_JOURNAL=...`` under verl).
A row that still names a journal (``extra_info["curriculum_journal"]``, as rows of earlier
npgym versions did) is ignored with a :class:`JournalWarning`: that path is never opened.

**What a journal is.** A regular file that npgym made, checked before anything is read from it
or written to it (the rules apply to every open: a replica's, a reward worker's, the actor's):

- Its first line is the header ``{"format": "npgym-curriculum-journal", "version": 2,
  "curriculum": {...}}`` (:data:`JOURNAL_FORMAT`, :data:`JOURNAL_VERSION`; the curriculum's
  version, tasks and options). It is created whole: written to a new file (``O_CREAT | O_EXCL |
  O_NOFOLLOW``) in the journal's folder and hard-linked to the journal's path, which fails if
  anything at all (a file, a dangling symlink) is there. A file without the header (empty, a
  user's file, a journal of format 1, which began with the curriculum's options and is no
  longer accepted: start a new journal) is refused with a :class:`CurriculumError` and left
  byte for byte as it was.
- The path is ``lstat``-ed before it is opened and ``fstat``-ed after (the same inode): a
  symlink, directory, FIFO, socket or device is refused without being opened.
- Every line, the header included, is at most :data:`MAX_LINE_BYTES` bytes with its newline;
  the reader reads at most that much for one line (never a whole line at once), so an endless
  line is refused after reading :data:`MAX_LINE_BYTES` bytes. A writer never writes a longer
  line (a report's ``reason`` is cut to :data:`MAX_REASON_CHARS` characters).
- Keys (a row's ``curriculum_key``, a journal's ``issue`` and ``report``) are 1 to
  :data:`MAX_KEY_CHARS` characters of ``A-Z a-z 0-9 _ . : / -`` (:func:`check_key`); any
  other key is refused and never written.

The journal survives writers killed at any point (``kill -9``, a preempted run). Every line
goes out in one ``write`` (continued if the kernel writes part of it) under the lock, so while a
process holds the lock no live writer is mid-line: bytes after the last newline can only be a
line torn by a writer that died, and are fewer than :data:`MAX_LINE_BYTES`. Whoever takes the
lock next (a replica or a reward worker) truncates those bytes and warns with a
:class:`JournalWarning` naming how many bytes it dropped; every whole line is kept, and none is
written twice. A tail of :data:`MAX_LINE_BYTES` bytes or more without a newline is no torn line:
it is refused and left as it is. A report for a key the journal never issued (a stale row from
before a restart, or one older than the curriculum's ``memory``) is skipped and counted in
:attr:`CurriculumJournal.unknown_reports`, with a warning for the first and then one per
:data:`UNKNOWN_REPORT_WARNING_EVERY`. Lines are not ``fsync``-ed: a killed process loses
nothing it wrote (the kernel holds it), but a machine crash may lose the last lines, and leaves
at worst a torn tail. Any other malformed line is corruption and raises :class:`CurriculumError`.

:func:`report_to_journal` is what :func:`npgym.integrations.verl.compute_score` calls (through
:func:`npgym.integrations.ray_curriculum.report_score`) for rows that carry a key.
"""

from __future__ import annotations

import json
import os
import re
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import npgym.journal as journals
from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.datasets import ReferenceMode
from npgym.journal import JournalWarning
from npgym.records import Row, make_record
from npgym.reference_pool import ReferenceJob, ReferencePool
from npgym.registry import get_task, list_tasks
from npgym.results import Reference, Score
from npgym.reward import DEFAULT_REWARD, RewardConfig

if TYPE_CHECKING:
    from npgym.integrations.trl import RewardFunction

KEY_FIELD = "curriculum_key"
"""The column (TRL) or ``extra_info`` field (verl) naming a row's curriculum item."""
JOURNAL_FIELD = "curriculum_journal"
"""The ``extra_info`` field where rows of earlier npgym versions named their journal: now
ignored, with a warning (a path to write never comes from a row)."""
JOURNAL_ENV = "NPGYM_CURRICULUM_JOURNAL"
"""The environment variable naming, as an absolute path, the journal that reward workers report
to (see the module docstring)."""
JOURNAL_FORMAT = "npgym-curriculum-journal"
"""The ``format`` of a journal's header line: a file whose first line does not say it is refused."""
JOURNAL_VERSION = 2
"""The journal format this npgym writes and reads (format 1 had no header naming it)."""
MAX_LINE_BYTES = 1 << 16
"""Longest journal line, in bytes with its newline (65536): longer lines are refused unread."""
MAX_KEY_CHARS = 128
"""Longest curriculum key, in characters (a task name of at most 64, ``/`` and a counter)."""
KEY_PATTERN = re.compile(r"[A-Za-z0-9_.:/-]+")
"""The characters of a curriculum key (no space, quote, ``$``, newline or other control)."""
MAX_REASON_CHARS = 1000
"""A report's ``reason`` is cut to this many characters in the journal (the curriculum reads
only whether the score passed)."""

UNKNOWN_REPORT_WARNING_EVERY = 1000
"""A replica warns about its first report for a key the journal never issued, then once per this
many more (all of them are counted in :attr:`CurriculumJournal.unknown_reports`)."""


_SHARED_LOCK = threading.Lock()
_SHARED: dict[str, AdaptiveCurriculum] = {}


def shared_curriculum(tasks: Sequence[str] | None = None, **options: Any) -> AdaptiveCurriculum:
    """The process's curriculum for ``tasks`` (default: every task) and these
    :class:`AdaptiveCurriculum` ``options``, made on first use: every env of an in-process
    adapter (:mod:`npgym.integrations.skyrl`, :mod:`npgym.integrations.gem`) built with the same
    options draws from and reports to this one object."""
    names = list(tasks or list_tasks())
    if "target" in options:
        options["target"] = tuple(options["target"])
    key = json.dumps([names, options], sort_keys=True, default=str)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = AdaptiveCurriculum(names, **options)
        return _SHARED[key]


def check_key(key: object) -> str:
    """``key`` if it is a curriculum key (a string of 1 to :data:`MAX_KEY_CHARS` characters of
    :data:`KEY_PATTERN`); else :class:`CurriculumError`. Checked before a key is written."""
    if not isinstance(key, str):
        raise CurriculumError(f"a curriculum key is a string, got {type(key).__name__}")
    if len(key) > MAX_KEY_CHARS:
        raise CurriculumError(
            f"a curriculum key has at most {MAX_KEY_CHARS} characters, got {len(key)}"
        )
    if not KEY_PATTERN.fullmatch(key):
        raise CurriculumError(
            f"curriculum key {key!r} has characters outside A-Z a-z 0-9 _ . : / -"
        )
    return key


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


def journal_header(curriculum: AdaptiveCurriculum) -> dict[str, Any]:
    """The header line a journal of ``curriculum`` begins with (its format, and the curriculum's
    version, tasks and options)."""
    state = curriculum.state_dict()
    return {
        "format": JOURNAL_FORMAT,
        "version": JOURNAL_VERSION,
        "curriculum": {key: state[key] for key in ("version", "tasks", "options")},
    }


def configured_journal() -> Path | None:
    """The journal that :data:`JOURNAL_ENV` names in this process's environment (``None``
    when unset); a relative path is refused (reward workers may run in other folders)."""
    value = os.environ.get(JOURNAL_ENV)
    if not value:
        return None
    path = Path(value)
    if not path.is_absolute():
        raise CurriculumError(f"{JOURNAL_ENV} must be an absolute path, got {value!r}")
    return path


KIND = journals.JournalKind(
    noun="curriculum journal",
    error=CurriculumError,
    max_line_bytes=MAX_LINE_BYTES,
    missing=(
        ": rewards must be computed on the machine whose dataset drew the row (the journal is a "
        "local file)"
    ),
)
"""The curriculum journal for the shared journal primitives (:mod:`npgym.journal`)."""


def _check_header(fd: int, path: Path) -> None:
    """Refuse (:class:`CurriculumError`) a file whose first line is not a journal header of
    this format (the replica compares the curriculum in it when it replays)."""
    line = journals.first_line(fd, path, KIND)
    try:
        header = json.loads(line)
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != JOURNAL_FORMAT:
        if isinstance(header, dict) and "curriculum" in header and "format" not in header:
            raise KIND.refuse(
                path,
                "it is a journal of format 1 (npgym before journal headers), which is no longer "
                f"read: start a new journal file (format {JOURNAL_VERSION})",
            )
        raise KIND.refuse(path, f"its first line is not a {JOURNAL_FORMAT} header")
    if header.get("version") != JOURNAL_VERSION:
        raise KIND.refuse(
            path,
            f"its header is of journal format {header.get('version')!r}, not {JOURNAL_VERSION}",
        )
    if header.keys() != {"format", "version", "curriculum"}:
        raise KIND.refuse(path, "its header has other fields than format, version and curriculum")


def _locked(path: Path) -> AbstractContextManager[int]:
    """The journal's descriptor under its exclusive lock (:func:`npgym.journal.locked`)."""
    return journals.locked(path, KIND, _check_header)


def _line(event: Mapping[str, Any]) -> bytes:
    """``event`` as one journal line; :class:`CurriculumError` if it would be longer than
    :data:`MAX_LINE_BYTES` (no reader would take it)."""
    return journals.encode(event, KIND)


def _report_line(key: str, score: Score) -> bytes:
    """A report's line: the checked key and the score, its ``reason`` cut to
    :data:`MAX_REASON_CHARS` characters."""
    fields = score.to_dict()
    fields["reason"] = str(fields["reason"])[:MAX_REASON_CHARS]
    return _line({"report": check_key(key), "score": fields})


def report_to_journal(journal: str | Path, key: str, score: Score) -> None:
    """Append ``score`` under ``key`` to the journal file ``journal`` (from the trainer's
    configuration, never from a row); safe to call from any process. The key is checked
    (:func:`check_key`), and the journal too (the module docstring)."""
    line = _report_line(key, score)
    with _locked(Path(journal)) as fd:
        journals.append(fd, line)


class CurriculumJournal:
    """A replica of an :class:`AdaptiveCurriculum` kept in step through a journal file.

    ``curriculum`` must be fresh (nothing issued). A missing journal is created (its header
    names the curriculum's options); an existing one must be an npgym journal of the same
    options, else it is refused (and left as it is). :meth:`next` replays the lines other
    processes appended, then draws and appends its own draw, all under the file lock. Torn
    lines and reports for unknown keys are handled as the module docstring says; a journal
    replaced by another file after this replica opened it is refused.
    """

    def __init__(self, curriculum: AdaptiveCurriculum, path: str | Path) -> None:
        if any(stat["issued"] for stat in curriculum.stats().values()):
            raise CurriculumError("a journal replica needs a fresh curriculum (nothing issued)")
        self.header = journal_header(curriculum)
        self.curriculum = curriculum
        self.path = Path(path)
        self.unknown_reports = 0
        """Reports this replica skipped because their key was never issued (or is older than
        the curriculum's memory)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CurriculumError(
                f"curriculum journal {self.path}: cannot make its folder ({error})"
            ) from error
        self._offset = 0
        self._identity: tuple[int, int] | None = None
        try:
            os.lstat(self.path)
        except FileNotFoundError:
            journals.create(self.path, _line(self.header), KIND)
        with self._locked() as fd:
            self._replay(fd)

    @contextmanager
    def _locked(self) -> Iterator[int]:
        """The journal under its lock (:func:`_locked`), refused if it is no longer the file
        this replica first opened."""
        with _locked(self.path) as fd:
            opened = os.fstat(fd)
            identity = (opened.st_dev, opened.st_ino)
            if self._identity is None:
                self._identity = identity
            elif identity != self._identity:
                raise CurriculumError(
                    f"curriculum journal {self.path} was replaced by another file since this "
                    "replica opened it"
                )
            yield fd

    def next(self) -> CurriculumItem:
        """Catch up with the journal, draw the next item and record the draw."""
        with self._locked() as fd:
            self._replay(fd)
            item = self.curriculum.next()
            self._offset = journals.append(fd, _line({"issue": check_key(item.key)}))
        return item

    def report(self, key: str, score: Score) -> None:
        """Append a report (its key checked), then replay it with any lines before it (an
        unknown key is counted and warned about, as in replay)."""
        line = _report_line(key, score)
        with self._locked() as fd:
            journals.append(fd, line)
            self._replay(fd)

    def sync(self) -> None:
        """Replay the lines appended since the last call (reports, other replicas' draws)."""
        with self._locked() as fd:
            self._replay(fd)

    def _replay(self, fd: int) -> None:
        """Apply the lines after ``_offset`` (the caller holds the lock: they are all whole)."""
        for line in journals.lines(fd, self._offset, self.path, KIND):
            where = f"{self.path} (the line at byte {self._offset})"
            try:
                self._apply(json.loads(line), where)
            except CurriculumError:
                raise
            except (KeyError, TypeError, ValueError, RecursionError) as error:
                raise CurriculumError(f"{where}: malformed journal line: {error}") from error
            self._offset += len(line)

    def _apply(self, event: Any, where: str) -> None:
        if not isinstance(event, dict):
            raise CurriculumError(f"{where}: not a curriculum journal line: {event!r:.200}")
        if self._offset == 0:
            if event != self.header:
                raise CurriculumError(
                    f"{where}: the journal was written by a curriculum with other options "
                    f"({event.get('curriculum')}); use a new journal file"
                )
        elif event.keys() == {"issue"}:
            key = check_key(event["issue"])
            item = self.curriculum.next()
            if item.key != key:
                raise CurriculumError(
                    f"{where}: replaying draw {key!r} gave {item.key!r}: the journal "
                    "and this replica have diverged"
                )
        elif event.keys() == {"report", "score"}:
            key, score = check_key(event["report"]), Score(**event["score"])
            if self.curriculum.accepts(key):
                self.curriculum.report(key, score)
            else:
                self._skip_unknown(key, where)
        else:
            raise CurriculumError(f"{where}: not a curriculum journal line: {event!r:.200}")

    def _skip_unknown(self, key: str, where: str) -> None:
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
