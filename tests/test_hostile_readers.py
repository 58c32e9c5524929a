"""Hostile files and endpoint replies (issue 35, section 5): every line npgym reads from a file,
a FIFO or a device is bounded (``MAX_LINE_BYTES``), every JSON document it decodes whole is
bounded in size (``MAX_JSON_FILE_BYTES``), all JSON is bounded in nesting (``MAX_JSON_DEPTH``),
and a malformed endpoint reply costs its instance (retried, then missing), never the run."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import records
from npgym.answer import MAX_JSON_DEPTH
from npgym.cli import main
from npgym.npbench import client
from npgym.npbench.build import BuildSpec, build, read_dataset
from npgym.npbench.client import CompletionsFileError, EndpointError, read_completion_rows
from npgym.npbench.evaluate import read_completions, read_report
from npgym.npbench.importers import read_np_engine
from npgym.npbench.show import load_source
from npgym.records import RecordError, complete_lines, read_json_file, read_jsonl
from tests.local_server import HOSTILE_REPLIES, serving
from tests.test_endpoint import FakeChatServer

LIMIT = 8192
"""The line bound the corpus runs under (``MAX_LINE_BYTES`` patched down, to keep files small)."""


def _row(text: str = "Answer: [0]", identifier: str = "a", **extra: Any) -> bytes:
    """A completions row as UTF-8 JSON (``ensure_ascii=False``, as npgym writes them)."""
    row = {"id": identifier, "completion": text, **extra}
    return json.dumps(row, ensure_ascii=False).encode()


def _row_of(size: int) -> bytes:
    """A completions row of exactly ``size`` bytes."""
    return _row("x" * (size - len(_row(""))))


def _nested(depth: int) -> bytes:
    """A completions row whose extra field makes it nest ``depth`` deep (the row is one)."""
    return _row()[:-1] + b', "x": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


OK = int
"""A corpus case that reads: how many rows."""
FAILS = tuple[int, str]
"""A corpus case that fails: the line named, and a fragment of the message ("" for any)."""

FILE_CASES: dict[str, tuple[bytes, OK | FAILS]] = {
    "endless line": (b"x" * (3 * LIMIT), (1, "line longer than 8,192 bytes")),
    "endless blank line": (b" " * (3 * LIMIT), (1, "line longer than")),
    "endless line after a good one": (_row() + b"\n" + b"[" * (3 * LIMIT), (2, "longer than")),
    "line at the limit": (_row_of(LIMIT) + b"\n", 1),
    "line one past the limit": (_row_of(LIMIT + 1) + b"\n", (1, "line longer than")),
    "CRLF line at the limit": (_row_of(LIMIT - 1) + b"\r\n", 1),
    "nul bytes": (b"\x00" * 100 + b"\n", (1, "not valid JSON")),
    "raw nul in a string": (_row().replace(b"Answer", b"\x00Answer"), (1, "not valid JSON")),
    "escaped nul in a string": (_row("\x00 Answer: [0]"), 1),
    "invalid utf-8": (_row().replace(b"Answer", b"\xffAnswer"), (1, "not UTF-8")),
    "overlong utf-8": (_row() + b"\n" + _row().replace(b"Answer", b"\xc0\xafA"), (2, "UTF-8")),
    "utf-8 of a surrogate": (_row().replace(b"Answer", b"\xed\xa0\x80A"), (1, "not UTF-8")),
    "utf-16": (_row().decode().encode("utf-16"), (1, "not UTF-8")),
    "lone surrogate escape": (_row().replace(b"Answer", b"\\ud800 Answer"), (1, "lone surrogate")),
    "lone surrogate in an id": (b'{"id": "\\ud800", "completion": "x"}', (1, "lone surrogate")),
    "reversed surrogate pair": (_row().replace(b"Answer", b"\\udc00\\ud800A"), (1, "surrogate")),
    "surrogate pair": (_row().replace(b"Answer", b"\\ud83d\\ude00 Answer"), 1),
    "deep array": (b"[" * 3000 + b"]" * 3000, (1, f"nested more than {MAX_JSON_DEPTH} deep")),
    "deep object": (b'{"a":' * 1200 + b"1" + b"}" * 1200, (1, "nested more than")),
    "deep unclosed": (b"[" * 3000, (1, "nested more than")),
    "deep field of a row": (_row() + b"\n" + _nested(1000), (2, "nested more than")),
    "nesting at the limit": (_nested(MAX_JSON_DEPTH), 1),
    "nesting one past the limit": (_nested(MAX_JSON_DEPTH + 1), (1, "nested more than")),
    "brackets inside strings": (_row("[" * 3000 + " Answer: [0]"), 1),
    "huge integer": (_row()[:-1] + b', "n": 1' + b"0" * 5000 + b"}", (1, "4300 digits")),
    "huge float": (_row()[:-1] + b', "n": 1e99999}', 1),
    "not an object": (b"[1, 2]\n", (1, "")),
    "not json": (b"Answer: [0]\n", (1, "not valid JSON")),
    "byte-order mark": (b"\xef\xbb\xbf" + _row() + b"\n", 1),
    "CRLF endings": (_row() + b"\r\n" + _row(identifier="b") + b"\r\n", 2),
    "line separators inside strings": (_row("a\u2028b\x85c\u2029 Answer: [0]"), 1),
    "empty file": (b"", 0),
    "blank lines": (b"\n \n\t\n" + _row() + b"\n\n", 1),
}
"""Completion files: what each of npgym's three completion readers must make of them."""

