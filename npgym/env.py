"""The gymnasium environment: the observation is a prompt, the action is the model's text."""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from npgym.instance import Instance
from npgym.registry import get_task
from npgym.results import Reference
from npgym.reward import RewardConfig

MAX_TEXT_CHARS = 1 << 20
"""Longest prompt or completion the text spaces declare (``step`` scores longer text too)."""
TEXT_CHARSET = string.printable
"""Prompts and feedback are plain ASCII; completions may hold any text."""


class NPGymEnv(gym.Env[str, str]):
    """One task at one tier (or difficulty) as a single-step episode.

    ``reset(seed=s)`` generates the same instance as ``task.generate(seed=s, tier=...)`` and
    returns its prompt; ``info`` holds the ``instance`` and its ``reference``. ``step(text)``
    scores the completion, ends the episode and returns the verifier's feedback as the next
    observation and the score's fields in ``info``.

    Options (``gym.make("npgym/TSP-hard", **options)``): ``config`` overrides generator fields,
    ``difficulty`` replaces the tier by the continuous knob, ``reward`` sets the reward weights
    (a :class:`RewardConfig` or a mapping), ``exact_reference=False`` skips the optimality proof
    and compares against the heuristic, ``reference_time_limit`` bounds the proof in seconds.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 (gymnasium API)

    def __init__(
        self,
        task: str,
        tier: str | None = "medium",
        *,
        difficulty: float | None = None,
        config: Mapping[str, Any] | None = None,
        reward: RewardConfig | Mapping[str, float] | None = None,
        exact_reference: bool = True,
        reference_time_limit: float | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.task = get_task(task)
        self.tier = None if difficulty is not None else tier
        self.difficulty = difficulty
        self.overrides = dict(config) if config else None
        self.task.config(self.tier, difficulty, self.overrides)  # fail at make() on a bad config
        self.reward_config = (
            reward
            if isinstance(reward, RewardConfig)
            else RewardConfig.model_validate(reward or {})
        )
        self.exact_reference = exact_reference
        self.reference_time_limit = reference_time_limit
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.render_mode = render_mode
        self.observation_space = spaces.Text(MAX_TEXT_CHARS, min_length=0, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(MAX_TEXT_CHARS, min_length=0, charset=TEXT_CHARSET)
        self.instance: Instance | None = None
        self.reference: Reference | None = None
        self._observation = ""
        self._done = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on a new instance; ``options={"instance": inst}`` plays a given one."""
        super().reset(seed=seed)
        given = (options or {}).get("instance")
        if given is not None:
            if not isinstance(given, self.task.instance_type):
                raise TypeError(f"options['instance'] must be a {self.task.name} instance")
            self.instance = given
        else:
            instance_seed = seed if seed is not None else int(self.np_random.integers(2**63))
            self.instance = self.task.generate(
                instance_seed, self.tier, self.difficulty, self.overrides
            )
        self.reference = self.task.reference(
            self.instance, exact=self.exact_reference, time_limit=self.reference_time_limit
        )
        self._observation = self.task.prompt(self.instance)
        self._done = False
        return self._observation, {"instance": self.instance, "reference": self.reference}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Score ``action`` (the model's whole completion) and end the episode."""
        if self._done or self.instance is None or self.reference is None:
            raise RuntimeError("the episode is over; call reset() first")
        score = self.task.score(self.instance, action, self.reference, self.reward_config)
        self._done = True
        self._observation = self.task.feedback(score)
        return self._observation, score.reward, True, False, score.to_dict()

    def render(self) -> str | None:
        """The current observation text (``render_mode="ansi"``)."""
        return self._observation if self.render_mode == "ansi" else None
