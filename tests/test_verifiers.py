"""The verifiers 0.4 taskset, run through verifiers' own ``vf-eval npgym`` against a local fake
OpenAI-compatible server, offline: its rewards must equal ``task.score`` (and the repair
episode's)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

import npgym
from npgym.integrations.trl import make_dataset
from tests.extras import need
from tests.local_server import LocalServer, serving

need("verifiers")

TASK = npgym.get_task("Knapsack")
TASKSET_ARGS = {"problem": "Knapsack", "tier": "easy", "n": "3", "reference": "heuristic"}
WRONG = "Let me try.\nAnswer: [0, 0]"


def _optimal_answers() -> dict[str, str]:
    """The optimal answer for each prompt of the environment's rows."""
    rows = make_dataset(["Knapsack"], n=3, mix={"easy": 1.0}, reference="heuristic")
    return {
        row["prompt"][0]["content"]: TASK.format_answer(json.loads(row["reference"])["solution"])
        for row in rows
    }


class FakeServer(LocalServer):
    """Chat completions: the first answer to a problem is ``first``, any later one optimal."""

    def __init__(self, first: str | None) -> None:
        super().__init__(_Handler)
        self.optimal = _optimal_answers()
        self.first = first


class _Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def do_GET(self) -> None:
        self._send({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        users = [m for m in body["messages"] if m["role"] == "user"]
        problem = users[0]["content"]
        answer = self.server.optimal[problem]
        if len(users) == 1 and self.server.first is not None:
            answer = self.server.first
        message = {"role": "assistant", "content": answer}
        choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        self._send(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [choice],
                "usage": usage,
            }
        )

    def _send(self, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        """Quiet."""


def _serve(first: str | None) -> Iterator[FakeServer]:
    with serving(FakeServer(first)) as server:
        yield server


@pytest.fixture
def wrong_then_right() -> Iterator[FakeServer]:
    yield from _serve(WRONG)


def test_taskset_limits_at_and_past_the_bounds() -> None:
    from pydantic import ValidationError

    from npgym.datasets import MAX_COUNT
    from npgym.integrations.verifiers import NPGymTasksetConfig

    assert NPGymTasksetConfig(n=MAX_COUNT, max_attempts=100).n == MAX_COUNT
    for bad in ({"n": MAX_COUNT + 1}, {"n": 0}, {"max_attempts": 0}, {"max_attempts": 101}):
        with pytest.raises(ValidationError):
            NPGymTasksetConfig(**bad)
    with pytest.raises(ValidationError):
        NPGymTasksetConfig(reward_policy="mean")


def test_npgym_exports_exactly_one_taskset_harness_and_env() -> None:
    from verifiers.v1.utils.loaders import environment_class, harness_class, taskset_class

    from npgym.integrations.verifiers import NPGymEnv, NPGymHarness, NPGymTaskset

    assert taskset_class("npgym") is NPGymTaskset
    assert harness_class("npgym") is NPGymHarness
    assert environment_class("npgym", "") is NPGymEnv


def _vf_eval(server: FakeServer, taskset_args: dict[str, str], output: Path) -> list[dict]:
    """The traces of ``vf-eval npgym`` over the fake server."""
    vf_eval = shutil.which("vf-eval") or str(Path(sys.executable).parent / "vf-eval")
    command = [vf_eval, "npgym", "-m", "fake", "-n", "3", "-r", "1", "--no-push", "-o", str(output)]
    command += ["--client.base-url", server.url, "--client.api-key-var", "NPGYM_FAKE_KEY"]
    for key, value in taskset_args.items():
        command += [f"--env.taskset.{key.replace('_', '-')}", value]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        env={"NPGYM_FAKE_KEY": "x", "PATH": str(Path(sys.executable).parent), "HOME": str(output)},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    files = sorted(output.rglob("traces.jsonl"))
    assert files, f"vf-eval saved no traces under {output}: {result.stdout[-2000:]}"
    episodes = [json.loads(line) for line in files[-1].read_text().splitlines()]
    traces = [trace for episode in episodes for trace in episode["traces"]]
    for trace in traces:
        assert not trace["errors"], trace["errors"]
    return traces


def _reward(trace: dict) -> float:
    return trace["rewards"]["npgym_reward"]["score"]


def test_single_turn_rewards_equal_task_score(wrong_then_right: FakeServer, tmp_path: Path) -> None:
    traces = _vf_eval(wrong_then_right, TASKSET_ARGS, tmp_path / "single")
    assert len(traces) == 3
    for trace in traces:
        instance = TASK.from_json(trace["task"]["data"]["instance"])
        reference = TASK.reference(instance, exact=False)
        expected = TASK.score(instance, WRONG, reference)
        assert _reward(trace) == expected.reward == -0.5
        assert trace["metrics"]["feasible"] == 0.0 and trace["metrics"]["format_ok"] == 1.0


@pytest.mark.slow
def test_multi_turn_repair_reaches_the_optimum(
    wrong_then_right: FakeServer, tmp_path: Path
) -> None:
    traces = _vf_eval(wrong_then_right, {**TASKSET_ARGS, "max_attempts": "3"}, tmp_path / "multi")
    assert len(traces) == 3
    for trace in traces:
        assert _reward(trace) == 2.0
        assert trace["metrics"]["ratio"] == 1.0
