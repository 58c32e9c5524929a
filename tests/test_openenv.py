"""The OpenEnv server: ``npgym serve`` in a subprocess, played through OpenEnv's own client."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from tests.extras import reason

pytest.importorskip("openenv", reason=reason("openenv"))

import websockets

from npgym.integrations.openenv import (
    IDLE_CLOSE_CODE,
    MAX_ACTION_CHARS,
    MESSAGE_TIMEOUT_CLOSE_CODE,
    NPGymAction,
    NPGymClient,
    NPGymEnvironment,
    SessionTimeouts,
    create_server_app,
    local_server,
)
from npgym.integrations.serving import (
    CANCEL_GRACE_S,
    MAX_TIMEOUT_S,
    MAX_WORKERS,
    ReferencePool,
    WorkerCrashedError,
    check_timeout,
    check_workers,
)

TASK = npgym.get_task("Knapsack")


def _start(log: Path, *options: str, pids: list[int] | None = None) -> Iterator[str]:
    """``npgym serve npgym/Knapsack-easy`` with ``options`` (:func:`local_server`): its URL;
    its process id goes to ``pids`` when given."""
    options = ("--heuristic-reference", *options)
    with local_server("npgym/Knapsack-easy", options, log=log) as (url, server):
        if pids is not None:
            pids.append(server.pid)
        yield url


def test_local_server_reports_a_server_that_never_comes_up(tmp_path: Path) -> None:
    """A server that exits (an env id outside npgym/) or misses its start-up bound raises,
    with the log's tail, instead of waiting on."""
    log = tmp_path / "server.log"
    refused = "gym/CartPole-v1 did not come up: (?s:.*)is not an npgym environment"
    with pytest.raises(RuntimeError, match=refused), local_server("gym/CartPole-v1", log=log):
        pass
    started = time.monotonic()
    late = "npgym/Knapsack-easy did not come up"
    with (
        pytest.raises(RuntimeError, match=late),
        local_server("npgym/Knapsack-easy", log=log, startup_timeout_s=0.5),
    ):
        pass
    assert time.monotonic() - started < 30  # refused past its bound, then stopped


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


def test_schema_publishes_the_state_and_the_mode_stays_simulation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fastapi.testclient import TestClient

    monkeypatch.setenv("OPENENV_MODE", "production")  # would drop /reset, /step and /state
    app = create_server_app("npgym/Knapsack-easy", workers=0)
    paths = {getattr(route, "path", None) for route in app.routes}
    assert {"/reset", "/step", "/state", "/ws"} <= paths
    with TestClient(app) as client:
        schema = client.get("/schema").json()
    assert {"env_id", "task", "seed", "attempts"} <= set(schema["state"]["properties"])
    assert "text" in schema["action"]["properties"]


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
            flood = "9" * (MAX_ACTION_CHARS + 1)  # a larger frame closes (test_hostile_server)
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


# --- the server under load: reference workers, timeouts, memory ---------------------------


@pytest.fixture(scope="module")
def pool() -> Iterator[ReferencePool]:
    references = ReferencePool("npgym/Knapsack-easy", {}, workers=1)
    asyncio.run(references.start())
    yield references
    references.close()


@given(seed=st.integers(0, 2**63 - 1))
@settings(max_examples=15)
def test_the_pool_builds_what_a_single_process_env_builds(pool: ReferencePool, seed: int) -> None:
    single = NPGymEnvironment("npgym/Knapsack-easy")
    pooled = NPGymEnvironment("npgym/Knapsack-easy", pool)
    expected = single.reset(seed=seed)
    observed = asyncio.run(pooled.reset_async(seed=seed))
    assert observed.prompt == expected.prompt
    assert observed.details == expected.details
    assert pooled.env.unwrapped.session.instance == single.env.unwrapped.session.instance
    assert pooled.env.unwrapped.session.reference == single.env.unwrapped.session.reference
    answer = TASK.format_answer(single.env.unwrapped.session.reference.solution)
    assert pooled.step(NPGymAction(text=answer)) == single.step(NPGymAction(text=answer))


