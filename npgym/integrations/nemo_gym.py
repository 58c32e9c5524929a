"""npgym as NeMo-Gym 0.7 resources servers: ``/seed_session`` + ``/verify``; ``/reset`` + ``/step``.

NeMo-Gym runs an environment as an HTTP *resources server* next to an agent server and a model
server (``ng_run``). Two servers are here:

- :class:`NPGymResourcesServer` (a ``SimpleResourcesServer``: ``/seed_session``, ``/verify``,
  ``/close_session``, ``/aggregate_metrics``). NeMo-Gym's ``simple_agent`` sends the model the
  prompt of its dataset row, so the rows carry npgym's prompt, instance and reference
  (:func:`nemo_gym_rows`, :func:`curriculum_rows`, or ``python -m npgym.integrations.nemo_gym
  rows``). ``/verify`` scores the response with ``task.score`` and answers npgym's reward with
  its parts as ``reward_components`` (``format``: the format term of the reward; ``feasibility``:
  1 or 0; ``optimality``: the clipped ratio to the reference) and as top-level fields for
  NeMo-Gym's metrics. A row drawn by :func:`curriculum_rows` carries a ``curriculum_key``; with
  ``curriculum_journal`` in its config the server reports each verdict to that
  :class:`~npgym.integrations.curriculum.CurriculumJournal`, so the *next* rows are drawn at the
  moved frontier (the rows of a run are fixed once written).
- :class:`NPGymGymnasiumServer` (a ``GymnasiumServer``: ``/reset``, ``/step``, ``/close``, for
  NeMo-Gym's ``gymnasium_agent``). ``/reset`` draws the next instance from the server's
  :class:`~npgym.curriculum.AdaptiveCurriculum` and answers its prompt, which the agent appends
  as the user turn; ``/step`` scores the answer. With ``max_attempts > 1`` an attempt that is
  not optimal gets the verifier's feedback as the next user turn (npgym's repair loop,
  :class:`~npgym.multiturn.RepairSession`); the episode's reward (under ``reward_policy``) comes
  with its last step, earlier steps give 0, so the agent's sum of step rewards is the episode's.
  At the episode's end the last attempt's score is reported to the curriculum: here the
  curriculum follows the verdicts *within* a run.

Both apps hold npgym's server limits (docs/security.md): a request body of at most
:data:`MAX_BODY_BYTES` (413 past it, before anything parses it) that arrives within
``npgym.integrations.serving.BODY_TIMEOUT_S`` (408); at most ``max_sessions`` open episodes
(:data:`DEFAULT_MAX_SESSIONS`; the least recently used one is dropped for a new one); a request
npgym refuses (a bad row, a step without a reset) gets 400 and one line, never a traceback.

``python -m npgym.integrations.nemo_gym init DIR`` writes what ``ng_run`` needs under ``DIR``:
``resources_servers/npgym/`` and ``resources_servers/npgym_gymnasium/``, each with its
``app.py``, ``requirements.txt`` and ``configs/*.yaml`` in NeMo-Gym's Hydra layout
(docs/nemo-gym.md).

nemo-gym 0.7 declares Requires-Python >=3.13.14; importing this module without it raises an
``ImportError`` that says so.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import OrderedDict
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any, Literal

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from nemo_gym.base_resources_server import (
        BaseMultiRewardVerifyResponse,
        BaseResourcesServerConfig,
        BaseVerifyRequest,
        SimpleResourcesServer,
    )
    from nemo_gym.openai_utils import NeMoGymResponse
    from nemo_gym.server_utils import SESSION_ID_KEY
    from pydantic import Field, PrivateAttr
    from resources_servers.gymnasium import GymnasiumServer, extract_text
except ImportError as _missing:  # pragma: no cover - depends on the venv
    raise ImportError(
        "npgym.integrations.nemo_gym needs nemo-gym 0.7 (which declares Python >=3.13.14; this "
        f"is {sys.version.split()[0]}): pip install 'npgym[nemo-gym]' ({_missing})"
    ) from _missing

from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.datasets import MAX_COUNT, ReferenceMode, make_rows
from npgym.integrations.curriculum import (
    KEY_FIELD,
    CurriculumJournal,
    check_key,
    curriculum_record,
    report_to_journal,
)
from npgym.integrations.serving import BODY_TIMEOUT_S, BodyTooLargeError, read_body
from npgym.integrations.trl import training_spec
from npgym.multiturn import RepairConfig, RepairSession, RewardPolicy
from npgym.records import MAX_LINE_BYTES, Row, load_solved_row
from npgym.registry import get_task
from npgym.results import Score
from npgym.reward import resolve_reward
from npgym.version import __version__

MAX_BODY_BYTES = MAX_LINE_BYTES + 16 * 2**20
"""Largest request body either server reads (80 MiB): a ``/verify`` body carries its row (at most
``npgym.records.MAX_LINE_BYTES``, 64 MiB: the longest row npgym writes or reads) and the model's
response (npgym scores at most 1 Mi characters, 6 MiB even as JSON ``\\uXXXX`` escapes), with
room for the envelope. Past it: 413, before anything parses the body."""
DEFAULT_MAX_SESSIONS = 4096
"""Open episodes a :class:`NPGymGymnasiumServer` keeps by default (``max_sessions``); a new
episode past it drops the least recently used one (an agent that died mid-episode)."""
MAX_SESSIONS = 1 << 20
"""Largest ``max_sessions`` a config may set."""
MAX_ERROR_CHARS = 1000
"""A refusal's message is cut to this many characters (and to its first line)."""
SERVER_NAME = "npgym"
"""The name of the verify server in the configs :func:`write_server_dir` writes."""
GYMNASIUM_SERVER_NAME = "npgym_gymnasium"
"""The name of the Gymnasium-style server in those configs."""

