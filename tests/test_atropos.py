"""npgym as an Atropos (``atroposlib`` 0.4) environment, run through Atropos's own code.

- ``python -m npgym.integrations.atropos process`` (Atropos's ``BaseEnv.cli()``) in a
  subprocess, against a local fake OpenAI-compatible endpoint, with a tokenizer built here, wandb
  off and the Hugging Face hub offline: the written groups' scores are npgym's rewards of the
  fake model's answers, and the items are the curriculum's draws (options from a ``--config``
  file under the flags); ``serve`` (slow) hands such groups to a trainer through Atropos's API
  server (``run-api``);
- the curriculum through the env's own ``get_next_item`` / ``collect_trajectories`` (model calls
  through Atropos's ``ServerManager`` to the fake endpoint), with a scripted learner that
  answers optimally with a probability falling with difficulty: its pass rate ends in the
  target band and the frontier moved;
- the training stream, ``evaluate`` on the fixed NP-Bench instances, the config's limits and
  the command line's one-line errors.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

import npgym
from tests.extras import need
from tests.local_server import LocalServer, serving

need("atroposlib")

from atroposlib.envs.base import APIServerConfig  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from npgym.curriculum import CurriculumItem  # noqa: E402
from npgym.datasets import BENCH_SIZE, benchmark_fingerprints, make_rows  # noqa: E402
from npgym.integrations.atropos import (  # noqa: E402
    MASKED,
    NPGymAtroposConfig,
    NPGymAtroposEnv,
    NPGymItem,
    main,
)
from npgym.integrations.curriculum import curriculum_record  # noqa: E402
from npgym.integrations.smoke import tiny_tokenizer  # noqa: E402
from npgym.records import Row, load_solved_row  # noqa: E402

UNKNOWN = "I was not asked this."
"""What the fake model says to a prompt nobody scripted (Atropos's health check's "hi")."""
NO_ANSWER = "I give up."
TIMEOUT_S = 300
"""Wall-clock limit of the ``process`` subprocess (imports dominate; ~15 s when idle)."""


class ScriptedModel(BaseHTTPRequestHandler):
    """Chat completions with scripted answers per prompt (the last message's content): choice
    ``i`` of a request for ``n`` is ``answers[prompt][i % len]``."""

    answers: ClassVar[dict[str, list[str]]] = {}
    asked: ClassVar[Counter[str]] = Counter()

    def log_message(self, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        self.asked[prompt] += 1
        script = self.answers.get(prompt, [UNKNOWN])
        choices = [
            {
                "index": index,
                "finish_reason": "stop",
                "logprobs": None,
                "message": {"role": "assistant", "content": script[index % len(script)]},
            }
            for index in range(int(body.get("n") or 1))
        ]
        reply = {
            "id": "fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": choices,
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def model() -> Iterator[LocalServer]:
    """The fake endpoint, its scripts emptied before and after."""
    ScriptedModel.answers.clear()
    ScriptedModel.asked.clear()
    with serving(LocalServer(ScriptedModel)) as server:
        yield server
    ScriptedModel.answers.clear()


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny tokenizer (ChatML template) saved where ``AutoTokenizer`` loads it offline."""
    config = NPGymAtroposConfig(tasks=["Knapsack", "SubsetSum"])
    texts = [curriculum_record(config.new_curriculum().next(), "none")["prompt"]]
    texts += ["Answer: [0, 1, 2]", NO_ANSWER, UNKNOWN]
    folder = tmp_path_factory.mktemp("tokenizer")
    tiny_tokenizer(texts, vocab_size=400).save_pretrained(folder)
    return str(folder)


def _optimal(row: Row) -> str:
    solution = json.loads(row["reference"])["solution"]
    return "Let me think.\n" + npgym.get_task(row["task"]).format_answer(solution)


def _reward(row: Row, answer: str) -> float:
    task, instance, reference = load_solved_row(row)
    return task.score(instance, answer, reference).reward


def _env(config: NPGymAtroposConfig, url: str) -> NPGymAtroposEnv:
    server = APIServerConfig(model_name="fake", base_url=url, api_key="x", health_check=False)
    return NPGymAtroposEnv(config, [server])


# --- Atropos's offline `process` command ----------------------------------------------------


def test_process_writes_groups_scored_with_npgym_rewards(
    model: LocalServer, tokenizer_dir: str, tmp_path: Path
) -> None:
    groups, size = 3, 3
    options: dict[str, Any] = {"tasks": ["Knapsack"], "seed": 5, "window": 16}  # no move: 9 reports
    curriculum = NPGymAtroposConfig(**options).new_curriculum()
    rows = [curriculum_record(curriculum.next()) for _ in range(groups)]
    for row in rows:  # optimal, feasible but empty (no better than the baseline), unreadable
        ScriptedModel.answers[row["prompt"]] = [_optimal(row), "Answer: []", NO_ANSWER]
    out = tmp_path / "groups.jsonl"
    config = tmp_path / "npgym.yaml"  # Atropos's --config file, under the flags
    config.write_text(json.dumps({"env": options, "openai": {"model_name": "fake"}}))
    flags = {
        "--config": str(config),
        "--env.tasks": "Knapsack",
        "--env.group_size": str(size),
        "--env.total_steps": str(groups),
        "--env.use_wandb": "False",
        "--env.tokenizer_name": tokenizer_dir,
        "--env.data_path_to_save_groups": str(out),
        "--openai.base_url": model.url,
        "--openai.api_key": "x",
    }
    command = [sys.executable, "-m", "npgym.integrations.atropos", "process"]
    command += [part for flag in flags.items() for part in flag]
    environment = {**os.environ, "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        command, env=environment, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == groups
    assert out.with_suffix(".html").exists()  # Atropos's viewer of the groups
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    for row, group in zip(rows, written, strict=True):
        answers = [messages[-1]["content"] for messages in group["messages"]]
        assert [messages[0]["content"] for messages in group["messages"]] == [row["prompt"]] * size
        assert answers == ScriptedModel.answers[row["prompt"]]
        expected = [_reward(row, answer) for answer in answers]
        assert group["scores"] == expected
        assert len(set(expected)) == size  # three different verdicts, three different rewards
        for tokens, masks, answer in zip(group["tokens"], group["masks"], answers, strict=True):
            assert len(tokens) == len(masks)
            prompt_length = masks.count(MASKED)
            assert masks[:prompt_length] == [MASKED] * prompt_length
            assert masks[prompt_length:] == tokens[prompt_length:]
            assert str(tokenizer.decode(tokens[prompt_length:])).startswith(answer)
        assert ScriptedModel.asked[row["prompt"]] == 1  # one request of n=3 per group


@pytest.fixture
def rollout_api(tmp_path: Path) -> Iterator[str]:
    """Atropos's API server (``run-api``, the trainer's side) on a free port of 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "atroposlib.cli.run_api", "--host", "127.0.0.1"]
    with (tmp_path / "api.log").open("w") as log:
        api = subprocess.Popen([*command, "--port", str(port)], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            try:
                _api(url, "/")
                break
            except OSError:
                assert api.poll() is None and time.monotonic() < deadline, "run-api did not start"
                time.sleep(0.2)
        yield url
    finally:
        _stop(api)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process``; kill it if it has not exited 30 s later."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _api(url: str, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


@pytest.mark.slow
def test_serve_hands_npgym_groups_to_a_trainer(
    model: LocalServer, rollout_api: str, tokenizer_dir: str, tmp_path: Path
) -> None:
    """``serve`` mode: the env registers with Atropos's API and a trainer's ``/batch`` gets
    groups scored with npgym's rewards (groups of equal scores are Atropos's to drop)."""
    curriculum = NPGymAtroposConfig(tasks=["Knapsack"], window=1000).new_curriculum()
    rows = [curriculum_record(curriculum.next()) for _ in range(64)]  # more than the env draws
    for row in rows:
        ScriptedModel.answers[row["prompt"]] = [_optimal(row), NO_ANSWER]
    expected = [_reward(rows[0], _optimal(rows[0])), _reward(rows[0], NO_ANSWER)]
    trainer: dict[str, Any] = {"wandb_group": "npgym", "wandb_project": "npgym"}
    trainer |= {"checkpoint_dir": str(tmp_path), "starting_step": 0, "num_steps": 2}
    trainer |= {"batch_size": 4, "max_token_len": 100_000, "save_checkpoint_interval": -1}
    _api(rollout_api, "/register", trainer)
    assert _api(rollout_api, "/batch")["batch"] is None  # the trainer has started, no data yet
    flags = ["--env.tasks", "Knapsack", "--env.window", "1000", "--env.group_size", "2"]
    flags += ["--env.total_steps", "2", "--env.use_wandb", "False"]
    flags += ["--env.tokenizer_name", tokenizer_dir, "--env.rollout_server_url", rollout_api]
    flags += ["--openai.base_url", model.url, "--openai.model_name", "fake"]
    environment = {**os.environ, "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "npgym.integrations.atropos", "serve", *flags]
    with (tmp_path / "env.log").open("w") as log:
        env = subprocess.Popen(command, env=environment, stdout=log, stderr=log, cwd=tmp_path)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not (batch := _api(rollout_api, "/batch")["batch"]):
            assert env.poll() is None, (tmp_path / "env.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "no batch from the env"
            time.sleep(0.5)
    finally:
        _stop(env)  # serve runs until the trainer's steps are done: stop it here
    assert [group["scores"] for group in batch] == [expected, expected]  # 2 groups of 2 = 4
    assert all(len(tokens) == 2 for tokens in (group["tokens"] for group in batch))


# --- the curriculum through the env's own calls -----------------------------------------------

BAND = (0.3, 0.7)
START = 0.2


def _pass_probability(difficulty: float) -> float:
    """The scripted learner: passes 90% at the start, 50% at difficulty 0.4, never at 0.65."""
    return min(1.0, max(0.0, 1.3 - 2.0 * difficulty))


def test_curriculum_holds_a_scripted_learner_in_the_target_band(
    model: LocalServer, tokenizer_dir: str
) -> None:
    config = NPGymAtroposConfig(
        tasks=["Knapsack"],
        seed=3,
        target_low=BAND[0],
        target_high=BAND[1],
        start=START,
        window=8,
        group_size=4,
        tokenizer_name=tokenizer_dir,
        use_wandb=False,
    )
    env = _env(config, model.url)
    learner = random.Random(0)

    async def rollouts(groups: int) -> None:
        for _ in range(groups):
            item = await env.get_next_item()
            assert item.key is not None and item.key.startswith("Knapsack/")
            chance = _pass_probability(item.row["difficulty"] or 0.0)
            answers = [
                _optimal(item.row) if learner.random() < chance else NO_ANSWER
                for _ in range(config.group_size)
            ]
            ScriptedModel.answers[item.row["prompt"]] = answers
            group, backlog = await env.collect_trajectories(item)
            assert backlog == []
            assert group["scores"] == [_reward(item.row, answer) for answer in answers]

    asyncio.run(rollouts(80))
    curriculum = env.curriculum
    assert curriculum is not None
    reports = list(curriculum.history)
    assert len(reports) == 80 * config.group_size  # every completion was reported
    final = [passed for _, _, passed in reports[-96:]]
    assert BAND[0] <= sum(final) / len(final) <= BAND[1]
    assert curriculum.difficulty("Knapsack") >= START + 2 * config.step  # the frontier moved up


# --- the stream, evaluation, config and command line ------------------------------------------


def test_stream_items_and_evaluate_on_the_held_out_np_bench_instances(
    model: LocalServer, tokenizer_dir: str, tmp_path: Path
) -> None:
    config = NPGymAtroposConfig(
        tasks=["Knapsack", "SubsetSum"],
        curriculum=False,
        tier="easy",
        group_size=2,
        eval_size=2,
        tokenizer_name=tokenizer_dir,
        use_wandb=False,
        data_dir_to_save_evals=str(tmp_path / "evals"),
    )
    env = _env(config, model.url)
    held_out = [result.record for result in make_rows(config.eval_spec(), workers=1)]
    for row in held_out:
        ScriptedModel.answers[row["prompt"]] = [_optimal(row)]

    async def run() -> tuple[list[NPGymItem], list[list[float]], dict[str, float]]:
        items = [await env.get_next_item() for _ in range(4)]
        groups = [await env.collect_trajectories(item) for item in items]
        first = await env.evaluate()
        assert await env.evaluate() == first  # the same fixed instances, the same answers
        return items, [group["scores"] for group, _ in groups], first

    items, scores, metrics = asyncio.run(run())
    assert env.curriculum is None
    assert [item.row["task"] for item in items] == ["Knapsack", "SubsetSum"] * 2  # in turn
    assert all(item.key is None and item.row["tier"] == "easy" for item in items)
    assert all(
        group == [_reward(item.row, UNKNOWN)] * 2 for item, group in zip(items, scores, strict=True)
    )
    fingerprints = {load_solved_row(item.row)[1].fingerprint() for item in items}
    assert not fingerprints & benchmark_fingerprints(config.tasks)  # training never sees them
    assert {load_solved_row(row)[1].fingerprint() for row in held_out} <= benchmark_fingerprints(
        config.tasks
    )
    assert all(ScriptedModel.asked[row["prompt"]] == 2 for row in held_out)
    assert metrics["eval/optimality"] == metrics["eval/pass_rate"] == 1.0
    assert metrics["eval/Knapsack/optimality"] == 1.0
    assert metrics["eval/npgym_reward"] == pytest.approx(
        _reward(held_out[0], _optimal(held_out[0]))
    )
    saved = json.loads((tmp_path / "evals" / "metrics.json").read_text())
    assert saved["results"]["all"] == metrics
    samples = (tmp_path / "evals" / "samples.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in samples] == [row["id"] for row in held_out]


def test_config_limits_and_parsing() -> None:
    assert NPGymAtroposConfig(tasks="tsp, knapsack").tasks == ["TSP", "Knapsack"]
    assert NPGymAtroposConfig(eval_size=BENCH_SIZE).eval_size == BENCH_SIZE
    with pytest.raises(ValidationError, match="less than or equal to 100"):
        NPGymAtroposConfig(eval_size=BENCH_SIZE + 1)
    for bad, message in [
        ({"tasks": "Nope"}, "unknown task 'Nope'"),
        ({"tasks": ""}, "one or more distinct tasks"),
        ({"target_low": 0.8}, "pass-rate band"),
        ({"window": 0}, "window >= 1"),
        ({"tier": "huge"}, "unknown tier"),
        ({"reward": "lenient"}, "unknown reward preset"),
    ]:
        with pytest.raises(ValidationError, match=message):
            NPGymAtroposConfig(**bad)  # type: ignore[arg-type]


def test_command_line_refuses_a_bad_config_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["atropos", "process", "--env.tasks", "Nope,TSP"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1
    assert error[0].startswith("Error: invalid NPGymAtroposConfig: tasks: unknown task 'Nope'")


def test_an_item_is_scored_like_the_task_scores_it(tokenizer_dir: str) -> None:
    config = NPGymAtroposConfig(tasks=["SubsetSum"], tokenizer_name=tokenizer_dir, use_wandb=False)
    env = _env(config, "http://127.0.0.1:9/v1")
    drawn: CurriculumItem = config.new_curriculum().next()
    item = NPGymItem(curriculum_record(drawn), drawn.key)
    for answer in (_optimal(item.row), "Answer: [", "", None):
        expected = _reward(item.row, answer or "")
        assert env.score(item, answer).reward == expected
