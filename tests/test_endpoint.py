"""Sampling from an OpenAI-compatible endpoint: a real HTTP server on 127.0.0.1 that fails,
rate-limits, stalls and answers garbage on purpose; bounded retries, fail-fast checks, the
journal, resuming and topping up, and the eval command's exit status."""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner

import npgym
from npgym.cli import main
from npgym.npbench import client
from npgym.npbench.build import BuildSpec, build, read_dataset
from npgym.npbench.client import (
    MAX_COMPLETION_CHARS,
    CompletionsFileError,
    EndpointError,
    SamplingOptions,
    check_endpoint,
    read_completion_rows,
    reply_cap,
    sample_endpoint,
)
from npgym.npbench.evaluate import evaluate, read_completions
from tests.local_server import LocalServer, serving

pytest.importorskip("httpx", reason="endpoint sampling needs: pip install 'npgym[openai]'")

MALFORMED = ("empty-choices", "html", "text", "foo", "no-message")


class FakeChatServer(LocalServer):
    """Answers chat completions with a canned answer per prompt; misbehaves as told."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__(_Handler)
        self.answers = answers
        self.faults: dict[str, list[str]] = {}  # prompt -> faults for its next requests
        self.always: str | None = None  # a fault for every request
        self.models_status = 200
        self.requests: Counter[str] = Counter()
        self.bodies: list[dict] = []
        self.models_drip = False  # /models drips its reply, one byte at a time
        self.models_body: bytes | None = None  # set: the raw body of the /models reply
        self.content: object = None  # set: every choice's content (a huge text, None...)
        self.padding = 0  # bytes of padding in each reply's "id" (to hit a size cap exactly)
        self.bytes_sent = 0  # bytes of the "flood" reply sent before the client hung up
        self.raw: dict[str, bytes] = {}  # prompt -> the body of every reply to it (hostile)


class _Handler(BaseHTTPRequestHandler):
    server: FakeChatServer

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self._send(404, {"error": "not found"})
            return
        models = {"object": "list", "data": [{"id": "fake"}]}
        if self.server.models_body is not None:
            self._raw(200, self.server.models_body, "application/json")
            return
        if self.server.models_drip:
            self._drip(json.dumps(models).encode())
            return
        self._send(self.server.models_status, models)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        prompt = body["messages"][-1]["content"]
        self.server.requests[prompt] += 1
        if prompt in self.server.raw:
            self._raw(200, self.server.raw[prompt], "application/json")
            return
        faults = self.server.faults.get(prompt, [])
        fault = faults.pop(0) if faults else self.server.always
        if fault == "slow":
            time.sleep(1.5)
        if fault in ("500", "429", "400"):
            self._send(int(fault), {"error": {"message": "no", "type": "server_error"}})
            return
        if fault == "html":
            self._raw(200, b"<html><body>Bad gateway</body></html>", "text/html")
            return
        if fault == "text":
            self._raw(200, b"upstream timed out", "text/plain")
            return
        if fault == "foo":
            self._send(200, {"foo": 1})
            return
        if fault == "flood":
            self._flood()
            return
        content = self.server.content
        if content is None:
            content = self.server.answers[prompt]
        if fault == "null":
            content = None
        message = {"role": "assistant", "content": content}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        if fault == "no-message":
            choice.pop("message")
        choices = [] if fault == "empty-choices" else [choice] * body.get("n", 1)
        if fault == "one-null":  # the first choice is tool calls only, the others answer
            choices = [{"index": 0, "message": {"role": "assistant", "content": None}}, *choices]
            choices = choices[: body.get("n", 1)]
        reply = {"id": "x" * (1 + self.server.padding), "object": "chat.completion"}
        data = json.dumps({**reply, "choices": choices}).encode()
        if fault == "drip":
            self._drip(data)
            return
        self._raw(200, data, "application/json")

    def _drip(self, data: bytes) -> None:
        """An honest reply, sent one byte every 50 ms: each read is quick, the whole is not."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(OSError):
            for byte in data:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)

    def _flood(self) -> None:
        """A 50 MB reply with no Content-Length (the end is the connection's close), counting
        the bytes that the client took before it hung up."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b"x" * 65536
        with contextlib.suppress(OSError):
            self.wfile.write(b'{"id": "')
            for _ in range(50 * 2**20 // len(chunk)):
                self.wfile.write(chunk)
                self.server.bytes_sent += len(chunk)
        self.close_connection = True

    def _send(self, status: int, payload: dict) -> None:
        self._raw(status, json.dumps(payload).encode(), "application/json")

    def _raw(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError):  # the client gave up on a slow answer
            self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "bench"
    build(BuildSpec(tasks=("TSP",), n=3, mix={"easy": 1.0}), folder, workers=1, progress=False)
    return folder


@pytest.fixture
def server(dataset: Path) -> Iterator[FakeChatServer]:
    task = npgym.get_task("TSP")
    answers = {
        row["prompt"]: "Let me see.\n"
        + task.format_answer(json.loads(row["reference"])["solution"])
        for row in read_dataset(dataset)
    }
    with serving(FakeChatServer(answers)) as fake:
        yield fake


def _options(**changes: object) -> SamplingOptions:
    defaults: dict[str, object] = {"model": "fake", "timeout": 1.0, "backoff": 0.01}
    return SamplingOptions(**{**defaults, **changes})  # type: ignore[arg-type]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_retries_timeouts_and_resume(dataset: Path, server: FakeChatServer, tmp_path: Path) -> None:
    rows = list(read_dataset(dataset))
    prompts = [row["prompt"] for row in rows]
    server.faults = {prompts[0]: ["500"], prompts[1]: ["429", "slow"], prompts[2]: ["500"] * 9}
    output = tmp_path / "completions.jsonl"

    options = _options(samples=2, max_retries=2, concurrency=2)
    first = sample_endpoint(rows, output, endpoint=server.url, options=options, progress=False)
    assert (first.written, first.skipped) == (2, 0)
    assert list(first.failed) == [rows[2]["id"]]
    assert server.requests[prompts[0]] == 2  # one 500, then success
    assert server.requests[prompts[1]] == 3  # a 429, a timeout, then success
    assert server.requests[prompts[2]] == 3  # bounded: 1 try + 2 retries
    saved = read_completions(output)
    assert set(saved.texts) == {rows[0]["id"], rows[1]["id"]}
    assert all(len(texts) == 2 for texts in saved.texts.values())

    server.faults = {}
    before = server.requests.copy()
    second = sample_endpoint(rows, output, endpoint=server.url, options=options, progress=False)
    assert (second.written, second.skipped, second.failed) == (1, 2, {})
    assert server.requests[prompts[0]] == before[prompts[0]]  # done ids are not asked again
    report = evaluate(rows, read_completions(output), source="fake")
    assert report["overall"]["success_rate"] == 1.0


@pytest.mark.parametrize("fault", MALFORMED)
def test_malformed_answers_are_retried_then_missing(
    dataset: Path, server: FakeChatServer, tmp_path: Path, fault: str
) -> None:
    rows = list(read_dataset(dataset))
    server.always = fault
    output = tmp_path / "completions.jsonl"
    started = time.monotonic()
    run = sample_endpoint(
        rows, output, endpoint=server.url, options=_options(max_retries=3), progress=False
    )
    assert time.monotonic() - started < 30
    assert run.written == 0 and sorted(run.failed) == sorted(row["id"] for row in rows)
    assert run.requests == 3 * 4  # every loop is bounded: 1 try + 3 retries per instance
    assert read_completion_rows(output) == {}  # a failed request is never an answer


def test_a_fatal_client_error_is_not_retried(
    dataset: Path, server: FakeChatServer, tmp_path: Path
) -> None:
    rows = list(read_dataset(dataset))
    server.always = "400"
    run = sample_endpoint(
        rows, tmp_path / "c.jsonl", endpoint=server.url, options=_options(), progress=False
    )
    assert run.requests == 3 and len(run.failed) == 3
    assert all("HTTP 400" in reason for reason in run.failed.values())


def test_a_larger_samples_tops_up_without_a_second_row(
    dataset: Path, server: FakeChatServer, tmp_path: Path
) -> None:
    rows = list(read_dataset(dataset))
    output = tmp_path / "completions.jsonl"
    sample_endpoint(rows, output, endpoint=server.url, options=_options(), progress=False)
    more = sample_endpoint(
        rows, output, endpoint=server.url, options=_options(samples=3), progress=False
    )
    assert (more.topped_up, more.written) == (3, 3)
    saved = _lines(output)
    assert [row["id"] for row in saved] == [row["id"] for row in rows]
    assert all(len(row["completions"]) == 3 for row in saved)
    assert {len(body["messages"]) for body in server.bodies} == {1}
    assert [body["n"] for body in server.bodies[-3:]] == [2, 2, 2]


def test_a_journal_left_by_a_crash_is_merged_once(
    dataset: Path, server: FakeChatServer, tmp_path: Path
) -> None:
    rows = list(read_dataset(dataset))
    output = tmp_path / "completions.jsonl"
    journal = tmp_path / "completions.jsonl.journal"
    first = rows[0]["id"]
    journal.write_text(json.dumps({"id": first, "completions": ["Answer: [0]"]}) + '\n{"id": "cu')
    run = sample_endpoint(rows, output, endpoint=server.url, options=_options(), progress=False)
    assert (run.skipped, run.written) == (1, 2)
    assert not journal.exists()
    saved = {row["id"]: row["completions"] for row in _lines(output)}
    assert saved[first] == ["Answer: [0]"] and len(saved) == 3


def test_a_corrupted_line_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "completions.jsonl"
    path.write_text(
        '{"id": "a", "completions": ["x"]}\n{not json\n{"id": "b", "completions": []}\n'
    )
    with pytest.raises(CompletionsFileError, match=r"completions.jsonl:2: not valid JSON"):
        read_completion_rows(path)


def test_sampling_options_reach_the_server(
    dataset: Path, server: FakeChatServer, tmp_path: Path
) -> None:
    rows = list(read_dataset(dataset))[:1]
    options = _options(
        system_prompt="Be brief.", top_p=0.9, seed=7, max_tokens=64, extra_body={"top_k": 20}
    )
    sample_endpoint(rows, tmp_path / "c.jsonl", endpoint=server.url, options=options)
    body = server.bodies[-1]
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (body["top_p"], body["seed"], body["max_tokens"], body["top_k"]) == (0.9, 7, 64, 20)


def test_preflight_fails_fast(server: FakeChatServer) -> None:
    check_endpoint(server.url, "fake")
    with pytest.raises(EndpointError, match="not served"):
        check_endpoint(server.url, "other-model")
    with pytest.raises(EndpointError, match="HTTP 404"):
        check_endpoint(server.url.removesuffix("/v1") + "/wrong", "fake")
    server.models_status = 401
    with pytest.raises(EndpointError, match="refused the API key"):
        check_endpoint(server.url, "fake")
    with socket_closed() as url, pytest.raises(EndpointError, match="cannot reach"):
        check_endpoint(url, "fake", timeout=2)
    with pytest.raises(EndpointError, match="cannot reach"):
        check_endpoint("http://no-such-host.invalid/v1", "fake", timeout=5)


@contextlib.contextmanager
def socket_closed() -> Iterator[str]:
    """A URL on 127.0.0.1 where nothing listens (connection refused)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1"


