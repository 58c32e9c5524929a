"""Hostile clients of ``npgym serve``: a corpus of bad HTTP, WebSocket and MCP messages against
one server (started from a folder that holds an empty ``npgym/``, which must not shadow the
package), and the limits that every transport shares."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openenv", reason="the OpenEnv server needs: pip install 'npgym[openenv]'")

import websockets

from npgym.integrations.openenv import (
    NPGymAction,
    NPGymClient,
    ServerGuard,
    _SessionTable,
)
from npgym.integrations.serving import (
    HEADER_TIMEOUT_S,
    MAX_MESSAGE_BYTES,
    MAX_TOKEN_CHARS,
    MIN_TOKEN_CHARS,
    TOKEN_ENV,
    check_token,
    is_loopback,
)

TOKEN = "hostile-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_SESSIONS = 3
IDLE_S = 1.5


SERVER_PIDS: list[int] = []
"""The module's server process (tests that look at its workers)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``npgym serve`` (the console script) run from a folder with an empty ``npgym/``."""
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "npgym").mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = Path(sys.executable).with_name("npgym")
    command = [str(script), "serve", "npgym/Knapsack-easy", "--heuristic-reference"]
    command += ["--port", str(port), "--workers", "1", "--max-sessions", str(MAX_SESSIONS)]
    command += ["--idle-timeout", str(IDLE_S), "--message-timeout", "60"]
    environment = {**os.environ, TOKEN_ENV: TOKEN}
    log = folder / "server.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command, cwd=folder, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
    SERVER_PIDS[:] = [process.pid]
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2):
                    break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
    assert "leaked semaphore" not in text, text[-3000:]


