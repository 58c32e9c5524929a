"""npgym in SkyRL: every npgym env id as a ``skyrl-gym`` 0.4 ``BaseTextEnv``.

Importing this module registers every npgym gymnasium id (``npgym/<Task>-<tier>``, the
families, and ``npgym/Curriculum``) with ``skyrl_gym``, so SkyRL's generator builds them as it
builds its own environments::

    import npgym.integrations.skyrl  # registers the ids
    env = skyrl_gym.make("npgym/TSP-hard", env_config={}, extras={"seed": 7, "max_turns": 3})
    prompt, _ = env.init([])         # npgym's prompt for the row's instance
    out = env.step(completion)       # out["reward"], out["done"], out["observations"]

**The environment owns its dataset.** SkyRL trains on a dataset of rows and hands each row's
other columns to the env as ``extras``; here the row's prompt is a placeholder, replaced by
npgym's prompt in ``init`` (the row's system messages are kept). The row only names its
instance, so a dataset is a list of placeholder rows (:func:`placeholder_rows`):

- ``npgym/<Task>-<tier>``: ``extras["seed"]`` (a non-negative integer) picks the instance,
  the one ``gym.make(id).reset(seed=seed)`` plays (``task.generate(seed, tier)``);
- ``npgym/Curriculum``: the instance is drawn from an :class:`AdaptiveCurriculum` at its
  frontier, and every episode's final score is reported to it. The curriculum is shared by
  every env of the process built with the same options (``env_config``;
  :func:`shared_curriculum` returns it, to log its frontier). A row's ``seed`` names the row: the
  samples of one row at one ``global_step`` (SkyRL's generator adds it to every row's extras)
  share one draw, so a GRPO group plays one instance, and the next step draws anew.

The instance of each (row, step) is kept for the latest :data:`MAX_DRAWS` rows of the process,
so a group's samples also share its reference, solved once.

**Episodes.** One answer by default; with SkyRL's ``generator.max_turns`` above 1 (it arrives as
``extras["max_turns"]``) an episode is npgym's multi-turn repair (:mod:`npgym.multiturn`): after
an infeasible or sub-optimal answer the verifier's feedback comes back as a user message, until
an optimal answer or the last attempt. The reward is sparse: 0 on every turn but the last, and
the episode's reward under ``reward_policy`` (``best`` by default) on the last, so SkyRL's
paths that sum per-turn rewards and the one that keeps only the last agree. Every step's
``metadata`` holds the attempt's score; :meth:`NPGymTextEnv.get_metrics` reports the episode's.

``env_config`` (``environment.skyrl_gym.<id>`` in SkyRL's config) takes npgym's env options:
``reward`` (a preset name or weights), ``exact_reference``, ``reference_time_limit``,
``reward_policy``, ``discount``; for a task id also ``difficulty`` and ``overrides``; for the
curriculum the :class:`AdaptiveCurriculum` options (``tasks``, ``target``, ``seed``, ``start``,
``step``, ``window``, ``pass_ratio``, ...). Any other key is refused by name.

SkyRL runs its envs' ``init`` and ``step`` in a thread pool: the draws and the curriculum's
updates are taken under one lock; scoring and reference proofs run outside it.
"""

from __future__ import annotations

import json
import numbers
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

try:
    import skyrl_gym
    from omegaconf import DictConfig, OmegaConf
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
except ImportError as error:  # pragma: no cover - the message is what matters
    raise ImportError(
        f"npgym.integrations.skyrl needs skyrl-gym: pip install 'npgym[skyrl]' ({error})"
    ) from error

import npgym.integrations.curriculum as curricula
from npgym.curriculum import AdaptiveCurriculum, CurriculumItem
from npgym.env import NPGymEnv
from npgym.instance import Instance
from npgym.registry import CURRICULUM_ENV_ID, ENV_NAMESPACE, env_id
from npgym.results import Score

MAX_DRAWS = 4096
"""Rows (per process) whose instance is remembered: the samples of one row share its draw as
long as they start within the latest this many rows' first samples."""
SEED_FIELD = "seed"
"""The ``extras`` field naming a row's instance (a task id) or the row (the curriculum)."""
STEP_FIELD = "global_step"
"""The ``extras`` field where SkyRL's generator puts the training step."""
ENV_OPTIONS = ("reward", "exact_reference", "reference_time_limit", "reward_policy", "discount")
"""``env_config`` keys of every npgym env here (:class:`npgym.env.NPGymEnv`'s options)."""
TASK_OPTIONS = (*ENV_OPTIONS, "difficulty", "overrides")
"""``env_config`` keys of a task id."""
CURRICULUM_OPTIONS = (
    "tasks",
    "target",
    "seed",
    "start",
    "step",
    "window",
    "pass_ratio",
    "min_difficulty",
    "max_difficulty",
    "memory",
    "exclude_benchmark",
)
"""``env_config`` keys of ``npgym/Curriculum`` that configure its :class:`AdaptiveCurriculum`
(besides :data:`ENV_OPTIONS`)."""

_LOCK = threading.Lock()
_DRAWS: OrderedDict[Hashable, tuple[Instance, CurriculumItem | None]] = OrderedDict()


