"""npgym as an OpenEnv environment server, built on ``openenv-core``'s own server and client.

``npgym serve npgym/TSP-hard --port 8000`` (or :func:`create_server_app`) serves any npgym env id,
including multi-turn repair (``--max-attempts 3``), through OpenEnv's FastAPI app: a WebSocket
session per client (``/ws``), each with its own environment, seeded by the client's
``reset(seed=...)`` and isolated from the others, plus OpenEnv's ``/health``, ``/schema`` and
``/metadata`` endpoints. :class:`NPGymClient` is an OpenEnv ``EnvClient`` for it:

    with NPGymClient(base_url="http://localhost:8000").sync() as env:
        result = env.reset(seed=7)                       # result.observation.prompt
        result = env.step(NPGymAction(text="... Answer: [0, 2, 1, 0]"))
        result.reward, result.done, result.observation.feedback

An action is the model's whole completion as text, at most :data:`MAX_ACTION_CHARS` characters.
A non-text action, or a longer one, gets an OpenEnv error response naming the problem; the
session and every other session keep going. Running many servers behind one trainer is
described in the README ("OpenEnv server").
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field, StrictStr

from npgym.env import MAX_TEXT_CHARS
from npgym.multiturn import as_completion
from npgym.reward import DEFAULT_REWARD
from npgym.version import __version__

MAX_ACTION_CHARS = MAX_TEXT_CHARS
"""Longest completion a client may send in one step (1 MiB of text)."""
DEFAULT_MAX_SESSIONS = 64
"""Concurrent WebSocket sessions one server holds by default."""


class NPGymAction(Action):
    """A model's completion, scored by the task's verifier."""

    text: StrictStr = Field(description="the model's whole completion, ending in 'Answer: ...'")


class NPGymObservation(Observation):
    """What a client sees: the prompt after ``reset``, the verifier's feedback after ``step``.

    ``details`` carries the instance's ``task``, ``tier`` and ``seed`` after a reset, and the
    score's fields (``feasible``, ``ratio``, ``reason``, ``attempt``, ``episode_reward``...) after
    a step. (OpenEnv does not send ``metadata`` over the wire, hence a field of our own.)
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
    """One session: a gymnasium npgym env behind OpenEnv's ``Environment`` interface."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, env_id: str, **env_options: Any) -> None:
        super().__init__()
        self.env_id = env_id
        self.env = gym.make(env_id, **env_options)
        self._state = NPGymState(env_id=env_id, task=self.env.unwrapped.task.name)  # type: ignore[attr-defined]
        self._done = True

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **_: Any
    ) -> NPGymObservation:
        """A new instance; the same seed gives the same instance in every session."""
        prompt, info = self.env.reset(seed=seed)
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


def create_server_app(
    env_id: str, max_sessions: int = DEFAULT_MAX_SESSIONS, **env_options: Any
) -> Any:
    """OpenEnv's FastAPI app serving ``env_id`` (one env per session).

    ``env_options`` go to ``gym.make`` (``max_attempts``, ``reward``, ``exact_reference``...).
    A bad env id or option fails here, before the server starts.
    """
    gym.make(env_id, **env_options).close()

    def factory() -> NPGymEnvironment:
        return NPGymEnvironment(env_id, **env_options)

    return create_app(
        factory, NPGymAction, NPGymObservation, env_name="npgym", max_concurrent_envs=max_sessions
    )


def serve(
    env_id: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    **env_options: Any,
) -> None:
    """Run the server until interrupted (``npgym serve``)."""
    import uvicorn

    uvicorn.run(create_server_app(env_id, max_sessions, **env_options), host=host, port=port)


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
            observation=observation, reward=payload.get("reward"), done=observation.done
        )

    def _parse_state(self, payload: dict[str, Any]) -> NPGymState:
        return NPGymState.model_validate(payload)


class NPGymServerEnvironment:
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
        if self._client is None:
            self._client = NPGymClient(base_url=self.base_url).sync()
            self._client.connect()
        seed = row.get("seed")
        result = self._client.reset(seed=None if seed is None else int(seed))
        self._episode_reward = None
        self._done = False
        return (
            f"{result.observation.prompt}\n\nCheck candidate answers with the submit_solution "
            "tool; your best checked answer is your result."
        )

    def submit_solution(self, answer: str) -> str:
        """Check a candidate solution with the verifier.

        Args:
            answer: The solution in the answer format the problem asks for, e.g. "[0, 2, 1, 0]".

        Returns:
            The verifier's feedback: why the answer is infeasible, or its objective value and
            whether a better one is known.
        """
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
