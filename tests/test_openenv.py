"""The OpenEnv server: ``npgym serve`` in a subprocess, played through OpenEnv's own client."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import npgym

pytest.importorskip("openenv", reason="the OpenEnv server needs: pip install 'npgym[openenv]'")

from npgym.integrations.openenv import (
    MAX_ACTION_CHARS,
    NPGymAction,
    NPGymClient,
)

TASK = npgym.get_task("Knapsack")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(log: Path, *options: str) -> Iterator[str]:
    """Start ``npgym serve`` (its output goes to a file: a full pipe would block it)."""
    port = _free_port()
    command = [sys.executable, "-m", "npgym", "serve", "npgym/Knapsack-easy"]
    output = log.open("wb")
    server = subprocess.Popen(
        [*command, "--port", str(port), "--heuristic-reference", *options],
        stdout=output,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"npgym serve did not come up: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        output.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _start(tmp_path_factory.mktemp("serve") / "server.log")


@pytest.fixture(scope="module")
def repair_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _start(tmp_path_factory.mktemp("serve") / "server.log", "--max-attempts", "3")


def _optimal(seed: int) -> str:
    instance = TASK.generate(seed, tier="easy")
    return "Let me think.\n" + TASK.format_answer(TASK.reference(instance, exact=False).solution)


def test_an_episode_through_the_openenv_client(server: str) -> None:
    with NPGymClient(base_url=server).sync() as env:
        result = env.reset(seed=3)
        assert result.observation.prompt == TASK.prompt(TASK.generate(3, tier="easy"))
        assert result.observation.details == {"task": "Knapsack", "tier": "easy", "seed": 3}
        assert not result.done
        result = env.step(NPGymAction(text=_optimal(3)))
        assert result.done and result.reward == 2.0
        assert result.observation.details["feasible"] is True
        assert result.observation.feedback.startswith("Feasible and optimal")
        state = env.state()
        assert (state.seed, state.step_count, state.attempts) == (3, 1, 1)


def test_multi_turn_repair_gives_feedback_and_another_try(repair_server: str) -> None:
    with NPGymClient(base_url=repair_server).sync() as env:
        env.reset(seed=5)
        first = env.step(NPGymAction(text="Answer: [0, 0]"))
        assert not first.done
        assert first.observation.feedback.startswith("Infeasible")
        second = env.step(NPGymAction(text=_optimal(5)))
        assert second.done
        assert second.observation.details["episode_reward"] == 2.0


def test_32_concurrent_sessions_are_isolated(server: str) -> None:
    def play(seed: int) -> tuple[str, float]:
        with NPGymClient(base_url=server).sync() as env:
            prompt = env.reset(seed=seed).observation.prompt
            time.sleep(0.05)  # let the other sessions reset in between
            return prompt, env.step(NPGymAction(text=_optimal(seed))).reward

    seeds = list(range(100, 132))
    with ThreadPoolExecutor(max_workers=32) as pool:
        results = list(pool.map(play, seeds))
    for seed, (prompt, reward) in zip(seeds, results, strict=True):
        assert prompt == TASK.prompt(TASK.generate(seed, tier="easy"))
        assert reward == 2.0


def test_bad_actions_get_error_responses_and_the_server_keeps_serving(server: str) -> None:
    client = NPGymClient(base_url=server, message_timeout_s=120)

    async def raw_step(env: NPGymClient, data: object) -> dict:
        return await env._send_and_receive({"type": "step", "data": data})

    async def scenario() -> None:
        async with client as env:
            await env.reset(seed=1)
            with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
                await raw_step(env, {"text": 5})
            with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
                await raw_step(env, {"text": ["Answer: [0]"]})
            flood = "9" * (10 * 1024 * 1024)
            with pytest.raises(RuntimeError, match=f"the limit is {MAX_ACTION_CHARS}"):
                await env.step(NPGymAction(text=flood))
            result = await env.step(NPGymAction(text=_optimal(1)))
            assert result.reward == 2.0

    asyncio.run(scenario())
    with NPGymClient(base_url=server).sync() as other:
        other.reset(seed=2)
        assert other.step(NPGymAction(text=_optimal(2))).reward == 2.0


def test_a_bad_env_id_fails_before_serving() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "npgym", "serve", "npgym/NoSuchTask-hard"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "NoSuchTask" in result.stderr


def test_trl_environment_plays_on_the_server(repair_server: str) -> None:
    from npgym.integrations.openenv import NPGymServerEnvironment

    env = NPGymServerEnvironment([repair_server])
    try:
        assert env.get_reward() == -2.5
        prompt = env.reset(seed=8, prompt="ignored")
        assert TASK.prompt(TASK.generate(8, tier="easy")) in prompt
        assert env.submit_solution("[0, 0]").startswith("Infeasible")
        solution = TASK.reference(TASK.generate(8, tier="easy"), exact=False).solution
        assert "optimal" in env.submit_solution(str(solution))
        assert env.get_reward() == 2.0
        assert env.submit_solution("[1]") == "No attempts left."
    finally:
        env.close()
