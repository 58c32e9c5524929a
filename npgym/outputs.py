"""Where npgym writes what it is asked to: every output path is checked before a byte is written.

One rule for every command that takes ``-o`` (``generate``, ``score``, ``export``, ``show``,
``bench build``, ``import np-engine``, ``eval``'s report folder) and for the files written into
an output folder:

- A path that is absent or a regular file is written to a new temporary file beside it
  (``O_EXCL``, so a planted file or link is never followed), flushed to disk and renamed over
  it once complete: a failed write leaves what was there byte for byte, and a reader never sees
  half a file. A new file gets the usual ``0o666 & ~umask`` mode; a replaced one keeps its mode.
- A character device or a FIFO (``/dev/null``, ``/dev/stdout``, a named pipe), also through a
  symbolic link, is written directly: opened without creating or truncating, never replaced
  and never removed. Writing to a FIFO waits for its reader, as ``cat > fifo`` does.
- Anything else is refused with :class:`OutputError` and nothing is written: an empty path, a
  directory, a block device, a socket, and a symbolic link to anything but a character device or
  FIFO (a file, a directory, nothing). npgym writes no file through a link: the path a user
  names is the path that changes, so a link planted in a folder from elsewhere cannot send a
  write outside it. Name the link's target instead.

An output folder (:func:`check_output_folder`) is absent (then created by the command) or a
directory; an empty path, a symbolic link or anything else is refused. The files that npgym names
inside it (``report.json``, ``gallery/*.png``...) are written only when absent or regular files
(``in_folder=True``): the folder may come from elsewhere, and a link, device or FIFO planted in
it is refused, whatever it leads to. Only the last component of
a path is checked: the folders above it are the user's and are followed as they are.

:func:`refuse_overwriting` refuses an output that is one of the command's own inputs (a dataset's
files, the rows being scored, the instance being drawn); a file that a built dataset folder
(one with a ``manifest.json``) holds is refused as an output of any command.
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, cast

__all__ = [
    "OutputError",
    "check_output_folder",
    "open_binary_output",
    "open_output",
    "open_regular",
    "output_target",
    "refuse_overwriting",
]


class OutputError(ValueError):
    """An output path that npgym will not write to; the message says why (one line)."""


_NO_CONTROLLING_TERMINAL = getattr(os, "O_NOCTTY", 0)
"""Opening a terminal to write to it never makes it this process's controlling terminal (POSIX;
Windows has no such flag)."""

TEMPORARY_NAME_TRIES = 16
"""Random temporary names tried beside an output before giving up (48 random bits each)."""

Target = Literal["file", "stream"]
"""How a path is written: ``file`` through a temporary file and a rename, ``stream`` directly."""

MANIFEST = "manifest.json"
"""The file that makes a folder a built dataset (:mod:`npgym.npbench.build`)."""
JOURNAL = ".journal"
"""A dataset folder's build journal (resumes an interrupted build)."""
LOCK = ".lock"
"""A dataset folder's build lock: held while a build writes there."""
CERTIFICATES = "certificates.jsonl"
"""A dataset folder's certificates, beside its rows (:mod:`npgym.npbench.certificates`)."""
TASK_FILE_SUFFIX = ".jsonl"
"""A dataset's task files are ``<Task>.jsonl`` beside its manifest."""


