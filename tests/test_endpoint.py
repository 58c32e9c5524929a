"""Sampling from an OpenAI-compatible endpoint: a real HTTP server on 127.0.0.1 that fails,
rate-limits and stalls on purpose; retries, timeouts, incremental writes and resuming."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

import npgym
from npgym.cli import main
from npgym.npbench.build import BuildSpec, build, read_dataset
from npgym.npbench.client import sample_endpoint
from npgym.npbench.evaluate import evaluate, read_completions

pytest.importorskip("openai", reason="endpoint sampling needs: pip install 'npgym[openai]'")


class FakeChatServer(ThreadingHTTPServer):
    """Answers chat completions with a canned answer per prompt; misbehaves as told."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers = answers
        self.faults: dict[str, list[str]] = {}  # prompt -> faults for its next requests
        self.requests: Counter[str] = Counter()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FakeChatServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][0]["content"]
        self.server.requests[prompt] += 1
        faults = self.server.faults.get(prompt, [])
        fault = faults.pop(0) if faults else None
        if fault == "slow":
            time.sleep(1.5)
        if fault in ("500", "429"):
            self._send(int(fault), {"error": {"message": "try again", "type": "server_error"}})
            return
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": self.server.answers[prompt]},
                "finish_reason": "stop",
            }
            for i in range(body.get("n", 1))
        ]
        self._send(
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": choices,
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
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
    fake = FakeChatServer(answers)
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.shutdown()
    fake.server_close()


def test_retries_timeouts_and_resume(dataset: Path, server: FakeChatServer, tmp_path: Path) -> None:
    rows = list(read_dataset(dataset))
    prompts = [row["prompt"] for row in rows]
    server.faults = {prompts[0]: ["500"], prompts[1]: ["429", "slow"], prompts[2]: ["500"] * 9}
    output = tmp_path / "completions.jsonl"
    options = {"endpoint": server.url, "model": "fake", "samples": 2, "timeout": 1.0}

    first = sample_endpoint(rows, output, max_retries=2, concurrency=2, **options)
    assert (first.written, first.skipped) == (2, 0)
    assert list(first.failed) == [rows[2]["id"]]
    assert server.requests[prompts[0]] == 2  # one 500, then success
    assert server.requests[prompts[1]] == 3  # a 429, a timeout, then success
    saved = read_completions(output)
    assert set(saved.texts) == {rows[0]["id"], rows[1]["id"]}
    assert all(len(texts) == 2 for texts in saved.texts.values())

    server.faults = {}
    before = server.requests.copy()
    second = sample_endpoint(rows, output, max_retries=2, **options)
    assert (second.written, second.skipped, second.failed) == (1, 2, {})
    assert server.requests[prompts[0]] == before[prompts[0]]  # done ids are not asked again
    report = evaluate(rows, read_completions(output), source="fake")
    assert report["overall"]["success_rate"] == 1.0
    assert report["overall"]["pass_at_k"]["2"] == 1.0


def test_eval_command_with_endpoint(dataset: Path, server: FakeChatServer) -> None:
    result = CliRunner().invoke(
        main, ["eval", str(dataset), "--endpoint", server.url, "--model", "fake", "--timeout", "5"]
    )
    assert result.exit_code == 0, result.output
    assert "| TSP | 3 | 1.000 | 1.000 |" in result.output
    assert (dataset / "eval-fake" / "completions.jsonl").exists()
