"""npgym as an OpenEnv environment server, built on ``openenv`` 0.10's own server and client.

``npgym serve npgym/TSP-hard --port 8000`` (or :func:`create_server_app`) serves any npgym env id,
including multi-turn repair (``--max-attempts 3``), through OpenEnv's FastAPI app: a WebSocket
session per client (``/ws``), each with its own environment, seeded by the client's
``reset(seed=...)`` and isolated from the others, plus OpenEnv's ``/health``, ``/schema`` (which
publishes :class:`NPGymState`'s fields) and ``/metadata`` endpoints. The server always runs in
OpenEnv's simulation mode: a trainer drives episodes over ``/ws`` (the episode-control loop that
TRL's ``environment_factory`` uses), whatever ``OPENENV_MODE`` says. :class:`NPGymClient` is an
OpenEnv ``EnvClient`` for it:

    with NPGymClient(base_url="http://localhost:8000").sync() as env:
        result = env.reset(seed=7)                       # result.observation.prompt
        result = env.step(NPGymAction(text="... Answer: [0, 2, 1, 0]"))
        result.reward, result.done, result.observation.feedback

An action is the model's whole completion as text, at most :data:`MAX_ACTION_CHARS` characters.
A non-text action, or a longer one, gets an OpenEnv error response naming the problem; the
session and every other session keep going. Running many servers behind one trainer is
described in docs/integrations.md ("OpenEnv server"); :func:`local_server` runs one in a
subprocess (smoke runs, benchmarks).

Under load: each reset's instance and reference are built in a pool of worker processes
(:mod:`npgym.integrations.serving`, ``--workers``), so resets use several cores and never
hold up another session's step. :class:`SessionTimeouts` closes a WebSocket that has sent no
complete message for ``idle_timeout_s`` (:data:`DEFAULT_IDLE_TIMEOUT_S`), or whose message the
server has not answered within ``message_timeout_s`` (:data:`DEFAULT_MESSAGE_TIMEOUT_S`); either
way its session slot is free at once. (OpenEnv's own ``session_timeout`` reaper is not used: it
frees the slot but leaves the socket open, so the client goes on playing outside the session
count, and it looks at most every 5 seconds.)

Every client is untrusted, on every transport (WebSocket ``/ws`` and ``/mcp``, plain HTTP
``/reset``, ``/step``..., HTTP MCP ``POST /mcp``): :class:`ServerGuard` gives them one session
table (``max_sessions``), the same idle and message limits, a cancelled handler when the
client hangs up, a body limit (:data:`~npgym.integrations.serving.MAX_MESSAGE_BYTES`) and,
with ``token``, a required ``Authorization: Bearer`` header; :func:`run_server` adds the
transport's limits (the same frame limit, a deadline on request heads). The limits, as
numbers, are in :mod:`npgym.integrations.serving`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import hmac
import itertools
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import h11
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import (
    Action,
    EnvironmentMetadata,
    Observation,
    ServerMode,
    State,
)
from pydantic import Field, StrictStr
from uvicorn.protocols.http.h11_impl import H11Protocol
from websockets.exceptions import ConnectionClosed

from npgym.datasets import warm_up
from npgym.env import MAX_TEXT_CHARS
from npgym.instance import Instance
from npgym.integrations.serving import (
    BODY_TIMEOUT_S,
    CLOSE_SEND_TIMEOUT_S,
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MESSAGE_TIMEOUT_S,
    DEFAULT_WORKERS,
    HEADER_TIMEOUT_S,
    KEEP_ALIVE_TIMEOUT_S,
    MAX_HEADER_BYTES,
    MAX_MESSAGE_BYTES,
    REAPER_INTERVAL_S,
    TOKEN_ENV,
    BodyTooLargeError,
    ReferencePool,
    check_timeout,
    check_token,
    check_workers,
    is_loopback,
    read_body,
)
from npgym.integrations.trl import VerifierTool
from npgym.multiturn import as_completion
from npgym.registry import CURRICULUM_ENV_ID
from npgym.reward import DEFAULT_REWARD
from npgym.version import __version__

MAX_ACTION_CHARS = MAX_TEXT_CHARS
"""Longest completion a client may send in one step (1 MiB of text)."""
IDLE_CLOSE_CODE = 1001
"""WebSocket close code of a session closed for idleness ("going away")."""
MESSAGE_TIMEOUT_CLOSE_CODE = 1011
"""WebSocket close code of a session whose message took too long ("internal error")."""
POLICY_CLOSE_CODE = 1008
"""WebSocket close code of a connection without the token (the client sees HTTP 403)."""

ASGIMessage = MutableMapping[str, Any]
ASGIReceive = Callable[[], Awaitable[ASGIMessage]]
ASGISend = Callable[[ASGIMessage], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], ASGIReceive, ASGISend], Awaitable[None]]


class NPGymAction(Action):
    """A model's completion, scored by the task's verifier."""

    text: StrictStr = Field(description="the model's whole completion, ending in 'Answer: ...'")


class NPGymObservation(Observation):
    """What a client sees: the prompt after ``reset``, the verifier's feedback after ``step``.

    ``details`` carries the instance's ``task``, ``tier`` and ``seed`` after a reset, and the
    score's fields (``feasible``, ``ratio``, ``reason``, ``attempt``, ``episode_reward``...) after
    a step. (A field of our own from before OpenEnv sent ``metadata`` over the wire; clients
    read it, so it stays.)
    """

    prompt: str = Field(default="", description="the problem statement (after reset)")
    feedback: str = Field(default="", description="the verifier's feedback (after step)")
    details: dict[str, Any] = Field(default_factory=dict, description="instance or score fields")


class NPGymState(State):
    """The session's env id, instance seed and attempts so far."""

    env_id: str = ""
    task: str = ""
    seed: int | None = None
    attempts: int = 0


