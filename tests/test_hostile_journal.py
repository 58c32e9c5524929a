"""Hostile input at the curriculum journal's boundary (issue 35, section 1): rows that name files
or carry bad keys, files that are not journals, journals with bad lines. None is written to,
truncated or read without bound; each is refused with a clear error (or, for a field that names
where to report, ignored with a warning), and every file is left byte for byte as it was."""

from __future__ import annotations

import json
import os
import random
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import npgym
from npgym.curriculum import AdaptiveCurriculum, CurriculumError
from npgym.integrations.curriculum import (
    JOURNAL_ENV,
    JOURNAL_FIELD,
    JOURNAL_FORMAT,
    JOURNAL_VERSION,
    KEY_FIELD,
    MAX_KEY_CHARS,
    MAX_LINE_BYTES,
    MAX_REASON_CHARS,
    CurriculumJournal,
    JournalWarning,
    check_key,
    configured_journal,
    journal_header,
    report_to_journal,
)
from npgym.integrations.ray_curriculum import (
    ACTOR_FIELD,
    BACKEND_ENV,
    CALL_TIMEOUT_S,
    MAX_TIMEOUT_S,
    NAMESPACE_FIELD,
    TIMEOUT_ENV,
    TIMEOUT_FIELD,
    configured_backend,
    configured_timeout,
    export_environment,
    report_score,
)
from npgym.integrations.verl import compute_score
from npgym.results import Score

FAIL = Score(-0.5, False, False, None, None, None, 0.0, "no answer", 0.0, 0.0)
HUGE = 200 * 1024 * 1024
"""Bytes of the sparse files that hold one endless line (200 MB, costing no disk)."""
BASHRC = b"export PATH=$HOME/bin:$PATH\nalias ll='ls -l'"  # the last line has no newline
READ_BOUND = 3 * MAX_LINE_BYTES
"""The most bytes any refusal below may read (a line is refused after MAX_LINE_BYTES)."""


@pytest.fixture(autouse=True)
def _no_curriculum_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (JOURNAL_ENV, BACKEND_ENV, TIMEOUT_ENV):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def _curriculum() -> AdaptiveCurriculum:
    return AdaptiveCurriculum(["Knapsack"], seed=0, window=4)


def _header() -> bytes:
    return (json.dumps(journal_header(_curriculum()), separators=(",", ":")) + "\n").encode()


def _journal(tmp_path: Path) -> Path:
    """A real journal with one draw (``Knapsack/0``)."""
    path = tmp_path / "journal.jsonl"
    CurriculumJournal(_curriculum(), path).next()
    return path


def _snapshot(path: Path) -> tuple[Any, ...] | None:
    """A file's inode, size, mtime and bytes (``None`` when it is not a regular file), to show it
    was left alone; of a file over 16 MiB (the sparse ones), its first and last MiB."""
    if not path.is_file():
        return None
    status = path.stat()
    with path.open("rb") as handle:
        if status.st_size <= 16 << 20:
            data = handle.read()
        else:
            data = handle.read(1 << 20)
            handle.seek(-(1 << 20), os.SEEK_END)
            data += handle.read()
    return status.st_ino, status.st_size, status.st_mtime_ns, data