def test_eval_command_with_endpoint(dataset: Path, server: FakeChatServer) -> None:
    result = CliRunner().invoke(
        main, ["eval", str(dataset), "--endpoint", server.url, "--model", "fake", "--timeout", "5"]
    )
    assert result.exit_code == 0, result.output
    assert "| TSP | 3 | 0 | 1.000 | 1.000 |" in result.output
    assert (dataset / "eval-fake" / "completions.jsonl").exists()


def test_eval_fails_loudly_before_writing_anything(dataset: Path, server: FakeChatServer) -> None:
    with socket_closed() as url:
        result = CliRunner().invoke(main, ["eval", str(dataset), "--endpoint", url, "--model", "m"])
    assert result.exit_code != 0 and "cannot reach" in result.output
    assert not (dataset / "eval-m").exists()
    unknown = ["eval", str(dataset), "--endpoint", server.url, "--model", "nope"]
    result = CliRunner().invoke(main, unknown)
    assert result.exit_code != 0 and "not served" in result.output
    assert not (dataset / "eval-nope").exists()


def test_eval_exits_non_zero_on_missing_answers(dataset: Path, server: FakeChatServer) -> None:
    prompts = [row["prompt"] for row in read_dataset(dataset)]
    server.faults = {prompts[0]: ["500"] * 20}
    command = ["eval", str(dataset), "--endpoint", server.url, "--model", "fake"]
    command += ["--max-retries", "1", "--timeout", "5"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code != 0
    assert "1 instances have no answer" in result.output
    server.faults = {prompts[0]: ["500"] * 20}
    allowed = CliRunner().invoke(main, [*command, "--allow-missing"])
    assert allowed.exit_code == 0, allowed.output


@pytest.mark.slow
def test_sigkill_mid_run_then_rerun_answers_every_instance_once(
    dataset: Path, server: FakeChatServer
) -> None:
    import signal
    import subprocess
    import sys

    server.always = "slow"
    folder = dataset / "eval-fake"
    journal = folder / "completions.jsonl.journal"
    command = [sys.executable, "-m", "npgym", "eval", str(dataset), "--endpoint", server.url]
    command += ["--model", "fake", "--concurrency", "1", "--timeout", "10", "--samples", "2"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (journal.exists() and journal.read_text().count("\n") >= 1):
        assert time.monotonic() < deadline and process.poll() is None, "eval never answered"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    server.always = None
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    saved = _lines(folder / "completions.jsonl")
    ids = [row["id"] for row in read_dataset(dataset)]
    assert [row["id"] for row in saved] == ids
    assert all(len(row["completions"]) == 2 for row in saved)
    assert not journal.exists()


def _sample(rows: list[dict], server: FakeChatServer, tmp_path: Path, **changes: object):
    output = tmp_path / "completions.jsonl"
    options = _options(**changes)
    return sample_endpoint(rows, output, endpoint=server.url, options=options, progress=False)


def test_the_timeout_is_a_deadline_for_the_whole_request(
    dataset: Path, server: FakeChatServer, tmp_path: Path
) -> None:
    """A server that drips its reply (one byte per 50 ms, every read well within the timeout)
    is cut at the deadline: with --timeout 1 and no retry, each request ends within about a
    second (before, the timeout applied per read, and a request took as long as the drip)."""
    rows = list(read_dataset(dataset))[:2]
    server.always = "drip"
    started = time.monotonic()
    run = _sample(rows, server, tmp_path, max_retries=0, timeout=1.0)
    assert time.monotonic() - started < 1.0 + 1.5
    assert sorted(run.failed) == sorted(row["id"] for row in rows)
    assert all("deadline" in reason for reason in run.failed.values())


def test_check_endpoint_has_a_deadline_too(server: FakeChatServer) -> None:
    server.models_drip = True
    started = time.monotonic()
    with pytest.raises(EndpointError, match="did not answer within 1 s"):
        check_endpoint(server.url, "fake", timeout=1.0)
    assert time.monotonic() - started < 1.0 + 1.5


@pytest.mark.parametrize("fault", ["null", "one-null"])
def test_a_reply_without_text_is_a_missing_answer(
    dataset: Path, server: FakeChatServer, tmp_path: Path, fault: str
) -> None:
    """content: null (tool calls only) is no answer: retried, then missing, never saved as "".
    When only some choices are null, the others are kept and the rest asked for again."""
    rows = list(read_dataset(dataset))
    if fault == "null":
        server.always = fault
    else:  # the first request of each instance: one choice null, one answer
        server.faults = {row["prompt"]: [fault] for row in rows}
    run = _sample(rows, server, tmp_path, max_retries=2, samples=2)
    saved = read_completion_rows(tmp_path / "completions.jsonl")
    assert "" not in [text for texts in saved.values() for text in texts]
    if fault == "null":
        assert run.written == 0 and len(run.failed) == len(rows)
        assert all("no text content" in reason for reason in run.failed.values())
        assert run.requests == 3 * len(rows)
    else:
        assert run.failed == {} and all(len(texts) == 2 for texts in saved.values())
        assert run.requests == 2 * len(rows) and run.retries == 0  # the rest asked again


def test_eval_reports_null_content_as_missing_and_exits_non_zero(
    dataset: Path, server: FakeChatServer
) -> None:
    server.always = "null"
    command = ["eval", str(dataset), "--endpoint", server.url, "--model", "fake"]
    result = CliRunner().invoke(main, [*command, "--max-retries", "1", "--timeout", "5"])
    assert result.exit_code != 0
    assert "3 instances have no answer" in result.output


def test_a_huge_reply_is_refused_without_being_read(
    dataset: Path, server: FakeChatServer, tmp_path: Path
) -> None:
    """A 50 MB reply (no Content-Length) is cut at the reply cap (about 4 MiB for one
    completion): the server gets to send little more than the cap plus socket buffers, and the
    instance is missing, not a 50 MB answer."""
    rows = list(read_dataset(dataset))[:1]
    server.always = "flood"
    run = _sample(rows, server, tmp_path, max_retries=0, timeout=20.0)
    assert list(run.failed) == [rows[0]["id"]] and "cap" in run.failed[rows[0]["id"]]
    time.sleep(0.2)  # the server notices the hang-up
    assert server.bytes_sent < reply_cap(1) + 16 * 2**20 < 50 * 2**20


@pytest.mark.parametrize("extra", [0, 1])
def test_replies_at_and_past_the_byte_cap(
    dataset: Path, server: FakeChatServer, tmp_path: Path, extra: int, monkeypatch
) -> None:
    """A reply of exactly reply_cap(n) bytes is read; one byte more is refused (the cap shrunk
    to a few KB so that the test can hit it exactly)."""
    rows = list(read_dataset(dataset))[:1]
    monkeypatch.setattr(client, "MAX_COMPLETION_BYTES", 3000)
    monkeypatch.setattr(client, "REPLY_ENVELOPE_BYTES", 1000)
    server.padding = 0
    probe = _sample(rows, server, tmp_path / "probe", max_retries=0)
    assert probe.failed == {}
    size = len(json.dumps(_reply_of(server, rows[0]["prompt"])).encode())
    server.padding = reply_cap(1) - size + extra
    run = _sample(rows, server, tmp_path, max_retries=0)
    assert bool(run.failed) is bool(extra)


def _reply_of(server: FakeChatServer, prompt: str) -> dict:
    """The reply the fake server sends for ``prompt`` with no fault and no padding."""
    message = {"role": "assistant", "content": server.answers[prompt]}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {"id": "x", "object": "chat.completion", "choices": [choice]}


@pytest.mark.parametrize("extra", [0, 1])
def test_completions_at_and_past_the_text_cap(
    dataset: Path, server: FakeChatServer, tmp_path: Path, extra: int
) -> None:
    """A completion of exactly MAX_COMPLETION_CHARS characters (1 MiB, what an env step
    accepts) is saved; one character more is refused, and the instance is missing."""
    rows = list(read_dataset(dataset))[:1]
    server.content = "a" * (MAX_COMPLETION_CHARS + extra)
    run = _sample(rows, server, tmp_path, max_retries=0)
    saved = read_completion_rows(tmp_path / "completions.jsonl")
    if extra:
        assert saved == {} and "longer than" in run.failed[rows[0]["id"]]
    else:
        assert run.failed == {} and len(saved[rows[0]["id"]][0]) == MAX_COMPLETION_CHARS