READERS: dict[str, Callable[[Path], int]] = {
    "read_jsonl": lambda path: len(list(read_jsonl(path))),
    "read_completions": lambda path: len(read_completions(path).texts),
    "read_completion_rows": lambda path: len(read_completion_rows(path)),
}


@pytest.fixture
def small_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run under a line bound of :data:`LIMIT` bytes."""
    monkeypatch.setattr(records, "MAX_LINE_BYTES", LIMIT)


@pytest.mark.usefixtures("small_lines")
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", FILE_CASES)
def test_completion_files_are_read_or_refused_naming_the_line(
    tmp_path: Path, case: str, reader: str
) -> None:
    content, expected = FILE_CASES[case]
    path = tmp_path / "c.jsonl"
    path.write_bytes(content if content.endswith(b"\n") else content + b"\n")
    if isinstance(expected, int):
        assert READERS[reader](path) == expected
        return
    line, fragment = expected
    with pytest.raises(ValueError, match=f"c.jsonl:{line}: ") as caught:
        READERS[reader](path)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_line_separators_inside_strings_survive_the_sampler_files(tmp_path: Path) -> None:
    """A completion holding U+2028 or U+0085 (written unescaped) was cut by ``splitlines``, and
    the sampler's journal then failed to merge: the run aborted at its end."""
    text = "step 1\u2028step 2\x85step 3 Answer: [0]"
    path = tmp_path / "c.jsonl.journal"
    path.write_bytes(_row(text) + b"\n")
    assert read_completion_rows(path) == {"a": [text]}
    assert complete_lines(path) == [_row(text).decode()]