def _row(**extra: Any) -> dict[str, Any]:
    """A verl row's ``extra_info``: a small Knapsack instance and ``extra``."""
    instance = npgym.get_task("Knapsack").generate(0, difficulty=0.0)
    return {"task": "Knapsack", "instance": instance.to_json(), **extra}


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The byte counts of every ``os.pread`` and ``os.read`` from now on."""
    counts: list[int] = []
    pread, read = os.pread, os.read

    def counting_pread(fd: int, length: int, offset: int) -> bytes:
        data = pread(fd, length, offset)
        counts.append(len(data))
        return data

    def counting_read(fd: int, length: int) -> bytes:
        data = read(fd, length)
        counts.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting_pread)
    monkeypatch.setattr(os, "read", counting_read)
    return counts


# --- the rows: a parquet row that names ~/.bashrc ----------------------------------------


def test_a_row_naming_bashrc_with_a_shell_key_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the old code this truncated the last line of ``~/.bashrc`` and appended one that the
    shell runs at the next login."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    bashrc = home / ".bashrc"
    bashrc.write_bytes(BASHRC)
    before = _snapshot(bashrc)
    row = _row(**{JOURNAL_FIELD: str(bashrc), KEY_FIELD: "$(touch ~/pwned)"})
    with pytest.warns(JournalWarning, match="ignored"), pytest.raises(CurriculumError, match="key"):
        compute_score("npgym/Knapsack", "no answer", None, row)
    assert _snapshot(bashrc) == before and sorted(home.iterdir()) == [bashrc]


def test_a_row_naming_bashrc_reports_to_the_configured_journal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    bashrc = home / ".bashrc"
    bashrc.write_bytes(BASHRC)
    before = _snapshot(bashrc)
    journal = _journal(tmp_path)
    row = _row(**{JOURNAL_FIELD: str(bashrc), KEY_FIELD: "Knapsack/0"})
    with (
        pytest.warns(JournalWarning, match="ignored"),
        pytest.raises(CurriculumError, match=f"{JOURNAL_ENV} is not set"),
    ):
        compute_score("npgym/Knapsack", "no answer", None, row)  # nothing configured: refused
    assert _snapshot(bashrc) == before
    monkeypatch.setenv(JOURNAL_ENV, str(journal))
    with pytest.warns(JournalWarning, match=f"{JOURNAL_FIELD}\\): ignored"):
        compute_score("npgym/Knapsack", "no answer", None, row)
    assert _snapshot(bashrc) == before
    last = json.loads(journal.read_bytes().splitlines()[-1])
    assert last["report"] == "Knapsack/0"


# --- rows: fields that name where to report are ignored, never opened ----------------------------

VICTIMS: dict[str, Callable[[Path], Path]] = {}


def _victim(kind: str) -> Callable[[Callable[[Path], Path]], Callable[[Path], Path]]:
    def register(make: Callable[[Path], Path]) -> Callable[[Path], Path]:
        VICTIMS[kind] = make
        return make

    return register


@_victim("text file without a final newline")
def _text(folder: Path) -> Path:
    path = folder / "victim.txt"
    path.write_bytes(BASHRC)
    return path


@_victim("binary file")
def _binary(folder: Path) -> Path:
    path = folder / "ckpt.bin"
    path.write_bytes(random.Random(0).randbytes(1 << 20).replace(b"\n", b"\0"))
    return path


@_victim("FIFO")
def _fifo(folder: Path) -> Path:
    path = folder / "fifo"
    os.mkfifo(path)
    return path


@_victim("directory")
def _directory(folder: Path) -> Path:
    path = folder / "folder"
    path.mkdir()
    return path


@_victim("symlink to /dev/zero")
def _zero_link(folder: Path) -> Path:
    path = folder / "zero"
    path.symlink_to("/dev/zero")
    return path


@_victim("dangling symlink")
def _dangling(folder: Path) -> Path:
    path = folder / "dangling"
    path.symlink_to(folder / "created-through-the-link")
    return path


@_victim("character device")
def _device(folder: Path) -> Path:
    return Path("/dev/zero")


@pytest.mark.parametrize("kind", sorted(VICTIMS))
@pytest.mark.parametrize("field", [JOURNAL_FIELD, ACTOR_FIELD])
def test_a_row_naming_a_file_is_warned_about_and_the_file_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, field: str
) -> None:
    journal = _journal(tmp_path / "run")
    victim = VICTIMS[kind](tmp_path)
    before = sorted(tmp_path.iterdir()), _snapshot(victim)
    monkeypatch.setenv(JOURNAL_ENV, str(journal))
    name = str(victim) if field == JOURNAL_FIELD else f"npgym-curriculum:{victim}"
    with pytest.warns(JournalWarning, match=field):
        assert report_score({field: name, KEY_FIELD: "Knapsack/0"}, FAIL)
    assert (sorted(tmp_path.iterdir()), _snapshot(victim)) == before
    assert journal.read_bytes().count(b"\n") == 3  # header, draw, this report


@pytest.mark.parametrize(
    "fields",
    [
        {NAMESPACE_FIELD: "someone-elses"},
        {TIMEOUT_FIELD: 1e9},
        {TIMEOUT_FIELD: "nan"},
        {ACTOR_FIELD: "x", NAMESPACE_FIELD: "y", TIMEOUT_FIELD: -1, JOURNAL_FIELD: "/etc/passwd"},
    ],
    ids=["namespace", "huge-timeout", "nan-timeout", "all-four"],
)
def test_other_destination_fields_are_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any]
) -> None:
    journal = _journal(tmp_path)
    monkeypatch.setenv(JOURNAL_ENV, str(journal))
    with pytest.warns(JournalWarning, match="ignored"):
        assert report_score({**fields, KEY_FIELD: "Knapsack/0"}, FAIL)
    assert json.loads(journal.read_bytes().splitlines()[-1])["report"] == "Knapsack/0"


@pytest.mark.parametrize("key", [None, ""])
def test_a_row_without_a_key_is_not_a_curriculum_row(key: Any) -> None:
    assert not report_score({KEY_FIELD: key}, FAIL)
    assert not report_score({}, FAIL)


# --- keys ----------------------------------------------------------------------------------------

GOOD_KEYS = [
    "Knapsack/0",
    "Invert-TSP/12",
    "my_plugin_task/3",
    "a",
    "task:v2/1.5-x",
    "k" * MAX_KEY_CHARS,  # at the limit
]
BAD_KEYS = [
    "k" * (MAX_KEY_CHARS + 1),  # one past the limit
    "k" * (1 << 20),
    "$(touch ~/pwned)",
    "`touch pwned`",
    "Knapsack/0\nrm -rf ~",
    'Knapsack/0\n{"issue":"Knapsack/1"}',
    "Knapsack/0\r",
    "Knapsack 0",
    "Knapsack\t0",
    'Knapsack"0',
    "Knapsack'0",
    "Knapsack;0",
    "Knapsack|0",
    "Knapsack>0",
    "Knapsack\\0",
    "Knapsack\x000",
    "Knapsack\x1b[2J",
    "Knäpsack/0",
    "Knapsack/0\u2028",
    "Knapsack/\ud800",
    "*",
]
NOT_STRINGS = [0, 1.5, True, ["Knapsack/0"], {"Knapsack": 0}, b"Knapsack/0"]


@pytest.mark.parametrize("key", GOOD_KEYS)
def test_keys_within_the_charset_and_length_are_taken(key: str) -> None:
    assert check_key(key) == key


@pytest.mark.parametrize("key", BAD_KEYS + NOT_STRINGS)
def test_a_bad_key_is_refused_and_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: Any
) -> None:
    journal = _journal(tmp_path)
    before = journal.read_bytes()
    monkeypatch.setenv(JOURNAL_ENV, str(journal))
    with pytest.raises(CurriculumError, match="curriculum key"):
        check_key(key)
    with pytest.raises(CurriculumError, match="curriculum key"):
        report_score({KEY_FIELD: key}, FAIL)
    with pytest.raises(CurriculumError, match="curriculum key"):
        report_to_journal(journal, key, FAIL)
    with pytest.raises(CurriculumError, match="curriculum key"):
        CurriculumJournal(_curriculum(), journal).report(key, FAIL)
    assert journal.read_bytes() == before


@pytest.mark.parametrize("extra", [0, 1])
def test_a_reason_is_cut_to_its_limit(tmp_path: Path, extra: int) -> None:
    journal = _journal(tmp_path)
    reason = "r" * (MAX_REASON_CHARS + extra)
    report_to_journal(journal, "Knapsack/0", Score(**{**FAIL.to_dict(), "reason": reason}))
    written = json.loads(journal.read_bytes().splitlines()[-1])["score"]["reason"]
    assert written == "r" * MAX_REASON_CHARS


# --- files that are not journals: refused unread past a line, left byte for byte ----------------


def _sparse(path: Path, prefix: bytes = b"", size: int = HUGE, suffix: bytes = b"") -> Path:
    """``prefix``, then zeros up to ``size`` bytes (a hole: no disk used), then ``suffix``."""
    with path.open("wb") as handle:
        handle.write(prefix)
        handle.truncate(size)
        handle.seek(size)
        handle.write(suffix)
    return path


def _format_one(curriculum: AdaptiveCurriculum) -> bytes:
    """The first line of a journal written before journal headers (format 1)."""
    return (json.dumps({"curriculum": journal_header(curriculum)["curriculum"]}) + "\n").encode()


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _header_with(**fields: Any) -> bytes:
    return (json.dumps({**journal_header(_curriculum()), **fields}) + "\n").encode()


def _zero_link_at(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


def _link_to_journal(path: Path) -> Path:
    path.symlink_to(_journal(path.parent / "real"))
    return path


def _dangling_at(path: Path) -> Path:
    path.symlink_to(path.parent / "target.jsonl")
    return path


def _fifo_at(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _directory_at(path: Path) -> Path:
    path.mkdir()
    return path


def _socket_at(path: Path) -> Path:
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.close()
    return path


NOT_JOURNALS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "empty file": (lambda p: _write(p, b""), "it is empty"),
    "1 MB binary without newline": (lambda p: _binary(p.parent), "longer than 65536 bytes"),
    "text file without final newline": (lambda p: _write(p, BASHRC), "not a npgym-curriculum"),
    "json lines": (lambda p: _write(p, b'{"a": 1}\n{"b": 2}\n'), "not a npgym-curriculum"),
    "json list": (lambda p: _write(p, b"[1, 2]\n"), "not a npgym-curriculum"),
    "json string": (lambda p: _write(p, b'"npgym-curriculum-journal"\n'), "not a npgym"),
    "not utf-8": (lambda p: _write(p, b"\xff\xfe{}\n"), "not a npgym-curriculum"),
    "nested 100000 deep": (lambda p: _write(p, b"[" * 100_000 + b"\n"), "longer than"),
    "nested 30000 deep": (lambda p: _write(p, b"[" * 30_000 + b"]" * 30_000 + b"\n"), "not a"),
    "format 1 journal": (lambda p: _write(p, _format_one(_curriculum())), "format 1"),
    "another version": (lambda p: _write(p, _header_with(version=JOURNAL_VERSION + 1)), "format"),
    "version as string": (lambda p: _write(p, _header_with(version="2")), "format '2'"),
    "extra header field": (lambda p: _write(p, _header_with(path="/etc")), "other fields"),
    "other format name": (lambda p: _write(p, _header_with(format="npgym")), "not a npgym"),
    "header without newline": (lambda p: _write(p, _header()[:-1]), "no newline"),
    "200 MB line": (lambda p: _sparse(p), "longer than 65536 bytes"),
    "symlink to /dev/zero": (_zero_link_at, "symbolic link"),
    "symlink to a journal": (lambda p: _link_to_journal(p), "symbolic link"),
    "dangling symlink": (lambda p: _dangling_at(p), "symbolic link"),
    "FIFO": (lambda p: _fifo_at(p), "a FIFO"),
    "directory": (lambda p: _directory_at(p), "a directory"),
    "socket": (lambda p: _socket_at(p), "a socket"),
}


@pytest.mark.parametrize("kind", sorted(NOT_JOURNALS))
def test_a_file_that_is_not_a_journal_is_refused_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    make, message = NOT_JOURNALS[kind]
    folder = tmp_path / "f"
    folder.mkdir()
    path = make(folder / "journal.jsonl")
    listing = sorted(folder.rglob("*"))
    before = _snapshot(path)
    reads = _reads(monkeypatch)
    started = time.perf_counter()
    with pytest.raises(CurriculumError, match=message):
        CurriculumJournal(_curriculum(), path)
    with pytest.raises(CurriculumError, match=message):
        report_to_journal(path, "Knapsack/0", FAIL)
    elapsed = time.perf_counter() - started
    monkeypatch.undo()
    assert sum(reads) <= READ_BOUND, f"read {sum(reads)} bytes"
    assert elapsed < 2.0
    assert _snapshot(path) == before and sorted(folder.rglob("*")) == listing


def test_a_path_through_a_file_is_a_clear_error(tmp_path: Path) -> None:
    victim = _text(tmp_path)
    before = _snapshot(victim)
    with pytest.raises(CurriculumError, match="cannot make its folder"):
        CurriculumJournal(_curriculum(), victim / "journal.jsonl")
    with pytest.raises(CurriculumError, match="cannot reach it"):
        report_to_journal(victim / "journal.jsonl", "Knapsack/0", FAIL)
    assert _snapshot(victim) == before


def test_a_dangling_symlink_is_not_created_through(tmp_path: Path) -> None:
    path = _dangling_at(tmp_path / "journal.jsonl")
    with pytest.raises(CurriculumError, match="symbolic link"):
        CurriculumJournal(_curriculum(), path)
    assert not (tmp_path / "target.jsonl").exists()
    assert [entry.name for entry in tmp_path.iterdir()] == ["journal.jsonl"]


# --- journals with bad lines: corruption is refused, never truncated -----------------------------


def _line(event: Any) -> bytes:
    return (json.dumps(event) + "\n").encode()


def _report_padded_to(length: int) -> bytes:
    """A report line of exactly ``length`` bytes (newline included), for a key never issued."""
    score = {**FAIL.to_dict(), "reason": ""}
    bare = len(_line({"report": "Knapsack/99", "score": score}))
    score["reason"] = "r" * (length - bare)
    line = _line({"report": "Knapsack/99", "score": score})
    assert len(line) == length
    return line


BAD_LINES: dict[str, tuple[bytes, str]] = {
    "line one past the limit": (_report_padded_to(MAX_LINE_BYTES + 1), "longer than 65536"),
    "200 MB line": (b"", "longer than 65536"),  # made sparse below
    "header again": (b"", "not a curriculum journal line"),  # the header, below
    "list": (_line([1, 2]), "not a curriculum journal line"),
    "string": (_line("issue"), "not a curriculum journal line"),
    "null": (_line(None), "not a curriculum journal line"),
    "not json": (b"issue Knapsack/0\n", "malformed"),
    "nested 30000 deep": (b"[" * 30_000 + b"]" * 30_000 + b"\n", "malformed"),
    "deep object": (b'{"a":' * 10_000 + b"1" + b"}" * 10_000 + b"\n", "malformed"),
    "issue with a shell key": (_line({"issue": "$(touch ~/pwned)"}), "curriculum key"),
    "issue with a newline key": (_line({"issue": "Knapsack/0\nx"}), "curriculum key"),
    "issue not a string": (_line({"issue": 0}), "curriculum key"),
    "issue with extra field": (_line({"issue": "Knapsack/1", "path": "/etc"}), "not a curric"),
    "report with a long key": (_line({"report": "k" * 129, "score": {}}), "curriculum key"),
    "report score not a dict": (_line({"report": "Knapsack/0", "score": 1}), "malformed"),
    "report score missing": (_line({"report": "Knapsack/0"}), "not a curriculum"),
    "report score bad fields": (_line({"report": "Knapsack/0", "score": {"x": 1}}), "malformed"),
    "diverging draw": (_line({"issue": "Knapsack/7"}), "diverged"),
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_a_journal_with_a_bad_line_is_refused_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    line, message = BAD_LINES[kind]
    path = _journal(tmp_path)
    if kind == "200 MB line":
        _sparse(path, path.read_bytes(), HUGE, b"\n")
    else:
        with path.open("ab") as handle:
            handle.write(_header() if kind == "header again" else line)
    before = _snapshot(path)
    reads = _reads(monkeypatch)
    started = time.perf_counter()
    with pytest.raises(CurriculumError, match=message):
        CurriculumJournal(_curriculum(), path)
    elapsed = time.perf_counter() - started
    monkeypatch.undo()
    assert sum(reads) <= READ_BOUND and elapsed < 2.0
    assert _snapshot(path) == before


def test_a_line_at_the_limit_is_read(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    with path.open("ab") as handle:
        handle.write(_report_padded_to(MAX_LINE_BYTES))
    with pytest.warns(JournalWarning, match="never issued"):
        replica = CurriculumJournal(_curriculum(), path)
    assert replica.unknown_reports == 1


def test_a_200_mb_tail_without_newline_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _journal(tmp_path)
    _sparse(path, path.read_bytes(), HUGE)
    before = _snapshot(path)
    reads = _reads(monkeypatch)
    with pytest.raises(CurriculumError, match="without a newline"):
        report_to_journal(path, "Knapsack/0", FAIL)
    monkeypatch.undo()
    assert sum(reads) <= READ_BOUND and _snapshot(path) == before


def test_a_journal_replaced_under_a_replica_is_refused(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    replica = CurriculumJournal(_curriculum(), path)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())
    copy.replace(path)  # a valid journal, but not the file this replica replayed
    with pytest.raises(CurriculumError, match="replaced"):
        replica.next()


def test_a_journal_is_created_whole_and_only_where_nothing_is(tmp_path: Path) -> None:
    path = tmp_path / "run" / "journal.jsonl"
    CurriculumJournal(_curriculum(), path)
    assert path.read_bytes() == _header()
    assert [entry.name for entry in path.parent.iterdir()] == ["journal.jsonl"]
    header = json.loads(path.read_bytes())
    assert (header["format"], header["version"]) == (JOURNAL_FORMAT, JOURNAL_VERSION)


# --- the configuration: environment variables -----------------------------------------------------


def test_the_journal_variable_must_be_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    assert configured_journal() is None
    monkeypatch.setenv(JOURNAL_ENV, "runs/journal.jsonl")
    with pytest.raises(CurriculumError, match="absolute"):
        configured_journal()
    with pytest.raises(CurriculumError, match="absolute"):
        report_score({KEY_FIELD: "Knapsack/0"}, FAIL)


def test_a_journal_variable_naming_a_file_that_is_not_a_journal_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = _text(tmp_path)
    before = _snapshot(victim)
    monkeypatch.setenv(JOURNAL_ENV, str(victim))
    with pytest.raises(CurriculumError, match="refused, and left as it is"):
        report_score({KEY_FIELD: "Knapsack/0"}, FAIL)
    assert _snapshot(victim) == before


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", CALL_TIMEOUT_S), ("0.5", 0.5), (repr(MAX_TIMEOUT_S), MAX_TIMEOUT_S)],
)
def test_the_timeout_variable_within_its_bounds(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: float
) -> None:
    monkeypatch.setenv(TIMEOUT_ENV, value)
    assert configured_timeout() == expected


@pytest.mark.parametrize("value", [repr(MAX_TIMEOUT_S * (1 + 1e-9)), "0", "-1", "nan", "x"])
def test_the_timeout_variable_past_its_bounds(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(TIMEOUT_ENV, value)
    with pytest.raises(ValueError, match=TIMEOUT_ENV):
        configured_timeout()


def test_the_backend_variable_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert configured_backend() == "journal"  # not connected to Ray
    monkeypatch.setenv(BACKEND_ENV, "ray")
    assert configured_backend() == "ray"
    monkeypatch.setenv(BACKEND_ENV, "nfs")
    with pytest.raises(ValueError, match=BACKEND_ENV):
        configured_backend()


def test_the_environment_a_dataset_exports_must_agree_with_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "journal.jsonl"
    monkeypatch.setenv(TIMEOUT_ENV, "60")
    monkeypatch.setenv(BACKEND_ENV, "auto")
    export_environment(journal, "journal", 60.0)  # "60" is 60.0, and auto agrees with either
    assert os.environ[JOURNAL_ENV] == str(journal) and os.environ[BACKEND_ENV] == "journal"
    export_environment(tmp_path / "second.jsonl", "journal", 60.0)  # ours to change
    monkeypatch.setenv(JOURNAL_ENV, str(tmp_path / "the-users.jsonl"))
    with pytest.raises(ValueError, match="reward workers would report elsewhere"):
        export_environment(journal, "journal", 60.0)
