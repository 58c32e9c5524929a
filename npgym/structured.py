"""Classic-RL mode: ``gym.make("npgym/TSP-hard", mode="structured")``.

The observation is a dict of numpy arrays (distances, adjacency, weights, capacities... and the
partial solution), the action a :class:`~gymnasium.spaces.Discrete` choice that extends the
partial solution by one step (the next city, include or skip the next item, a colour for the
next vertex...). The observation's ``action_mask`` (``int8``, 1 = legal) marks the moves that
keep the solution feasible, so a policy that only picks legal moves always ends with a feasible
answer (SetCover's ``Impossible`` and HamiltonianCycle's cycles included). Each task's design
lives in ``npgym/tasks/<name>/structured.py``; ``docs/structured.md`` tabulates them.

Sizes: arrays are padded to the largest instance the tier (or difficulty, or config override)
can draw, so the spaces are fixed per env id; ``node_mask``-style keys mark the real entries,
padding is 0 and padded actions are never legal.

Reward: 0 on every step but the last, whose reward is ``task.score`` of the built solution's
``task.format_answer`` text (``info`` holds the score and the ``answer``; its numbers
``objective``, ``reference_objective``, ``baseline_objective`` and ``ratio`` are floats, NaN
where the score has none, as for SetCover's "impossible", so that gymnasium's vector envs can
stack the infos of several envs into one array). With ``shaping=w > 0``
each step also earns ``w`` times the change in the partial objective, divided by the reference
objective (signed so that progress is positive), and the last step pays the accumulated shaping
back, so the return of an episode is still exactly the task reward.

``reward_mode="objective"`` instead pays the signed objective of the finished solution on the
last step (minus the tour length for TSP, the value for a maximisation task) and computes no
reference at reset: the classic-RL reward of rl4co and jumanji, for training runs that need no
ratio to the optimum. It takes no shaping, and an illegal move raises
:class:`InvalidActionError` (a fixed penalty has no scale against a raw objective).

Illegal moves: an action that is masked, out of range or not an integer ends the episode with
a format failure (``reward.format_fail + reward.infeasible``, -2.5 by default: worse than any
built answer) and ``info["reason"]`` says why; ``invalid_action="raise"`` raises
:class:`InvalidActionError` instead. Neither ever crashes the environment.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Generic, Literal, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pydantic import BaseModel

from npgym.config import overrides_or_config
from npgym.env_options import check_reference_time_limit, given_instance
from npgym.graphs import GraphInstance
from npgym.instance import Instance
from npgym.reward import RewardSpec, resolve_reward
from npgym.task import Task

InvalidActionPolicy = Literal["penalty", "raise"]
RewardMode = Literal["task", "objective"]


class InvalidActionError(ValueError):
    """A structured-mode action that is out of range, not an integer, or masked."""


def flags(shape: tuple[int, ...]) -> spaces.Box:
    """A 0/1 ``int8`` box (masks, adjacency, membership)."""
    return spaces.Box(0, 1, shape, np.int8)


def integers(low: int, high: int, shape: tuple[int, ...]) -> spaces.Box:
    """An ``int64`` box."""
    return spaces.Box(low, high, shape, np.int64)


def padded(values: Any, shape: tuple[int, ...], dtype: Any = np.int64, fill: int = 0) -> np.ndarray:
    """``values`` in the top-left corner of a ``shape`` array filled with ``fill``."""
    array = np.asarray(values, dtype=dtype)
    out = np.full(shape, fill, dtype=dtype)
    out[tuple(slice(0, size) for size in array.shape)] = array
    return out


def first_n(count: int, size: int) -> np.ndarray:
    """The ``int8`` mask of the first ``count`` of ``size`` entries."""
    mask = np.zeros(size, np.int8)
    mask[:count] = 1
    return mask


def graph_spaces(n: int) -> dict[str, spaces.Space[Any]]:
    """A graph's observation at ``n`` vertices: ``adjacency`` (n, n) and ``vertex_mask`` (n,)."""
    return {"adjacency": flags((n, n)), "vertex_mask": flags((n,))}