@pytest.mark.parametrize("reader", READERS)
def test_a_last_line_cut_inside_a_character_is_a_torn_line(tmp_path: Path, reader: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(_row() + b"\n" + _row("été", "b")[:-5])  # cut inside the "é"
    if reader == "read_jsonl":
        with pytest.raises(RecordError, match=r"c\.jsonl:2: not valid JSON"):
            READERS[reader](path)
    else:
        assert READERS[reader](path) == 1


def test_a_torn_journal_is_cut_only_when_it_is_a_regular_file(tmp_path: Path) -> None:
    journal = tmp_path / "c.jsonl.journal"
    journal.write_bytes(_row() + b"\n" + b'{"id": "b", "compl')
    assert len(complete_lines(journal)) == 1
    assert journal.read_bytes() == _row() + b"\n"  # the torn line is cut away
    target = tmp_path / "precious"
    target.write_bytes(b"line one\nno newline at the end")
    link = tmp_path / "linked.journal"
    link.symlink_to(target)
    with pytest.raises(RecordError, match=r"not a regular file|cannot be fixed"):
        complete_lines(link)
    assert target.read_bytes() == b"line one\nno newline at the end"


# --- devices, FIFOs, sparse files: bounded, and never a hang ----------------------------------


def _within(seconds: float, work: Callable[[], Any]) -> Any:
    """``work()``'s result, or its exception; fails the test when it runs past ``seconds``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # handed to the test below
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still reading after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Callable[[bytes, bool], Path]]:
    """A FIFO fed by a thread: ``feed(data, endless)`` writes ``data`` once, or forever."""
    path = tmp_path / "fifo.jsonl"
    os.mkfifo(path)
    stop = threading.Event()

    def feed(data: bytes, endless: bool) -> Path:
        def write() -> None:
            try:
                with open(path, "wb") as handle:
                    handle.write(data)
                    while endless and not stop.is_set():
                        handle.write(data)
            except BrokenPipeError:  # the reader gave up: what the test wants
                pass

        threading.Thread(target=write, daemon=True).start()
        return path

    yield feed
    stop.set()
    os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))  # frees a writer waiting to open


@pytest.mark.parametrize("reader", READERS)
def test_an_endless_line_from_a_fifo_is_refused(
    fifo: Callable[[bytes, bool], Path], reader: str
) -> None:
    """At the real bound (64 MiB): read, refused, the writer cut off; in seconds, not OOM. (The
    sampler's own files must be regular files: it refuses a FIFO unread.)"""
    path = fifo(b"x" * 65536, True)
    refusal = r"fifo\.jsonl(:1: line longer than 67,108,864 bytes|: not a regular file)"
    with pytest.raises(ValueError, match=refusal):
        _within(60, lambda: READERS[reader](path))


def test_rows_from_a_fifo_are_read(fifo: Callable[[bytes, bool], Path]) -> None:
    path = fifo(_row() + b"\n" + _row(identifier="b") + b"\n", False)
    assert _within(30, lambda: len(list(read_jsonl(path)))) == 2


@pytest.mark.usefixtures("small_lines")
@pytest.mark.parametrize(
    ("device", "expected"), [("/dev/zero", ":1: line longer"), ("/dev/urandom", ":")]
)
@pytest.mark.parametrize("reader", READERS)
def test_devices_are_refused(device: str, expected: str, reader: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    with pytest.raises(ValueError, match=f"{device}({expected}|: not a regular file)"):
        _within(30, lambda: READERS[reader](Path(device)))


def test_dev_null_holds_no_rows() -> None:
    assert list(read_jsonl("/dev/null")) == []


def _score(*arguments: str) -> Any:
    return _within(120, lambda: CliRunner().invoke(main, ["score", *arguments]))


def _one_error_line(output: str, *fragments: str) -> None:
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in output, output
    assert all(fragment in errors[0] for fragment in fragments), errors[0]


def test_score_dev_zero_is_one_error_line(tmp_path: Path) -> None:
    """``npgym score /dev/zero`` read without bound (23 GB in 60 s, then the OOM killer)."""
    result = _score("/dev/zero")
    assert result.exit_code == 1
    _one_error_line(result.output, "/dev/zero:1:", "longer than 67,108,864 bytes")
    data = tmp_path / "data.jsonl"
    data.write_bytes(b"")
    result = _score(str(data), "--completions", "/dev/zero")
    assert result.exit_code == 1
    _one_error_line(result.output, "/dev/zero:1:")


def test_score_a_sparse_terabyte_file_is_one_error_line(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse.jsonl"
    try:
        with open(sparse, "wb") as handle:
            handle.truncate(2**40)
    except OSError:
        pytest.skip("no sparse files of 1 TiB here")
    result = _score(str(sparse))
    assert result.exit_code == 1
    _one_error_line(result.output, "sparse.jsonl:1:", "longer than")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (
            b'{"id": "a", "task": "TSP"}\n' + b"[" * 50_000,
            "data.jsonl:2: not valid JSON (JSON nested",
        ),
        (b'{"id": "\xff"}\n', "data.jsonl:1: not UTF-8"),
        (b'{"id": 1' + b"0" * 5000 + b"}\n", "data.jsonl:1: not valid JSON (Exceeds"),
        (b'{"id": "\\udfff"}\n', "data.jsonl:1: not valid JSON (a string holds a lone surrogate"),
    ],
)
def test_score_names_the_bad_line(tmp_path: Path, content: bytes, fragment: str) -> None:
    data = tmp_path / "data.jsonl"
    data.write_bytes(content)
    result = _score(str(data))
    assert result.exit_code == 1
    _one_error_line(result.output, fragment)


# --- whole JSON documents: bounded in size and nesting -------------------------------------------

JSON_FILE_READERS: dict[str, Callable[[Path], Any]] = {
    "read_json_file": read_json_file,
    "read_report": read_report,
    "read_np_engine": read_np_engine,
}

JSON_FILE_CASES: dict[str, tuple[bytes, str]] = {
    "too large": (b'{"questions": {}, "pad": "' + b"x" * LIMIT + b'"}', "larger than 8,192 bytes"),
    "deep": (b"[" * 3000 + b"]" * 3000, "nested more than"),
    "not UTF-8": (b'{"a": "\xff"}', "UTF-8"),
    "lone surrogate": (b'{"a": "\\ud800"}', "lone surrogate"),
    "huge integer": (b'{"a": 1' + b"0" * 5000 + b"}", "4300 digits"),
}


@pytest.mark.parametrize("reader", JSON_FILE_READERS)
@pytest.mark.parametrize("case", JSON_FILE_CASES)
def test_json_files_are_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, reader: str
) -> None:
    monkeypatch.setattr(records, "MAX_JSON_FILE_BYTES", LIMIT)
    content, fragment = JSON_FILE_CASES[case]
    path = tmp_path / "file.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"file\.json") as caught:
        JSON_FILE_READERS[reader](path)
    assert fragment in str(caught.value)


def test_a_json_file_at_the_size_limit_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "MAX_JSON_FILE_BYTES", LIMIT)
    path = tmp_path / "file.json"
    path.write_bytes(b'"' + b"x" * (LIMIT - 2) + b'"')
    assert read_json_file(path) == "x" * (LIMIT - 2)
    path.write_bytes(b'"' + b"x" * (LIMIT - 1) + b'"')
    with pytest.raises(RecordError, match="larger than"):
        read_json_file(path)