# --- limits and refusals ------------------------------------------------------------------------


class BodyLimit:
    """ASGI middleware: a request body of at most ``max_bytes`` (413 past it, by its
    ``Content-Length`` or once that many bytes arrived), sent within :data:`BODY_TIMEOUT_S`
    (408); the app then reads it from memory."""

    def __init__(self, app: Any, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.max_bytes):
                await _refuse(send, 413, self._too_large())
                return
        try:
            body = await asyncio.wait_for(read_body(receive, self.max_bytes), BODY_TIMEOUT_S)
        except BodyTooLargeError:
            await _refuse(send, 413, self._too_large())
            return
        except asyncio.TimeoutError:
            await _refuse(send, 408, f"the request body did not arrive within {BODY_TIMEOUT_S:g} s")
            return
        if body is None:  # the client hung up
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            message: dict[str, Any] = await receive()
            return message

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"the request body is over the limit of {self.max_bytes} bytes"


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"detail": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def one_line(error: BaseException) -> str:
    """The first line of ``error``'s message, at most :data:`MAX_ERROR_CHARS` characters."""
    message = error.args[0] if isinstance(error, KeyError) and error.args else error
    text = str(message).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:MAX_ERROR_CHARS]


async def _refused(request: Request, error: Exception) -> JSONResponse:
    """A request npgym refuses (a bad row, a step without a reset): 400 and one line."""
    return JSONResponse({"detail": one_line(error)}, status_code=400)


def _guard(app: FastAPI, max_body_bytes: int) -> FastAPI:
    """``app`` under the body limit, with npgym's refusals answered as 400."""
    app.add_exception_handler(ValueError, _refused)
    app.add_exception_handler(RuntimeError, _refused)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    return app


# --- scoring ------------------------------------------------------------------------------------


def score_parts(score: Score) -> dict[str, float]:
    """The reward's components as NeMo-Gym's ``reward_components``: ``format`` (the format term
    of the reward), ``feasibility`` (1 or 0) and ``optimality`` (the clipped ratio)."""
    return {
        "format": float(score.format_reward),
        "feasibility": float(score.feasible),
        "optimality": float(score.optimality),
    }


def score_fields(score: Score) -> dict[str, Any]:
    """The verdict as top-level fields (NeMo-Gym's metrics read no nested mapping)."""
    return {
        "format_ok": score.format_ok,
        "feasible": score.feasible,
        "optimality": score.optimality,
        "ratio": score.ratio,
        "objective": score.objective,
        "reference_objective": score.reference_objective,
        "reason": score.reason[:MAX_ERROR_CHARS],
    }


class NPGymResourcesServerConfig(BaseResourcesServerConfig):
    """The verify server's settings (its block in the Hydra config)."""

    reward: str = Field("np-engine", description="npgym reward preset (docs/reward.md)")
    curriculum_journal: str | None = Field(
        None, description="absolute path of the curriculum journal that verdicts go to"
    )
    max_body_bytes: int = Field(MAX_BODY_BYTES, ge=1, le=MAX_BODY_BYTES)