def test_a_dead_worker_fails_its_reset_clearly_and_new_workers_take_over() -> None:
    references = ReferencePool("npgym/Knapsack-easy", {}, workers=1)

    async def scenario() -> None:
        await references.start()
        (worker,) = references.worker_pids()
        os.kill(worker, signal.SIGSTOP)  # the reset is handed over, not yet done...
        reset = asyncio.ensure_future(references.build(4))
        await asyncio.sleep(0.2)
        os.kill(worker, signal.SIGKILL)  # ...when the worker dies
        with pytest.raises(WorkerCrashedError, match=r"died .* send reset again"):
            await asyncio.wait_for(reset, timeout=30)
        rebuilt = await asyncio.wait_for(references.build(4), timeout=60)
        assert rebuilt == TASK.generate(4, tier="easy")
        assert worker not in references.worker_pids()

    try:
        asyncio.run(scenario())
    finally:
        references.close()


def test_a_cancelled_reset_frees_its_worker_after_the_grace() -> None:
    """Old code: a reset cancelled while its worker built it kept the worker busy to the end
    (here for ever: the worker is stopped, as a long proof would hold it)."""
    references = ReferencePool("npgym/Knapsack-easy", {}, workers=1)

    async def scenario() -> None:
        await references.start()
        (quick,) = references.worker_pids()
        reset = asyncio.ensure_future(references.build(5))
        await asyncio.sleep(0)
        reset.cancel()  # a quick build nobody waits for: finished, the worker kept
        await asyncio.sleep(CANCEL_GRACE_S + 0.5)
        assert references.worker_pids() == [quick]
        os.kill(quick, signal.SIGSTOP)
        reset = asyncio.ensure_future(references.build(6))
        await asyncio.sleep(0.2)
        reset.cancel()
        started = time.monotonic()
        while _alive(quick) and time.monotonic() - started < 10:
            await asyncio.sleep(0.05)
        assert not _alive(quick) and time.monotonic() - started >= CANCEL_GRACE_S - 0.2
        rebuilt = await asyncio.wait_for(references.build(6), timeout=60)
        assert rebuilt == TASK.generate(6, tier="easy")

    try:
        asyncio.run(scenario())
    finally:
        references.close()


def test_closing_the_pool_kills_its_workers() -> None:
    references = ReferencePool("npgym/Knapsack-easy", {}, workers=2)
    asyncio.run(references.start())
    workers = references.worker_pids()
    assert len(workers) == 2
    references.close()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(references.build(1))


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_worker_and_timeout_limits_at_and_past_the_bounds() -> None:
    assert check_workers(0) == 0 and check_workers(MAX_WORKERS) == MAX_WORKERS
    for bad in (-1, MAX_WORKERS + 1):
        with pytest.raises(ValueError, match=f"from 0 to {MAX_WORKERS}"):
            check_workers(bad)
    with pytest.raises(TypeError):
        check_workers(True)
    assert check_timeout("idle_timeout_s", MAX_TIMEOUT_S) == MAX_TIMEOUT_S
    assert check_timeout("idle_timeout_s", 1e-3) == 1e-3
    for bad_seconds in (0, -1.0, MAX_TIMEOUT_S * 1.001, math.nan, math.inf):
        with pytest.raises(ValueError, match="idle_timeout_s must be more than 0"):
            check_timeout("idle_timeout_s", bad_seconds)
    with pytest.raises(TypeError):
        check_timeout("message_timeout_s", "5")
    with pytest.raises(ValueError, match="message_timeout_s"):
        create_server_app("npgym/Knapsack-easy", workers=0, message_timeout_s=0)


@pytest.mark.parametrize(
    "option",
    [
        ["--workers", str(MAX_WORKERS + 1)],
        ["--workers", "-1"],
        ["--idle-timeout", "0"],
        ["--message-timeout", str(MAX_TIMEOUT_S * 2)],
    ],
)
def test_serve_refuses_limits_past_their_bounds(option: list[str]) -> None:
    from click.testing import CliRunner

    from npgym.cli import main

    result = CliRunner().invoke(main, ["serve", "npgym/Knapsack-easy", *option])
    assert result.exit_code == 2
    assert option[0] in result.output


