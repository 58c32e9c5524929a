"""Multi-turn repair: the model answers, the verifier replies, the model may try again.

A :class:`RepairSession` holds one instance and its reference, scores each attempt with the
task's reward, and turns the verdict into feedback the model can act on (the infeasibility
reason, or "feasible, tour length 1234; the best known is lower"). The episode ends on an
optimal answer or when the attempts run out. Its reward is set by a policy:

- ``last``: the reward of the final attempt;
- ``best``: the best reward over all attempts (default);
- ``discounted``: like ``best``, but a positive reward earned on attempt t (0-based) is scaled
  by ``discount ** t``, so an answer right the first time is worth most; negative rewards are
  not scaled (failing later is not softened).

The gym env, the TRL environment and the verl tool all use this one mechanism.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from npgym.instance import Instance
from npgym.results import Reference, Score
from npgym.reward import DEFAULT_REWARD, RewardConfig, resolve_reward
from npgym.task import Task

RewardPolicy = Literal["last", "best", "discounted"]
POLICIES: tuple[str, ...] = ("last", "best", "discounted")


def episode_reward(
    rewards: Sequence[float], policy: RewardPolicy = "best", discount: float = 0.9
) -> float:
    """The episode's reward from its attempts' rewards under ``policy`` (see module docs)."""
    if not rewards:
        raise ValueError("an episode needs at least one attempt")
    if policy == "last":
        return rewards[-1]
    if policy == "best":
        return max(rewards)
    if policy == "discounted":
        return max(r * discount**t if r > 0 else r for t, r in enumerate(rewards))
    raise ValueError(f"unknown reward policy {policy!r}; choose one of {', '.join(POLICIES)}")


class RepairConfig(BaseModel):
    """How many answers an episode allows and how its reward is formed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_attempts: int = Field(1, ge=1, le=100)
    policy: RewardPolicy = "best"
    discount: float = Field(0.9, gt=0.0, le=1.0)


def as_completion(answer: str) -> str:
    """A tool argument as completion text: ``Answer: `` is added when no marker is there."""
    lowered = answer.lower()
    return answer if "answer" in lowered or "\\boxed" in answer else f"Answer: {answer}"


@dataclass
class Attempt:
    """One scored attempt and the feedback shown to the model."""

    score: Score
    feedback: str
    done: bool


@dataclass
class RepairSession:
    """One instance played over up to ``repair.max_attempts`` answers."""

    task: Task
    instance: Instance
    reference: Reference
    repair: RepairConfig = field(default_factory=RepairConfig)
    reward_config: RewardConfig | str = DEFAULT_REWARD
    """The reward: a :class:`RewardConfig` or a preset name (``"np-engine"``, ``"strict"``)."""
    scores: list[Score] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.reward_config = resolve_reward(self.reward_config)

    @property
    def done(self) -> bool:
        """True once an attempt was optimal or no attempts are left."""
        return len(self.scores) >= self.repair.max_attempts or any(
            s.optimality >= 1.0 for s in self.scores
        )

    def submit(self, completion: str) -> Attempt:
        """Score an answer and say what the model should hear next."""
        if self.done:
            raise RuntimeError("no attempts left in this episode")
        score = self.task.score(self.instance, completion, self.reference, self.reward_config)
        self.scores.append(score)
        feedback = self.task.feedback(score)
        left = self.repair.max_attempts - len(self.scores)
        if not self.done:
            plural = "s" if left > 1 else ""
            feedback += (
                f" You have {left} more attempt{plural}: give your full answer again, "
                "ending with 'Answer: <answer>'."
            )
        return Attempt(score, feedback, self.done)

    def reward(self) -> float:
        """The episode's reward so far (a format failure if nothing was submitted)."""
        if not self.scores:
            weights = resolve_reward(self.reward_config)
            return weights.format_fail + weights.infeasible
        rewards = [score.reward for score in self.scores]
        return episode_reward(rewards, self.repair.policy, self.repair.discount)