class NPGymVerifyRequest(BaseVerifyRequest):
    """A ``/verify`` body: NeMo-Gym's request plus the npgym fields of the row."""

    npgym_task: str
    instance: str | dict[str, Any]
    reference: str | dict[str, Any] | None = None
    id: str | None = None
    curriculum_key: str | None = None


class NPGymVerifyResponse(BaseMultiRewardVerifyResponse):
    """npgym's reward, its components and its verdict."""

    npgym_task: str
    format_ok: bool
    feasible: bool
    optimality: float
    ratio: float | None = None
    objective: int | float | None = None
    reference_objective: int | float | None = None
    reason: str = ""
    curriculum_key: str | None = None
    curriculum_reported: bool = False


class NPGymResourcesServer(SimpleResourcesServer):
    """``/verify`` scores a response to an npgym row (:func:`nemo_gym_rows`) with npgym's reward."""

    ray_enabled = False
    config: NPGymResourcesServerConfig

    def setup_webserver(self) -> FastAPI:
        """NeMo-Gym's routes under npgym's limits."""
        resolve_reward(self.config.reward)  # an unknown preset fails at start, not per request
        return _guard(super().setup_webserver(), self.config.max_body_bytes)

    async def verify(self, body: NPGymVerifyRequest) -> NPGymVerifyResponse:
        """Score the response's text against the row's instance and reference."""
        row = {
            "id": body.id or "?",
            "task": body.npgym_task,
            "instance": body.instance,
            "reference": body.reference,
        }
        task, instance, reference = load_solved_row(row)
        key = None if body.curriculum_key is None else check_key(body.curriculum_key)
        text = extract_text(body.response)
        score = task.score(instance, text, reference, resolve_reward(self.config.reward))
        reported = False
        if key is not None and self.config.curriculum_journal is not None:
            report_to_journal(self.config.curriculum_journal, key, score)
            reported = True
        return NPGymVerifyResponse(
            responses_create_params=body.responses_create_params,
            response=body.response,
            reward=score.reward,
            reward_components=score_parts(score),
            npgym_task=task.name,
            curriculum_key=key,
            curriculum_reported=reported,
            **score_fields(score),
        )


# --- rows ---------------------------------------------------------------------------------------


def nemo_gym_row(row: Row, agent: str | None = None, key: str | None = None) -> dict[str, Any]:
    """The NeMo-Gym JSONL row of an npgym row: ``responses_create_params`` (the prompt as the
    user message) plus what ``/verify`` needs; ``agent`` names the agent (``agent_ref``)."""
    out: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": row["prompt"]}]},
        "id": row["id"],
        "npgym_task": row["task"],
        "instance": row["instance"],
        "reference": row.get("reference"),
    }
    if key is not None:
        out[KEY_FIELD] = key
    if agent is not None:
        out["agent_ref"] = {"type": "responses_api_agents", "name": agent}
    return out


def nemo_gym_rows(
    tasks: Sequence[str] | None = None,
    n: int = 100,
    *,
    tier: str = "easy",
    seed: int = 0,
    reference: ReferenceMode = "exact",
    agent: str | None = None,
) -> Iterator[dict[str, Any]]:
    """``n`` NeMo-Gym rows per task at ``tier`` from npgym's training seed stream (never
    NP-Bench instances), each with its reference."""
    spec = training_spec(tasks, n, mix={tier: 1.0}, seed=seed, reference=reference)
    for result in make_rows(spec):
        yield nemo_gym_row(result.record, agent)


def curriculum_rows(
    curriculum: AdaptiveCurriculum,
    journal: str | Path,
    n: int,
    *,
    reference: ReferenceMode = "exact",
    agent: str | None = None,
) -> Iterator[dict[str, Any]]:
    """``n`` rows drawn at the frontiers of the curriculum kept in ``journal`` (created if
    missing; ``curriculum`` must be fresh and carry the journal's options), each with its
    ``curriculum_key``. The verify server reports to the same journal, so the next call draws
    where the verdicts moved the frontiers."""
    replica = CurriculumJournal(curriculum, journal)
    for _ in range(n):
        item = replica.next()
        yield nemo_gym_row(curriculum_record(item, reference), agent, item.key)


