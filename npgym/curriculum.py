"""An adaptive curriculum: keep every task in the band where the learner passes some of the time.

Each task has one *frontier* difficulty on the continuous knob. :meth:`AdaptiveCurriculum.next`
issues a fresh instance at its task's frontier; :meth:`AdaptiveCurriculum.report` records whether
the learner passed it. The update rule is automatic domain randomisation's boundary rule
(widen where performance at the boundary is high, narrow where it is low) applied to a single
difficulty, with pass-rate banding as the criterion:

- reports are collected per task, only for items issued at the task's current frontier (items
  issued before the frontier last moved are still accepted but do not count);
- once ``window`` such reports have arrived, their pass rate ``p`` is compared with the target
  band ``(low, high)``: ``p > high`` moves the frontier up by ``step``, ``p < low`` moves it down
  by ``step``, anything in the band leaves it; then the window starts afresh;
- the frontier stays within ``[min_difficulty, max_difficulty]``; if a difficulty runs out of
  distinct instances (tiny tiers near 0), the frontier moves up by ``step`` and never returns
  below that floor.

A report *passes* when the answer is feasible and its clipped optimality ratio is at least
``pass_ratio``. A report may be a :class:`~npgym.results.Score` or a reward float; a float is read
with the default (``np-engine``) reward weights: it passes when it is at least
``format_ok + optimality_weight * pass_ratio``. Pass a ``Score`` when training with other weights.

Tasks are drawn uniformly with a seeded generator. Instances never repeat (their fingerprints are
remembered) and never come from NP-Bench (its fingerprints are excluded); their seeds come from
``derive_seed("adaptive-curriculum", seed, task, counter)``, so a curriculum replays exactly
from its state: :meth:`AdaptiveCurriculum.state_dict` and :meth:`AdaptiveCurriculum.from_state`.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from npgym.config import MAX_DIFFICULTY
from npgym.instance import Instance
from npgym.registry import get_task
from npgym.results import Score
from npgym.reward import DEFAULT_REWARD
from npgym.seeding import derive_seed

STATE_VERSION = 1
"""Version of :meth:`AdaptiveCurriculum.state_dict`'s layout; another version is refused."""
MAX_REDRAWS = 1000
"""Fresh seeds tried for one item before the curriculum says the frontier's instances ran out."""


class CurriculumError(ValueError):
    """A report for an item this curriculum did not issue, or a state it cannot resume."""


@dataclass(frozen=True, slots=True)
class CurriculumItem:
    """One issued problem: its task, instance, the difficulty it was drawn at and a unique key."""

    task: str
    instance: Instance
    difficulty: float
    key: str

    def info(self) -> dict[str, Any]:
        """What an env's ``info`` (or a trainer's metadata) says of the item: its task, its
        difficulty and its key, under ``curriculum_key``."""
        return {"task": self.task, "difficulty": self.difficulty, "curriculum_key": self.key}


@dataclass(slots=True)
class _TaskState:
    """The frontier of one task and the reports gathered at it."""

    difficulty: float
    issued: int = 0
    level: int = 0
    """How many times the frontier has moved: reports of items from older levels do not count."""
    window: list[bool] | None = None
    passes: int = 0
    reports: int = 0
    floor: float = 0.0
    """The lowest difficulty the frontier may return to: raised when a difficulty ran out of
    distinct instances (a tier that small is no place to learn anyway)."""


