"""TorchRL: npgym's batched structured episodes as a TorchRL ``EnvBase`` (torchrl 0.14).

    from npgym.integrations.torchrl import NPGymTorchRLEnv

    env = NPGymTorchRLEnv("npgym/TSP-easy", num_envs=64, reward_mode="objective")
    rollout = env.rollout(50, policy)  # TensorDict, batch (64, steps)

One env holds ``num_envs`` episodes of one task (its ``batch_size``), stepped together by the
task's compiled :class:`~npgym.vector.BatchedEpisode` (the engine of ``gym.make_vec(...,
mode="structured")``). TensorDicts go in and out: every observation key of the structured env
(padded to the tier's largest size; ``docs/structured.md`` lists them per task) under its own
name, ``action_mask`` as a bool tensor, ``reward`` ``(B, 1)``, and ``done``, ``terminated``,
``truncated`` ``(B, 1)`` (``truncated`` is always False: every episode ends by itself). The
action is a :class:`~torchrl.data.Categorical` whose mask follows ``action_mask`` at every
step, so ``env.rand_action()`` and ``check_env_specs`` draw legal moves.

Episodes are TorchRL's, not gymnasium's: nothing resets by itself. A finished episode stays
done (its actions are ignored, reward 0) until ``reset`` is called with a ``"_reset"`` mask
naming it (as ``rollout(..., break_when_any_done=False)`` does); the other episodes keep
playing. A finished episode's ``action_mask`` row marks action 0 only, so that masked
distributions stay defined; the env ignores that action.

Seeding follows the single structured env: ``set_seed(s)`` makes the next full reset play
``task.generate(s + i)`` in episode ``i`` and seeds that episode's own stream (numpy's
``default_rng(s + i)``), from which every later reset of episode ``i`` draws its next
instance, as ``gym.make("npgym/...", mode="structured")`` does after ``reset(seed=s + i)``.

Rewards as in the structured env: ``reward_mode="task"`` (default) pays ``task.score`` of the
built answer on the last step (a reference is solved per instance at reset);
``reward_mode="objective"`` pays the signed objective (minus the tour length) and solves
nothing. An illegal action ends that episode with the format-failure reward (``"penalty"``) or
raises :class:`~npgym.structured.InvalidActionError` (``invalid_action="raise"``, and always
with ``reward_mode="objective"``; then reset the whole batch).

Curriculum: ``curriculum=AdaptiveCurriculum([task], ...)`` draws every reset's instance from the
curriculum (at its task's frontier) and reports every finished episode's score to it, so the
frontier follows the pass rate of whatever policy TorchRL runs. Sizes are padded to the
curriculum's ``max_difficulty`` (set it to bound the padding); the curriculum's own seed fixes
its stream (``set_seed`` changes nothing there). :attr:`NPGymTorchRLEnv.instances`,
:attr:`NPGymTorchRLEnv.references` and :attr:`NPGymTorchRLEnv.items` hold each episode's
current instance, reference and curriculum item.

The single (unbatched) structured env needs no adapter: TorchRL's ``GymWrapper`` with
``categorical_action_encoding=True``, an int8-to-bool cast of ``action_mask`` and the
``ActionMask`` transform (:func:`wrap_single`; ``docs/torchrl.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

try:
    import torch
    from tensordict import TensorDict, TensorDictBase
    from torchrl.data import Binary, Bounded, Categorical, Composite, TensorSpec, Unbounded
    from torchrl.envs import EnvBase
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        "npgym.integrations.torchrl needs TorchRL: pip install 'npgym[torchrl]' (in a venv "
        f"without npgym[verl], whose tensordict pin conflicts): {error}"
    ) from error
from gymnasium import spaces

from npgym.config import TIER_DIFFICULTY
from npgym.curriculum import AdaptiveCurriculum, CurriculumItem
from npgym.env_options import check_reference_time_limit
from npgym.instance import Instance
from npgym.registry import get_task
from npgym.reward import RewardSpec, resolve_reward
from npgym.structured import (
    InvalidActionError,
    InvalidActionPolicy,
    RewardMode,
    check_reward_mode,
    episode_type,
    signed_objective,
)
from npgym.task import Task, generation_stream
from npgym.vector import MAX_NUM_ENVS, batch_type

ID_PREFIX = "npgym/"
"""How npgym's gymnasium ids start: ``npgym/<Task>-<tier>`` names a task and its tier."""
MAX_SEED = 2**63 - 1
"""Largest seed :meth:`NPGymTorchRLEnv.set_seed` takes (each episode's instance seed is
``seed + i``, drawn like the single env's ``np_random.integers(2**63)``)."""