def test_show_reads_a_device_line_by_line_and_refuses_it() -> None:
    with pytest.raises(ValueError, match="/dev/zero:1: line longer"):
        _within(30, lambda: load_source("/dev/zero"))


# --- endpoint replies: retried, then missing; never fatal to the run -----------------------------


@pytest.mark.parametrize("case", HOSTILE_REPLIES)
def test_a_malformed_reply_is_retryable(case: str) -> None:
    with pytest.raises(client._RetryableError) as caught:
        client._texts(200, "application/json", HOSTILE_REPLIES[case])
    assert len(str(caught.value)) < 400  # a short reason, never the reply echoed


_ANY_TEXT = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=8)
"""Text that may hold lone surrogates (``json.dumps`` escapes them as ``\\udXXX``)."""
_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ANY_TEXT, inner, max_size=3),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=300)
    | _ANY_JSON.map(lambda value: json.dumps({"choices": value}).encode())
    | _ANY_JSON.map(
        lambda content: json.dumps({"choices": [{"message": {"content": content}}]}).encode()
    )
)
def test_any_reply_gives_texts_or_a_retry(body: bytes) -> None:
    try:
        texts = client._texts(200, "application/json", body)
    except client._RetryableError:
        return
    assert texts and all(isinstance(text, str) for text in texts)
    for text in texts:
        text.encode("utf-8")  # writable to the journal


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A built dataset of three easy TSP instances."""
    folder = tmp_path / "bench"
    build(BuildSpec(tasks=("TSP",), n=3, mix={"easy": 1.0}), folder, workers=1, progress=False)
    return folder


@pytest.fixture
def fake(bench: Path) -> Iterator[FakeChatServer]:
    """The fake endpoint of ``test_endpoint``, answering each of ``bench``'s prompts with its
    reference answer unless told to misbehave."""
    task = npgym.get_task("TSP")
    answers = {
        row["prompt"]: task.format_answer(json.loads(row["reference"])["solution"])
        for row in read_dataset(bench)
    }
    with serving(FakeChatServer(answers)) as server:
        yield server


def test_a_hostile_models_reply_is_an_endpoint_error(fake: FakeChatServer) -> None:
    for body in (HOSTILE_REPLIES["deep array"], b'{"data": [{"id": "\\ud800"}]}', b"\xff"):
        fake.models_body = body
        with pytest.raises(EndpointError, match="model list"):
            client.check_endpoint(fake.url, "fake", timeout=10)


def _rows_and_ids(folder: Path) -> tuple[list[Any], list[str]]:
    rows = list(read_dataset(folder))
    return rows, [str(row["id"]) for row in rows]


def test_deep_and_surrogate_replies_cost_their_instances_only(
    bench: Path, fake: FakeChatServer, tmp_path: Path
) -> None:
    """Each of these replies aborted the whole run (a RecursionError, a UnicodeEncodeError on
    the journal), and every rerun aborted again at the same instance."""
    rows, ids = _rows_and_ids(bench)
    fake.raw = {
        rows[0]["prompt"]: HOSTILE_REPLIES["deep array"],
        rows[1]["prompt"]: HOSTILE_REPLIES["lone high surrogate"],
    }
    options = client.SamplingOptions(model="fake", timeout=10.0, backoff=0.01, max_retries=2)
    output = tmp_path / "completions.jsonl"
    run = client.sample_endpoint(rows, output, endpoint=fake.url, options=options, progress=False)
    assert sorted(run.failed) == sorted(ids[:2]) and run.written == 1
    assert "nested more than" in run.failed[ids[0]]
    assert "lone surrogate" in run.failed[ids[1]]
    assert fake.requests[rows[0]["prompt"]] == 3  # 1 try + 2 retries, then missing
    assert set(read_completion_rows(output)) == {ids[2]}


@pytest.mark.parametrize("allow_missing", [True, False])
def test_eval_with_hostile_replies_reports_them_missing(
    bench: Path, fake: FakeChatServer, allow_missing: bool
) -> None:
    rows, ids = _rows_and_ids(bench)
    fake.raw = {
        rows[0]["prompt"]: HOSTILE_REPLIES["deep object"],
        rows[1]["prompt"]: HOSTILE_REPLIES["lone low surrogate"],
    }
    command = ["eval", str(bench), "--endpoint", fake.url, "--model", "fake"]
    command += ["--max-retries", "1", "--timeout", "10", "--no-gallery"]
    result = CliRunner().invoke(main, command + ["--allow-missing"] * allow_missing)
    assert "Traceback" not in result.output
    assert f"missing {ids[0]}: " in result.output and f"missing {ids[1]}: " in result.output
    if allow_missing:
        assert result.exit_code == 0, result.output
        report = json.loads((bench / "eval-fake" / "report.json").read_text())
        assert sorted(report["problems"]["missing_completions"]) == sorted(ids[:2])
    else:
        assert result.exit_code == 1
        _one_error_line(result.output, "2 instances have no answer")


def test_a_row_too_long_to_read_back_is_missing(
    bench: Path, fake: FakeChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sampler never writes a row that its readers would refuse."""
    rows, ids = _rows_and_ids(bench)
    monkeypatch.setattr(client, "MAX_LINE_BYTES", 3000)
    monkeypatch.setattr(records, "MAX_LINE_BYTES", 3000)
    fake.raw = {
        rows[0]["prompt"]: json.dumps({"choices": [{"message": {"content": "x" * 3000}}]}).encode()
    }
    options = client.SamplingOptions(model="fake", timeout=10.0, backoff=0.01, max_retries=0)
    output = tmp_path / "completions.jsonl"
    run = client.sample_endpoint(rows, output, endpoint=fake.url, options=options, progress=False)
    assert list(run.failed) == [ids[0]] and "line cap" in run.failed[ids[0]]
    assert set(read_completion_rows(output)) == set(ids[1:])


