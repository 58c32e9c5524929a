"""The self-play pool's journal: every offer's result, one JSON line, crash-safe and bounded.

A :class:`~npgym.selfplay.pool.SelfPlayPool` made with ``journal=path`` keeps its state in an
append-only JSON-lines file with the curriculum journal's guarantees (the primitives of
:mod:`npgym.journal`; see :mod:`npgym.integrations.curriculum` for the argument):

- Its first line is the header ``{"format": "npgym-selfplay-journal", "version": 1, "pool":
  {...}}`` (:data:`JOURNAL_FORMAT`, :data:`JOURNAL_VERSION`; the pool's options,
  :meth:`SelfPlayPool.options`). It is created whole (a new file hard-linked to the path, which
  fails if anything is there); a file without this header, or with another pool's options, is
  refused with a :class:`PoolJournalError` and left byte for byte as it was. A symlink,
  directory, FIFO, socket or device is refused without being opened.
- Each offer's result is one line: ``{"refuse": "<reason>"}`` for a refusal (so counts replay),
  ``{"admit": {"task", "fingerprint", "instance", "reference", "provenance"}}`` for an admission
  (the instance's canonical fields, its proven reference with its certificate, and the
  provenance). Every line is at most :data:`MAX_LINE_BYTES` bytes with its newline: an admission
  whose line would be longer (none within the Invert caps comes near it: an instance is at most
  about 20,000 characters, its reference a few thousand) is refused as ``format`` (over the
  caps), and nothing is written for it but that refusal.
- Lines are written under an exclusive ``flock``, each in one ``write``; a line torn by a writer
  that died is dropped by whoever takes the lock next (with a
  :class:`~npgym.journal.JournalWarning`), a longer tail is refused. Several processes may
  share one journal: each replays the others' lines under the lock before it writes, so an
  instance two of them admit at once is admitted once (the second is a ``duplicate``).

Replaying applies the lines, solving nothing: reopening a journal gives the same entries (the
live entry is built from its own line, as a replayed one is), the same counts, and further
offers append the same bytes. Any other malformed line is corruption: a
:class:`PoolJournalError`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import npgym.journal as journals

JOURNAL_FORMAT = "npgym-selfplay-journal"
"""The ``format`` of a pool journal's header line."""
JOURNAL_VERSION = 1
"""The pool journal format this npgym writes and reads."""
MAX_LINE_BYTES = 1 << 18
"""Longest pool journal line, in bytes with its newline (262144): longer lines are refused
unread, and an admission that would need one is refused as ``format``."""

Apply = Callable[[Any], None]
"""The pool's reader of one line's event (raising ``ValueError``, ``KeyError`` or
``TypeError`` on a malformed one)."""


class PoolJournalError(ValueError):
    """A pool journal that is refused (not one, another pool's, replaced) or corrupt."""


class LineTooLongError(PoolJournalError):
    """A line would be longer than :data:`MAX_LINE_BYTES` (nothing was written)."""


def _kind() -> journals.JournalKind:
    """The pool journal for the shared primitives (its line cap read now, so a test can lower
    it)."""
    return journals.JournalKind(
        noun="self-play pool journal", error=PoolJournalError, max_line_bytes=MAX_LINE_BYTES
    )


def _read_header(fd: int, path: Path, kind: journals.JournalKind) -> dict[str, Any]:
    """The header line of the journal open on ``fd``, refused unless it is a pool journal's
    header of this version."""
    line = journals.first_line(fd, path, kind)
    try:
        header = json.loads(line)
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != JOURNAL_FORMAT:
        raise kind.refuse(path, f"its first line is not a {JOURNAL_FORMAT} header")
    if header.get("version") != JOURNAL_VERSION:
        raise kind.refuse(
            path,
            f"its header is of journal format {header.get('version')!r}, not {JOURNAL_VERSION}",
        )
    if header.keys() != {"format", "version", "pool"} or not isinstance(header["pool"], dict):
        raise kind.refuse(path, "its header has other fields than format, version and pool")
    return header


def read_options(path: str | Path) -> dict[str, Any]:
    """The pool options the header of the journal at ``path`` names (the file checked as every
    open is, and only its first line read): what :meth:`SelfPlayPool.open` builds a pool from."""
    path, kind = Path(path), _kind()
    found: list[dict[str, Any]] = []
    fd = journals.open_checked(path, kind, lambda fd, at: found.append(_read_header(fd, at, kind)))
    os.close(fd)
    options: dict[str, Any] = found[0]["pool"]
    return options


def journal_header(options: Mapping[str, Any]) -> dict[str, Any]:
    """The header line a journal of a pool with ``options`` begins with."""
    return {"format": JOURNAL_FORMAT, "version": JOURNAL_VERSION, "pool": dict(options)}


class PoolJournal:
    """The journal file behind a :class:`~npgym.selfplay.pool.SelfPlayPool` (see the module
    docstring): it appends events and hands every line it has not applied yet, the pool's own
    and other processes', to ``apply``, in file order."""

    def __init__(self, path: str | Path, options: Mapping[str, Any], apply: Apply) -> None:
        self.path = Path(path)
        self.kind = _kind()
        self.header = journal_header(options)
        self.apply = apply
        self._offset = 0
        self._identity: tuple[int, int] | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise PoolJournalError(
                f"self-play pool journal {self.path}: cannot make its folder ({error})"
            ) from error
        try:
            os.lstat(self.path)
        except FileNotFoundError:
            journals.create(self.path, journals.encode(self.header, self.kind), self.kind)
        self.sync()

    def _check_header(self, fd: int, path: Path) -> None:
        header = _read_header(fd, path, self.kind)
        if header != self.header:
            raise self.kind.refuse(
                path,
                f"it was written by a pool with other options ({header['pool']!r:.300}); "
                "use a new journal file",
            )

    @contextmanager
    def _locked(self) -> Iterator[int]:
        """The journal under its lock, its new lines applied; refused if it is no longer the
        file this pool first opened."""
        with journals.locked(self.path, self.kind, self._check_header) as fd:
            opened = os.fstat(fd)
            identity = (opened.st_dev, opened.st_ino)
            if self._identity is None:
                self._identity = identity
            elif identity != self._identity:
                raise PoolJournalError(
                    f"self-play pool journal {self.path} was replaced by another file since "
                    "this pool opened it"
                )
            for line in journals.lines(fd, self._offset, self.path, self.kind):
                self._apply_line(line)
            yield fd

    def sync(self) -> None:
        """Apply the lines appended since the last call (other processes' offers)."""
        with self._locked():
            pass

    def write(self, event: Callable[[], Mapping[str, Any]]) -> None:
        """Under the lock, with every earlier line applied, append the event ``event()``
        returns and apply it. :class:`LineTooLongError` (nothing written) when its line would
        be longer than :data:`MAX_LINE_BYTES`."""
        with self._locked() as fd:
            try:
                line = journals.encode(event(), self.kind)
            except PoolJournalError as error:
                raise LineTooLongError(str(error)) from None
            journals.append(fd, line)
            self._apply_line(line)

    def _apply_line(self, line: bytes) -> None:
        where = f"{self.path} (the line at byte {self._offset})"
        try:
            event = json.loads(line)
            if self._offset == 0:
                if event != self.header:  # checked on open: changed since
                    raise PoolJournalError("not this pool's header")
            else:
                self.apply(event)
        except PoolJournalError as error:
            raise PoolJournalError(f"{where}: {error}") from error
        except (KeyError, TypeError, ValueError, RecursionError) as error:
            raise PoolJournalError(f"{where}: malformed journal line: {error!r:.300}") from error
        self._offset += len(line)
