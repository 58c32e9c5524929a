"""Rows in the layouts that trainers read (TRL, verl), and the reward parts they log.

This is the layer that both :mod:`npgym.npbench.export` (files) and :mod:`npgym.integrations`
(reward functions, datasets) build on, so neither imports the other.

- TRL: a conversational ``prompt`` plus the columns the reward functions read (``task``,
  ``instance``, ``reference``), see :func:`trl_row`.
- verl: ``data_source`` (the gym id), ``prompt`` (chat list), ``ability``,
  ``reward_model {style: "rule", ground_truth: reference objective}`` and ``extra_info`` with
  the instance and reference for ``npgym.integrations.verl.compute_score``, see :func:`verl_row`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from npgym.records import Row
from npgym.registry import env_id, get_task
from npgym.results import Score

ABILITY = "combinatorial_optimization"
TOOL_NAME = "submit_solution"
"""The repair tool's name, in TRL's environment and verl's tool config alike."""


class Message(TypedDict):
    """One chat message."""

    role: str
    content: str


class TrlRow(TypedDict):
    """A row for TRL's ``GRPOTrainer`` (schema of ``npgym export --format trl``)."""

    prompt: list[Message] | str
    id: str
    task: str
    tier: str | None
    instance: str
    reference: str | None
    reference_objective: int | float | None


def chat(prompt: str) -> list[Message]:
    """A prompt as a one-message chat (the conversational format of TRL and verl)."""
    return [{"role": "user", "content": prompt}]


def data_source(row: Mapping[str, Any]) -> str:
    """The gym id of a row's task and tier (``npgym/<Task>`` when it has no tier)."""
    tier = row.get("tier")
    return env_id(row["task"], tier) if tier else f"npgym/{row['task']}"


def reward_parts_of(score: Score) -> dict[str, float]:
    """The reward's three terms (they sum to ``score.reward``), ``feasible`` and ``ratio``.

    ``format_reward``: the format term; ``feasibility_reward``: 0 if feasible, else the
    infeasibility penalty; ``optimality_reward``: the optimality term of a feasible answer.
    """
    return {
        "format_reward": score.format_reward,
        "feasibility_reward": 0.0 if score.feasible else score.feasibility_reward,
        "optimality_reward": score.feasibility_reward if score.feasible else 0.0,
        "feasible": float(score.feasible),
        "ratio": score.optimality,
    }


def tools_kwargs(row: Mapping[str, Any]) -> dict[str, Any]:
    """The per-row ``tools_kwargs`` that verl hands to the repair tool."""
    return {
        TOOL_NAME: {
            "create_kwargs": {
                "task": row["task"],
                "instance": row["instance"],
                "reference": row.get("reference"),
            }
        }
    }


def verl_row(row: Row, index: int, split: str, multi_turn: bool = False) -> dict[str, Any]:
    """One row in verl's RL dataset layout (with tool arguments for multi-turn repair)."""
    converted: dict[str, Any] = {
        "data_source": data_source(row),
        "prompt": chat(row["prompt"]),
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": row.get("reference_objective")},
        "extra_info": {
            "index": index,
            "id": row["id"],
            "split": split,
            "task": row["task"],
            "tier": row.get("tier"),
            "category": get_task(row["task"]).category,
            "instance": row["instance"],
            "reference": row.get("reference"),
        },
    }
    if multi_turn:
        converted["agent_name"] = "tool_agent"
        converted["extra_info"] |= {"need_tools_kwargs": True, "tools_kwargs": tools_kwargs(row)}
    return converted


def trl_row(row: Row, conversational: bool = True) -> TrlRow:
    """One row for TRL's GRPOTrainer: the prompt (a one-message chat, or the plain problem text
    for base models without a chat template) plus what the reward functions need."""
    return {
        "prompt": chat(row["prompt"]) if conversational else row["prompt"],
        "id": row["id"],
        "task": row["task"],
        "tier": row.get("tier"),
        "instance": row["instance"],
        "reference": row.get("reference"),
        "reference_objective": row.get("reference_objective"),
    }
