"""Append-only JSON-lines journals that survive writers killed at any point.

The primitives behind the curriculum's journal (:class:`npgym.integrations.curriculum.
CurriculumJournal`) and the self-play pool's (:mod:`npgym.selfplay.journal`); each says what it
is with a :class:`JournalKind` (its name in messages, its error class, its line cap), and keeps
its own header and lines. What they guarantee (see the curriculum journal's docstring for the
whole argument):

- a journal is created whole: its header line is written to a new file (``O_CREAT | O_EXCL |
  O_NOFOLLOW``) in the same folder and hard-linked to the journal's path, which fails if
  anything at all is there (:func:`create`);
- it is opened only when it is a regular file (``lstat`` before the open, ``fstat`` after, the
  same inode) whose first line passes the kind's header check; nothing else is read or written
  (:func:`open_checked`, :func:`first_line`);
- every line is at most the kind's ``max_line_bytes`` bytes with its newline, written in one
  ``write`` (continued after a short write) under an exclusive ``flock`` (:func:`append`,
  :func:`encode`), and read at most that many bytes at a time (:func:`lines`);
- whoever takes the lock drops a torn last line (fewer bytes than a line's cap after the last
  newline: a writer died mid-line) with a :class:`JournalWarning`; a longer tail is refused and
  left as it is (:func:`locked`).
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import stat
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

READ_CHUNK = 1 << 12
"""Bytes read at a time when looking for the end of a journal's header line."""
REPLAY_CHUNK = 1 << 16
"""Bytes read at a time when replaying a journal's lines."""


class JournalWarning(RuntimeWarning):
    """A journal's torn last line was dropped, it holds lines it cannot apply (counted), or a
    row named a journal (ignored)."""


@dataclass(frozen=True)
class JournalKind:
    """What a journal is, for its checks and messages."""

    noun: str
    """Its name in messages (``"curriculum journal"``)."""
    error: Callable[[str], Exception]
    """The exception every refusal raises (built from its message)."""
    max_line_bytes: int
    """Longest line, in bytes with its newline."""
    missing: str = ""
    """Added to the message of a journal that is not there (what to do about it)."""

    def refuse(self, path: Path, why: str) -> Exception:
        """The error for a file at ``path`` that is refused, and left as it is."""
        return self.error(f"{self.noun} {path}: {why}; refused, and left as it is")


HeaderCheck = Callable[[int, Path], None]
"""A kind's header check: ``(descriptor, path)``, raising the kind's error."""


def file_kind(mode: int) -> str | None:
    """What a file of ``mode`` is, when it is not a regular file (``None`` when it is)."""
    kinds = {
        stat.S_ISLNK: "a symbolic link",
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISSOCK: "a socket",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
    }
    for test, kind in kinds.items():
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def create(path: Path, header: bytes, kind: JournalKind) -> None:
    """Make the journal ``path`` holding only ``header``, atomically: the header goes to a new
    file (``O_EXCL | O_NOFOLLOW``) in the same folder, hard-linked to ``path``. Nothing happens
    if something is already at ``path`` (a journal that another process just made, or anything
    else, which the opener then checks)."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.new")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temporary, flags, 0o644)
        try:
            try:
                append(fd, header)
            finally:
                os.close(fd)
            with suppress(FileExistsError):
                os.link(temporary, path, follow_symlinks=False)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(temporary)
    except OSError as error:
        raise kind.error(f"{kind.noun} {path}: cannot create it ({error})") from error


def open_checked(path: Path, kind: JournalKind, check_header: HeaderCheck) -> int:
    """A descriptor (read-write, appending) on the journal at ``path``, after the checks of the
    module docstring: a regular file (``lstat`` before the open, ``fstat`` after, the same
    inode) whose first line passes ``check_header``. Nothing is read before the first check."""
    try:
        before = os.lstat(path)
    except FileNotFoundError as error:
        raise kind.error(f"{kind.noun} {path} not found{kind.missing}") from error
    except OSError as error:
        raise kind.error(f"{kind.noun} {path}: cannot reach it ({error})") from error
    what = file_kind(before.st_mode)
    if what is not None:
        raise kind.refuse(path, f"it is {what}, not a journal file")
    flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise kind.error(f"{kind.noun} {path}: cannot open it ({error})") from error
    try:
        after = os.fstat(fd)
        what = file_kind(after.st_mode)
        if what is not None or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise kind.refuse(path, f"it was replaced while being opened (by {what or 'a file'})")
        check_header(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def first_line(fd: int, path: Path, kind: JournalKind) -> bytes:
    """The file's first line with its newline, read :data:`READ_CHUNK` bytes at a time and
    never more than the kind's line cap in all."""
    cap = kind.max_line_bytes
    head = b""
    while len(head) < cap:
        chunk = os.pread(fd, min(READ_CHUNK, cap - len(head)), len(head))
        newline = chunk.find(b"\n")
        if newline >= 0:
            return head + chunk[: newline + 1]
        if not chunk:
            what = "it is empty" if not head else "its first line has no newline"
            raise kind.refuse(path, f"{what}, so it has no journal header")
        head += chunk
    raise kind.refuse(path, f"its first line is longer than {cap} bytes: not a journal header")


