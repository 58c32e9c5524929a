"""Batched classic-RL mode: ``gym.make_vec("npgym/TSP-hard", num_envs=B,
vectorization_mode="vector_entry_point", mode="structured")``.

A numpy-batched :class:`gymnasium.vector.VectorEnv` over B structured episodes of one task: every
observation key, the ``action_mask``, the rewards, terminations and truncations are arrays with
the batch first, and a step moves all B episodes in one compiled (numba) call, with no Python
loop over the envs. A task offers it by declaring a :class:`BatchedEpisode` as its ``vector``
capability (:mod:`npgym.capabilities`); a task without one is refused by name.

Same env, same numbers: env ``i`` of a batch behaves exactly as the single
:class:`~npgym.structured.StructuredEnv` with the same options inside gymnasium's
``SyncVectorEnv``. ``reset(seed=s)`` seeds env ``i`` with ``s + i`` (gymnasium's rule), so its
first instance is ``task.generate(s + i, tier)`` and the instances after each autoreset come from
that env's own seeded stream, as in the single env (tests compare both step by step).

Autoreset: gymnasium 1.x's default, next-step (``metadata["autoreset_mode"]``). The step that
finishes an episode returns its last observation, reward and ``terminated=True``; the next step
ignores that env's action and returns the first observation of a new instance, reward 0.

Sizes: every instance of a batch is padded to the tier's largest size, as the single env pads
(a ``*_mask`` key marks the real entries; padded actions are never legal), so instances of
different sizes share one batch and episodes of different lengths finish at different steps. A
batch of one size is ``overrides={"n_min": N, "n_max": N}``.

Rewards: ``reward_mode="task"`` (default) pays the task's reward on the last step, as the single
env does; it needs a reference per instance (solved at reset, per instance, like the single
env), so draws cost what the single env's cost. ``reward_mode="objective"`` pays the signed
objective (minus the tour length) and solves nothing: instances are drawn straight into arrays
(TSP: the whole batch in one numba call that reproduces numpy's streams, :mod:`npgym.streams`),
the throughput mode (``bench/env_throughput.py``). Illegal moves are as in the single env: a
penalty with the task's reward, :class:`~npgym.structured.InvalidActionError` with
``invalid_action="raise"`` or the objective reward (then the batch must be reset).

Observations are the env's own buffers with ``copy=False`` (overwritten by the next step: a
zero-copy view, :func:`as_tensors` wraps them as torch tensors) and, with ``copy=True``
(default, as gymnasium's vector envs), arrays that no later step changes: the keys that change
during an episode are copied at every step; the instance's own arrays (a batch's
``static_keys``, such as TSP's B x N x N distances) are copied once when an instance is loaded
and handed out read-only until the next load, so a step does not pay for copying them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.random import SeedSequence
from pydantic import BaseModel

from npgym.config import TIER_DIFFICULTY
from npgym.env_options import check_reference_time_limit
from npgym.graphs import GraphInstance
from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.named_arguments import parameter_names
from npgym.reward import RewardSpec, resolve_reward
from npgym.streams import STATE_WORDS, entropy_words, next_seeds, seed_instance_stream, seed_state
from npgym.structured import (
    Episode,
    InvalidActionError,
    InvalidActionPolicy,
    RewardMode,
    check_reward_mode,
    episode_type,
    flags,
    signed_objective,
)
from npgym.task import Task, generation_stream

MAX_NUM_ENVS = 1 << 20
"""Largest batch a vector env takes (its buffers are allocated up front)."""


class BatchedEpisode(ABC):
    """B structured episodes of one task in arrays, stepped together in compiled code.

    A subclass names the :class:`~npgym.structured.Episode` it batches (:attr:`episode`: the
    spaces, sizes and action count are that episode's), loads instances into slots, and steps
    every slot at once. Its observation is the episode's, key by key, with the batch first.
    """

    episode: ClassVar[type[Episode]]
    static_keys: ClassVar[tuple[str, ...]] = ()
    """The observation keys that only :meth:`load` and :meth:`load_seeded` write (the
    instance's own arrays, such as its distances): with ``copy=True`` the env copies them once
    per load instead of at every step."""
    restart_kernel: ClassVar[Callable[..., None]]
    """Compiled ``(slots, *arrays)``: a fresh episode in each of ``slots`` on the instance
    loaded there (a ``staticmethod`` of the subclass). Each parameter after ``slots`` is named
    after the array it takes, an observation buffer or a per-slot array of the subclass
    (:meth:`kernel_arrays`)."""
    step_kernel: ClassVar[Callable[..., None]]
    """Compiled ``(slots, actions, *arrays, finished)``, the arrays named as the restart
    kernel's: the move ``actions[slot]`` of every slot in ``slots`` (those whose action is
    legal, checked before by :meth:`step`), flagging the slots that finish (:meth:`step` then
    zeroes their action masks)."""

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        self.batch_size = batch_size
        self.limits = dict(limits)
        self.buffers: dict[str, np.ndarray] = {
            key: np.zeros((batch_size, *(space.shape or ())), space.dtype)
            for key, space in self.episode.spaces(limits).items()
        }
        """Every observation key, ``action_mask`` included, batch first, shaped and typed as
        the episode's spaces: the compiled kernels write them in place."""
        self.buffers["action_mask"] = np.zeros(
            (batch_size, self.episode.action_count(limits)), np.int8
        )

    def argument(self, name: str) -> np.ndarray:
        """A kernel argument by name: an observation buffer, else the subclass's own per-slot
        array of that name."""
        found = self.buffers.get(name)
        return found if found is not None else getattr(self, name)

    def kernel_arrays(
        self, kernel: Callable[..., None], leading: int, trailing: int = 0
    ) -> list[np.ndarray]:
        """The arrays ``kernel`` takes between its first ``leading`` and last ``trailing``
        parameters, found by the parameters' names (:meth:`argument`)."""
        names = parameter_names(kernel)
        return [self.argument(name) for name in names[leading : len(names) - trailing]]

    def put(self, slot: int, name: str, value: Any) -> None:
        """``value`` (an instance's array, or a number) into ``slot`` of the buffer or per-slot
        array ``name``, in its top-left corner, zero elsewhere."""
        target = self.argument(name)
        value = np.asarray(value)
        if target.ndim == 1:
            target[slot] = value
            return
        target[slot] = 0
        target[slot][tuple(slice(0, size) for size in value.shape)] = value

    def restart(self, slots: np.ndarray) -> None:
        """Fresh episodes in ``slots`` on their loaded instances (:attr:`restart_kernel`)."""
        arguments = self.kernel_arrays(self.restart_kernel, 1)
        self.restart_kernel(np.asarray(slots, np.int64), *arguments)

    @classmethod
    @abstractmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        """The arrays :meth:`load` takes, from an instance: by default each goes into the
        buffer or per-slot array of its name (:meth:`put`), sizes included."""

    @classmethod
    def draw(cls, task: Task[Any, Any], rng: np.random.Generator, config: BaseModel) -> Any:
        """The arrays of the instance ``task.build(rng, config)`` would build, drawn without
        building it (faster), or ``None`` when the task has no such path."""
        return None

    def load(self, slots: np.ndarray, arrays: Sequence[dict[str, Any]]) -> None:
        """Start a fresh episode in each slot, on the instance whose arrays are given."""
        for slot, drawn in zip(slots, arrays, strict=True):
            for name, value in drawn.items():
                self.put(slot, name, value)
        self.restart(slots)

    draw_kernel: ClassVar[Callable[..., None] | None] = None
    """Compiled ``(slots, seeds, key, *draw_parameters(config), *arrays)``, the arrays it fills
    named as the restart kernel's: in each slot, the instance ``task.generate`` draws for its
    seed (stream ``[seed, key]``, or ``[seed]`` when ``key < 0``; :func:`seeded_slot` opens the
    loop over the slots with their streams), numpy's draws reproduced by :mod:`npgym.streams`;
    ``None`` when the task has no compiled draw."""

    draw_fields: ClassVar[tuple[str, ...]] = ()
    """The config fields the draw kernel takes after ``key``, in its order: the default
    :meth:`draw_parameters`, for a kernel that takes them as they are."""

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        """The numbers of ``config`` that the draw kernel takes (by default its
        :attr:`draw_fields`), or ``None`` when it cannot draw this config (then :meth:`draw` or
        ``task.generate`` serves each instance)."""
        if not cls.draw_fields:
            return None
        return tuple(getattr(config, name) for name in cls.draw_fields)

    def load_seeded(
        self, slots: np.ndarray, seeds: np.ndarray, key: int, config: BaseModel
    ) -> bool:
        """Start a fresh episode in each slot on the instance ``task.generate`` draws for its
        seed, drawn by :attr:`draw_kernel`; False, loading nothing, when the task or config has
        no such path."""
        kernel = type(self).draw_kernel
        parameters = self.draw_parameters(config)
        if kernel is None or parameters is None:
            return False
        arguments = self.kernel_arrays(kernel, 3 + len(parameters))
        kernel(
            np.asarray(slots, np.int64), np.asarray(seeds, np.int64), key, *parameters, *arguments
        )
        self.restart(slots)
        return True

    def step(self, actions: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply ``actions[b]`` in every ``active`` slot ``b``; ``(finished, illegal)`` masks.

        An action out of range or masked is illegal: it changes nothing and its slot's action
        mask becomes all zero. The legal ones go to :attr:`step_kernel`; a slot that finishes
        gets an all-zero action mask too."""
        action_mask = self.buffers["action_mask"]
        illegal = np.zeros(self.batch_size, np.bool_)
        moving = sort_moves(actions, active, action_mask, illegal)
        finished = np.zeros(self.batch_size, np.bool_)
        arguments = self.kernel_arrays(self.step_kernel, 2, 1)
        self.step_kernel(moving, actions, *arguments, finished)
        close_masks(finished, action_mask)
        return finished, illegal

    def observation(self) -> dict[str, np.ndarray]:
        """Every observation key, ``action_mask`` included, as the live buffers."""
        return self.buffers

    @abstractmethod
    def objectives(self) -> np.ndarray:
        """The objective of each slot's (partial) solution, as ``float64``."""

    @abstractmethod
    def solution(self, slot: int) -> Any:
        """The solution built in ``slot``, in the task's answer shape."""


class GraphBatch(BatchedEpisode):
    """Episodes on graphs (:class:`~npgym.graphs.GraphInstance`): each slot holds its graph's
    padded ``adjacency`` (an observation key) and its ``vertex_count``, for the kernels to take
    by those names."""

    static_keys = ("adjacency", "vertex_mask")

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        self.vertex_count = np.zeros(batch_size, np.int64)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, GraphInstance)
        return {"adjacency": instance.adjacency, "vertex_count": instance.n}


@njit
def sort_moves(
    actions: np.ndarray, active: np.ndarray, action_mask: np.ndarray, illegal: np.ndarray
) -> np.ndarray:
    """The active slots whose action is in range and unmasked, in order (the step kernel's
    ``slots``); every other active slot is marked ``illegal``, with its action mask zeroed."""
    width = action_mask.shape[1]
    moving = np.empty(actions.shape[0], np.int64)
    count = 0
    for slot in range(actions.shape[0]):
        if not active[slot]:
            continue
        action = actions[slot]
        if 0 <= action < width and action_mask[slot, action] != 0:
            moving[count] = slot
            count += 1
        else:
            illegal[slot] = True
            action_mask[slot, :] = 0
    return moving[:count]


@njit
def close_masks(finished: np.ndarray, action_mask: np.ndarray) -> None:
    """Zero the action mask of every ``finished`` slot: its episode has no legal move left."""
    for slot in range(finished.shape[0]):
        if finished[slot]:
            action_mask[slot, :] = 0


@njit
def mark_real(mask: np.ndarray, count: int) -> None:
    """A slot's padding mask (a ``*_mask`` row): 1 on the instance's first ``count`` entries,
    0 on the padding after them; restart kernels set theirs on each loaded instance."""
    for index in range(mask.shape[0]):
        mask[index] = index < count


@njit
def set_symmetric(matrix: np.ndarray, u: int, v: int, value: float) -> None:
    """Both entries of the pair ``{u, v}`` of a symmetric matrix (an adjacency, distances,
    weights): how draw kernels set an edge."""
    matrix[u, v] = value
    matrix[v, u] = value


@njit
def seeded_slot(
    slots: np.ndarray, seeds: np.ndarray, key: int, index: int
) -> tuple[int, np.ndarray]:
    """A draw kernel's ``index``-th slot and the generator state ``task.generate`` draws its
    instance from (stream ``[seed, key]``, or ``[seed]`` when ``key < 0``): the opening of the
    kernel's loop over its slots. (A plain function: numba's on-disk cache cannot load a
    caller of a compiled generator in another process.)"""
    state = np.zeros(STATE_WORDS, np.uint64)
    seed_instance_stream(seeds[index], key, state)
    return slots[index], state


def batch_type(task: str | Task[Any, Any]) -> type[BatchedEpisode]:
    """The :class:`BatchedEpisode` a task declares (its ``vector`` capability); a task without
    one raises :class:`npgym.capabilities.MissingCapabilityError` naming it."""
    from npgym.capabilities import capability
    from npgym.registry import get_task

    resolved = get_task(task) if isinstance(task, str) else task
    batch: type[BatchedEpisode] = capability(resolved, "vector")
    return batch


class VectorStructuredEnv(VectorEnv[dict[str, np.ndarray], np.ndarray, np.ndarray]):
    """B structured episodes of one task at one tier (see the module docstring).

    Options as for :class:`~npgym.structured.StructuredEnv` (``tier``, ``difficulty``,
    ``overrides``, ``reward``, ``exact_reference``, ``reference_time_limit``,
    ``invalid_action``, ``reward_mode``), plus ``num_envs`` and ``copy``.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 (gymnasium API)

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
        copy: bool = True,
    ) -> None:
        from npgym.registry import get_task

        self.task = task if isinstance(task, Task) else get_task(task)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise ValueError(f"num_envs must be an integer, got {num_envs!r}")
        if not 1 <= num_envs <= MAX_NUM_ENVS:
            raise ValueError(f"num_envs must be in 1..{MAX_NUM_ENVS}, got {num_envs}")
        self.batch_class = batch_type(self.task)
        self.num_envs = int(num_envs)
        self.tier = None if difficulty is not None else tier
        self.difficulty = difficulty
        self.overrides = dict(overrides) if overrides else None
        self.generator_config = self.task.config(self.tier, difficulty, self.overrides)
        self._stream_difficulty = (
            difficulty if difficulty is not None else TIER_DIFFICULTY[self.tier or "medium"]
        )
        stream = generation_stream(0, self._stream_difficulty)
        self._stream_key = stream[1] if isinstance(stream, list) else -1
        self.reward_config = resolve_reward(dict(reward) if isinstance(reward, Mapping) else reward)
        self.exact_reference = exact_reference
        self.reference_time_limit = check_reference_time_limit(reference_time_limit)
        if invalid_action not in ("penalty", "raise"):
            raise ValueError(f"invalid_action must be 'penalty' or 'raise', got {invalid_action!r}")
        self.invalid_action = invalid_action
        self.reward_mode = check_reward_mode(reward_mode)
        self.copy = bool(copy)
        episode = episode_type(self.task)
        if self.batch_class.episode is not episode:
            raise ValueError(
                f"task {self.task.name!r}: its vector batches {self.batch_class.episode.__name__}, "
                f"not its structured episode {episode.__name__}"
            )
        self.limits = episode.limits_for(self.generator_config)
        self.action_count = episode.action_count(self.limits)
        self.single_observation_space = spaces.Dict(
            {**episode.spaces(self.limits), "action_mask": flags((self.action_count,))}
        )
        self.single_action_space = spaces.Discrete(self.action_count)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.batch = self.batch_class(self.num_envs, self.limits)
        unknown = set(self.batch_class.static_keys) - set(self.batch.buffers)
        if unknown:
            raise ValueError(
                f"{self.batch_class.__name__}.static_keys names no observation key: "
                f"{sorted(unknown)}"
            )
        self._streams: np.ndarray | None = None
        """Each env's seed stream (gymnasium's ``np_random``), :mod:`npgym.streams` state."""
        self._instances: list[Instance | None] = [None] * self.num_envs
        self._references: list[Any] = [None] * self.num_envs
        self._autoreset = np.zeros(self.num_envs, np.bool_)
        self._done = np.ones(self.num_envs, np.bool_)
        self._needs_reset = False
        self._static_copies: dict[str, np.ndarray] | None = None
        """Read-only copies of the static keys since the last load (``copy=True``)."""

    # --- episodes -----------------------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """New instances in every env (or those of ``options["reset_mask"]``).

        ``seed`` is an int (env ``i`` gets ``seed + i``), a list of one seed (or ``None``) per
        env, or ``None`` (each env draws its next instance from its own stream)."""
        seeds = self._seeds(seed)
        slots = np.arange(self.num_envs)
        if options and "reset_mask" in options:
            reset_mask = np.asarray(options["reset_mask"])
            if reset_mask.dtype != np.bool_ or reset_mask.shape != (self.num_envs,):
                raise ValueError(f"reset_mask must be a bool array of shape ({self.num_envs},)")
            slots = slots[reset_mask]
        fresh = self._streams is None
        if self._streams is None:
            self._streams = np.zeros((self.num_envs, STATE_WORDS), np.uint64)
        for slot in slots if not fresh else range(self.num_envs):
            if seeds[slot] is not None or fresh:
                # gymnasium's seeding.np_random(seed): PCG64(SeedSequence(seed))
                entropy = seeds[slot] if seeds[slot] is not None else SeedSequence().entropy
                words = entropy_words(entropy)  # type: ignore[arg-type]
                seed_state(words, words.size, self._streams[slot])
        self._start(slots, [seeds[slot] for slot in slots])
        self._autoreset[slots] = False
        self._needs_reset = False
        return self._observe(), {}

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Move every env by its action; envs whose episode ended last step start a new one."""
        if self._streams is None or self._needs_reset:
            raise RuntimeError(
                "call reset() before step() (first, or after an illegal move raised)"
            )
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise InvalidActionError(
                f"actions must be {self.num_envs} integers, got shape {actions.shape} "
                f"of {actions.dtype}"
            )
        restarting = np.flatnonzero(self._autoreset)
        active = ~self._autoreset & ~self._done
        finished, illegal = self.batch.step(actions.astype(np.int64), active)
        rewards = np.zeros(self.num_envs, np.float64)
        if illegal.any():
            self._punish(np.flatnonzero(illegal), actions)
            rewards[illegal] = self.reward_config.format_fail + self.reward_config.infeasible
        ended = finished | illegal
        infos: dict[str, Any] = {}
        if finished.any():
            objectives = self.batch.objectives()
            rewards[finished] = self._rewards(np.flatnonzero(finished), objectives)
            infos["objective"] = np.where(finished, objectives, 0.0)
            infos["_objective"] = finished.copy()
        if illegal.any():
            infos["invalid_action"] = illegal.copy()
            infos["_invalid_action"] = illegal.copy()
        self._done |= ended
        if restarting.size:
            self._start(restarting, [None] * restarting.size)
        self._autoreset = ended
        terminated = ended.copy()
        return self._observe(), rewards, terminated, np.zeros(self.num_envs, np.bool_), infos

    def _seeds(self, seed: int | list[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            if seed < 0:
                raise ValueError(f"seed must be a non-negative integer, got {seed}")
            return [int(seed) + index for index in range(self.num_envs)]
        if isinstance(seed, Sequence) and len(seed) == self.num_envs:
            seeds = list(seed)
        else:
            raise ValueError(f"seed must be an int, None or a list of {self.num_envs} seeds")
        for given in seeds:
            if given is not None and (
                isinstance(given, bool) or not isinstance(given, (int, np.integer)) or given < 0
            ):
                raise ValueError(f"each seed must be a non-negative integer or None, got {given!r}")
        return [None if given is None else int(given) for given in seeds]

    def _start(self, slots: np.ndarray, seeds: Sequence[int | None]) -> None:
        """Draw a new instance into each slot (a given seed, else the slot's own stream)."""
        assert self._streams is not None
        self._static_copies = None
        slots = np.asarray(slots, np.int64)
        unseeded = np.array([seed is None for seed in seeds], np.bool_)
        drawn_seeds = np.zeros(int(unseeded.sum()), np.int64)
        next_seeds(self._streams, slots[unseeded], drawn_seeds)
        instance_seeds: list[int] = []
        draws = iter(drawn_seeds.tolist())
        for seed in seeds:
            instance_seeds.append(seed if seed is not None else next(draws))
        self._done[slots] = False
        if (
            self.reward_mode == "objective"
            and max(instance_seeds, default=0) < 2**63
            and self.batch.load_seeded(
                slots, np.array(instance_seeds, np.int64), self._stream_key, self.generator_config
            )
        ):
            return
        drawn = [
            self._draw(int(slot), seed) for slot, seed in zip(slots, instance_seeds, strict=True)
        ]
        self.batch.load(slots, drawn)

    def _draw(self, slot: int, seed: int) -> dict[str, Any]:
        """One instance's arrays: straight from the generator stream when the reward needs no
        instance, else through ``task.generate`` and its reference."""
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}")
        if self.reward_mode == "objective":
            rng = np.random.default_rng(generation_stream(seed, self._stream_difficulty))
            arrays = self.batch_class.draw(self.task, rng, self.generator_config)
            if arrays is not None:
                return dict(arrays)
        instance = self.task.generate(seed, self.tier, self.difficulty, self.overrides)
        self._instances[slot] = instance
        if self.reward_mode == "task":
            self._references[slot] = self.task.reference(
                instance, exact=self.exact_reference, time_limit=self.reference_time_limit
            )
        return self.batch_class.arrays(instance)

    def _rewards(self, slots: np.ndarray, objectives: np.ndarray) -> np.ndarray:
        """The last step's reward of each finished slot."""
        if self.reward_mode == "objective":
            return signed_objective(self.task, 1.0) * objectives[slots]
        rewards = []
        for slot in slots:
            answer = self.task.format_answer(self.batch.solution(int(slot)))
            score = self.task.score(
                self._instances[slot], answer, self._references[slot], self.reward_config
            )
            rewards.append(score.reward)
        return np.array(rewards, np.float64)

    def _punish(self, slots: np.ndarray, actions: np.ndarray) -> None:
        """Raise on illegal moves unless they are penalised (``invalid_action="penalty"`` with
        the task's reward)."""
        if self.invalid_action == "raise" or self.reward_mode == "objective":
            self._needs_reset = True  # the other envs have moved: the batch must start again
            slot = int(slots[0])
            raise InvalidActionError(
                f"env {slot}: action {int(actions[slot])} is outside "
                f"0..{self.action_count - 1} or masked (illegal now)"
            )

    def _observe(self) -> dict[str, np.ndarray]:
        observation = self.batch.observation()
        if not self.copy:
            return observation
        shared = self._static_copies
        if shared is None:
            shared = self._static_copies = {
                key: read_only_copy(observation[key]) for key in self.batch_class.static_keys
            }
        return {
            key: shared[key] if key in shared else value.copy()
            for key, value in observation.items()
        }


def read_only_copy(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` that refuses writes, so one handed out for several steps cannot be
    changed by whoever received it."""
    copied = array.copy()
    copied.flags.writeable = False
    return copied


def as_tensors(observation: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The observation as torch tensors sharing its memory (``torch.from_numpy``, no copy), for
    TorchRL or rl4co; with ``copy=False`` they follow the env's buffers step by step."""
    import torch

    return {key: torch.from_numpy(value) for key, value in observation.items()}


def make_vector_env(
    task: str, tier: str | None = "medium", num_envs: int = 1, mode: str = "text", **options: Any
) -> VectorEnv[Any, Any, Any]:
    """The ``vector_entry_point`` of every task id: ``mode="structured"`` gives the batched
    :class:`VectorStructuredEnv` of a task that declares ``vector`` and refuses one that does
    not (naming it); ``mode="text"`` gives gymnasium's ``SyncVectorEnv`` of text envs, as
    ``make_vec`` gave before (text episodes are not batched)."""
    if mode == "structured":
        from npgym.capabilities import MissingCapabilityError, has_capability
        from npgym.registry import get_task

        resolved = get_task(task)
        if not has_capability(resolved, "vector"):
            raise MissingCapabilityError(
                f"task {resolved.name!r} has no batched structured env (it declares no "
                "Task.vector); use vectorization_mode='sync' for gymnasium's SyncVectorEnv "
                "of its single structured envs"
            )
        return VectorStructuredEnv(resolved, tier, num_envs, **options)
    if mode != "text":
        raise ValueError(f"unknown mode {mode!r}; choose 'text' or 'structured'")
    from gymnasium.vector import SyncVectorEnv

    from npgym.env import make_env

    return SyncVectorEnv([lambda: make_env(task, tier, mode="text", **options)] * num_envs)