def write_jsonl(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write ``rows`` to ``path`` as JSON lines (replacing it); how many."""
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


# --- the Gymnasium-style server -----------------------------------------------------------------


class NPGymGymnasiumServerConfig(BaseResourcesServerConfig):
    """The Gymnasium-style server's settings: the curriculum and the episodes."""

    tasks: list[str] = Field(default_factory=lambda: ["TSP"], min_length=1)
    target: tuple[float, float] = (0.3, 0.7)
    seed: int = Field(0, ge=0)
    start: float = 0.2
    step_size: float = Field(0.05, gt=0.0, description="the curriculum's step")
    window: int = Field(16, ge=1)
    pass_ratio: float = Field(1.0, gt=0.0, le=1.0)
    curriculum_journal: str | None = Field(
        None, description="share the curriculum through this journal (several workers)"
    )
    max_attempts: int = Field(1, ge=1, le=100)
    reward_policy: RewardPolicy = "best"
    reward: str = "np-engine"
    reference: Literal["exact", "heuristic"] = "exact"
    max_sessions: int = Field(DEFAULT_MAX_SESSIONS, ge=1, le=MAX_SESSIONS)
    max_body_bytes: int = Field(MAX_BODY_BYTES, ge=1, le=MAX_BODY_BYTES)

    def curriculum(self) -> AdaptiveCurriculum:
        """A fresh curriculum with these settings."""
        return AdaptiveCurriculum(
            self.tasks,
            target=self.target,
            seed=self.seed,
            start=self.start,
            step=self.step_size,
            window=self.window,
            pass_ratio=self.pass_ratio,
        )


class _Episode:
    """One open episode: its curriculum item and its repair session."""

    def __init__(self, item: CurriculumItem, session: RepairSession) -> None:
        self.item = item
        self.session = session


class NPGymGymnasiumServer(GymnasiumServer):
    """``/reset`` draws from the curriculum, ``/step`` scores and gives feedback turns."""

    ray_enabled = False
    config: NPGymGymnasiumServerConfig
    _curriculum: AdaptiveCurriculum | None = PrivateAttr(default=None)
    _journal: CurriculumJournal | None = PrivateAttr(default=None)
    _episodes: OrderedDict[str, _Episode] = PrivateAttr(default_factory=OrderedDict)

    def setup_webserver(self) -> FastAPI:
        """NeMo-Gym's ``/reset`` and ``/step`` plus ``/close``, under npgym's limits."""
        self._start()
        app = super().setup_webserver()
        app.post("/close")(self._close_endpoint)
        return _guard(app, self.config.max_body_bytes)

    def _start(self) -> None:
        """Build the curriculum (or its journal replica) and check the settings once."""
        resolve_reward(self.config.reward)
        RepairConfig(max_attempts=self.config.max_attempts, policy=self.config.reward_policy)
        if self._curriculum is None:
            self._curriculum = self.config.curriculum()
            if self.config.curriculum_journal is not None:
                self._journal = CurriculumJournal(self._curriculum, self.config.curriculum_journal)

    @property
    def curriculum(self) -> AdaptiveCurriculum:
        """The server's curriculum (its frontiers: ``curriculum.stats()``)."""
        self._start()
        assert self._curriculum is not None
        return self._curriculum

    def _draw(self) -> CurriculumItem:
        if self._journal is not None:
            return self._journal.next()
        return self.curriculum.next()

    def _report(self, key: str, score: Score) -> bool:
        if self._journal is not None:
            self._journal.report(key, score)
            return self.curriculum.passed(score)
        return self.curriculum.report(key, score)

    async def reset(
        self, metadata: dict[str, Any], session_id: str | None = None
    ) -> tuple[str | None, dict[str, Any]]:
        """Draw the next instance at its task's frontier; its prompt is the observation."""
        if session_id is None:
            raise RuntimeError("no session: NeMo-Gym's session middleware is missing")
        self._episodes.pop(session_id, None)
        item = self._draw()
        task = get_task(item.task)
        config = self.config
        exact = config.reference == "exact"
        reference = await asyncio.to_thread(task.reference, item.instance, exact=exact)
        repair = RepairConfig(max_attempts=config.max_attempts, policy=config.reward_policy)
        session = RepairSession(task, item.instance, reference, repair, config.reward)
        self._episodes[session_id] = _Episode(item, session)
        while len(self._episodes) > config.max_sessions:
            self._episodes.popitem(last=False)
        info = {
            "task": item.task,
            "difficulty": item.difficulty,
            "curriculum_key": item.key,
            "max_attempts": config.max_attempts,
            "supports_explicit_close": True,
        }
        return task.prompt(item.instance), info

    async def step(
        self, action: NeMoGymResponse, metadata: dict[str, Any], session_id: str | None = None
    ) -> tuple[str | None, float, bool, bool, dict[str, Any]]:
        """Score one answer; the last step of an episode carries its reward and reports it."""
        episode = self._episodes.get(session_id) if session_id is not None else None
        if episode is None:
            raise RuntimeError("no open episode for this session: POST /reset first")
        self._episodes.move_to_end(session_id)  # type: ignore[arg-type]
        attempt = episode.session.submit(extract_text(action))
        info: dict[str, Any] = {
            "task": episode.item.task,
            "difficulty": episode.item.difficulty,
            "curriculum_key": episode.item.key,
            "attempt": len(episode.session.scores),
            "reward_components": score_parts(attempt.score),
            **score_fields(attempt.score),
        }
        if not attempt.done:
            return attempt.feedback, 0.0, False, False, info
        info["passed"] = self._report(episode.item.key, attempt.score)
        info["episode_reward"] = reward = episode.session.reward()
        return attempt.feedback, reward, True, False, info

    def _cleanup_session(self, session_id: str | None) -> None:
        if session_id is not None:
            self._episodes.pop(session_id, None)

    async def _close_endpoint(self, request: Request) -> dict[str, Any]:
        """Drop this session's episode, if any, unreported (the agent gave up on it)."""
        session_id = request.session.get(SESSION_ID_KEY)
        open_episode = session_id in self._episodes
        self._cleanup_session(session_id)
        return {"closed": open_episode}

    @property
    def open_episodes(self) -> int:
        """How many episodes are open."""
        return len(self._episodes)


# --- the server folder for ng_run ---------------------------------------------------------------

_APP = '''"""npgym's {kind} for NeMo-Gym (written by npgym {version})."""

from npgym.integrations.nemo_gym import {cls}

if __name__ == "__main__":
    {cls}.run_webserver()
'''

_VERIFY_CONFIG = """# npgym's verify server, and a simple_agent that sends it data/train.jsonl
# (python -m npgym.integrations.nemo_gym rows -o resources_servers/npgym/data/train.jsonl).
{name}:
  resources_servers:
    {name}:
      entrypoint: app.py
      domain: math
      description: Procedurally generated NP-hard optimisation problems (npgym), verified exactly
      verified: false
      reward: np-engine
      curriculum_journal: null
{name}_simple_agent:
  responses_api_agents:
    simple_agent:
      entrypoint: app.py
      resources_server:
        type: resources_servers
        name: {name}
      model_server:
        type: responses_api_models
        name: policy_model
      datasets:
      - name: train
        type: train
        jsonl_fpath: resources_servers/{name}/data/train.jsonl
        license: Apache 2.0
{name}_environment_server:
  environment_servers:
    legacy_agent:
      entrypoint: app.py
      agent_server:
        type: responses_api_agents
        name: {name}_simple_agent
"""

_GYMNASIUM_CONFIG = """# npgym's Gymnasium-style server: /reset draws from its adaptive curriculum,
# /step scores; the gymnasium_agent plays up to max_steps turns (keep it >= max_attempts).
{name}:
  resources_servers:
    {name}:
      allowed_agents: [gymnasium_agent]
      entrypoint: app.py
      domain: math
      description: npgym's NP-hard problems at an adaptive difficulty, with verifier feedback
      verified: false
      tasks: {tasks}
      target: [0.3, 0.7]
      seed: 0
      max_attempts: {attempts}
      reward_policy: best
      curriculum_journal: null
{name}_agent:
  responses_api_agents:
    gymnasium_agent:
      entrypoint: app.py
      resources_server:
        type: resources_servers
        name: {name}
      model_server:
        type: responses_api_models
        name: policy_model
      max_steps: {attempts}
      datasets:
      - name: train
        type: train
        jsonl_fpath: resources_servers/{name}/data/train.jsonl
        license: Apache 2.0
{name}_environment_server:
  environment_servers:
    legacy_agent:
      entrypoint: app.py
      agent_server:
        type: responses_api_agents
        name: {name}_agent
"""


def write_server_dir(
    root: str | Path,
    tasks: Sequence[str] = ("TSP",),
    max_attempts: int = 1,
    requirement: str = f"npgym[nemo-gym]=={__version__}",
) -> list[Path]:
    """Write ``resources_servers/npgym`` and ``resources_servers/npgym_gymnasium`` under
    ``root`` (NeMo-Gym's layout: ``app.py``, ``requirements.txt`` that ``ng_run`` installs into
    the server's venv, ``configs/<name>.yaml``; the gymnasium one with a ``data/train.jsonl`` of
    one row per episode slot); the files written."""
    names = [get_task(name).name for name in tasks]
    RepairConfig(max_attempts=max_attempts)
    written = []
    servers = [
        (SERVER_NAME, "verify server", "NPGymResourcesServer", _VERIFY_CONFIG),
        (
            GYMNASIUM_SERVER_NAME,
            "Gymnasium-style server",
            "NPGymGymnasiumServer",
            _GYMNASIUM_CONFIG,
        ),
    ]
    for name, kind, cls, config in servers:
        folder = Path(root) / "resources_servers" / name
        (folder / "configs").mkdir(parents=True, exist_ok=True)
        (folder / "data").mkdir(exist_ok=True)
        files = {
            folder / "app.py": _APP.format(kind=kind, version=__version__, cls=cls),
            folder / "requirements.txt": requirement + "\n",
            folder / "configs" / f"{name}.yaml": config.format(
                name=name, tasks=json.dumps(names), attempts=max_attempts
            ),
        }
        for path, text in files.items():
            path.write_text(text, encoding="utf-8")
            written.append(path)
    episodes = Path(root) / "resources_servers" / GYMNASIUM_SERVER_NAME / "data" / "train.jsonl"
    row: dict[str, Any] = {"responses_create_params": {"input": []}}
    episodes.write_text(json.dumps(row) + "\n", encoding="utf-8")
    written.append(episodes)
    return written


# --- command line -------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m npgym.integrations.nemo_gym rows|init ...``; 0, or 1 after an ``Error:`` line."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m npgym.integrations.nemo_gym")
    commands = parser.add_subparsers(dest="command", required=True)
    rows = commands.add_parser("rows", help="write NeMo-Gym JSONL rows for the verify server")
    rows.add_argument("-o", "--output", required=True, help="the JSONL file to write")
    rows.add_argument("--task", action="append", help="npgym task (repeat; default: TSP)")
    rows.add_argument("-n", type=int, default=100, help="rows per task (curriculum: in all)")
    rows.add_argument("--tier", default="easy")
    rows.add_argument("--seed", type=int, default=0)
    rows.add_argument("--reference", default="exact", choices=["exact", "heuristic", "none"])
    rows.add_argument("--agent", help="agent_ref name (e.g. npgym_simple_agent)")
    rows.add_argument("--journal", help="draw from the curriculum kept in this journal")
    init = commands.add_parser("init", help="write resources_servers/npgym* for ng_run")
    init.add_argument("root", help="the folder ng_run runs in")
    init.add_argument("--task", action="append")
    init.add_argument("--max-attempts", type=int, default=1)
    args = parser.parse_args(argv)
    tasks = args.task or ["TSP"]
    try:
        if args.command == "init":
            for path in write_server_dir(args.root, tasks, args.max_attempts):
                print(path)
            return 0
        if not 1 <= args.n <= MAX_COUNT:
            raise ValueError(f"-n must be from 1 to {MAX_COUNT}, got {args.n}")
        if args.journal is not None:
            journal = Path(args.journal).absolute()
            made: Iterable[dict[str, Any]] = curriculum_rows(
                AdaptiveCurriculum(tasks, seed=args.seed),
                journal,
                args.n,
                agent=args.agent,
                reference=args.reference,
            )
        else:
            made = nemo_gym_rows(
                tasks,
                args.n,
                tier=args.tier,
                seed=args.seed,
                reference=args.reference,
                agent=args.agent,
            )
        count = write_jsonl(made, args.output)
    except (ValueError, KeyError, OSError, CurriculumError) as error:
        print(f"Error: {one_line(error)}", file=sys.stderr)
        return 1
    print(f"wrote {count} rows to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
