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
described in the README ("OpenEnv server"); :func:`local_server` runs one in a subprocess (smoke
runs, benchmarks).

Under load: each reset's instance and reference are built in a pool of worker processes
(:mod:`npgym.integrations.serving`, ``--workers``), so resets use several cores and never
hold up another session's step. :class:`SessionTimeouts` closes a WebSocket that has sent no
complete message for ``idle_timeout_s`` (:data:`DEFAULT_IDLE_TIMEOUT_S`), or whose message the
server has not answered within ``message_timeout_s`` (:data:`DEFAULT_MESSAGE_TIMEOUT_S`); either
way its session slot is free at once. (OpenEnv's own ``session_timeout`` reaper is not used: it
frees the slot but leaves the socket open, so the client goes on playing outside the session
count, and it looks at most every 5 seconds.)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import (
    Action,
    EnvironmentMetadata,
    Observation,
    ServerMode,
    State,
)
from pydantic import Field, StrictStr
from websockets.exceptions import ConnectionClosed

from npgym.datasets import warm_up
from npgym.env import MAX_TEXT_CHARS
from npgym.instance import Instance
from npgym.integrations.serving import (
    CLOSE_SEND_TIMEOUT_S,
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MESSAGE_TIMEOUT_S,
    DEFAULT_WORKERS,
    ReferencePool,
    check_timeout,
    check_workers,
)
from npgym.integrations.trl import VerifierTool
from npgym.multiturn import as_completion
from npgym.reward import DEFAULT_REWARD
from npgym.version import __version__

MAX_ACTION_CHARS = MAX_TEXT_CHARS
"""Longest completion a client may send in one step (1 MiB of text)."""
IDLE_CLOSE_CODE = 1001
"""WebSocket close code of a session closed for idleness ("going away")."""
MESSAGE_TIMEOUT_CLOSE_CODE = 1011
"""WebSocket close code of a session whose message took too long ("internal error")."""

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


def create_server_app(
    env_id: str,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    *,
    workers: int = DEFAULT_WORKERS,
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
    message_timeout_s: float = DEFAULT_MESSAGE_TIMEOUT_S,
    **env_options: Any,
) -> Any:
    """OpenEnv's FastAPI app serving ``env_id`` (one env per session).

    ``env_options`` go to ``gym.make`` (``max_attempts``, ``reward``, ``exact_reference``...).
    ``workers`` reference processes build the resets (0: in the server process itself); the
    app kills them when it shuts down. ``idle_timeout_s`` and ``message_timeout_s`` are
    :class:`SessionTimeouts`' limits. A bad env id, option or limit fails here, before the
    server starts.
    """
    limits = {
        "idle_timeout_s": check_timeout("idle_timeout_s", idle_timeout_s),
        "message_timeout_s": check_timeout("message_timeout_s", message_timeout_s),
    }
    probe = gym.make(env_id, **env_options)
    warm_up([probe.unwrapped.task.name])  # type: ignore[attr-defined]  # no step pays for loading kernels
    probe.close()
    pool = ReferencePool(env_id, env_options, workers) if check_workers(workers) else None

    def factory() -> NPGymEnvironment:
        return NPGymEnvironment(env_id, pool, **env_options)

    app = create_app(
        factory,
        NPGymAction,
        NPGymObservation,
        env_name="npgym",
        max_concurrent_envs=max_sessions,
        state_cls=NPGymState,
        mode=ServerMode.SIMULATION,
    )
    app.add_middleware(SessionTimeouts, **limits)
    if pool is not None:
        app.router.on_startup.append(pool.start)
        app.router.on_shutdown.append(pool.close)
    app.state.reference_pool = pool
    return app


def serve(
    env_id: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    **options: Any,
) -> None:
    """Run the server until interrupted (``npgym serve``); ``options`` as for
    :func:`create_server_app`."""
    import uvicorn

    uvicorn.run(create_server_app(env_id, max_sessions, **options), host=host, port=port)


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
    ``state()``; ``.sync()`` gives the synchronous form."""

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