def parse_task(task: str | Task[Any, Any], tier: str | None) -> tuple[Task[Any, Any], str | None]:
    """The task and tier of a task name (``tier`` as given) or of an id ``npgym/<Task>-<tier>``."""
    if isinstance(task, Task):
        return task, tier
    if task.startswith(ID_PREFIX):
        name, separator, id_tier = task[len(ID_PREFIX) :].rpartition("-")
        if not separator or id_tier not in TIER_DIFFICULTY:
            raise ValueError(
                f"{task!r} is not an npgym id {ID_PREFIX}<Task>-<tier> with a tier among "
                f"{sorted(TIER_DIFFICULTY)}"
            )
        return get_task(name), id_tier
    return get_task(task), tier


def box_spec(box: spaces.Space[Any], batch: int) -> TensorSpec:
    """The TorchRL spec of a structured env's ``Box`` key with the batch first: ``Bounded``
    by the box's bounds, in its dtype."""
    if not isinstance(box, spaces.Box):
        raise TypeError(f"structured observation keys are Box spaces, got {box!r}")
    dtype = torch.from_numpy(np.zeros((), box.dtype)).dtype
    shape = (batch, *box.shape)
    low = torch.as_tensor(np.broadcast_to(box.low, box.shape).copy()).to(dtype)
    high = torch.as_tensor(np.broadcast_to(box.high, box.shape).copy()).to(dtype)
    if dtype.is_floating_point and not (torch.isfinite(low).all() and torch.isfinite(high).all()):
        return Unbounded(shape=shape, dtype=dtype)
    return Bounded(low=low.expand(shape), high=high.expand(shape), shape=shape, dtype=dtype)


