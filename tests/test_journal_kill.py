"""The curriculum journal survives writers killed with SIGKILL: a torn last line is dropped (with a
warning) by the next lock holder, an unknown key is counted and warned about, no line that was
written whole is lost or duplicated, and a creator killed mid-way leaves no half journal."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import random
import signal
import time
import warnings
from collections import Counter
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npgym.curriculum import AdaptiveCurriculum, CurriculumError
from npgym.integrations.curriculum import (
    MAX_LINE_BYTES,
    UNKNOWN_REPORT_WARNING_EVERY,
    CurriculumJournal,
    JournalWarning,
    report_to_journal,
)
from npgym.results import Score

FORK = multiprocessing.get_context("fork")
OPTIONS: dict[str, Any] = {"seed": 0, "window": 4}


def _replica(path: Path) -> CurriculumJournal:
    return CurriculumJournal(AdaptiveCurriculum(["Knapsack"], **OPTIONS), path)


def _score(reason: str) -> Score:
    """A failing score whose ``reason`` makes its journal line unique."""
    return Score(-0.5, False, False, None, None, None, 0.0, reason, 0.0, 0.0)


def _report(path: Path, key: str, reason: str = "no answer") -> dict[str, Any]:
    """Report under ``key`` as verl's reward worker does; returns the event it appended."""
    score = _score(reason)
    report_to_journal(path, key, score)
    return {"report": key, "score": score.to_dict()}


def _opened(path: Path) -> tuple[CurriculumJournal, list[str]]:
    """A fresh replica of ``path`` and the journal warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        replica = _replica(path)
    return replica, [str(w.message) for w in caught if issubclass(w.category, JournalWarning)]


def _torn(messages: list[str]) -> list[str]:
    return [message for message in messages if "torn" in message]


def _die_mid_write(path: Path, part: bytes) -> None:
    """Write ``part`` of a line under the writers' lock, then die by SIGKILL."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, part)
    os.kill(os.getpid(), signal.SIGKILL)


def _run_and_kill(target: Callable[..., None], *args: Any) -> None:
    process = FORK.Process(target=target, args=args)
    process.start()
    process.join()
    assert process.exitcode == -signal.SIGKILL


def _journal_with_draws(path: Path, draws: int) -> list[str]:
    replica = _replica(path)
    return [replica.next().key for _ in range(draws)]


# --- a torn tail --------------------------------------------------------------------------------


def test_a_line_torn_by_a_killed_writer_is_dropped_and_the_journal_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    keys = _journal_with_draws(path, 3)
    whole = path.read_bytes()
    torn = b'{"report":"Knapsack/0","score":{"rew'
    _run_and_kill(_die_mid_write, path, torn)
    assert path.read_bytes() == whole + torn
    # The next writer (a reward worker) drops the torn bytes before it appends its line.
    with pytest.warns(JournalWarning, match=f"torn last line of {len(torn)} bytes"):
        appended = _report(path, keys[0])
    lines = path.read_bytes().splitlines(keepends=True)
    assert b"".join(lines[:-1]) == whole and json.loads(lines[-1]) == appended
    replica, messages = _opened(path)  # a restarted replica reads it without complaint
    assert messages == []
    assert replica.curriculum.stats()["Knapsack"]["reports"] == 1
    assert replica.next().key not in keys


def _die_creating(path: Path) -> None:
    """Start creating the journal, and die by SIGKILL half way through its header."""
    real = os.write

    def write(fd: int, data: Any) -> int:
        real(fd, bytes(data[:10]))
        os.kill(os.getpid(), signal.SIGKILL)
        return 0

    os.write = write  # this child only
    _replica(path)


def test_a_creator_killed_mid_header_leaves_no_journal_and_the_next_one_creates_it(
    tmp_path: Path,
) -> None:
    """The header is written to a new file and linked into place whole: a creator's death
    leaves its temporary file (ignored), never a journal without its header."""
    path = tmp_path / "journal.jsonl"
    _run_and_kill(_die_creating, path)
    assert not path.exists()
    (leftover,) = tmp_path.iterdir()
    assert leftover.name.startswith(".journal.jsonl.") and leftover.read_bytes() == b'{"format":'
    replica, messages = _opened(path)
    assert messages == []
    assert [json.loads(line) for line in path.read_bytes().splitlines()] == [replica.header]
    assert replica.next().key == "Knapsack/0"