def graph_arrays(instance: GraphInstance, size: int) -> dict[str, np.ndarray]:
    """A graph instance's :func:`graph_spaces` arrays, padded to ``size`` vertices."""
    return {
        "adjacency": padded(instance.adjacency, (size, size), np.int8),
        "vertex_mask": first_n(instance.n, size),
    }


InstanceT = TypeVar("InstanceT", bound=Instance)


class Episode(ABC, Generic[InstanceT]):
    """One structured episode on one instance: the partial solution and its legal moves.

    A subclass names its instance type (``Episode[TSPInstance]``), declares its sizes
    (:meth:`limits_for`), spaces (:meth:`spaces`) and action count (:meth:`action_count`),
    and implements the moves; the task that declares it (its ``episode`` capability) is the
    task it plays.
    """

    def __init__(self, instance: InstanceT, limits: Mapping[str, int]) -> None:
        self.instance: InstanceT = instance
        self.limits = dict(limits)

    @classmethod
    def limits_for(cls, config: BaseModel) -> dict[str, int]:
        """The padded sizes for instances drawn with ``config``: ``{"n": n_max}`` by default,
        for the tasks whose size is a vertex or number count ``n``."""
        return {"n": config.n_max}  # type: ignore[attr-defined]

    @classmethod
    @abstractmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        """Observation spaces by key, without ``action_mask``."""

    @classmethod
    def action_count(cls, limits: Mapping[str, int]) -> int:
        """Size of the Discrete action space: by default ``limits["n"]``, one action an element
        (a city, a colour), like :meth:`limits_for`."""
        return limits["n"]

    @classmethod
    def sizes_of(cls, instance: Instance) -> dict[str, int]:
        """The instance's own sizes, compared with the limits (a bigger one is refused):
        ``{"n": instance.n}`` by default, like :meth:`limits_for`."""
        return {"n": instance.n}  # type: ignore[attr-defined]

    @abstractmethod
    def observation(self) -> dict[str, np.ndarray]:
        """Every key of :meth:`spaces` (``action_mask`` is added by the env)."""

    @abstractmethod
    def mask(self) -> np.ndarray:
        """Boolean legality of each action now."""

    @abstractmethod
    def apply(self, action: int) -> bool:
        """Make a legal move; True when the solution is complete."""

    @abstractmethod
    def solution(self) -> Any:
        """The solution built so far, in the task's answer shape."""

    @abstractmethod
    def partial_objective(self) -> float:
        """The objective of the partial solution (for optional shaping)."""

    @abstractmethod
    def greedy_action(self) -> int:
        """A legal move of a simple constructive heuristic (a baseline and a test policy)."""


