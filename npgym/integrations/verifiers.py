"""npgym as a ``verifiers`` 0.4 taskset: ``vf-eval npgym``.

verifiers 0.4 loads an environment as a taskset package exporting, through ``__all__``, one
``Taskset`` subclass and optionally its own ``Harness`` and ``Env``; ``npgym`` exports the three
below (lazily, see ``npgym.__getattr__``), so

    vf-eval npgym --env.taskset.problem TSP --env.taskset.tier hard -m MODEL -b URL

evaluates fresh instances from the training seed stream (never NP-Bench instances):

- :class:`NPGymTaskset` yields one :class:`NPGymTask` per instance; its data carries the
  instance and its reference, so scoring needs nothing else;
- :class:`NPGymTask` is the rubric: the reward ``npgym_reward`` is ``task.score`` of the answer
  (the episode reward under ``reward_policy`` in repair mode, recomputed from the transcript so
  it never depends on live state), and the metric ``npgym_score`` records ``format_ok``,
  ``feasible`` and ``ratio`` of the last answer;
- :class:`NPGymEnv` plays an episode: one model turn, or with ``max_attempts > 1`` the repair
  loop that answers each attempt with the verifier's feedback ("Infeasible: city 7 visited
  twice") until an optimal answer or the last attempt;
- :class:`NPGymHarness` is the model side: one chat completion per turn, sent in-process
  through verifiers' interception endpoint (so every call is traced). verifiers' own chat
  harnesses install their program with ``uv`` at run time, which needs the network; this one
  runs offline.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import verifiers.v1 as vf
from pydantic import Field, model_validator
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.runtimes import ProgramResult

from npgym.datasets import MAX_COUNT, ReferenceMode
from npgym.instance import Instance
from npgym.integrations.trl import make_dataset
from npgym.multiturn import RepairConfig, RepairSession, RewardPolicy
from npgym.records import record_instance, record_reference
from npgym.results import Reference
from npgym.reward import DEFAULT_REWARD
from npgym.task import Task

MODEL_CALL_TIMEOUT_S = 600.0
"""How long the harness waits for one chat completion."""


class NPGymTasksetConfig(vf.TasksetConfig):
    """Which instances the taskset yields (``--env.taskset.*``) and how an episode is scored."""

    problem: str = Field("Knapsack", description="npgym task name, e.g. TSP")
    tier: str = Field("easy", description="difficulty tier")
    n: int = Field(50, ge=1, le=MAX_COUNT, description="number of instances")
    seed: int = Field(0, description="seed of the instance stream")
    max_attempts: int = Field(1, description="answers per episode; 1: single turn")
    reward_policy: RewardPolicy = "best"
    reference: ReferenceMode = "exact"

    @model_validator(mode="after")
    def _check_repair(self) -> NPGymTasksetConfig:
        """Refuse attempts or a policy that npgym's repair rules refuse, before any row."""
        RepairConfig(max_attempts=self.max_attempts, policy=self.reward_policy)
        return self


class NPGymData(vf.TaskData):
    """One instance, its reference and the episode's repair rules (the task's wire data)."""

    npgym_task: str
    instance: str
    reference: str | None = None
    max_attempts: int = 1
    reward_policy: RewardPolicy = "best"


def _problem(data: NPGymData) -> tuple[Task, Instance, Reference]:
    """The task, instance and reference a row carries."""
    row = {"task": data.npgym_task, "instance": data.instance, "reference": data.reference}
    task, instance = record_instance(row)
    return task, instance, record_reference(row) or task.reference(instance)


def _session(data: NPGymData) -> RepairSession:
    task, instance, reference = _problem(data)
    repair = RepairConfig(max_attempts=data.max_attempts, policy=data.reward_policy)
    return RepairSession(task, instance, reference, repair, DEFAULT_REWARD)


def _answers(trace: Any) -> list[str]:
    """The texts of the trace's assistant messages, in order."""
    return [str(message.content or "") for message in trace.assistant_messages]