def test_a_file_holding_a_torn_header_is_not_a_journal(tmp_path: Path) -> None:
    """Bytes without a newline are a torn tail only after a header: alone, they are not a
    journal, refused and left as they are."""
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b'{"format":"npgym-curr')
    with pytest.raises(CurriculumError, match="first line has no newline"):
        _replica(path)
    assert path.read_bytes() == b'{"format":"npgym-curr'


def _open_and_draw(path: Path, barrier: Barrier, results: Any) -> None:
    """One replica: open the journal as the other does, draw twice, say what it saw."""
    barrier.wait()
    replica, messages = _opened(path)
    results.put((_torn(messages), [replica.next().key for _ in range(2)]))


def test_two_replicas_opening_a_torn_journal_at_once_repair_it_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    keys = _journal_with_draws(path, 2)
    whole = path.read_bytes()
    _run_and_kill(_die_mid_write, path, b'{"issue":"Knaps')
    barrier, results = FORK.Barrier(2), FORK.Queue()
    replicas = [FORK.Process(target=_open_and_draw, args=(path, barrier, results)) for _ in "ab"]
    for process in replicas:
        process.start()
    seen = [results.get(timeout=60) for _ in replicas]
    for process in replicas:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert sorted(len(torn) for torn, _ in seen) == [0, 1]  # one repaired, the other saw it done
    drawn = sorted(key for _, draws in seen for key in draws)
    assert len(set(drawn + keys)) == 6
    assert path.read_bytes().startswith(whole)
    replica, messages = _opened(path)
    assert messages == [] and replica.curriculum.stats()["Knapsack"]["issued"] >= 6


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(draws=st.integers(0, 4), cut=st.floats(0.0, 1.0, exclude_max=True), garbage=st.binary())
def test_any_torn_tail_is_dropped_exactly(
    tmp_path_factory: pytest.TempPathFactory, draws: int, cut: float, garbage: bytes
) -> None:
    """A prefix of a real line, or any bytes without a newline, is the torn tail: exactly those
    bytes go, and the replica's state is that of the whole lines."""
    path = tmp_path_factory.mktemp("torn") / "journal.jsonl"
    keys = _journal_with_draws(path, draws)
    if keys:
        _report(path, keys[-1])
    whole = path.read_bytes()
    expected = _replica(path).curriculum.state_dict()
    line = json.dumps({"report": "Knapsack/0", "score": _score("x").to_dict()}).encode()
    tail = line[: int(cut * len(line))] + garbage.replace(b"\n", b"")
    with path.open("ab") as handle:
        handle.write(tail)
    replica, messages = _opened(path)
    assert path.read_bytes() == whole
    assert len(_torn(messages)) == (1 if tail else 0)
    if tail:
        assert f"torn last line of {len(tail)} bytes" in messages[0]
    assert replica.curriculum.state_dict() == expected


@pytest.mark.parametrize("length", [MAX_LINE_BYTES - 2, MAX_LINE_BYTES - 1])
def test_a_torn_tail_up_to_the_longest_line_is_dropped_exactly(tmp_path: Path, length: int) -> None:
    """A torn line is a line without its newline: at most ``MAX_LINE_BYTES - 1`` bytes."""
    path = tmp_path / "journal.jsonl"
    _journal_with_draws(path, 1)
    whole = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b"x" * length)
    replica, messages = _opened(path)
    assert path.read_bytes() == whole and len(messages) == 1
    assert f"torn last line of {length} bytes" in messages[0]
    assert replica.curriculum.stats()["Knapsack"]["issued"] == 1


@pytest.mark.parametrize("length", [MAX_LINE_BYTES, MAX_LINE_BYTES + 5])
def test_a_tail_longer_than_any_line_is_refused_and_kept(tmp_path: Path, length: int) -> None:
    """No writer writes such a tail: it is not truncated (it may be someone's data)."""
    path = tmp_path / "journal.jsonl"
    _journal_with_draws(path, 1)
    with path.open("ab") as handle:
        handle.write(b"x" * length)
    before = path.read_bytes()
    with pytest.raises(CurriculumError, match=f"{MAX_LINE_BYTES} bytes or more without a newline"):
        _replica(path)
    with pytest.raises(CurriculumError, match="without a newline"):
        report_to_journal(path, "Knapsack/0", _score("x"))
    assert path.read_bytes() == before