class NPGymTorchRLEnv(EnvBase):
    """``num_envs`` structured episodes of one task as a batched TorchRL env (module docstring).

    ``task`` is a task name (with ``tier``) or an id ``npgym/<Task>-<tier>``; the other options
    are the structured env's (``difficulty``, ``overrides``, ``reward``, ``exact_reference``,
    ``reference_time_limit``, ``invalid_action``, ``reward_mode``), plus ``curriculum``.
    """

    def __init__(
        self,
        task: str | Task[Any, Any],
        tier: str | None = "medium",
        num_envs: int = 1,
        *,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | None = None,
        reward: RewardSpec | Mapping[str, float] = None,
        exact_reference: bool = True,
        reference_time_limit: float | None = None,
        invalid_action: InvalidActionPolicy = "penalty",
        reward_mode: RewardMode = "task",
        curriculum: AdaptiveCurriculum | None = None,
    ) -> None:
        self.task, tier = parse_task(task, tier)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise ValueError(f"num_envs must be an integer, got {num_envs!r}")
        if not 1 <= num_envs <= MAX_NUM_ENVS:
            raise ValueError(f"num_envs must be in 1..{MAX_NUM_ENVS}, got {num_envs}")
        super().__init__(device="cpu", batch_size=torch.Size([int(num_envs)]))
        self.num_envs = int(num_envs)
        self.reward_mode = check_reward_mode(reward_mode)
        if invalid_action not in ("penalty", "raise"):
            raise ValueError(f"invalid_action must be 'penalty' or 'raise', got {invalid_action!r}")
        self.invalid_action = invalid_action
        self.curriculum = curriculum
        if curriculum is not None:
            if self.task.name not in curriculum.tasks:
                raise ValueError(
                    f"the curriculum plays {list(curriculum.tasks)}, not this env's task "
                    f"{self.task.name!r}"
                )
            if self.reward_mode != "task":
                raise ValueError("a curriculum needs reward_mode='task' (it reports scores)")
            if difficulty is not None or overrides:
                raise ValueError("a curriculum sets each instance's difficulty: give neither")
            tier, difficulty = None, curriculum.max_difficulty
        self.tier = None if difficulty is not None else tier
        self.difficulty = difficulty
        self.overrides = dict(overrides) if overrides else None
        self.config = self.task.config(self.tier, difficulty, self.overrides)
        self._stream_difficulty = (
            difficulty if difficulty is not None else TIER_DIFFICULTY[self.tier or "medium"]
        )
        stream = generation_stream(0, self._stream_difficulty)
        self._stream_key = stream[1] if isinstance(stream, list) else -1
        self.reward_config = resolve_reward(dict(reward) if isinstance(reward, Mapping) else reward)
        self.exact_reference = exact_reference
        self.reference_time_limit = check_reference_time_limit(reference_time_limit)
        self.episode_class = episode_type(self.task)
        self.batch_class = batch_type(self.task)
        self.limits = self.episode_class.limits_for(self.config)
        self.action_count = self.episode_class.action_count(self.limits)
        self.batch = self.batch_class(self.num_envs, self.limits)
        self.instances: list[Instance | None] = [None] * self.num_envs
        """Each episode's instance (``None`` for an objective-mode draw, which builds none)."""
        self.references: list[Any] = [None] * self.num_envs
        """Each episode's reference (``reward_mode="task"``)."""
        self.items: list[CurriculumItem | None] = [None] * self.num_envs
        """Each episode's curriculum item until its score is reported (with a curriculum)."""
        self._streams: list[np.random.Generator] | None = None
        self._seed: int | None = None
        self._done = np.ones(self.num_envs, np.bool_)
        self._needs_reset = True
        self._make_specs()

    # --- specs --------------------------------------------------------------------------------

    def _make_specs(self) -> None:
        batch = self.num_envs
        observation = {
            key: box_spec(space, batch)
            for key, space in self.episode_class.spaces(self.limits).items()
        }
        observation["action_mask"] = Binary(
            n=self.action_count, shape=(batch, self.action_count), dtype=torch.bool
        )
        self.observation_spec = Composite(observation, shape=(batch,))
        self.action_spec = Categorical(self.action_count, shape=(batch,), dtype=torch.int64)
        self.reward_spec = Unbounded(shape=(batch, 1), dtype=torch.float32)
        flag = Categorical(2, shape=(batch, 1), dtype=torch.bool)
        self.done_spec = Composite(
            done=flag.clone(), terminated=flag.clone(), truncated=flag.clone(), shape=(batch,)
        )

    # --- episodes -----------------------------------------------------------------------------

    def _set_seed(self, seed: int | None) -> None:
        """The next full reset plays ``task.generate(seed + i)`` in episode ``i`` (``None``:
        fresh entropy). A curriculum keeps its own seed."""
        if seed is not None and (isinstance(seed, bool) or not 0 <= int(seed) <= MAX_SEED):
            raise ValueError(f"seed must be an integer in 0..{MAX_SEED}, got {seed!r}")
        self._seed = None if seed is None else int(seed)
        self._streams = None

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        """New instances in every episode, or in those of the ``"_reset"`` mask."""
        mask = None if tensordict is None else tensordict.get("_reset", None)
        if mask is None or self._needs_reset or self._streams is None:
            slots = np.arange(self.num_envs)
        else:
            slots = np.flatnonzero(mask.reshape(self.num_envs).cpu().numpy())
        if self._streams is None:
            base = self._seed
            self._streams = [
                np.random.default_rng(None if base is None else base + index)
                for index in range(self.num_envs)
            ]
            first = [None if base is None else base + int(slot) for slot in slots]
            self._seed = None  # seeded once: later full resets draw from the streams
        else:
            first = [None] * slots.size
        seeds = [
            seed if seed is not None else int(self._streams[int(slot)].integers(2**63))
            for slot, seed in zip(slots, first, strict=True)
        ]
        self._load(slots, seeds)
        self._done[slots] = False
        self._needs_reset = False
        zeros = np.zeros(self.num_envs, np.bool_)
        return self._observe(self._done.copy(), self._done.copy(), zeros)

    def _load(self, slots: np.ndarray, seeds: list[int]) -> None:
        """A fresh instance in each slot: the curriculum's next item, else ``seeds``' draws."""
        if not slots.size:
            return
        if self.curriculum is not None:
            arrays = [self._curriculum_arrays(int(slot)) for slot in slots]
        elif (
            self.reward_mode == "objective"
            and max(seeds) < 2**63
            and self.batch.load_seeded(
                slots, np.array(seeds, np.int64), self._stream_key, self.config
            )
        ):
            for slot in slots:
                self.instances[int(slot)] = None
            return
        else:
            arrays = [
                self._seeded_arrays(int(slot), seed)
                for slot, seed in zip(slots, seeds, strict=True)
            ]
        self.batch.load(slots, arrays)

    def _seeded_arrays(self, slot: int, seed: int) -> dict[str, Any]:
        instance = self.task.generate(seed, self.tier, self.difficulty, self.overrides)
        return self._play(slot, instance)

    def _curriculum_arrays(self, slot: int) -> dict[str, Any]:
        assert self.curriculum is not None
        item = self.curriculum.next_for(self.task.name)
        too_big = {
            key: (size, self.limits[key])
            for key, size in self.episode_class.sizes_of(item.instance).items()
            if size > self.limits[key]
        }
        if too_big:
            raise ValueError(
                f"curriculum instance at difficulty {item.difficulty} is larger than the padding "
                f"of max_difficulty {self.curriculum.max_difficulty}: {too_big} (size, limit)"
            )
        self.items[slot] = item
        return self._play(slot, item.instance)

    def _play(self, slot: int, instance: Instance) -> dict[str, Any]:
        """Record ``instance`` (and its reference) as slot ``slot``'s; its arrays."""
        self.instances[slot] = instance
        if self.reward_mode == "task":
            self.references[slot] = self.task.reference(
                instance, exact=self.exact_reference, time_limit=self.reference_time_limit
            )
        return self.batch_class.arrays(instance)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """Every running episode (of the ``"_step"`` mask, when given) moves by its action."""
        if self._needs_reset:
            raise RuntimeError(
                "call reset() before step() (first, or after an illegal move raised)"
            )
        actions = tensordict.get("action").reshape(self.num_envs).cpu().numpy().astype(np.int64)
        active = ~self._done
        stepping = tensordict.get("_step", None)
        if stepping is not None:
            active &= stepping.reshape(self.num_envs).cpu().numpy()
        finished, illegal = self.batch.step(actions, active)
        rewards = np.zeros(self.num_envs, np.float64)
        if illegal.any():
            slot = int(np.flatnonzero(illegal)[0])
            if self.invalid_action == "raise" or self.reward_mode == "objective":
                self._needs_reset = True  # the other episodes have moved: reset them all
                raise InvalidActionError(
                    f"env {slot}: action {int(actions[slot])} is outside "
                    f"0..{self.action_count - 1} or masked (illegal now)"
                )
            penalty = self.reward_config.format_fail + self.reward_config.infeasible
            rewards[illegal] = penalty
            for punished in np.flatnonzero(illegal):
                self._report(int(punished), penalty)
        if finished.any():
            rewards[finished] = self._rewards(np.flatnonzero(finished))
        ended = finished | illegal
        self._done |= ended
        out = self._observe(self._done.copy(), self._done.copy(), np.zeros_like(self._done))
        out.set("reward", torch.from_numpy(rewards.astype(np.float32)).unsqueeze(-1))
        return out

    def _rewards(self, slots: np.ndarray) -> np.ndarray:
        """The last step's reward of each finished slot (reported to the curriculum)."""
        if self.reward_mode == "objective":
            objectives = self.batch.objectives()[slots]
            return np.array([signed_objective(self.task, value) for value in objectives])
        rewards = []
        for slot in slots:
            answer = self.task.format_answer(self.batch.solution(int(slot)))
            score = self.task.score(
                self.instances[slot], answer, self.references[slot], self.reward_config
            )
            self._report(int(slot), score)
            rewards.append(score.reward)
        return np.array(rewards, np.float64)

    def _report(self, slot: int, score: Any) -> None:
        item = self.items[slot]
        if self.curriculum is not None and item is not None:
            self.curriculum.report(item, score)
            self.items[slot] = None  # one report per episode

    def _observe(
        self, done: np.ndarray, terminated: np.ndarray, truncated: np.ndarray
    ) -> TensorDictBase:
        """The observation (copies of the batch's buffers) and flags; the action spec's mask
        follows ``action_mask`` (a finished row marks action 0 only)."""
        fields = {
            key: torch.from_numpy(value.copy())
            for key, value in self.batch.observation().items()
            if key != "action_mask"
        }
        legal = torch.from_numpy(self.batch.observation()["action_mask"] != 0)
        legal[~legal.any(-1), 0] = True
        self.action_spec.update_mask(legal.clone())
        fields["action_mask"] = legal
        flags = {
            "done": done,
            "terminated": terminated,
            "truncated": truncated,
        }
        for key, value in flags.items():
            fields[key] = torch.from_numpy(value).unsqueeze(-1)
        return TensorDict(fields, batch_size=self.batch_size, device=self.device)


def wrap_single(env: Any) -> Any:
    """TorchRL's own ``GymWrapper`` around one structured env (``gym.make(..., mode=
    "structured")``): categorical actions, ``action_mask`` cast to bool and the ``ActionMask``
    transform, so random and masked policies pick legal moves. Returns a ``TransformedEnv``."""
    from torchrl.envs import GymWrapper, TransformedEnv
    from torchrl.envs.transforms import ActionMask, DTypeCastTransform

    base = GymWrapper(env, categorical_action_encoding=True)
    wrapped = TransformedEnv(
        base, DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"])
    )
    wrapped.append_transform(ActionMask())
    return wrapped