class NPGymTask(vf.Task[NPGymData, vf.State, vf.TaskConfig]):
    """One npgym instance; its reward and metrics are the rubric."""

    @vf.reward
    async def npgym_reward(self, task: NPGymData, trace: Any) -> float:
        """The episode reward: ``task.score`` of the answer, or in repair mode the reward under
        ``reward_policy`` of the attempts in the transcript (a format failure with none)."""
        session = _session(task)
        for text in _answers(trace)[: task.max_attempts]:
            if session.done:
                break
            session.submit(text)
        if not session.scores:
            return DEFAULT_REWARD.format_fail + DEFAULT_REWARD.infeasible
        return session.reward()

    @vf.metric
    async def npgym_score(self, task: NPGymData, trace: Any) -> dict[str, float]:
        """``format_ok``, ``feasible`` and ``ratio`` (optimality) of the last answer."""
        npgym_task, instance, reference = _problem(task)
        answers = _answers(trace)
        score = npgym_task.score(instance, answers[-1] if answers else "", reference)
        return {
            "format_ok": float(score.format_ok),
            "feasible": float(score.feasible),
            "ratio": score.optimality,
        }


class NPGymTaskset(vf.Taskset[NPGymTask, NPGymTasksetConfig]):
    """``n`` fresh instances of ``problem`` at ``tier`` from the training seed stream."""

    def load(self) -> Iterator[NPGymTask]:
        """One task per instance, in seed order."""
        config = self.config
        rows = make_dataset(
            [config.problem],
            n=config.n,
            mix={config.tier: 1.0},
            seed=config.seed,
            reference=config.reference,
        )
        for row in rows:
            data = NPGymData(
                id=row["id"],
                prompt=row["prompt"][0]["content"],
                npgym_task=row["task"],
                instance=row["instance"],
                reference=row["reference"],
                max_attempts=config.max_attempts,
                reward_policy=config.reward_policy,
            )
            yield NPGymTask(data, config.task)


class NPGymEnvConfig(vf.EnvConfig):
    """The one agent that answers (``--env.agent.*``). Its runtime is a local subprocess:
    :class:`NPGymHarness` runs nothing in it, so no sandbox is needed."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class NPGymEnv(vf.Env[NPGymEnvConfig]):
    """An episode: the model answers; in repair mode the verifier's feedback is the next user
    turn until the answer is optimal or the attempts run out."""

    async def run(self, task: NPGymTask, agents: Any) -> None:
        """Play ``task`` with the agent; the task's reward scores the transcript afterwards."""
        session = _session(task.data)
        async with agents.agent.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                attempt = session.submit(segment.last_reply)
                if session.done:
                    break
                segment = await interaction.turn(attempt.feedback)


class NPGymHarnessConfig(vf.HarnessConfig):
    """No settings of its own: the model and sampling come from the run."""


class NPGymHarness(vf.Harness[NPGymHarnessConfig]):
    """One chat completion per turn, sent in-process through the interception endpoint."""

    APPENDS_SYSTEM_PROMPT: ClassVar[bool] = True
    SUPPORTS_RESUME: ClassVar[bool] = True
    EXECUTES_CODE: ClassVar[bool] = False
    NEEDS_CONTAINER: ClassVar[bool] = False

    async def launch(
        self,
        ctx: Any,
        trace: Any,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        """Ask the model once for the conversation so far; a failed call fails the turn."""
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [message_to_wire(message) for message in prompt or []]
        try:
            async with httpx.AsyncClient(timeout=MODEL_CALL_TIMEOUT_S) as client:
                response = await client.post(
                    f"{endpoint.rstrip('/')}/chat/completions",
                    headers={"Authorization": f"Bearer {secret}"},
                    json={"model": ctx.model, "messages": messages},
                )
        except httpx.HTTPError as error:
            return ProgramResult(exit_code=1, stdout="", stderr=f"model call failed: {error!r}")
        if response.is_error:
            detail = f"model call failed: HTTP {response.status_code}: {response.text[:2000]}"
            return ProgramResult(exit_code=1, stdout="", stderr=detail)
        return ProgramResult(exit_code=0, stdout="", stderr="")


__all__ = [
    "NPGymData",
    "NPGymEnv",
    "NPGymEnvConfig",
    "NPGymHarness",
    "NPGymHarnessConfig",
    "NPGymTask",
    "NPGymTaskset",
    "NPGymTasksetConfig",
]