# --- reports for keys the journal never issued --------------------------------------------------


def test_an_unknown_key_is_counted_and_warned_about_never_raised(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    keys = _journal_with_draws(path, 2)
    _report(path, "Knapsack/99")  # never issued: e.g. a stale row from before a restart
    _report(path, keys[0])
    replica, messages = _opened(path)
    assert replica.unknown_reports == 1
    assert len(messages) == 1 and "'Knapsack/99'" in messages[0]
    assert replica.curriculum.stats()["Knapsack"]["reports"] == 1
    _report(path, "TSP/0")  # a task the curriculum does not even have
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second is counted but not warned about
        replica.sync()
    assert replica.unknown_reports == 2
    assert replica.next().key not in keys


@pytest.mark.parametrize(
    "unknown", [UNKNOWN_REPORT_WARNING_EVERY, UNKNOWN_REPORT_WARNING_EVERY + 1]
)
def test_unknown_key_warnings_are_rate_limited(tmp_path: Path, unknown: int) -> None:
    path = tmp_path / "journal.jsonl"
    _journal_with_draws(path, 1)
    event = {"report": "Knapsack/99", "score": _score("stale").to_dict()}
    with path.open("a") as handle:
        handle.write((json.dumps(event) + "\n") * unknown)
    replica, messages = _opened(path)
    assert replica.unknown_reports == unknown
    # the first, then one per UNKNOWN_REPORT_WARNING_EVERY more
    assert len(messages) == (1 if unknown == UNKNOWN_REPORT_WARNING_EVERY else 2)
    assert f" {1 + (len(messages) - 1) * UNKNOWN_REPORT_WARNING_EVERY} such reports" in messages[-1]


# --- the write path -----------------------------------------------------------------------------


def test_short_writes_still_append_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel may write part of a buffer: the rest follows, under the same lock."""
    path = tmp_path / "journal.jsonl"
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data[:7])))
    keys = _journal_with_draws(path, 3)
    event = _report(path, keys[1])
    monkeypatch.undo()
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert lines[1:] == [*({"issue": key} for key in keys), event]
    assert _opened(path)[1] == []


# --- real writers killed at random points -------------------------------------------------------

CHUNK, PAUSE = 16, 0.001
"""The writers' short, slow writes (bytes per call, seconds after each): a kill lands mid-line."""


def _become_writer(side: Path) -> None:
    """Make this process's journal writes short and slow, and note each torn tail it drops in
    ``side``'s ``.repairs`` file (one line per repair: the warning)."""
    real = os.write

    def write(fd: int, data: Any) -> int:
        written = real(fd, bytes(data[:CHUNK]))
        time.sleep(PAUSE)
        return written

    def note(message: Warning | str, *_: Any, **__: Any) -> None:
        if "torn" in str(message):
            with side.with_suffix(".repairs").open("a") as handle:
                handle.write(f"{message}\n")

    os.write = write  # this writer process only
    warnings.simplefilter("always")
    warnings.showwarning = note


def _record(side: Path, event: dict[str, Any]) -> None:
    """Note an append that returned: the side file holds lines that were written whole."""
    with side.open("ab", buffering=0) as handle:
        handle.write((json.dumps(event, sort_keys=True) + "\n").encode())


def _drawer(path: Path, side: Path) -> None:
    _become_writer(side)
    replica = _replica(path)
    while True:
        _record(side, {"issue": replica.next().key})


def _reporter(path: Path, side: Path, seed: int) -> None:
    _become_writer(side)
    rng = random.Random(seed)
    for number in range(1 << 30):
        key = f"Knapsack/{rng.randrange(40)}"  # some not issued yet: unknown keys
        _record(side, _report(path, key, f"{side.name}#{number}"))


def _locked_read(path: Path) -> bytes:
    """The journal as read under the writers' lock: no live writer is mid-line, so bytes after
    the last newline belong to a dead one."""
    with path.open("rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        return handle.read()


def _check_alive(live: list[tuple[str, BaseProcess]]) -> None:
    """A writer only ends by our SIGKILL: one that exited hit an error in the journal."""
    for kind, process in live:
        assert process.is_alive(), f"a {kind} failed on its own (exit code {process.exitcode})"


def _send(process: BaseProcess, signal_number: int) -> None:
    assert process.pid is not None
    os.kill(process.pid, signal_number)


def _freeze(live: list[tuple[str, BaseProcess]]) -> None:
    """SIGSTOP the writers and wait until each is stopped (so the journal holds still)."""
    _check_alive(live)
    for _, process in live:
        _send(process, signal.SIGSTOP)
    for _, process in live:
        stat = Path(f"/proc/{process.pid}/stat")
        while stat.read_text().rsplit(")", 1)[1].split()[0] not in ("T", "t"):
            _check_alive(live)
            time.sleep(0.0001)


def _whole_lines(data: bytes) -> bytes:
    return data[: data.rfind(b"\n") + 1]


def _kill_writers_at_random(path: Path, seed: int, kills: int) -> None:
    """Run two drawers and two reporters; SIGKILL one at a seeded random moment, ``kills`` times
    (each replaced), then kill all of them while one is mid-line; check the journal."""
    rng = random.Random(seed)
    _replica(path)
    sides: list[Path] = []
    snapshots: list[bytes] = []

    def start(kind: str) -> BaseProcess:
        side = path.parent / f"{kind}-{len(sides)}.jsonl"
        sides.append(side)
        args = (path, side) if kind == "drawer" else (path, side, rng.randrange(1 << 30))
        process = FORK.Process(target=_drawer if kind == "drawer" else _reporter, args=args)
        process.start()
        return process

    live = [(kind, start(kind)) for kind in ("drawer", "drawer", "reporter", "reporter")]
    for _ in range(kills):
        time.sleep(rng.uniform(0.01, 0.08))
        _check_alive(live)
        kind, victim = live.pop(rng.randrange(len(live)))
        victim.kill()
        victim.join()
        snapshots.append(_whole_lines(_locked_read(path)))
        live.append((kind, start(kind)))
    deadline = time.monotonic() + 10
    while True:  # freeze the writers until one is caught mid-line, then kill them all
        time.sleep(rng.uniform(0.001, 0.01))
        _freeze(live)
        if not path.read_bytes().endswith(b"\n") or time.monotonic() > deadline:
            break
        for _, process in live:
            _send(process, signal.SIGCONT)
    for _, process in live:
        process.kill()
        process.join()
    data = path.read_bytes()
    torn_tail = len(data) - len(_whole_lines(data))
    replica, messages = _opened(path)
    torn = _torn(messages)
    assert len(torn) == (1 if torn_tail else 0)
    if torn_tail:
        assert f"torn last line of {torn_tail} bytes" in torn[0]
    repairs = [
        line
        for side in sides
        if side.with_suffix(".repairs").exists()
        for line in side.with_suffix(".repairs").read_text().splitlines()
    ]
    assert repairs or torn, "no kill landed mid-line: the test did not exercise the repair"
    data = path.read_bytes()
    assert data == _whole_lines(data)
    for snapshot in snapshots:  # append-only: every whole line seen between kills is still there
        assert data.startswith(snapshot)
    lines = [json.loads(line) for line in data.splitlines()]
    assert lines[0] == replica.header
    written = Counter(json.dumps(event, sort_keys=True) for event in lines[1:])
    recorded = Counter(
        line.rstrip("\n")
        for side in sides
        if side.exists()
        for line in side.read_text().splitlines(keepends=True)
        if line.endswith("\n")  # a writer may die recording: then it was not recorded
    )
    assert max(written.values(), default=1) == 1, "a line was duplicated"
    assert max(recorded.values(), default=1) == 1
    assert not recorded.keys() - written.keys(), "a whole line was lost"
    # each killed writer may have appended one line that it had no time to record
    assert len(written) - len(recorded) <= kills + len(live)
    issued: set[str] = set()
    unknown = 0
    for event in lines[1:]:
        if "issue" in event:
            issued.add(event["issue"])
        else:
            unknown += event["report"] not in issued
    assert replica.unknown_reports == unknown
    stats = replica.curriculum.stats()["Knapsack"]
    assert stats["reports"] == len(lines) - 1 - len(issued) - unknown
    assert replica.next().key not in issued


def test_writers_killed_at_random_points_lose_no_whole_line(tmp_path: Path) -> None:
    _kill_writers_at_random(tmp_path / "journal.jsonl", seed=0, kills=6)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_writers_killed_at_random_points_lose_no_whole_line_long(tmp_path: Path, seed: int) -> None:
    _kill_writers_at_random(tmp_path / "journal.jsonl", seed=seed, kills=60)