def _draw(
    key: Hashable, draw: Callable[[], tuple[Instance, CurriculumItem | None]]
) -> tuple[Instance, CurriculumItem | None]:
    """The draw remembered under ``key``, or a new one from ``draw`` (the caller holds the lock);
    only the latest :data:`MAX_DRAWS` keys are remembered."""
    if key in _DRAWS:
        _DRAWS.move_to_end(key)
        return _DRAWS[key]
    _DRAWS[key] = drawn = draw()
    while len(_DRAWS) > MAX_DRAWS:
        _DRAWS.popitem(last=False)
    return drawn


def _plain(config: Any, allowed: Sequence[str], env_id: str) -> dict[str, Any]:
    """``env_config`` (an omegaconf ``DictConfig``, a mapping or ``None``) as a plain dict of
    allowed keys; any other key is refused by name."""
    if config is None:
        return {}
    if isinstance(config, DictConfig):
        config = OmegaConf.to_container(config, resolve=True)
    if not isinstance(config, Mapping):
        raise TypeError(f"{env_id}: env_config must be a mapping, got {type(config).__name__}")
    unknown = sorted(set(config) - set(allowed))
    if unknown:
        raise ValueError(
            f"{env_id}: unknown env_config option(s) {', '.join(map(str, unknown))}; "
            f"choose from {', '.join(allowed)}"
        )
    return dict(config)


def _row_number(extras: Mapping[str, Any], field: str, env_id: str) -> int:
    """The non-negative integer ``extras[field]``; else a ``ValueError`` naming the field."""
    value = extras.get(field)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(
            f"{env_id}: each row needs a non-negative integer {field!r} in its extras "
            f"(see npgym.integrations.skyrl.placeholder_rows), got {value!r}"
        )
    return int(value)


def shared_curriculum(**options: Any) -> AdaptiveCurriculum:
    """The process's curriculum for these :data:`CURRICULUM_OPTIONS` (made on first use): the
    one that every ``npgym/Curriculum`` env built with the same options draws from and reports
    to (:func:`npgym.integrations.curriculum.shared_curriculum`). ``tasks`` defaults to every
    task."""
    unknown = sorted(set(options) - set(CURRICULUM_OPTIONS))
    if unknown:
        raise ValueError(f"unknown curriculum option(s) {', '.join(unknown)}")
    return curricula.shared_curriculum(**options)


def placeholder_rows(env_class: str, count: int, first: int = 0) -> list[dict[str, Any]]:
    """``count`` rows of a SkyRL dataset for ``env_class`` (an npgym id): a placeholder prompt
    (``init`` replaces it), the env class, and ``seed`` ``first``, ``first + 1``, ...: each row's
    instance (a task id) or the row's name (the curriculum). Write them to parquet for
    SkyRL's trainer (``data.train_data``)."""
    if env_class not in skyrl_gym.registry:
        raise ValueError(f"{env_class!r} is not a registered skyrl_gym id")
    prompt = [{"role": "user", "content": f"{env_class}: the environment gives the problem."}]
    return [
        {"prompt": prompt, "env_class": env_class, SEED_FIELD: seed}
        for seed in range(first, first + count)
    ]


class _NPGymTextEnv(BaseTextEnv):
    """What both envs share: ``init`` starts the row's episode on the instance ``_start``
    picks, ``step`` scores answers with npgym's repair session."""

    env_id: str

    def __init__(self, extras: Mapping[str, Any] | None, options: dict[str, Any]) -> None:
        super().__init__()
        self.extras = dict(extras or {})
        turns = self.extras.get("max_turns", 1)
        if isinstance(turns, bool) or not isinstance(turns, numbers.Integral) or turns < 1:
            raise ValueError(f"{self.env_id}: extras['max_turns'] must be a positive integer")
        self.max_turns = int(turns)
        self.env_options = {**options, "max_attempts": self.max_turns}
        self.env: NPGymEnv | None = None
        self.item: CurriculumItem | None = None
        self.score: Score | None = None
        self.episode_reward = 0.0

    def _start(self) -> tuple[NPGymEnv, Instance]:
        """The env and instance of this row's episode."""
        raise NotImplementedError

    def init(self, prompt: Any) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """Start the row's episode: the row's system messages, then npgym's prompt."""
        self.env, instance = self._start()
        text, _ = self.env.reset(options={"instance": instance})
        kept = [
            dict(message)
            for message in (() if prompt is None else prompt)  # a list, or an array from parquet
            if isinstance(message, Mapping) and message.get("role") == "system"
        ]
        return [*kept, {"role": "user", "content": text}], self._item_metadata()

    def step(self, action: str) -> Any:
        """Score ``action``; the episode goes on (with the verifier's feedback) or ends."""
        if self.env is None or self.env.session is None:
            raise RuntimeError(f"{self.env_id}: call init() before step()")
        if self.env.session.done:
            raise RuntimeError(f"{self.env_id}: the episode is over")
        self.turns += 1
        feedback, _, terminated, truncated, info = self.env.step(action)
        done = bool(terminated or truncated)
        self.score = self.env.session.scores[-1]
        if done:
            self.episode_reward = self.env.session.reward()
            self._report(self.score)
        return BaseTextEnvStepOutput(
            observations=[] if done else [{"role": "user", "content": feedback}],
            reward=self.episode_reward if done else 0.0,
            done=done,
            metadata={**info, **self._item_metadata()},
        )

    def _report(self, score: Score) -> None:
        """What the episode's final score is reported to: nothing here (the curriculum env
        reports it)."""

    def _item_metadata(self) -> dict[str, Any]:
        return {} if self.item is None else self.item.info()

    def get_metrics(self) -> dict[str, Any]:
        """The episode's final score, as numbers (SkyRL averages them over episodes)."""
        if self.score is None:
            return {}
        metrics = {
            "reward": self.episode_reward,
            "format_ok": float(self.score.format_ok),
            "feasible": float(self.score.feasible),
            "optimality": self.score.optimality,
            "attempts": float(self.turns),
        }
        if self.item is not None:
            metrics["difficulty"] = self.item.difficulty
        return metrics