class ElementwiseEpisode(Episode[InstanceT]):
    """An episode that decides the instance's elements 0, 1, ..., n - 1 in turn, each by one of
    two actions (skip or take an item; one part or the other for a vertex): two actions at any
    size, :attr:`position` the element to decide next, and the end after the last one. A
    subclass says which of the two actions are legal (:meth:`legal`) and records one
    (:meth:`decide`)."""

    def __init__(self, instance: InstanceT, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        self.element_count = self.sizes_of(instance)["n"]
        self.position = 0

    @classmethod
    def action_count(cls, limits: Mapping[str, int]) -> int:
        return 2

    def mask(self) -> np.ndarray:
        if self.position >= self.element_count:
            return np.zeros(2, np.bool_)
        return self.legal()

    def apply(self, action: int) -> bool:
        self.decide(action)
        self.position += 1
        return self.position == self.element_count

    @abstractmethod
    def legal(self) -> np.ndarray:
        """Which of the two actions are legal for the element at :attr:`position` (two bools)."""

    @abstractmethod
    def decide(self, action: int) -> None:
        """Record ``action`` for the element at :attr:`position`."""


def episode_type(task: str | Task[Any, Any]) -> type[Episode]:
    """The :class:`Episode` class a task declares (its ``episode`` capability); a task without
    one raises :class:`npgym.capabilities.MissingCapabilityError`."""
    from npgym.capabilities import capability
    from npgym.registry import get_task

    resolved = get_task(task) if isinstance(task, str) else task
    episode: type[Episode] = capability(resolved, "episode")
    return episode


def check_reward_mode(reward_mode: Any, shaping: float = 0.0) -> RewardMode:
    """``reward_mode`` when it is ``"task"`` or ``"objective"`` (which takes no shaping)."""
    if reward_mode not in ("task", "objective"):
        raise ValueError(f"reward_mode must be 'task' or 'objective', got {reward_mode!r}")
    if reward_mode == "objective" and shaping:
        raise ValueError("reward_mode='objective' takes no shaping (its reward is the objective)")
    mode: RewardMode = reward_mode
    return mode


OPTIONAL_NUMBERS = ("objective", "reference_objective", "baseline_objective", "ratio")
"""The score's numbers that may be missing (``None``): floats in an env's ``info``."""


def stackable(score: dict[str, Any]) -> dict[str, Any]:
    """A score's dict with :data:`OPTIONAL_NUMBERS` as floats (NaN for ``None``): gymnasium's
    vector envs type each info key by its first env's value, so an ``int`` beside a ``None``
    (or a float) in another env would fail or be truncated."""
    for key in OPTIONAL_NUMBERS:
        value = score[key]
        score[key] = math.nan if value is None else float(value)
    return score


def signed_objective(task: Task[Any, Any], objective: float) -> float:
    """The objective as a reward: negated for a minimisation task, so that higher is better."""
    return float(-objective if task.sense == "min" else objective)


class StructuredEnv(gym.Env[dict[str, np.ndarray], int]):
    """One task at one tier in classic-RL form (see the module docstring).

    Options as for the text env (``tier``, ``difficulty``, ``overrides``, ``reward``,
    ``exact_reference``, ``reference_time_limit``), plus ``shaping`` (dense shaping weight,
    default 0), ``invalid_action`` (``"penalty"`` or ``"raise"``), ``reward_mode`` (``"task"``
    or ``"objective"``, see the module docstring) and ``render_mode`` (``"rgb_array"``: a
    picture of the instance and the partial solution).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}  # noqa: RUF012 (gymnasium API)

    def __init__(
        self,
        task: str | Task[Any, Any],
        tier: str | None = "medium",
        *,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | None = None,
        reward: RewardSpec | Mapping[str, float] = None,
        exact_reference: bool = True,
        reference_time_limit: float | None = None,
        shaping: float = 0.0,
        invalid_action: InvalidActionPolicy = "penalty",
        render_mode: str | None = None,
        config: Mapping[str, Any] | None = None,
        reward_mode: RewardMode = "task",
    ) -> None:
        from npgym.registry import get_task

        self.task = task if isinstance(task, Task) else get_task(task)
        self.tier = None if difficulty is not None else tier
        self.difficulty = difficulty
        overrides = overrides_or_config(overrides, config, "StructuredEnv")
        self.overrides = dict(overrides) if overrides else None
        resolved = self.task.config(self.tier, difficulty, self.overrides)
        self.reward_config = resolve_reward(dict(reward) if isinstance(reward, Mapping) else reward)
        self.exact_reference = exact_reference
        self.reference_time_limit = check_reference_time_limit(reference_time_limit)
        if not np.isfinite(shaping) or shaping < 0:
            raise ValueError(f"shaping must be a non-negative number, got {shaping!r}")
        self.shaping = float(shaping)
        if invalid_action not in ("penalty", "raise"):
            raise ValueError(f"invalid_action must be 'penalty' or 'raise', got {invalid_action!r}")
        self.invalid_action = invalid_action
        self.reward_mode = check_reward_mode(reward_mode, self.shaping)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.render_mode = render_mode
        self.episode_class = episode_type(self.task)
        self.limits = self.episode_class.limits_for(resolved)
        self.action_count = self.episode_class.action_count(self.limits)
        self.observation_space = spaces.Dict(  # type: ignore[assignment]
            {**self.episode_class.spaces(self.limits), "action_mask": flags((self.action_count,))}
        )
        self.action_space = spaces.Discrete(self.action_count)  # type: ignore[assignment]
        self.episode: Episode | None = None
        self.done = True
        self._shaped = 0.0
        self._last_score: Any = None

    # --- episode ------------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """A new instance (``options={"instance": inst}`` plays a given one), nothing built."""
        super().reset(seed=seed)
        instance = given_instance(self.task, options)
        if instance is not None:
            too_big = {
                key: (size, self.limits[key])
                for key, size in self.episode_class.sizes_of(instance).items()
                if size > self.limits[key]
            }
            if too_big:
                raise ValueError(
                    f"instance too large for this env's padded spaces: {too_big} (size, limit)"
                )
        else:
            instance_seed = seed if seed is not None else int(self.np_random.integers(2**63))
            instance = self.task.generate(instance_seed, self.tier, self.difficulty, self.overrides)
        self.reference = (
            self.task.reference(
                instance, exact=self.exact_reference, time_limit=self.reference_time_limit
            )
            if self.reward_mode == "task"
            else None
        )
        self.episode = self.episode_class(instance, self.limits)
        self.done = False
        self._shaped = 0.0
        self._last_score = None
        return self._observe(), {"instance": instance, "reference": self.reference}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Extend the partial solution by ``action``; the last move's reward is the task's."""
        if self.episode is None or self.done:
            raise RuntimeError("the episode is over; call reset() first")
        problem = self._invalid(action)
        if problem:
            if self.invalid_action == "raise" or self.reward_mode == "objective":
                raise InvalidActionError(problem)
            self.done = True
            weights = self.reward_config
            penalty = weights.format_fail + weights.infeasible - self._shaped
            failure = {"reason": problem, "invalid_action": True, "feasible": False}
            return self._observe(), float(penalty), True, False, failure
        if self.shaping:  # the partial objective is read only when shaping pays for it
            before = self.episode.partial_objective()
            complete = self.episode.apply(int(action))
            reward = self._shaping_reward(before, self.episode.partial_objective())
        else:
            complete, reward = self.episode.apply(int(action)), 0.0
        self._shaped += reward
        info: dict[str, Any] = {"invalid_action": False}
        if complete and self.reward_mode == "objective":
            self.done = True
            objective = self.episode.partial_objective()
            info.update(objective=objective, feasible=True)
            return self._observe(), signed_objective(self.task, objective), True, False, info
        if complete:
            self.done = True
            answer = self.task.format_answer(self.episode.solution())
            score = self.task.score(
                self.episode.instance, answer, self.reference, self.reward_config
            )
            self._last_score = score
            reward = score.reward - (self._shaped - reward)
            info.update(stackable(score.to_dict()), answer=answer)
        return self._observe(), float(reward), complete, False, info

    def _invalid(self, action: Any) -> str:
        """Why ``action`` is not a legal move now ('' when it is)."""
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            return f"action must be an integer in 0..{self.action_count - 1}, got {action!r}"
        if not 0 <= int(action) < self.action_count:
            return f"action {int(action)} is outside 0..{self.action_count - 1}"
        if not self.episode.mask()[int(action)]:  # type: ignore[union-attr]
            return f"action {int(action)} is masked (illegal now); see observation['action_mask']"
        return ""

    def _shaping_reward(self, before: float, after: float) -> float:
        scale = (self.reference.objective if self.reference else None) or 1
        sign = 1.0 if self.task.sense == "max" else -1.0
        return self.shaping * sign * (after - before) / abs(scale)

    def _observe(self) -> dict[str, np.ndarray]:
        fresh = self.episode.observation()  # type: ignore[union-attr]
        observation = {key: np.array(value, copy=True) for key, value in fresh.items()}
        mask = np.zeros(self.action_count, np.int8)
        if not self.done:
            mask[:] = self.episode.mask()  # type: ignore[union-attr]
        observation["action_mask"] = mask
        return observation

    # --- pictures -----------------------------------------------------------------------------

    def render(self) -> np.ndarray | None:
        """``rgb_array``: the instance and the partial (or finished) solution as an image."""
        if self.render_mode != "rgb_array" or self.episode is None:
            return None
        from npgym.render import draw

        return draw(
            self.task, self.episode.instance, self.episode.solution(), partial=not self.done
        )