class NPGymEnvironment(Environment[NPGymAction, NPGymObservation, NPGymState]):
    """One session: a gymnasium npgym env behind OpenEnv's ``Environment`` interface.

    With a ``pool``, the server's resets (:meth:`reset_async`) build the instance and its
    reference in a worker process; without one, or through :meth:`reset`, in this process.
    Either way the same seed gives the same prompt and reference.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, env_id: str, pool: ReferencePool | None = None, **env_options: Any) -> None:
        super().__init__()
        self.env_id = env_id
        self.env = gym.make(env_id, **env_options)
        self.pool = pool
        self._state = NPGymState(env_id=env_id, task=self.env.unwrapped.task.name)  # type: ignore[attr-defined]
        self._done = True

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **_: Any
    ) -> NPGymObservation:
        """A new instance; the same seed gives the same instance in every session."""
        return self._start(seed, episode_id, None)

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, **_: Any
    ) -> NPGymObservation:
        """:meth:`reset` for the server: the instance and its reference come from the pool
        (the event loop goes on serving meanwhile), the rest runs in a thread."""
        instance = None
        if self.pool is not None:
            if seed is None:  # the seed the env itself would draw
                seed_to_build = int(self.env.unwrapped.np_random.integers(2**63))
            else:
                seed_to_build = seed
            instance = await self.pool.build(seed_to_build)
        return await asyncio.to_thread(self._start, seed, episode_id, instance)

    def _start(
        self, seed: int | None, episode_id: str | None, instance: Instance | None
    ) -> NPGymObservation:
        """Reset the env on ``instance`` (built here from ``seed`` when ``None``)."""
        options = None if instance is None else {"instance": instance}
        prompt, info = self.env.reset(seed=seed, options=options)
        instance = info["instance"]
        self._state = NPGymState(
            episode_id=episode_id or uuid.uuid4().hex,
            env_id=self.env_id,
            task=instance.task,
            seed=instance.seed,
        )
        self._done = False
        details = {"task": instance.task, "tier": instance.tier, "seed": instance.seed}
        return NPGymObservation(prompt=prompt, done=False, reward=None, details=details)

    def step(
        self, action: NPGymAction, timeout_s: float | None = None, **_: Any
    ) -> NPGymObservation:
        """Score the completion; in repair mode the episode goes on until solved or out of tries."""
        if self._done:
            raise RuntimeError("the episode is over: send reset first")
        if len(action.text) > MAX_ACTION_CHARS:
            raise ValueError(
                f"action has {len(action.text)} characters; the limit is {MAX_ACTION_CHARS}"
            )
        feedback, reward, terminated, truncated, info = self.env.step(action.text)
        self._done = terminated or truncated
        self._state.step_count += 1
        self._state.attempts = int(info["attempt"])
        details = {key: value for key, value in info.items() if _is_plain(value)}
        return NPGymObservation(
            feedback=feedback, done=self._done, reward=float(reward), details=details
        )

    @property
    def state(self) -> NPGymState:
        """The session's current state."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """Name and description shown by OpenEnv's ``/metadata``."""
        return EnvironmentMetadata(
            name=self.env_id,
            description=f"npgym {self.env_id}: an NP-hard problem with a verifiable reward",
            version=__version__,
        )

    def close(self) -> None:
        """Release the gymnasium env."""
        self.env.close()


def _is_plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


class SessionTimeouts:
    """ASGI middleware that frees the session slot of an idle or stalled WebSocket client.

    A connection that sends no complete message for ``idle_timeout_s`` is closed with code
    :data:`IDLE_CLOSE_CODE` (a message counts once its last byte is in, so a client that starts
    a message and never finishes it is idle). A message the server has not answered within
    ``message_timeout_s`` (a step that runs too long, a reset left waiting, a client that does
    not read its answers) gets an error response with code ``MESSAGE_TIMEOUT``, then a close
    with :data:`MESSAGE_TIMEOUT_CLOSE_CODE`, and its handler is cancelled. Either way OpenEnv's
    handler then destroys the session. Plain HTTP requests pass through untouched.
    """

    def __init__(self, app: ASGIApp, idle_timeout_s: float, message_timeout_s: float) -> None:
        self.app = app
        self.idle_timeout_s = check_timeout("idle_timeout_s", idle_timeout_s)
        self.message_timeout_s = check_timeout("message_timeout_s", message_timeout_s)

    async def __call__(
        self, scope: MutableMapping[str, Any], receive: ASGIReceive, send: ASGISend
    ) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        await _GuardedSocket(self, receive, send).serve(scope)


class _GuardedSocket:
    """One WebSocket connection under :class:`SessionTimeouts`' limits."""

    def __init__(self, limits: SessionTimeouts, receive: ASGIReceive, send: ASGISend) -> None:
        self.limits = limits
        self._receive = receive
        self._send = send
        self.closed = False
        self.answer_due: asyncio.TimerHandle | None = None
        self.handler: asyncio.Future[None] | None = None
        self.closing: asyncio.Task[None] | None = None

    async def serve(self, scope: MutableMapping[str, Any]) -> None:
        """Run the app's handler for this connection until it ends or a limit ends it."""
        self.handler = asyncio.ensure_future(self.limits.app(scope, self.receive, self.send))
        try:
            await asyncio.wait({self.handler})
        except asyncio.CancelledError:  # the server is stopping
            self.handler.cancel()
            raise
        finally:
            self._disarm()
        if self.closing is not None:
            await self.closing
        if not self.handler.cancelled():
            self.handler.result()

    async def receive(self) -> ASGIMessage:
        """The app's next message, or a disconnect once the client has been idle too long."""
        if self.closed:
            return {"type": "websocket.disconnect", "code": IDLE_CLOSE_CODE}
        try:
            message = await asyncio.wait_for(self._receive(), self.limits.idle_timeout_s)
        except asyncio.TimeoutError:
            self.closed = True
            reason = f"idle for {self.limits.idle_timeout_s:g} s"
            await self._close(None, IDLE_CLOSE_CODE, reason)
            return {"type": "websocket.disconnect", "code": IDLE_CLOSE_CODE, "reason": reason}
        if message["type"] == "websocket.receive":
            loop = asyncio.get_running_loop()
            self.answer_due = loop.call_later(self.limits.message_timeout_s, self._expire)
        return message

    async def send(self, message: ASGIMessage) -> None:
        """Pass the app's message on, unless a limit has closed the connection already."""
        if self.closed:
            return
        if message["type"] == "websocket.close":
            self._disarm()
            with contextlib.suppress(OSError):  # the client has closed it already: not an error
                await self._send(message)
            return
        await self._send(message)
        if message["type"] == "websocket.send":
            self._disarm()

    def _disarm(self) -> None:
        if self.answer_due is not None:
            self.answer_due.cancel()
            self.answer_due = None

    def _expire(self) -> None:
        """The message timeout: close with an error and cancel the handler (which destroys the
        session; a step already running in its thread finishes there, unseen)."""
        self.answer_due = None
        self.closed = True
        seconds = self.limits.message_timeout_s
        error = {
            "type": "error",
            "data": {
                "message": f"the server did not answer within {seconds:g} s; session closed",
                "code": "MESSAGE_TIMEOUT",
            },
        }
        self.closing = asyncio.ensure_future(
            self._close(error, MESSAGE_TIMEOUT_CLOSE_CODE, f"no answer within {seconds:g} s")
        )
        if self.handler is not None:
            self.handler.cancel()

    async def _close(self, error: dict[str, Any] | None, code: int, reason: str) -> None:
        """Tell the client why (within :data:`CLOSE_SEND_TIMEOUT_S`), then close."""

        async def tell() -> None:
            if error is not None:
                await self._send({"type": "websocket.send", "text": json.dumps(error)})
            await self._send({"type": "websocket.close", "code": code, "reason": reason})

        try:
            await asyncio.wait_for(tell(), CLOSE_SEND_TIMEOUT_S)
        except Exception:  # the client is gone or stuck: there is nothing left to tell it
            return