# SessionTimeouts on a scripted ASGI connection: the handler and the client are fakes.


class _Connection:
    """A fake ASGI WebSocket: ``incoming`` feeds ``receive``; ``sent`` records ``send``."""

    def __init__(self, *incoming: dict) -> None:
        self.incoming: asyncio.Queue[dict] = asyncio.Queue()
        for message in incoming:
            self.incoming.put_nowait(message)
        self.sent: list[dict] = []

    async def receive(self) -> dict:
        return await self.incoming.get()

    async def send(self, message: dict) -> None:
        self.sent.append(message)


def _echo_app(work_s: float, ended: list[str]) -> Any:
    """A handler that answers each message after ``work_s`` seconds, until a disconnect."""

    async def app(scope: dict, receive: Any, send: Any) -> None:
        try:
            while True:
                message = await receive()
                if message["type"] == "websocket.disconnect":
                    ended.append(f"disconnect {message['code']}")
                    return
                await asyncio.sleep(work_s)
                await send({"type": "websocket.send", "text": message.get("text", "")})
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    return app


def _run_guarded(app: Any, connection: _Connection, idle_s: float, message_s: float) -> float:
    limits = SessionTimeouts(app, idle_timeout_s=idle_s, message_timeout_s=message_s)
    started = time.monotonic()
    asyncio.run(
        asyncio.wait_for(limits({"type": "websocket"}, connection.receive, connection.send), 10)
    )
    return time.monotonic() - started


def test_an_idle_connection_is_closed_after_the_idle_timeout() -> None:
    ended: list[str] = []
    connection = _Connection({"type": "websocket.receive", "text": "a"})
    elapsed = _run_guarded(_echo_app(0, ended), connection, idle_s=0.3, message_s=5)
    assert connection.sent[0] == {"type": "websocket.send", "text": "a"}
    assert connection.sent[1] == {
        "type": "websocket.close",
        "code": IDLE_CLOSE_CODE,
        "reason": "idle for 0.3 s",
    }
    assert ended == [f"disconnect {IDLE_CLOSE_CODE}"]
    assert 0.3 <= elapsed < 3


def test_a_message_answered_within_the_limit_keeps_the_session() -> None:
    async def client(connection: _Connection) -> None:
        for text in "abc":
            await asyncio.sleep(0.15)  # under the 0.4 s idle limit each time
            connection.incoming.put_nowait({"type": "websocket.receive", "text": text})
        await asyncio.sleep(0.15)
        connection.incoming.put_nowait({"type": "websocket.disconnect", "code": 1000})

    ended: list[str] = []
    connection = _Connection()

    async def scenario() -> None:
        limits = SessionTimeouts(_echo_app(0.1, ended), idle_timeout_s=0.4, message_timeout_s=0.3)
        await asyncio.gather(
            limits({"type": "websocket"}, connection.receive, connection.send), client(connection)
        )

    asyncio.run(asyncio.wait_for(scenario(), 10))
    assert [message["text"] for message in connection.sent] == ["a", "b", "c"]
    assert ended == ["disconnect 1000"]


def test_a_message_not_answered_in_time_gets_an_error_and_a_close() -> None:
    ended: list[str] = []
    connection = _Connection({"type": "websocket.receive", "text": "slow step"})
    elapsed = _run_guarded(_echo_app(60, ended), connection, idle_s=5, message_s=0.3)
    error, close = connection.sent
    assert json.loads(error["text"]) == {
        "type": "error",
        "data": {
            "message": "the server did not answer within 0.3 s; session closed",
            "code": "MESSAGE_TIMEOUT",
        },
    }
    assert close["type"] == "websocket.close" and close["code"] == MESSAGE_TIMEOUT_CLOSE_CODE
    assert ended == ["cancelled"]
    assert 0.3 <= elapsed < 3