class NPGymTextEnv(_NPGymTextEnv):
    """One npgym task at one tier (``npgym/<Task>-<tier>``) as a SkyRL text env: the row's
    ``seed`` picks the instance, ``task.generate(seed, tier)``, shared by the row's samples."""

    def __init__(
        self,
        env_config: Any = None,
        extras: Mapping[str, Any] | None = None,
        *,
        task: str,
        tier: str,
    ) -> None:
        self.env_id = env_id(task, tier)
        options = _plain(env_config, TASK_OPTIONS, self.env_id)
        super().__init__(extras, options)
        self.seed = _row_number(self.extras, SEED_FIELD, self.env_id)
        self.task_env = NPGymEnv(task, tier, **self.env_options)  # a bad option fails at make()

    def _start(self) -> tuple[NPGymEnv, Instance]:
        env = self.task_env
        generation = {"difficulty": env.difficulty, "overrides": env.overrides}
        key = (self.env_id, json.dumps(generation, sort_keys=True, default=str), self.seed)
        with _LOCK:
            instance, _ = _draw(
                key,
                lambda: (
                    env.task.generate(self.seed, env.tier, env.difficulty, env.overrides),
                    None,
                ),
            )
        return env, instance


class NPGymCurriculumTextEnv(_NPGymTextEnv):
    """``npgym/Curriculum`` as a SkyRL text env: the instance is drawn from the process's
    shared curriculum (:func:`shared_curriculum` of ``env_config``'s curriculum options) at its
    frontier, once per row and training step, and the episode's final score is reported to
    it. A row's ``global_step`` may be ``None`` (then its samples share one draw for as long as
    it is remembered, :data:`MAX_DRAWS`), never missing."""

    env_id = CURRICULUM_ENV_ID

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        options = _plain(env_config, (*ENV_OPTIONS, *CURRICULUM_OPTIONS), self.env_id)
        curriculum_options = {k: options.pop(k) for k in CURRICULUM_OPTIONS if k in options}
        super().__init__(extras, options)
        self.curriculum = shared_curriculum(**curriculum_options)
        self.row = _row_number(self.extras, SEED_FIELD, self.env_id)
        if STEP_FIELD not in self.extras:
            raise ValueError(
                f"{self.env_id}: each row needs {STEP_FIELD!r} in its extras (SkyRL's generator "
                "adds it): the samples of one row at one step share a draw"
            )
        step = self.extras[STEP_FIELD]
        if step is not None:
            self.step_number: int | None = _row_number(self.extras, STEP_FIELD, self.env_id)
        else:
            self.step_number = None
        NPGymEnv(self.curriculum.tasks[0], **self.env_options)  # a bad option fails at make()

    def _start(self) -> tuple[NPGymEnv, Instance]:
        key = (self.env_id, id(self.curriculum), self.row, self.step_number)
        with _LOCK:
            instance, self.item = _draw(key, self._next)
        assert self.item is not None
        return NPGymEnv(self.item.task, **self.env_options), instance

    def _next(self) -> tuple[Instance, CurriculumItem | None]:
        item = self.curriculum.next()
        return item.instance, item

    def _report(self, score: Score) -> None:
        assert self.item is not None
        with _LOCK:
            self.curriculum.report(self.item, score)


def register() -> list[str]:
    """Register every npgym gymnasium id not yet known to ``skyrl_gym`` (done on import; call
    it again after registering more tasks); returns the ids it registered."""
    import gymnasium

    added = []
    for identifier, spec in gymnasium.registry.items():
        if not identifier.startswith(f"{ENV_NAMESPACE}/") or identifier in skyrl_gym.registry:
            continue
        if identifier == CURRICULUM_ENV_ID:
            skyrl_gym.register(id=identifier, entry_point=f"{__name__}:NPGymCurriculumTextEnv")
        else:
            kwargs = {"task": spec.kwargs["task"], "tier": spec.kwargs["tier"]}
            skyrl_gym.register(id=identifier, entry_point=f"{__name__}:NPGymTextEnv", kwargs=kwargs)
        added.append(identifier)
    return added


register()