class AdaptiveCurriculum:
    """Per-task difficulty that follows the learner's pass rate (see the module docstring).

    >>> cur = AdaptiveCurriculum(["TSP", "GraphColoring"], target=(0.3, 0.7), seed=0)
    >>> item = cur.next()  # .task, .instance, .difficulty, .key
    >>> cur.report(item, 2.0)  # a Score or a reward float
    """

    def __init__(
        self,
        tasks: Sequence[str],
        target: tuple[float, float] = (0.3, 0.7),
        seed: int = 0,
        *,
        start: float = 0.2,
        step: float = 0.05,
        window: int = 16,
        pass_ratio: float = 1.0,
        min_difficulty: float = 0.0,
        max_difficulty: float = MAX_DIFFICULTY,
        memory: int = 1 << 16,
        exclude_benchmark: bool = True,
    ) -> None:
        names = [get_task(name).name for name in tasks]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"give one or more distinct tasks, got {list(tasks)!r}")
        low, high = (float(bound) for bound in target)
        if not 0.0 <= low < high <= 1.0:
            raise ValueError(f"target must be a pass-rate band 0 <= low < high <= 1, got {target}")
        if not min_difficulty <= start <= max_difficulty:
            raise ValueError(
                f"start {start} must lie in [{min_difficulty}, {max_difficulty}] (the knob's range)"
            )
        if not (step > 0 and window >= 1 and 0.0 < pass_ratio <= 1.0 and memory >= 1):
            raise ValueError("step must be > 0, window >= 1, pass_ratio in (0, 1], memory >= 1")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        self.tasks = tuple(names)
        self.target = (low, high)
        self.seed = seed
        self.step = float(step)
        self.window = int(window)
        self.pass_ratio = float(pass_ratio)
        self.min_difficulty = float(min_difficulty)
        self.max_difficulty = float(max_difficulty)
        self.memory = int(memory)
        self.exclude_benchmark = exclude_benchmark
        self._rng = np.random.default_rng(derive_seed("adaptive-curriculum-tasks", seed))
        self._states = {name: _TaskState(float(start)) for name in self.tasks}
        self._seen: set[str] = set()
        self._benchmark: dict[str, frozenset[str]] = {}
        self._open: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self.history: deque[tuple[str, float, bool]] = deque(maxlen=memory)
        """The latest reports as ``(task, frontier difficulty, passed)``, for logging."""

    # --- issuing --------------------------------------------------------------------------------

    def difficulty(self, task: str) -> float:
        """The current frontier difficulty of ``task``."""
        return self._states[get_task(task).name].difficulty

    def next(self) -> CurriculumItem:
        """A fresh instance of a task drawn uniformly, at that task's frontier difficulty."""
        name = self.tasks[int(self._rng.integers(len(self.tasks)))]
        return self.next_for(name)

    def next_for(self, task: str) -> CurriculumItem:
        """A fresh instance of ``task`` at its frontier difficulty."""
        name = get_task(task).name
        state = self._states[name]
        excluded = self._benchmark_fingerprints(name)
        while True:
            item = self._draw(name, state, excluded)
            if item is not None:
                return item
            if state.difficulty >= self.max_difficulty:
                raise CurriculumError(
                    f"{name} at difficulty {state.difficulty} gave no new instance in "
                    f"{MAX_REDRAWS} draws"
                )
            # This difficulty's instances ran out: move up and never come back below.
            state.floor = round(min(state.difficulty + self.step, self.max_difficulty), 9)
            state.difficulty = state.floor
            state.level += 1
            state.window = None

    def _draw(
        self, name: str, state: _TaskState, excluded: frozenset[str]
    ) -> CurriculumItem | None:
        """A fresh instance at the frontier, or ``None`` after :data:`MAX_REDRAWS` repeats."""
        task_object = get_task(name)
        for _ in range(MAX_REDRAWS):
            counter = state.issued
            state.issued += 1
            seed = derive_seed("adaptive-curriculum", self.seed, name, counter)
            instance = task_object.generate(seed, difficulty=state.difficulty)
            fingerprint = instance.fingerprint()
            if fingerprint in self._seen or fingerprint in excluded:
                continue
            self._seen.add(fingerprint)
            key = f"{name}/{counter}"
            self._open[key] = (name, state.level)
            while len(self._open) > self.memory:
                self._open.popitem(last=False)
            return CurriculumItem(name, instance, state.difficulty, key)
        return None

    def upcoming(self, count: int) -> list[tuple[str, int, float]]:
        """The ``(task, seed, difficulty)`` of the next ``count`` draws of :meth:`next` if no
        report moves a frontier and no instance repeats one seen before: a guess that lets a
        :class:`~npgym.reference_pool.ReferencePool` compute references ahead. Changes nothing."""
        rng = np.random.default_rng()
        rng.bit_generator.state = self._rng.bit_generator.state
        issued = {name: state.issued for name, state in self._states.items()}
        draws = []
        for _ in range(count):
            name = self.tasks[int(rng.integers(len(self.tasks)))]
            seed = derive_seed("adaptive-curriculum", self.seed, name, issued[name])
            issued[name] += 1
            draws.append((name, seed, self._states[name].difficulty))
        return draws

    def issued(self, fingerprint: str) -> bool:
        """Whether this curriculum has issued an instance with ``fingerprint`` (read-only: what
        :class:`npgym.selfplay.SelfPlayPool` refuses as generated)."""
        return fingerprint in self._seen

    def _benchmark_fingerprints(self, task: str) -> frozenset[str]:
        if not self.exclude_benchmark:
            return frozenset()
        if task not in self._benchmark:
            from npgym.datasets import benchmark_fingerprints

            self._benchmark[task] = benchmark_fingerprints([task])
        return self._benchmark[task]

    # --- learning -------------------------------------------------------------------------------

    def passed(self, score: Score | float) -> bool:
        """Whether a report counts as a pass (feasible and ratio >= ``pass_ratio``)."""
        if isinstance(score, Score):
            return score.feasible and score.optimality >= self.pass_ratio
        if isinstance(score, bool) or not isinstance(score, (int, float, np.floating)):
            raise TypeError(f"report a Score or a reward float, got {type(score).__name__}")
        threshold = DEFAULT_REWARD.format_ok + DEFAULT_REWARD.optimality_weight * self.pass_ratio
        return float(score) >= threshold - 1e-9

    def accepts(self, key: object) -> bool:
        """Whether :meth:`report` takes ``key``: an item this curriculum issued and still
        remembers (the latest ``memory`` items)."""
        return isinstance(key, str) and key in self._open

    def report(self, item: CurriculumItem | str, score: Score | float) -> bool:
        """Record the learner's result on an issued item; returns whether it passed.

        An item may be reported more than once (a GRPO group's samples each count). Reports of
        items issued at an older frontier are accepted but do not move the frontier.
        """
        key = item.key if isinstance(item, CurriculumItem) else item
        if not self.accepts(key):
            raise CurriculumError(
                f"item {key!r} was not issued by this curriculum (or is older than its memory of "
                f"{self.memory} items)"
            )
        name, level = self._open[key]
        state = self._states[name]
        passed = self.passed(score)
        state.reports += 1
        state.passes += passed
        self.history.append((name, state.difficulty, passed))
        if level == state.level:
            window = state.window if state.window is not None else []
            window.append(passed)
            state.window = window
            if len(window) >= self.window:
                self._move(state, sum(window) / len(window))
        return passed

    def _move(self, state: _TaskState, pass_rate: float) -> None:
        low, high = self.target
        if pass_rate > high:
            moved = min(state.difficulty + self.step, self.max_difficulty)
        elif pass_rate < low:
            moved = max(state.difficulty - self.step, self.min_difficulty, state.floor)
        else:
            moved = state.difficulty
        state.window = None
        if moved != state.difficulty:
            state.difficulty = round(moved, 9)
            state.level += 1

    def stats(self) -> dict[str, dict[str, float]]:
        """Per task: frontier difficulty, issued items, reports and overall pass rate."""
        return {
            name: {
                "difficulty": state.difficulty,
                "issued": state.issued,
                "reports": state.reports,
                "pass_rate": state.passes / state.reports if state.reports else 0.0,
            }
            for name, state in self._states.items()
        }

    # --- resuming -------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue identically (JSON-serialisable)."""
        return {
            "version": STATE_VERSION,
            "tasks": list(self.tasks),
            "options": {
                "target": list(self.target),
                "seed": self.seed,
                "step": self.step,
                "window": self.window,
                "pass_ratio": self.pass_ratio,
                "min_difficulty": self.min_difficulty,
                "max_difficulty": self.max_difficulty,
                "memory": self.memory,
                "exclude_benchmark": self.exclude_benchmark,
            },
            "rng": self._rng.bit_generator.state,
            "frontiers": {
                name: {
                    "difficulty": state.difficulty,
                    "issued": state.issued,
                    "level": state.level,
                    "floor": state.floor,
                    "window": state.window,
                    "passes": state.passes,
                    "reports": state.reports,
                }
                for name, state in self._states.items()
            },
            "seen": sorted(self._seen),
            "open": [[key, name, level] for key, (name, level) in self._open.items()],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> AdaptiveCurriculum:
        """A curriculum that continues exactly where :meth:`state_dict` was taken."""
        version = state.get("version") if isinstance(state, dict) else None
        if version != STATE_VERSION:
            raise CurriculumError(
                f"curriculum state version {version!r} is not {STATE_VERSION}: it was written by "
                "another npgym version and cannot be resumed faithfully"
            )
        try:
            options = dict(state["options"])
            target = tuple(options.pop("target"))
            curriculum = cls(state["tasks"], target=target, **options)
            curriculum._rng.bit_generator.state = state["rng"]
            for name, frontier in state["frontiers"].items():
                task_state = curriculum._states[name]
                task_state.difficulty = float(frontier["difficulty"])
                task_state.issued = int(frontier["issued"])
                task_state.level = int(frontier["level"])
                task_state.floor = float(frontier["floor"])
                task_state.window = frontier["window"]
                task_state.passes = int(frontier["passes"])
                task_state.reports = int(frontier["reports"])
            curriculum._seen = set(state["seen"])
            curriculum._open = OrderedDict(
                (key, (name, int(level))) for key, name, level in state["open"]
            )
        except (KeyError, TypeError, ValueError) as error:
            raise CurriculumError(f"malformed curriculum state: {error}") from error
        return curriculum


class CurriculumEnv(gym.Env[str, str]):
    """A text env whose ``reset`` draws from an :class:`AdaptiveCurriculum` and whose episode end
    reports to it: ``gym.make("npgym/Curriculum", tasks=["TSP", "Knapsack"])``.

    Episodes are the tasks' own (:class:`npgym.env.NPGymEnv`, including multi-turn repair with
    ``max_attempts``); the final attempt's score is reported. ``info`` adds ``task``,
    ``difficulty`` and ``curriculum_key``. Other keyword options go to the task envs.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 (gymnasium API)

    def __init__(
        self,
        tasks: Sequence[str] | None = None,
        target: tuple[float, float] = (0.3, 0.7),
        seed: int = 0,
        curriculum: AdaptiveCurriculum | None = None,
        curriculum_options: dict[str, Any] | None = None,
        render_mode: str | None = None,
        **env_options: Any,
    ) -> None:
        from npgym.env import MAX_TEXT_CHARS, TEXT_CHARSET
        from npgym.registry import list_tasks

        self.curriculum = curriculum or AdaptiveCurriculum(
            list(tasks or list_tasks()), target=target, seed=seed, **(curriculum_options or {})
        )
        self.env_options = env_options
        self.render_mode = render_mode
        self.observation_space = spaces.Text(MAX_TEXT_CHARS, min_length=0, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(MAX_TEXT_CHARS, min_length=0, charset=TEXT_CHARSET)
        self._envs: dict[str, gym.Env[str, str]] = {}
        self._item: CurriculumItem | None = None
        self._observation = ""

    def _env(self, task: str) -> gym.Env[str, str]:
        from npgym.env import NPGymEnv

        if task not in self._envs:
            self._envs[task] = NPGymEnv(task, render_mode=self.render_mode, **self.env_options)
        return self._envs[task]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Draw the next curriculum item and start its episode (``seed`` seeds nothing else:
        the curriculum's own seed fixes the stream)."""
        super().reset(seed=seed)
        self._item = self.curriculum.next()
        observation, info = self._env(self._item.task).reset(
            options={"instance": self._item.instance}
        )
        self._observation = observation
        return observation, {**info, **self._item_info()}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Score the answer; at the episode's end, report its final score to the curriculum."""
        if self._item is None:
            raise RuntimeError("call reset() first")
        observation, reward, terminated, truncated, info = self._env(self._item.task).step(action)
        self._observation = observation
        if terminated or truncated:
            score_fields = {name: info[name] for name in Score.__dataclass_fields__}
            info["passed"] = self.curriculum.report(self._item, Score(**score_fields))
        return observation, float(reward), terminated, truncated, {**info, **self._item_info()}

    def _item_info(self) -> dict[str, Any]:
        assert self._item is not None
        return self._item.info()

    def render(self) -> str | None:
        """The current observation text (``render_mode="ansi"``)."""
        return self._observation if self.render_mode == "ansi" else None