def test_http_requests_pass_through_the_timeouts() -> None:
    calls: list[str] = []

    async def app(scope: dict, receive: Any, send: Any) -> None:
        calls.append(scope["type"])

    limits = SessionTimeouts(app, idle_timeout_s=0.01, message_timeout_s=0.01)
    asyncio.run(limits({"type": "http"}, _Connection().receive, _Connection().send))
    assert calls == ["http"]


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    options = ["--max-sessions", "2", "--idle-timeout", "1", "--workers", "1"]
    yield from _start(tmp_path_factory.mktemp("serve") / "server.log", *options)


def test_idle_clients_free_their_slots_for_new_ones(idle_server: str) -> None:
    ws_url = idle_server.replace("http", "ws") + "/ws"

    async def scenario() -> None:
        idle = [await websockets.connect(ws_url) for _ in range(2)]  # every slot taken
        async with websockets.connect(ws_url) as refused:  # told so, then closed
            refusal = json.loads(await asyncio.wait_for(refused.recv(), timeout=10))
            assert refusal["data"]["code"] == "CAPACITY_REACHED"
        for connection in idle:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(connection.recv(), timeout=10)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == IDLE_CLOSE_CODE
            assert closed.value.rcvd.reason == "idle for 1 s"
        async with NPGymClient(base_url=idle_server) as admitted:
            result = await admitted.reset(seed=1)
            assert result.observation.prompt == TASK.prompt(TASK.generate(1, tier="easy"))

    asyncio.run(scenario())


def test_a_client_that_never_finishes_its_message_frees_its_slot(idle_server: str) -> None:
    port = int(idle_server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(
            b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n"
        )
        assert raw.recv(4096).startswith(b"HTTP/1.1 101")
        raw.sendall(bytes([0x81, 0x80 | 100]) + b"mask" + b"x" * 10)  # 10 of 100 bytes
        started = time.monotonic()
        closing = raw.recv(4096)  # the server's close frame (0x88), then the end
        assert closing[:1] == b"\x88"
        assert int.from_bytes(closing[2:4], "big") == IDLE_CLOSE_CODE
        assert time.monotonic() - started < 8
    with NPGymClient(base_url=idle_server).sync() as env:
        env.reset(seed=2)
        env.reset(seed=3)


def test_the_trl_environment_reconnects_after_an_idle_close(idle_server: str) -> None:
    from npgym.integrations.openenv import NPGymServerEnvironment

    env = NPGymServerEnvironment([idle_server])
    try:
        assert TASK.prompt(TASK.generate(8, tier="easy")) in env.reset(seed=8)
        time.sleep(2.5)  # the server closes the idle session
        assert TASK.prompt(TASK.generate(9, tier="easy")) in env.reset(seed=9)
    finally:
        env.close()


MAX_RSS_GROWTH_MB = 50
"""How much the server process may grow over a long run (the issue's bound)."""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads memory from /proc")
@pytest.mark.parametrize(
    ("env_id", "episodes"),
    [("npgym/TSP-hard", 200), ("npgym/Knapsack-easy", 10_000)],  # old code: +144 MB by 300
)
def test_server_memory_stays_flat_under_load(env_id: str, episodes: int) -> None:
    bench = Path(__file__).parents[1] / "bench" / "server_load.py"
    command = [sys.executable, str(bench), "--env", env_id, "--workers", "2"]
    command += ["--episodes", str(episodes), "--clients", "8"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1500)
    assert result.returncode == 0, result.stderr[-2000:]
    row = result.stdout.strip().splitlines()[-1].strip("|").split("|")
    assert int(row[2]) == episodes
    growth_mb = float(row[10])
    assert growth_mb <= MAX_RSS_GROWTH_MB, result.stdout


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="finds workers in /proc")
def test_reference_workers_exit_when_the_server_is_killed(tmp_path: Path) -> None:
    pids: list[int] = []
    server = _start(tmp_path / "server.log", "--workers", "2", pids=pids)
    next(server)
    workers = _descendants(pids[0])
    assert len(workers) >= 2
    os.kill(pids[0], signal.SIGKILL)
    deadline = time.monotonic() + 15
    while any(_alive(worker) for worker in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(worker) for worker in workers)
    server.close()


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (its reference workers and their fork server)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                children = [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found