def _is_stream(mode: int) -> bool:
    """A character device or a FIFO: written in place, never replaced."""
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _kind(mode: int) -> str:
    """What kind of file ``mode`` is, in words."""
    kinds = (
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _non_empty(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`Path`; an empty path (which :class:`Path` would read as ``.``) is
    refused."""
    if os.fspath(path) == "":
        raise OutputError("the output path is empty")
    return Path(path)


def output_target(path: str | os.PathLike[str], *, in_folder: bool = False) -> Target:
    """How ``path`` may be written (see the module's rules); :class:`OutputError` when not.

    ``in_folder``: ``path`` is a file that npgym names inside an output folder (``report.json``),
    not one the user named. Such a folder may come from elsewhere (``eval``'s default report
    folder is inside the dataset), so only an absent path or a regular file is written there:
    a link, a device or a FIFO found in it is refused, whatever it leads to."""
    target = _non_empty(path)
    try:
        status = os.lstat(target)
    except FileNotFoundError:
        return "file"
    if stat.S_ISREG(status.st_mode):
        _refuse_dataset_file(target)
        return "file"
    if in_folder:
        raise OutputError(
            f"{target} is {_kind(status.st_mode)}; inside an output folder npgym writes only "
            "regular files"
        )
    if stat.S_ISLNK(status.st_mode):
        try:
            followed = os.stat(target)
        except OSError:
            raise OutputError(f"{target} is a symbolic link to nothing; name a file") from None
        if _is_stream(followed.st_mode):
            return "stream"
        raise OutputError(
            f"{target} is a symbolic link (to {os.path.realpath(target)}); npgym writes no "
            "file through a link: name the file itself"
        )
    if _is_stream(status.st_mode):
        return "stream"
    raise OutputError(f"{target} is {_kind(status.st_mode)}; name a file to write")


def _refuse_dataset_file(target: Path) -> None:
    """Refuse a file that the built dataset folder around it holds: its manifest, build journal
    or lock, or any ``.jsonl`` file beside the manifest (its task files; decided by name, so a
    forged manifest cannot hide one): no command writes over a dataset."""
    folder = target.parent
    if not (folder / MANIFEST).is_file():
        return
    own = [folder / MANIFEST, folder / JOURNAL, folder / LOCK]
    own += [path for path in folder.iterdir() if path.name.endswith(TASK_FILE_SUFFIX)]
    refuse_overwriting(target, own, "the dataset's own")


def _temporary(target: Path) -> tuple[int, Path]:
    """A new, empty file beside ``target`` and its descriptor: created with ``O_EXCL`` (never a
    file or link that was there) and mode ``0o666`` less the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(TEMPORARY_NAME_TRIES):
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            descriptor = os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue
        return descriptor, temporary
    raise OutputError(f"no free temporary name beside {target}")


@contextmanager
def _open(path: str | os.PathLike[str], binary: bool, in_folder: bool) -> Iterator[IO[Any]]:
    """:func:`open_output` and :func:`open_binary_output`: a handle on ``path`` by the rules."""
    target = Path(path)
    mode, encoding = ("wb", None) if binary else ("w", "utf-8")
    if output_target(target, in_folder=in_folder) == "stream":
        descriptor = os.open(target, os.O_WRONLY | _NO_CONTROLLING_TERMINAL)
        if not _is_stream(os.fstat(descriptor).st_mode):  # swapped since it was checked
            os.close(descriptor)
            raise OutputError(f"{target} changed while it was opened; nothing written")
        with os.fdopen(descriptor, mode, encoding=encoding) as handle:
            yield handle
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = _temporary(target)
    try:
        with os.fdopen(descriptor, mode, encoding=encoding) as handle:
            with suppress(FileNotFoundError):  # a replaced file keeps its permissions
                os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if output_target(target, in_folder=in_folder) != "file":  # something else came there
            raise OutputError(f"{target} changed while it was written; nothing replaced")
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def open_regular(path: str | os.PathLike[str], mode: Literal["w", "a", "a+"]) -> IO[str]:
    """``path`` opened as UTF-8 text for a file that npgym keeps in a folder of its own making
    (a build's task files and journal, a sampler's journal): ``w`` empties it, ``a`` and ``a+``
    append. Only when it is absent or a regular file: the folder may come from elsewhere, so a
    link, FIFO, device or folder planted under that name is refused (:class:`OutputError`),
    never followed, written through or waited on."""
    flags = os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= os.O_RDWR if mode == "a+" else os.O_WRONLY
    if mode != "w":
        flags |= os.O_APPEND
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as error:  # ELOOP: a link; ENXIO: a FIFO without a reader; EISDIR: a folder
        raise OutputError(f"{path} is not a regular file ({error.strerror}); remove it") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OutputError(f"{path} is not a regular file; remove it")
    os.set_blocking(descriptor, True)
    if mode == "w":
        os.ftruncate(descriptor, 0)
    return os.fdopen(descriptor, mode, encoding="utf-8")


@contextmanager
def open_output(
    path: str | os.PathLike[str] | None, *, in_folder: bool = False
) -> Iterator[IO[str]]:
    """A text handle (UTF-8) that writes ``path`` by the module's rules (``in_folder``: see
    :func:`output_target`), or standard output when ``path`` is ``None``. The file appears only
    when the block ends without an error."""
    if path is None:
        yield sys.stdout
        return
    with _open(path, binary=False, in_folder=in_folder) as handle:
        yield handle


@contextmanager
def open_binary_output(
    path: str | os.PathLike[str], *, in_folder: bool = False
) -> Iterator[BinaryIO]:
    """:func:`open_output` for bytes (a PNG, a parquet file); a path is required."""
    with _open(path, binary=True, in_folder=in_folder) as handle:
        yield cast(BinaryIO, handle)


def check_output_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` as an output folder: absent (the caller creates it) or a directory. An empty path,
    a symbolic link or anything else is :class:`OutputError`."""
    folder = _non_empty(path)
    try:
        status = os.lstat(folder)
    except FileNotFoundError:
        return folder
    if stat.S_ISDIR(status.st_mode):
        return folder
    if stat.S_ISLNK(status.st_mode):
        raise OutputError(
            f"{folder} is a symbolic link (to {os.path.realpath(folder)}); npgym writes into no "
            "folder through a link: name the folder itself"
        )
    raise OutputError(f"{folder} is {_kind(status.st_mode)}, not a folder")


def _same_file(first: Path, second: Path) -> bool:
    """Whether two paths name one file (by their resolved paths, or by inode when both exist)."""
    if first.resolve() == second.resolve():
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def refuse_overwriting(output: str | os.PathLike[str], inputs: Iterable[Path], owner: str) -> None:
    """Refuse ``output`` when it names one of ``inputs``: ``owner`` says whose files they are
    (``"the dataset's own"`` gives "... is one of the dataset's own files")."""
    target = _non_empty(output)
    if any(_same_file(target, Path(path)) for path in inputs):
        raise OutputError(f"{target} is one of {owner} files; write the output elsewhere")
