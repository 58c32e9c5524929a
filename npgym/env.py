"""The gymnasium environment: the observation is a prompt, the action is the model's text."""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from npgym.capabilities import has_capability
from npgym.config import overrides_or_config
from npgym.env_options import check_reference_time_limit, given_instance
from npgym.multiturn import RepairConfig, RepairSession, RewardPolicy
from npgym.registry import get_task
from npgym.reward import RewardConfig, resolve_reward

MAX_TEXT_CHARS = 1 << 20
"""Longest prompt or completion the text spaces declare (``step`` scores longer text too)."""
TEXT_CHARSET = string.printable
"""Prompts and feedback are plain ASCII; completions may hold any text."""


class NPGymEnv(gym.Env[str, str]):
    """One task at one tier (or difficulty): the prompt is the observation, text the action.

    ``reset(seed=s)`` generates the same instance as ``task.generate(seed=s, tier=...)`` and
    returns its prompt; ``info`` holds the ``instance`` and its ``reference``. ``step(text)``
    scores the completion and returns the verifier's feedback as the next observation and the
    score's fields in ``info``.

    By default an episode is one answer. With ``max_attempts > 1`` it is multi-turn repair
    (:mod:`npgym.multiturn`): after an infeasible or sub-optimal answer the feedback invites
    another attempt, until an optimal answer or the last attempt. ``reward_policy`` (``best``,
    ``last`` or ``discounted`` with ``discount``) sets the episode reward; each step's reward is
    the change in it, so the return of an episode is its reward under the policy.

    Other options (``gym.make("npgym/TSP-hard", **options)``): ``overrides`` lays values over
    generator fields (``config`` is its deprecated old name), ``difficulty`` replaces the tier by
    the continuous knob, ``reward`` sets the reward (a preset name, ``"np-engine"`` by default or
    ``"strict"``, a :class:`RewardConfig` or a mapping of weights), ``exact_reference=False``
    skips the optimality proof and compares against the heuristic, ``reference_time_limit``
    bounds the proof in seconds (a positive finite number).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}  # noqa: RUF012 (gymnasium API)

    def __init__(
        self,
        task: str,
        tier: str | None = "medium",
        *,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | None = None,
        reward: RewardConfig | Mapping[str, float] | str | None = None,
        exact_reference: bool = True,
        reference_time_limit: float | None = None,
        max_attempts: int = 1,
        reward_policy: RewardPolicy = "best",
        discount: float = 0.9,
        render_mode: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.task = get_task(task)
        self.tier = None if difficulty is not None else tier
        self.difficulty = difficulty
        overrides = overrides_or_config(overrides, config, "NPGymEnv")
        self.overrides = dict(overrides) if overrides else None
        self.task.config(self.tier, difficulty, self.overrides)  # fail at make() on a bad config
        self.reward_config = resolve_reward(dict(reward) if isinstance(reward, Mapping) else reward)
        self.exact_reference = exact_reference
        self.reference_time_limit = check_reference_time_limit(reference_time_limit)
        self.repair = RepairConfig(
            max_attempts=max_attempts, policy=reward_policy, discount=discount
        )
        if not has_capability(self.task, "drawer"):  # a task without a picture
            self.metadata = {**self.metadata, "render_modes": ["ansi"]}
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.render_mode = render_mode
        self.observation_space = spaces.Text(MAX_TEXT_CHARS, min_length=0, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(MAX_TEXT_CHARS, min_length=0, charset=TEXT_CHARSET)
        self.session: RepairSession | None = None
        self._observation = ""
        self._answer: str | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on a new instance; ``options={"instance": inst}`` plays a given one."""
        super().reset(seed=seed)
        instance = given_instance(self.task, options)
        if instance is None:
            instance_seed = seed if seed is not None else int(self.np_random.integers(2**63))
            instance = self.task.generate(instance_seed, self.tier, self.difficulty, self.overrides)
        reference = self.task.reference(
            instance, exact=self.exact_reference, time_limit=self.reference_time_limit
        )
        self.session = RepairSession(
            self.task, instance, reference, self.repair, self.reward_config
        )
        self._observation = self.task.prompt(instance)
        self._answer = None
        return self._observation, {"instance": instance, "reference": reference}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Score ``action`` (the model's whole completion); the episode may go on (repair)."""
        if self.session is None or self.session.done:
            raise RuntimeError("the episode is over; call reset() first")
        before = self.session.reward() if self.session.scores else 0.0
        attempt = self.session.submit(action)
        self._answer = action
        episode_reward = self.session.reward()
        self._observation = attempt.feedback
        info = {
            **attempt.score.to_dict(),
            "attempt": len(self.session.scores),
            "episode_reward": episode_reward,
        }
        return self._observation, episode_reward - before, attempt.done, False, info

    def render(self) -> str | np.ndarray | None:
        """The current observation text (``ansi``), or a picture of the instance and the last
        answer with its mistake marked (``rgb_array``, see :mod:`npgym.render`)."""
        if self.render_mode == "ansi":
            return self._observation
        if self.render_mode == "rgb_array" and self.session is not None:
            from npgym.render import draw_answer

            session = self.session
            return draw_answer(self.task, session.instance, self._answer, session.reference)
        return None


def make_env(
    task: str, tier: str | None = "medium", *, mode: str = "text", **options: Any
) -> gym.Env:
    """The entry point of every ``npgym/<Task>-<tier>`` id: ``mode="text"`` (the default)
    gives :class:`NPGymEnv`, ``mode="structured"`` the classic-RL
    :class:`npgym.structured.StructuredEnv`."""
    if mode == "text":
        return NPGymEnv(task, tier, **options)
    if mode == "structured":
        from npgym.structured import StructuredEnv

        return StructuredEnv(task, tier, **options)
    raise ValueError(f"unknown mode {mode!r}; choose 'text' or 'structured'")
