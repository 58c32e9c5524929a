"""What the task families share: the config base, embedded base instances, guarded scoring.

A family task is an ordinary :class:`npgym.task.Task`: ``generate``, ``prompt``, ``reference``,
``score``, ``score_many``, ``from_json`` and the gymnasium env work as for the base tasks. Its
config carries the tier (or difficulty) its base instances are drawn at; its instance embeds
base instances as their JSON dicts, so it round-trips through JSON like any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from npgym.answer import AnswerFormatError, parse_value
from npgym.config import MAX_DIFFICULTY, TIERS, GeneratorConfig
from npgym.instance import Instance
from npgym.registry import get_task
from npgym.results import Objective, Reference, Score
from npgym.reward import RewardConfig, failed_score
from npgym.scoring import ScoringState
from npgym.task import Task

Tier = Literal["easy", "medium", "hard", "benchmark"]


class FamilyConfig(GeneratorConfig):
    """The tier or difficulty the family's base instances are drawn at (set from the family's
    own tier or difficulty; an override may change it)."""

    part_tier: Tier | None = None
    part_difficulty: float | None = Field(None, ge=0.0, le=MAX_DIFFICULTY)


InstanceT = TypeVar("InstanceT", bound=Instance)
ConfigT = TypeVar("ConfigT", bound=FamilyConfig)


def family_tiers(config_type: type[ConfigT], **fields: Any) -> dict[str, ConfigT]:
    """One preset per tier: base instances at the same tier, the given fields in every one."""
    return {tier: config_type(part_tier=tier, **fields) for tier in TIERS}


def base_instance(data: Mapping[str, Any]) -> Instance:
    """A base task's instance from its JSON dict (validated)."""
    return get_task(str(data["task"])).instance_type.model_validate(dict(data))


def instance_dict(instance: Instance) -> dict[str, Any]:
    """An instance as the JSON-ready dict a family instance stores."""
    return instance.model_dump(mode="json")


def strip_instruction(prompt: str) -> str:
    """A base prompt without its closing "Think step by step ... Answer:" paragraph."""
    cut = prompt.rfind("\n\nThink step by step")
    return prompt[:cut] if cut >= 0 else prompt


@dataclass(frozen=True)
class FamilyScore(Score):
    """A :class:`Score` with what a family adds: each part's score (composition) and the bonus
    for beating the candidates (aggregation), which ``feasibility_reward`` already includes."""

    parts: tuple[Score, ...] = ()
    bonus: float = 0.0


class FamilyTask(Task[InstanceT, ConfigT]):
    """A task built from base tasks; subclasses implement :meth:`score_solution`."""

    def config(
        self,
        tier: str | None = None,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | BaseModel | None = None,
    ) -> ConfigT:
        resolved = super().config(tier, difficulty, overrides)
        if difficulty is not None and not isinstance(overrides, BaseModel):
            changes = {"part_tier": None, "part_difficulty": float(difficulty)}
            resolved = type(resolved).model_validate({**resolved.model_dump(), **changes})
        return resolved

    @staticmethod
    def part_level(config: FamilyConfig) -> dict[str, Any]:
        """The ``tier`` / ``difficulty`` arguments that draw the base instances."""
        if config.part_difficulty is not None:
            return {"tier": None, "difficulty": config.part_difficulty}
        return {"tier": config.part_tier or "medium", "difficulty": None}

    def parse_segment(self, segment: str) -> Any:
        """The value of an extracted answer segment (a list, an integer or a word)."""
        return parse_value(segment)

    def score_solution(
        self,
        instance: InstanceT,
        solution: Any,
        reference: Reference | Objective | None,
        weights: RewardConfig,
    ) -> Score:
        """The score of a solution already in the family's shape (may raise only on a bug)."""
        raise NotImplementedError

    def baseline_solution(self, instance: InstanceT) -> Any:
        """No zero-effort answer: a family answer needs every part's (or a new) solution, so
        ``"strict"`` measures a family's gap from 0."""
        return None

    def _score_answer(self, instance: InstanceT, segment: str, state: ScoringState) -> Score:
        """A family's steps after extraction (``score`` and ``score_many`` share the base task's
        extraction and last-resort guard): its own parser and :meth:`score_solution`."""
        weights, reference, reference_objective, _ = state
        step = "tokenise"
        try:
            try:
                value = self.parse_segment(segment)
                step = "shape"
                solution = self.to_solution(value)
            except AnswerFormatError as error:
                return failed_score(weights, False, None, reference_objective, str(error))
            step = "verify"
            return self.score_solution(instance, solution, reference, weights)
        except Exception as error:  # the last-resort guard: a bug, never a model's fault
            return self._guard(state, step, error)
