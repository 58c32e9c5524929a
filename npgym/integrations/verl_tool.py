"""The verl tool for multi-turn repair: ``submit_solution`` answers with verifier feedback.

Declared in a verl tool config (``examples/verl/tool_config.yaml``)::

    tools:
      - class_name: npgym.integrations.verl_tool.NPGymSubmitTool
        config: {type: native, max_attempts: 3, policy: best}

Each row's ``extra_info.tools_kwargs`` (written by ``npgym export --format verl --multi-turn``)
names the instance; verl creates a tool instance per call, so the attempts of a rollout live in
its ``extra_fields`` and a :class:`npgym.multiturn.RepairSession` is rebuilt from them each time.
:func:`npgym.integrations.verl.compute_score` then scores the episode.
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from npgym.integrations.verl import ATTEMPTS_FIELD, REPAIR_FIELD, TOOL_NAME, load_row
from npgym.multiturn import RepairConfig, RepairSession, as_completion
from npgym.results import Score
from npgym.reward import resolve_reward

SCHEMA = OpenAIFunctionToolSchema.model_validate(
    {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": (
                "Check a candidate solution with the verifier. Returns why it is infeasible, "
                "or its objective value and whether a better one is known."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "answer": {
                        "type": "string",
                        "description": "The solution in the answer format the problem asks for.",
                    }
                },
                "required": ["answer"],
            },
        },
    }
)


class NPGymSubmitTool(BaseTool):
    """verl ``BaseTool``: score submitted answers of the row's instance, give feedback."""

    def __init__(
        self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema | None = None
    ) -> None:
        self.repair = RepairConfig.model_validate(
            {key: config[key] for key in ("max_attempts", "policy", "discount") if key in config}
        )
        self.reward = resolve_reward(config.get("reward"))
        self._rows: dict[str, dict[str, Any]] = {}
        super().__init__(config, tool_schema or SCHEMA)

    async def create(
        self, instance_id: str | None = None, **kwargs: Any
    ) -> tuple[str, ToolResponse]:
        """Remember the row (task, instance, reference) this call belongs to."""
        instance_id = instance_id or uuid4().hex
        self._rows[instance_id] = dict(kwargs.get("create_kwargs") or {})
        return instance_id, ToolResponse()

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[ToolResponse, float, dict[str, Any]]:
        """Score ``parameters["answer"]`` and return the feedback (no per-step reward)."""
        row = self._rows.get(instance_id)
        if not row or not row.get("instance"):
            return ToolResponse(text="No problem is loaded for this tool call."), 0.0, {}
        agent_data = kwargs.get("agent_data")
        fields: dict[str, Any] = agent_data.extra_fields if agent_data is not None else {}
        attempts = fields.setdefault(ATTEMPTS_FIELD, [])
        fields[REPAIR_FIELD] = self.repair.model_dump()
        task, instance, reference = load_row(row["task"], row["instance"], row.get("reference"))
        session = RepairSession(
            task, instance, reference, self.repair, self.reward, [Score(**a) for a in attempts]
        )
        if session.done:
            return ToolResponse(text="No attempts left."), 0.0, {}
        attempt = session.submit(as_completion(str(parameters.get("answer", ""))))
        attempts.append(attempt.score.to_dict())
        return ToolResponse(text=attempt.feedback), 0.0, {"feasible": attempt.score.feasible}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._rows.pop(instance_id, None)