_OVER_HTTP: contextvars.ContextVar[bool] = contextvars.ContextVar("npgym_over_http", default=False)
"""Whether the running handler serves a plain HTTP request (its sessions no WebSocket holds)."""
UNGUARDED_PATHS = frozenset(
    {"/health", "/schema", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"}
    | {"/list_environments"}
)
"""Plain HTTP paths that build no environment, so hold no session slot."""
OPEN_PATHS = frozenset({"/health"})
"""The paths a client may use without the token (liveness checks)."""


class _SessionTable(HTTPEnvServer):
    """OpenEnv's server with one session table for every transport.

    WebSocket sessions (``/ws``, ``/mcp``) and HTTP MCP sessions (``openenv/session/create``)
    take a slot of OpenEnv's table; so does every plain HTTP request that builds an environment
    (``/reset``, ``/step``, ``/state``...), for as long as it runs (:meth:`hold`). A session
    made over HTTP, which no connection holds, is destroyed once idle for ``idle_timeout_s``
    (checked every :data:`REAPER_INTERVAL_S`), as :class:`SessionTimeouts` closes an idle
    WebSocket.
    """

    def __init__(self, *args: Any, idle_timeout_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.idle_timeout_s = idle_timeout_s
        self.free_standing: set[str] = set()

    async def _create_session(self) -> tuple[str, Environment]:
        session_id, env = await super()._create_session()
        if _OVER_HTTP.get():
            self.free_standing.add(session_id)
        return session_id, env

    def hold(self) -> str | None:
        """A slot for one HTTP request (its key), or ``None`` when the table is full."""
        if len(self._sessions) >= self._max_concurrent_envs:
            return None
        key = f"http-{uuid.uuid4().hex}"
        self._sessions[key] = None  # OpenEnv's placeholder: a slot that holds no session yet
        return key

    def release(self, key: str) -> None:
        """Free an HTTP request's slot (synchronous: safe in a cancelled task's cleanup)."""
        self._sessions.pop(key, None)

    def _start_reaper(self) -> None:
        if self._reaper_task is None:  # type: ignore[has-type]  # OpenEnv's attribute
            self._reaper_task = asyncio.create_task(self._reap())

    async def _reap(self) -> None:
        """Destroy every free-standing session idle for longer than the idle timeout."""
        interval = min(REAPER_INTERVAL_S, self.idle_timeout_s / 4)
        while True:
            await asyncio.sleep(interval)
            now = time.time()
            for session_id in list(self.free_standing):
                info = self._session_info.get(session_id)
                if session_id not in self._sessions:
                    self.free_standing.discard(session_id)  # closed over MCP meanwhile
                elif info is None or session_id in self._session_websocket_attachments:
                    continue  # still starting, or a WebSocket holds it now
                elif now - info.last_activity_at > self.idle_timeout_s:
                    self.free_standing.discard(session_id)
                    with contextlib.suppress(Exception):  # best effort, as OpenEnv's reaper
                        await self._destroy_session(session_id)


def _token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def _presented_token(scope: MutableMapping[str, Any]) -> str | None:
    """The token a request carries: ``Authorization: Bearer ...``, or for a WebSocket
    (whose browser clients cannot set headers) a ``token`` query parameter."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer":
                return credentials.strip()
    if scope["type"] == "websocket":
        query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if query.get("token"):
            return query["token"][0]
    return None


class ServerGuard:
    """ASGI middleware in front of the whole app: the limits every transport shares.

    - the token, when the server has one: ``Authorization: Bearer <token>`` (or ``?token=``
      on a WebSocket), compared in constant time; a request without it gets 401 (a WebSocket,
      403), except ``GET /health``;
    - WebSockets: :class:`SessionTimeouts`' idle and message limits;
    - plain HTTP: a body of at most :data:`MAX_MESSAGE_BYTES` (413 past it, before anything
      parses it), sent within :data:`BODY_TIMEOUT_S` (408); a session slot for a request that
      builds an environment (503 ``CAPACITY_REACHED`` when the table is full); an answer
      within ``message_timeout_s`` (504 ``MESSAGE_TIMEOUT``); and a handler cancelled as soon
      as its client hangs up (a reset's worker with it).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        table: _SessionTable,
        token: str | None,
        idle_timeout_s: float,
        message_timeout_s: float,
    ) -> None:
        self.app = app
        self.table = table
        self.token = None if token is None else _token_digest(check_token(token))
        self.sockets = SessionTimeouts(app, idle_timeout_s, message_timeout_s)
        self.message_timeout_s = self.sockets.message_timeout_s

    async def __call__(
        self, scope: MutableMapping[str, Any], receive: ASGIReceive, send: ASGISend
    ) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            if scope["type"] == "websocket":  # before the handshake: the client gets 403
                await send({"type": "websocket.close", "code": POLICY_CLOSE_CODE})
            else:
                await _respond(send, 401, "UNAUTHORIZED", "missing or wrong token")
            return
        if scope["type"] == "websocket":
            await self.sockets(scope, receive, send)
        else:
            await self._http(scope, receive, send)

    def _authorized(self, scope: MutableMapping[str, Any]) -> bool:
        if self.token is None or scope.get("path") in OPEN_PATHS:
            return True
        presented = _presented_token(scope)
        return presented is not None and hmac.compare_digest(_token_digest(presented), self.token)

    async def _http(
        self, scope: MutableMapping[str, Any], receive: ASGIReceive, send: ASGISend
    ) -> None:
        """One plain HTTP request under the limits."""
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (
                not value.isdigit() or int(value) > MAX_MESSAGE_BYTES
            ):
                await _respond(send, 413, "TOO_LARGE", _too_large())
                return
        try:
            body = await asyncio.wait_for(read_body(receive, MAX_MESSAGE_BYTES), BODY_TIMEOUT_S)
        except BodyTooLargeError:
            await _respond(send, 413, "TOO_LARGE", _too_large())
            return
        except asyncio.TimeoutError:
            message = f"the request body did not arrive within {BODY_TIMEOUT_S:g} s"
            await _respond(send, 408, "BODY_TIMEOUT", message)
            return
        if body is None:  # the client hung up already
            return
        slot = None
        if scope["path"] not in UNGUARDED_PATHS and scope["path"] != "/mcp":
            slot = self.table.hold()
            if slot is None:
                limit = self.table.max_concurrent_envs
                message = f"the server holds its maximum of {limit} sessions; try again later"
                await _respond(send, 503, "CAPACITY_REACHED", message)
                return
        try:
            await self._answer(scope, body, receive, send)
        finally:
            if slot is not None:
                self.table.release(slot)

    async def _answer(
        self, scope: MutableMapping[str, Any], body: bytes, receive: ASGIReceive, send: ASGISend
    ) -> None:
        """Run the app on ``body``; cancel it when the client hangs up or time runs out."""
        hung_up = asyncio.ensure_future(receive())  # answers once the client is gone
        replayed = False
        started = False

        async def replay() -> ASGIMessage:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await asyncio.shield(hung_up)

        async def answer(message: ASGIMessage) -> None:
            nonlocal started
            started = True
            await send(message)

        over_http = _OVER_HTTP.set(True)
        try:
            handler = asyncio.ensure_future(self.app(scope, replay, answer))
        finally:
            _OVER_HTTP.reset(over_http)
        try:
            done, _ = await asyncio.wait(
                {handler, hung_up}, timeout=self.message_timeout_s, return_when="FIRST_COMPLETED"
            )
        except asyncio.CancelledError:  # the server is stopping
            handler.cancel()
            hung_up.cancel()
            raise
        if handler in done:
            hung_up.cancel()
            handler.result()
            return
        handler.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await handler
        if hung_up in done:  # nobody is waiting for this answer: its work is cancelled
            return
        hung_up.cancel()
        if not started:
            seconds = self.message_timeout_s
            message = f"the server did not answer within {seconds:g} s"
            await _respond(send, 504, "MESSAGE_TIMEOUT", message)


def _too_large() -> str:
    return f"the request body is over the limit of {MAX_MESSAGE_BYTES} bytes"


async def _respond(send: ASGISend, status: int, code: str, message: str) -> None:
    """A JSON error response ``{"detail": message, "code": code}``; the connection closes."""
    body = json.dumps({"detail": message, "code": code}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HeaderDeadline(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, with a deadline on each request's line and headers.

    A connection must send a complete request head within :data:`HEADER_TIMEOUT_S` of opening
    (or of its previous response's end), else it is closed: uvicorn (0.54) times out only the
    wait between requests (``timeout_keep_alive``), so a client that sends half a request line
    and then nothing would hold its connection for ever.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_due: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # a request's head is in (or an upgrade)
            self._disarm()

    def on_response_complete(self) -> None:
        self._arm()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_due = self.loop.call_later(HEADER_TIMEOUT_S, self._too_slow)

    def _disarm(self) -> None:
        if self._head_due is not None:
            self._head_due.cancel()
            self._head_due = None

    def _too_slow(self) -> None:
        self._head_due = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def create_server_app(
    env_id: str,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    *,
    workers: int = DEFAULT_WORKERS,
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
    message_timeout_s: float = DEFAULT_MESSAGE_TIMEOUT_S,
    token: str | None = None,
    **env_options: Any,
) -> Any:
    """OpenEnv's FastAPI app serving ``env_id`` (one env per session), behind
    :class:`ServerGuard`.

    ``env_options`` go to ``gym.make`` (``max_attempts``, ``reward``, ``exact_reference``...).
    ``workers`` reference processes build the resets (0: in the server process itself); the
    app kills them when it shuts down. ``max_sessions`` slots, ``idle_timeout_s`` and
    ``message_timeout_s`` hold for every transport; ``token``, when given, is required of
    every client. A bad env id, option or limit fails here, before the server starts.
    """
    limits = {
        "idle_timeout_s": check_timeout("idle_timeout_s", idle_timeout_s),
        "message_timeout_s": check_timeout("message_timeout_s", message_timeout_s),
    }
    if token is not None:
        check_token(token)
    if env_id == CURRICULUM_ENV_ID:
        raise ValueError(
            f"{CURRICULUM_ENV_ID} needs a curriculum object and cannot be served: "
            "serve a task's env id (npgym/<Task>-<tier>)"
        )
    probe = gym.make(env_id, **env_options)
    warm_up([probe.unwrapped.task.name])  # type: ignore[attr-defined]  # no step pays for loading kernels
    probe.close()
    pool = ReferencePool(env_id, env_options, workers) if check_workers(workers) else None

    def factory() -> NPGymEnvironment:
        return NPGymEnvironment(env_id, pool, **env_options)

    app = FastAPI(title=f"npgym {env_id}", version=__version__)
    table = _SessionTable(
        factory,
        NPGymAction,
        NPGymObservation,
        max_sessions,
        env_name="npgym",
        state_cls=NPGymState,
        idle_timeout_s=limits["idle_timeout_s"],
    )
    table.register_routes(app, mode=ServerMode.SIMULATION)
    app.add_exception_handler(ValueError, _refused)
    app.add_exception_handler(RuntimeError, _refused)
    app.add_middleware(ServerGuard, table=table, token=token, **limits)
    if pool is not None:
        app.router.on_startup.append(pool.start)
        app.router.on_shutdown.append(pool.close)
    app.state.reference_pool = pool
    app.state.sessions = table
    return app


async def _refused(request: Any, error: Exception) -> JSONResponse:
    """An HTTP request the environment refuses (a step without a reset, an over-long action):
    400 with the reason, rather than a 500 and a traceback in the server's log."""
    return JSONResponse({"detail": str(error), "code": "REFUSED"}, status_code=400)


def run_server(app: Any, host: str, port: int) -> None:
    """Serve ``app`` with uvicorn until SIGINT or SIGTERM, under the transport's limits:
    messages of at most :data:`MAX_MESSAGE_BYTES`, request heads of at most
    :data:`MAX_HEADER_BYTES` sent within :data:`HEADER_TIMEOUT_S`, idle keep-alive
    connections closed after :data:`KEEP_ALIVE_TIMEOUT_S`."""
    import uvicorn

    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=HeaderDeadline,
        ws_max_size=MAX_MESSAGE_BYTES,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=KEEP_ALIVE_TIMEOUT_S,
    )


def serve(
    env_id: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    **options: Any,
) -> None:
    """Run the server until interrupted (``npgym serve``); ``options`` as for
    :func:`create_server_app`. Refuses a host other than loopback without a token."""
    if not is_loopback(host) and options.get("token") is None:
        raise ValueError(f"{host} is reachable from other machines: give a token")
    run_server(create_server_app(env_id, max_sessions, **options), host, port)


@contextlib.contextmanager
def local_server(
    env_id: str, options: Sequence[str] = (), *, log: Path, startup_timeout_s: float = 180.0
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``npgym serve env_id`` with ``options`` in a subprocess on a free loopback port: its URL,
    once it answers ``/health``, and its process; stopped when the block ends (for smoke runs,
    benchmarks and tests that need a real server).

    Its output goes to the file ``log`` (a pipe could fill up and block it). Raises
    ``RuntimeError`` with the log's tail when the server exits or does not answer within
    ``startup_timeout_s`` seconds.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    command = [sys.executable, "-m", "npgym", "serve", env_id, "--port", str(port), *options]
    with open(log, "wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + startup_timeout_s
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    tail = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"npgym serve {env_id} did not come up: {tail}") from None
                time.sleep(0.3)
        yield url, server
    finally:
        server.terminate()
        server.wait(timeout=60)


class NPGymClient(EnvClient[NPGymAction, NPGymObservation, NPGymState]):
    """OpenEnv client for an npgym server: ``reset(seed=...)``, ``step(NPGymAction(text))``,
    ``state()``; ``.sync()`` gives the synchronous form.

    ``token`` (default: the ``NPGYM_SERVE_TOKEN`` environment variable) is sent as
    ``Authorization: Bearer <token>`` to a server started with ``--token``."""

    def __init__(self, base_url: str, *, token: str | None = None, **options: Any) -> None:
        token = os.environ.get(TOKEN_ENV) if token is None else token
        if token:
            headers = dict(options.pop("headers", None) or {})
            headers["Authorization"] = f"Bearer {token}"
            options["headers"] = headers
        super().__init__(base_url=base_url, **options)

    def _step_payload(self, action: NPGymAction) -> dict[str, Any]:
        return {"text": action.text}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[NPGymObservation]:
        observation = NPGymObservation.model_validate(
            {
                **payload.get("observation", {}),
                "done": payload.get("done", False),
                "reward": payload.get("reward"),
            }
        )
        return StepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=observation.done,
            metadata=payload.get("metadata"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> NPGymState:
        return NPGymState.model_validate(payload)


class NPGymServerEnvironment(VerifierTool):
    """A TRL ``environment_factory`` environment whose episodes run on npgym OpenEnv servers.

    ``GRPOTrainer(..., environment_factory=partial(NPGymServerEnvironment, urls))``: each
    rollout's environment connects to one of ``base_urls`` (round robin, so N servers on other
    machines share the load), resets it with the dataset row's ``seed`` column, exposes the
    server's verifier as the ``submit_solution`` tool and returns the server's episode reward
    from ``get_reward`` (a format failure when nothing was submitted). Serve the env with
    ``npgym serve npgym/<Task>-<tier> --max-attempts K`` to allow K checked attempts.
    """

    _next_server = itertools.count()

    def __init__(self, base_urls: str | Sequence[str] = "http://127.0.0.1:8000") -> None:
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        if not urls:
            raise ValueError("give at least one server URL")
        self.base_url = urls[next(self._next_server) % len(urls)]
        self._client: Any = None
        self._episode_reward: float | None = None
        self._done = True

    def reset(self, **row: Any) -> str:
        """Start an episode on the server (seeded by the row's ``seed``); return the problem."""
        seed = row.get("seed")
        seed = None if seed is None else int(seed)
        try:
            result = self._connected().reset(seed=seed)
        except ConnectionClosed:  # the server closed an idle session: a new one starts afresh
            self.close()
            result = self._connected().reset(seed=seed)
        self._episode_reward = None
        self._done = False
        return (
            f"{result.observation.prompt}\n\nCheck candidate answers with the submit_solution "
            "tool; your best checked answer is your result."
        )

    def _connected(self) -> Any:
        """The client, connected to the server (once per environment, again after a close)."""
        if self._client is None:
            self._client = NPGymClient(base_url=self.base_url).sync()
            self._client.connect()
        return self._client

    def _check(self, answer: str) -> str:
        if self._client is None or self._done:
            return "No attempts left."
        result = self._client.step(NPGymAction(text=as_completion(answer)))
        self._episode_reward = float(result.observation.details["episode_reward"])
        self._done = result.done
        return result.observation.feedback

    def get_reward(self) -> float:
        """The server's episode reward (a format failure when nothing was submitted)."""
        if self._episode_reward is None:
            return DEFAULT_REWARD.format_fail + DEFAULT_REWARD.infeasible
        return self._episode_reward

    def close(self) -> None:
        """Close the connection to the server."""
        if self._client is not None:
            self._client.close()
            self._client = None