def test_links_planted_in_the_output_folder_are_never_written_through(
    bench: Path, fake: FakeChatServer, tmp_path: Path
) -> None:
    """A bench folder may come with ``eval-<model>/`` inside: a journal or temporary file there
    that links elsewhere must not redirect the sampler's writes."""
    rows, _ = _rows_and_ids(bench)
    output = tmp_path / "out" / "completions.jsonl"
    output.parent.mkdir()
    target = tmp_path / "bashrc"
    target.write_bytes(b"export PATH=/usr/bin\nalias ll='ls -l'")  # no newline at the end
    (output.parent / "completions.jsonl.tmp").symlink_to(target)
    options = client.SamplingOptions(model="fake", timeout=10.0, backoff=0.01)
    run = client.sample_endpoint(rows, output, endpoint=fake.url, options=options, progress=False)
    assert run.written == len(rows) and target.read_bytes().endswith(b"ll='ls -l'")
    journal = output.parent / "completions.jsonl.journal"
    journal.symlink_to(target)
    more = client.SamplingOptions(model="fake", timeout=10.0, backoff=0.01, samples=2)
    with pytest.raises(CompletionsFileError, match="not a regular file"):
        client.sample_endpoint(rows, output, endpoint=fake.url, options=more, progress=False)
    assert target.read_bytes() == b"export PATH=/usr/bin\nalias ll='ls -l'"
    journal.unlink()
    os.mkfifo(journal)  # a FIFO with no writer: opening it to read would wait forever
    with pytest.raises(CompletionsFileError, match="not a regular file"):
        _within(30, lambda: client.sample_endpoint(rows, output, endpoint=fake.url, options=more))