@contextmanager
def locked(path: Path, kind: JournalKind, check_header: HeaderCheck) -> Iterator[int]:
    """The journal's descriptor (checked as :func:`open_checked` says) under an exclusive
    ``flock``, with any torn last line already dropped; closing it releases the lock, as a
    writer's death does."""
    fd = open_checked(path, kind, check_header)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        drop_torn_tail(fd, path, kind)
        yield fd
    finally:
        os.close(fd)


def drop_torn_tail(fd: int, path: Path, kind: JournalKind) -> None:
    """Truncate the bytes after the last newline. The caller holds the lock, under which every
    line is written whole, so they are what a writer that died mid-line left behind: fewer than
    a line's cap. A longer tail is no torn line: refused, and left as it is."""
    cap = kind.max_line_bytes
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    start = max(size - cap, 0)
    newline = os.pread(fd, size - start, start).rfind(b"\n")
    if newline < 0:
        raise kind.refuse(
            path,
            f"it ends with {cap} bytes or more without a newline, longer than any "
            "journal line (so not a line torn by a writer that died)",
        )
    end = start + newline + 1
    os.ftruncate(fd, end)
    warnings.warn(
        f"{kind.noun} {path}: dropped a torn last line of {size - end} bytes (a writer "
        "died while writing it); the whole lines before it are kept",
        JournalWarning,
        stacklevel=4,
    )


def lines(fd: int, offset: int, path: Path, kind: JournalKind) -> Iterator[bytes]:
    """The whole lines from ``offset`` on, each with its newline, read :data:`REPLAY_CHUNK`
    bytes at a time: a line longer than the kind's cap is refused once that many of its bytes
    are read, never read whole."""
    cap = kind.max_line_bytes
    pending = b""
    position = offset  # where ``pending`` begins in the file
    while chunk := os.pread(fd, REPLAY_CHUNK, position + len(pending)):
        pending += chunk
        start = 0
        while (newline := pending.find(b"\n", start)) >= 0 and newline - start < cap:
            yield pending[start : newline + 1]
            start = newline + 1
        position += start
        pending = pending[start:]
        if len(pending) >= cap:
            raise kind.error(
                f"{kind.noun} {path}: the line at byte {position} is longer than "
                f"{cap} bytes: the journal is corrupt"
            )


def append(fd: int, line: bytes) -> int:
    """Write ``line`` at the journal's end (the caller holds the lock) and return the offset
    after it. A short write goes on from where it stopped, still under the lock; a writer that
    dies part way leaves a torn tail for the next lock holder to drop."""
    data = memoryview(line)
    while data:
        data = data[os.write(fd, data) :]
    return os.lseek(fd, 0, os.SEEK_CUR)


def encode(event: Mapping[str, Any] | Any, kind: JournalKind) -> bytes:
    """``event`` as one compact JSON line; the kind's error if it would be longer than its cap
    (no reader would take it)."""
    line = (json.dumps(event, separators=(",", ":")) + "\n").encode("utf-8")
    if len(line) > kind.max_line_bytes:
        raise kind.error(
            f"a {kind.noun} line of {len(line)} bytes is longer than {kind.max_line_bytes}"
        )
    return line