def _http(
    url: str, path: str, body: bytes | None, headers: dict[str, str], method: str = "POST"
) -> tuple[int, bytes]:
    request = urllib.request.Request(url + path, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


JSON = {"Content-Type": "application/json"}
RPC = {"jsonrpc": "2.0", "id": 1}

HTTP_CASES: list[tuple[str, str, str, bytes | None, dict[str, str], int]] = [
    # (case, method, path, body, headers, expected status)
    ("no token /reset", "POST", "/reset", _json({"seed": 1}), JSON, 401),
    ("no token /step", "POST", "/step", _json({"action": {"text": "x"}}), JSON, 401),
    ("no token /state", "GET", "/state", None, {}, 401),
    ("no token /metadata", "GET", "/metadata", None, {}, 401),
    ("no token /schema", "GET", "/schema", None, {}, 401),
    ("no token /mcp", "POST", "/mcp", _json({**RPC, "method": "tools/list"}), JSON, 401),
    ("wrong token", "POST", "/reset", b"{}", {**JSON, "Authorization": "Bearer " + "x" * 30}, 401),
    ("token as basic", "POST", "/reset", b"{}", {**JSON, "Authorization": f"Basic {TOKEN}"}, 401),
    (
        "token prefix",
        "POST",
        "/reset",
        b"{}",
        {**JSON, "Authorization": f"Bearer {TOKEN[:-1]}"},
        401,
    ),
    ("health is open", "GET", "/health", None, {}, 200),
    (
        "lower-case bearer",
        "POST",
        "/reset",
        b"{}",
        {**JSON, "Authorization": f"bearer {TOKEN}"},
        200,
    ),
    ("reset ok", "POST", "/reset", _json({"seed": 3}), {**JSON, **AUTH}, 200),
    ("reset torn JSON", "POST", "/reset", b"{", {**JSON, **AUTH}, 422),
    ("reset a list", "POST", "/reset", b"[]", {**JSON, **AUTH}, 422),
    ("reset seed text", "POST", "/reset", _json({"seed": "x"}), {**JSON, **AUTH}, 422),
    ("reset seed negative", "POST", "/reset", _json({"seed": -1}), {**JSON, **AUTH}, 422),
    ("reset seed float", "POST", "/reset", _json({"seed": 1.5}), {**JSON, **AUTH}, 422),
    ("reset NaN", "POST", "/reset", b'{"seed": NaN}', {**JSON, **AUTH}, 400),
    ("reset deep JSON", "POST", "/reset", b"[" * 100_000, {**JSON, **AUTH}, 400),
    ("reset bad UTF-8", "POST", "/reset", b'{"seed": "\xff"}', {**JSON, **AUTH}, 400),
    (
        "step without reset",
        "POST",
        "/step",
        _json({"action": {"text": "Answer: [0]"}}),
        {**JSON, **AUTH},
        400,
    ),
    ("step text number", "POST", "/step", _json({"action": {"text": 5}}), {**JSON, **AUTH}, 422),
    ("step no action", "POST", "/step", b"{}", {**JSON, **AUTH}, 422),
    (
        "body at the limit",
        "POST",
        "/reset",
        b" " * (MAX_MESSAGE_BYTES - 2) + b"{}",
        {**JSON, **AUTH},
        200,
    ),
    ("GET /reset", "GET", "/reset", None, AUTH, 405),
    ("unknown path", "GET", "/nowhere", None, AUTH, 404),
    ("mcp torn JSON", "POST", "/mcp", b"{", {**JSON, **AUTH}, 200),
    (
        "mcp tools/list",
        "POST",
        "/mcp",
        _json({**RPC, "method": "tools/list"}),
        {**JSON, **AUTH},
        200,
    ),
    (
        "mcp params a list",
        "POST",
        "/mcp",
        _json({**RPC, "method": "tools/list", "params": []}),
        {**JSON, **AUTH},
        200,
    ),
    (
        "mcp unknown method",
        "POST",
        "/mcp",
        _json({**RPC, "method": "rm -rf"}),
        {**JSON, **AUTH},
        200,
    ),
    (
        "mcp close unknown",
        "POST",
        "/mcp",
        _json({**RPC, "method": "openenv/session/close", "params": {"session_id": "nope"}}),
        {**JSON, **AUTH},
        200,
    ),
    (
        "mcp call unknown session",
        "POST",
        "/mcp",
        _json({**RPC, "method": "tools/call", "params": {"name": "x", "session_id": "nope"}}),
        {**JSON, **AUTH},
        200,
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status"),
    [case[1:] for case in HTTP_CASES],
    ids=[case[0] for case in HTTP_CASES],
)
def test_hostile_http_requests_get_a_clear_answer(
    server: str, method: str, path: str, body: bytes | None, headers: dict[str, str], status: int
) -> None:
    code, answer = _http(server, path, body, headers, method)
    assert code == status, answer[:300]
    if path == "/mcp" and status == 200:  # JSON-RPC says what went wrong in the body
        assert "error" in json.loads(answer)


def test_a_body_past_the_limit_is_refused_before_it_is_read(server: str) -> None:
    port = int(server.rsplit(":", 1)[1])
    head = (
        f"POST /reset HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {MAX_MESSAGE_BYTES + 1}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(head.encode())
        assert raw.recv(4096).startswith(b"HTTP/1.1 413")


def _ws_url(server: str, path: str = "/ws") -> str:
    return server.replace("http", "ws") + path


async def _exchange(server: str, frames: list[str | bytes], path: str = "/ws") -> list[Any]:
    """Send ``frames`` on one authorised WebSocket; each answer (or the close code)."""
    answers: list[Any] = []
    async with websockets.connect(
        _ws_url(server, path), additional_headers=AUTH, max_size=None
    ) as connection:
        for frame in frames:
            try:
                await connection.send(frame)
                answers.append(json.loads(await asyncio.wait_for(connection.recv(), 30)))
            except websockets.ConnectionClosed as closed:
                if not answers and closed.rcvd and closed.rcvd.code == 1000:  # told why first
                    answers.append(json.loads(await connection.recv()))
                    break
                answers.append(closed.rcvd.code if closed.rcvd else None)
                break
    return answers


STEP = json.dumps({"type": "step", "data": {"text": "Answer: [0]"}})
RESET = json.dumps({"type": "reset", "data": {"seed": 1}})
ENVELOPE = len(json.dumps({"type": "step", "data": {"text": ""}}))
WS_CASES: list[tuple[str, list[str | bytes], str, Any]] = [
    # (case, frames, path, what the last answer says: an error code or a close code)
    ("torn JSON", ["{"], "/ws", "INVALID_JSON"),
    ("a JSON list", ["[]"], "/ws", "SESSION_ERROR"),
    ("unknown type", [json.dumps({"type": "shell"})], "/ws", "UNKNOWN_TYPE"),
    ("step before reset", [STEP], "/ws", "EXECUTION_ERROR"),
    (
        "step text a number",
        [RESET, json.dumps({"type": "step", "data": {"text": 5}})],
        "/ws",
        "VALIDATION_ERROR",
    ),
    (
        "step data a list",
        [RESET, json.dumps({"type": "step", "data": []})],
        "/ws",
        "VALIDATION_ERROR",
    ),
    (
        "reset seed text",
        [json.dumps({"type": "reset", "data": {"seed": "x"}})],
        "/ws",
        "EXECUTION_ERROR",
    ),
    (
        "reset data a string",
        [json.dumps({"type": "reset", "data": "x"})],
        "/ws",
        "VALIDATION_ERROR",
    ),
    ("deep JSON", ["[" * 100_000], "/ws", "SESSION_ERROR"),
    ("frame past the limit", ["x" * (MAX_MESSAGE_BYTES + 1)], "/ws", 1009),
    ("16 MiB frame", ["x" * (16 << 20)], "/ws", 1009),
    (
        "frame at the limit (1 Mi+ characters: refused by the action cap, session kept)",
        [
            RESET,
            json.dumps({"type": "step", "data": {"text": "9" * (MAX_MESSAGE_BYTES - ENVELOPE)}}),
            RESET,
        ],
        "/ws",
        "observation",
    ),
    ("mcp over /ws, torn", [json.dumps({"type": "mcp", "data": "x"})], "/ws", "VALIDATION_ERROR"),
    ("mcp socket torn JSON", ["{"], "/mcp", -32700),
    ("mcp socket tools/list", [json.dumps({**RPC, "method": "tools/list"})], "/mcp", -32603),
]


def _outcome(answer: Any) -> Any:
    if isinstance(answer, int) or answer is None:
        return answer
    if "error" in answer and isinstance(answer["error"], dict):  # JSON-RPC
        return answer["error"]["code"]
    if answer.get("type") == "error":
        return answer["data"]["code"]
    return answer.get("type")


@pytest.mark.parametrize(
    ("frames", "path", "expected"),
    [case[1:] for case in WS_CASES],
    ids=[case[0] for case in WS_CASES],
)
def test_hostile_websocket_messages_get_a_clear_answer(
    server: str, frames: list[str | bytes], path: str, expected: Any
) -> None:
    answers = asyncio.run(_exchange(server, frames, path))
    assert _outcome(answers[-1]) == expected, str(answers)[:500]


@pytest.mark.parametrize(
    "query", ["", "?token=wrong-token-wrong-token", f"?token={TOKEN[:-1]}"], ids=str
)
def test_a_websocket_without_the_token_is_refused(server: str, query: str) -> None:
    async def scenario() -> None:
        with pytest.raises(websockets.InvalidStatus, match="403"):
            await websockets.connect(_ws_url(server) + query)

    asyncio.run(scenario())


def test_the_token_as_a_query_parameter_or_from_the_environment(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = asyncio.run(_exchange_query(server))
    assert answers["type"] == "observation"
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with NPGymClient(base_url=server).sync() as env:  # the token from NPGYM_SERVE_TOKEN
        assert env.reset(seed=5).observation.details["seed"] == 5
        assert env.step(NPGymAction(text="Answer: [0]")).done


async def _exchange_query(server: str) -> Any:
    async with websockets.connect(_ws_url(server) + f"?token={TOKEN}") as connection:
        await connection.send(RESET)
        return json.loads(await connection.recv())


def _mcp(server: str, method: str, **params: Any) -> dict[str, Any]:
    body = _json({**RPC, "method": method, "params": params})
    code, answer = _http(server, "/mcp", body, {**JSON, **AUTH})
    assert code == 200
    result: dict[str, Any] = json.loads(answer)
    return result


def test_mcp_sessions_share_the_cap_and_expire_when_idle(server: str) -> None:
    """Old code: MCP sessions never expired (a --max-sessions 4 server locked for 34 min) and
    HTTP resets bypassed the cap."""
    made = [_mcp(server, "openenv/session/create") for _ in range(MAX_SESSIONS + 1)]
    assert all("result" in answer for answer in made[:MAX_SESSIONS])
    assert "capacity" in made[-1]["error"]["message"]
    code, answer = _http(server, "/reset", _json({"seed": 1}), {**JSON, **AUTH})
    assert code == 503 and json.loads(answer)["code"] == "CAPACITY_REACHED"
    refused = asyncio.run(_exchange(server, [RESET]))
    assert refused[0]["data"]["code"] == "CAPACITY_REACHED"
    time.sleep(IDLE_S + 2)  # the idle timeout, then the reaper's next look
    code, _ = _http(server, "/reset", _json({"seed": 1}), {**JSON, **AUTH})
    assert code == 200
    with NPGymClient(base_url=server, token=TOKEN).sync() as env:
        assert env.reset(seed=2).observation.details["seed"] == 2
    session = made[0]["result"]["session_id"]
    closing = _mcp(server, "openenv/session/close", session_id=session)
    assert "Unknown session_id" in closing["error"]["message"]  # reaped already


def test_an_mcp_session_in_use_is_kept(server: str) -> None:
    session = _mcp(server, "openenv/session/create")["result"]["session_id"]
    for _ in range(3):
        time.sleep(IDLE_S / 2)
        _mcp(server, "tools/list", session_id=session)  # activity: not idle
    assert _mcp(server, "openenv/session/close", session_id=session)["result"]["closed"]


@pytest.mark.slow
def test_a_half_open_connection_is_closed_after_the_header_timeout(server: str) -> None:
    """Old code: a request line and then silence kept the connection open for good."""
    port = int(server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=HEADER_TIMEOUT_S + 20) as raw:
        raw.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        assert raw.recv(1024) == b""  # closed by the server
        assert HEADER_TIMEOUT_S - 1 <= time.monotonic() - started <= HEADER_TIMEOUT_S + 10


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds workers in /proc")
def test_a_reset_whose_client_hangs_up_frees_its_worker(server: str) -> None:
    """Old code: the dropped reset kept its worker (here stopped, as a long proof would hold
    it) and every later reset queued behind it."""
    (worker,) = [pid for child in _children(SERVER_PIDS[0]) for pid in _children(child)]
    os.kill(worker, signal.SIGSTOP)  # a reset that would take for ever
    port = int(server.rsplit(":", 1)[1])
    body = b'{"seed": 9}'
    head = (
        f"POST /reset HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            raw.sendall(head.encode() + body)
            time.sleep(0.5)  # the worker has the reset; the client hangs up
        deadline = time.monotonic() + 10
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(worker)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGCONT)
    with NPGymClient(base_url=server, token=TOKEN, message_timeout_s=60).sync() as env:
        assert env.reset(seed=9).observation.details["seed"] == 9  # a new worker built it


def test_a_head_not_sent_in_time_closes_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The header deadline on uvicorn's protocol, in process with a 0.3 s limit."""
    import uvicorn

    from npgym.integrations import openenv

    monkeypatch.setattr(openenv, "HEADER_TIMEOUT_S", 0.3)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = [(b"content-length", b"2")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b"ok"})

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        http=openenv.HeaderDeadline,
        lifespan="off",
        log_level="warning",
    )
    uvi = uvicorn.Server(config)
    thread = threading.Thread(target=uvi.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not uvi.started and time.monotonic() < deadline:
            time.sleep(0.02)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # a whole request: answered
            answer = raw.recv(1024)
            while not answer.endswith(b"ok"):
                answer += raw.recv(1024)
            assert answer.startswith(b"HTTP/1.1 200")
            raw.sendall(b"GET / HTTP/1.1\r\n")  # half a head on the same connection
            started = time.monotonic()
            assert raw.recv(1024) == b""
            assert 0.2 <= time.monotonic() - started < 3
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            started = time.monotonic()  # nothing at all: closed too
            assert raw.recv(1024) == b""
            assert 0.2 <= time.monotonic() - started < 3
    finally:
        uvi.should_exit = True
        thread.join(10)


def test_header_limits_at_and_past_the_bounds() -> None:
    assert check_token("a" * MIN_TOKEN_CHARS) and check_token("a" * MAX_TOKEN_CHARS)
    for bad in ("a" * (MIN_TOKEN_CHARS - 1), "a" * (MAX_TOKEN_CHARS + 1), "a b" * 8, "é" * 20):
        with pytest.raises(ValueError, match="token must"):
            check_token(bad)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    assert not is_loopback("example.org")


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--host", "0.0.0.0"], "reachable from other machines"),
        (["--host", "::"], "reachable from other machines"),
        (["--token", "short"], "token must have"),
    ],
)
def test_serve_refuses_an_open_host_without_a_token(options: list[str], error: str) -> None:
    from click.testing import CliRunner

    from npgym.cli import main

    result = CliRunner().invoke(
        main, ["serve", "npgym/Knapsack-easy", *options], env={TOKEN_ENV: None}
    )
    assert result.exit_code == 2 and error in result.output


def test_serving_the_curriculum_env_is_a_usage_error() -> None:
    from click.testing import CliRunner

    from npgym.cli import main

    result = CliRunner().invoke(main, ["serve", "npgym/Curriculum"])
    assert result.exit_code == 2 and "cannot be served" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


# --- the HTTP guard on scripted ASGI requests (fast: no server) -------------------------------


class _Slots:
    """A stand-in table with ``max_concurrent_envs`` slots."""

    def __init__(self, slots: int) -> None:
        self._sessions: dict[str, Any] = {}
        self._max_concurrent_envs = slots
        self.max_concurrent_envs = slots

    hold = _SessionTable.hold
    release = _SessionTable.release


def _guard(app: Any, slots: int = 1, message_s: float = 5.0) -> ServerGuard:
    table: Any = _Slots(slots)
    return ServerGuard(app, table=table, token=None, idle_timeout_s=5, message_timeout_s=message_s)


def _request(path: str = "/reset") -> dict[str, Any]:
    return {"type": "http", "method": "POST", "path": path, "headers": []}


def test_an_http_reset_whose_client_hangs_up_is_cancelled() -> None:
    """Old code: the handler (and its worker) went on after the client hung up."""
    ended: list[str] = []

    async def slow_app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    async def scenario() -> None:
        incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        incoming.put_nowait({"type": "http.request", "body": b"{}", "more_body": False})
        sent: list[dict[str, Any]] = []

        async def send(message: Any) -> None:
            sent.append(message)

        guard = _guard(slow_app)
        serving = asyncio.ensure_future(guard(_request(), incoming.get, send))
        await asyncio.sleep(0.2)
        assert len(guard.table._sessions) == 1  # the reset holds a slot
        incoming.put_nowait({"type": "http.disconnect"})
        await asyncio.wait_for(serving, 5)
        assert ended == ["cancelled"] and not sent
        assert not guard.table._sessions  # and gave it back

    asyncio.run(scenario())


def test_an_http_request_past_its_deadline_gets_504_and_is_cancelled() -> None:
    ended: list[str] = []

    async def slow_app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    async def scenario() -> list[dict[str, Any]]:
        incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        incoming.put_nowait({"type": "http.request", "body": b"{}", "more_body": False})
        sent: list[dict[str, Any]] = []

        async def send(message: Any) -> None:
            sent.append(message)

        await asyncio.wait_for(_guard(slow_app, message_s=0.3)(_request(), incoming.get, send), 5)
        return sent

    sent = asyncio.run(scenario())
    assert sent[0]["status"] == 504 and ended == ["cancelled"]
    assert json.loads(sent[1]["body"])["code"] == "MESSAGE_TIMEOUT"


def test_a_full_table_refuses_http_resets_with_503() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["path"] == "/health"  # a reset never gets here
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async def scenario() -> list[dict[str, Any]]:
        guard = _guard(app, slots=1)
        guard.table.hold()  # a WebSocket session has the only slot
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"{}", "more_body": False}

        async def send(message: Any) -> None:
            sent.append(message)

        await guard(_request(), receive, send)
        await guard(_request("/health"), receive, send)  # holds no slot
        return sent

    sent = asyncio.run(scenario())
    assert sent[0]["status"] == 503
    assert json.loads(sent[1]["body"])["code"] == "CAPACITY_REACHED"
    assert sent[2]["status"] == 200
