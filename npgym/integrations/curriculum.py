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
append-only JSON-lines file on the machine, under an exclusive ``flock``. Every draw and every
report is one line; each process keeps a replica of the curriculum and replays the lines it has
not seen before it draws, so all replicas agree and keys never collide. Replaying a draw
regenerates its instance (no reference), the one cost of sharing. The journal is also the
curriculum's checkpoint: a new replica replays it from the start and continues exactly.
:func:`report_to_journal` is what :func:`npgym.integrations.verl.compute_score` calls for rows
whose ``extra_info`` names a journal and a key (see :mod:`npgym.integrations.verl_curriculum`).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.datasets import ReferenceMode
from npgym.records import Row, make_record
from npgym.registry import get_task
from npgym.results import Score
from npgym.reward import DEFAULT_REWARD, RewardConfig

KEY_FIELD = "curriculum_key"
"""The column (TRL) or ``extra_info`` field (verl) naming a row's curriculum item."""
JOURNAL_FIELD = "curriculum_journal"
"""The ``extra_info`` field naming the journal a verl row's reports go to."""

RewardFunction = Callable[..., list[float]]


def curriculum_record(item: CurriculumItem, reference: ReferenceMode = "exact") -> Row:
    """The npgym row of an issued item (its reference solved as ``reference`` asks)."""
    task = get_task(item.task)
    solved = None
    if reference != "none":
        solved = task.reference(item.instance, exact=reference == "exact")
    return make_record(f"curriculum/{item.key}", task, item.instance, solved)


# --- TRL ----------------------------------------------------------------------------------------


def curriculum_dataset(curriculum: AdaptiveCurriculum, reference: ReferenceMode = "exact") -> Any:
    """An endless ``datasets.IterableDataset`` drawn from ``curriculum`` as the trainer reads it.

    Rows are TRL rows (``prompt``, ``task``, ``instance``, ``reference``, ...) plus
    ``curriculum_key``. Set ``max_steps`` and ``shuffle_dataset=False`` in ``GRPOConfig``. It
    serves one trainer process (``WORLD_SIZE`` 1): it refuses a multi-process launch.
    """
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
            yield {**trl_row(curriculum_record(item, reference)), KEY_FIELD: item.key}

    return IterableDataset.from_generator(rows)


def curriculum_reward(
    curriculum: AdaptiveCurriculum, weights: RewardConfig = DEFAULT_REWARD
) -> RewardFunction:
    """The npgym reward (as :func:`npgym.integrations.trl.make_reward`) that also reports each
    completion's :class:`Score` to ``curriculum`` under its row's ``curriculum_key``.

    It logs each task's frontier difficulty as ``npgym/curriculum/<task>/difficulty``.
    """
    from npgym.integrations.trl import score_completions

    def npgym_reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        task: Sequence[str],
        instance: Sequence[str],
        curriculum_key: Sequence[str],
        reference: Sequence[str | None] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        scores = score_completions(completions, task, instance, reference, weights)
        for key, score in zip(curriculum_key, scores, strict=True):
            curriculum.report(key, score)
        if log_metric is not None:
            for name in curriculum.tasks:
                log_metric(f"npgym/curriculum/{name}/difficulty", curriculum.difficulty(name))
        return [score.reward for score in scores]

    return npgym_reward


# --- a curriculum shared by the processes of one machine ----------------------------------------


@contextmanager
def _locked(path: Path, mode: str) -> Iterator[IO[bytes]]:
    """The journal opened in ``mode`` under an exclusive lock (released on close)."""
    with open(path, mode) as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield handle


def _line(event: Mapping[str, Any]) -> bytes:
    return (json.dumps(event, separators=(",", ":")) + "\n").encode("utf-8")


def report_to_journal(extra_info: Mapping[str, Any], score: Score) -> bool:
    """Append ``score`` to the journal a row's ``extra_info`` names; ``False`` when it names
    none (a row not drawn from a curriculum). Safe to call from any process."""
    journal, key = extra_info.get(JOURNAL_FIELD), extra_info.get(KEY_FIELD)
    if not journal or not key:
        return False
    path = Path(journal)
    if not path.is_file():
        raise CurriculumError(
            f"curriculum journal {path} not found: rewards must be computed on the machine "
            "whose dataset drew the row (the journal is a local file)"
        )
    with _locked(path, "r+b") as handle:
        handle.seek(0, 2)
        handle.write(_line({"report": str(key), "score": score.to_dict()}))
    return True


class CurriculumJournal:
    """A replica of an :class:`AdaptiveCurriculum` kept in step through a journal file.

    ``curriculum`` must be fresh (nothing issued); its options are the journal's first line, and
    opening a journal written with other options is refused. :meth:`next` replays the lines
    other processes appended, then draws and appends its own draw, all under the file lock.
    """

    def __init__(self, curriculum: AdaptiveCurriculum, path: str | Path) -> None:
        if any(stat["issued"] for stat in curriculum.stats().values()):
            raise CurriculumError("a journal replica needs a fresh curriculum (nothing issued)")
        state = curriculum.state_dict()
        self.header = {"curriculum": {key: state[key] for key in ("version", "tasks", "options")}}
        self.curriculum = curriculum
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._offset = 0
        with _locked(self.path, "ab") as handle:
            if handle.tell() == 0:
                handle.write(_line(self.header))
        with _locked(self.path, "rb+"):
            self._replay()

    def next(self) -> CurriculumItem:
        """Catch up with the journal, draw the next item and record the draw."""
        with _locked(self.path, "rb+") as handle:
            self._replay()
            item = self.curriculum.next()
            handle.seek(0, 2)
            handle.write(_line({"issue": item.key}))
            handle.flush()
            self._offset = handle.tell()
        return item

    def sync(self) -> None:
        """Replay the lines appended since the last call (reports, other replicas' draws)."""
        with _locked(self.path, "rb+"):
            self._replay()

    def _replay(self) -> None:
        """Apply the complete lines after ``_offset`` (the caller holds the lock)."""
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            data = handle.read()
        complete = data[: data.rfind(b"\n") + 1]
        for number, line in enumerate(complete.splitlines()):
            where = f"{self.path} (line {number + 1} after byte {self._offset})"
            try:
                self._apply(json.loads(line), where)
            except CurriculumError:
                raise
            except (KeyError, TypeError, ValueError) as error:
                raise CurriculumError(f"{where}: malformed journal line: {error}") from error
        self._offset += len(complete)

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
            self.curriculum.report(event["report"], Score(**event["score"]))
        else:
            raise CurriculumError(f"{where}: not a curriculum journal line: {event!r}")
