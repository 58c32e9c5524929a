"""npgym in GEM: every npgym env id registered with ``gem`` (gem-llm 0.1), text and multi-turn.

Importing this module registers every npgym gymnasium id (``npgym/<Task>-<tier>``, the
families, and ``npgym/Curriculum``) with ``gem.register``, so GEM's trainers (Oat, ROLL) and
its own tools build them by name::

    import npgym.integrations.gem  # registers the ids
    env = gem.make("npgym/TSP-hard", seed=0, max_attempts=3)
    obs, info = env.reset()                              # a fresh instance's prompt
    obs, reward, terminated, truncated, info = env.step(completion)
    vec = gem.make_vec(["npgym/TSP-hard"] * 8, seed=0)   # env i gets seed 0 + i

**Instances.** ``gem.make(id, seed=s, **options)`` takes ``gym.make``'s options
(:class:`npgym.env.NPGymEnv`: ``max_attempts``, ``reward``, ``difficulty``, ...). Its first
unseeded ``reset()`` plays the instance of seed ``s`` (``task.generate(s, tier)``), each later
one the next instance of the env's stream, as a gymnasium env does after ``reset(seed=s)``; so
the envs of ``gem.make_vec`` (seeds ``seed + i``) play distinct streams. ``reset(seed=t)``
plays the instance of seed ``t`` and restarts the stream from it. GEM's base ``reset`` also
reseeds Python's and numpy's global generators; these envs do not (npgym's streams are their
own, and a trainer's generators are not an environment's to reset).

**Episodes.** One answer by default; with ``max_attempts > 1`` an episode is npgym's repair
loop (:mod:`npgym.multiturn`): after an infeasible or sub-optimal answer the observation is the
verifier's feedback, until an optimal answer or the last attempt. Each step's reward is the
change in the episode's reward (under ``reward_policy``), so an episode's return is its
reward. At the episode's end the observation is GEM's ``TERMINAL_STATE`` and ``terminated`` is
true; ``truncated`` is true too when the attempts ran out, as in GEM's games (a multi-turn
episode that ends on an optimal answer is not truncated), and always for a single-turn episode,
as in GEM's single-turn envs. ``info`` holds the attempt's score fields and the ``feedback``
text (the verdict, which the observation no longer shows at the end).

**The adaptive curriculum.** ``gem.make("npgym/Curriculum", tasks=[...], target=(0.3, 0.7))``
draws each episode's instance from an :class:`AdaptiveCurriculum` at its task's frontier and
reports the episode's final score to it (as :class:`npgym.curriculum.CurriculumEnv` does). Envs
of one process built with the same curriculum options share one curriculum
(:func:`shared_curriculum`), so ``gem.make_vec(["npgym/Curriculum"] * 8, tasks=[...])`` drives
one frontier per task; ``curriculum=`` passes a curriculum object instead. The curriculum's
own seed is ``curriculum_options["seed"]``: the ``seed`` that ``make_vec`` gives each env
picks nothing here, since the stream follows the learner. GEM's ``AsyncVectorEnv`` steps its
envs in threads: draws and reports are taken under one lock; scoring and reference proofs run
outside it.
"""

from __future__ import annotations

import numbers
import sys
import threading
from collections.abc import Sequence
from typing import Any

try:
    import gem
    from gem.envs.registration import ENV_REGISTRY
    from gem.utils.constants import TERMINAL_STATE
except ImportError as error:  # pragma: no cover - the message is what matters
    raise ImportError(
        "npgym.integrations.gem needs gem-llm, which supports Python 3.10 to 3.12.0 (this is "
        f"{sys.version.split()[0]}): pip install 'npgym[gem]' ({error})"
    ) from error

from npgym.curriculum import AdaptiveCurriculum, CurriculumItem
from npgym.env import NPGymEnv
from npgym.integrations.curriculum import shared_curriculum
from npgym.registry import CURRICULUM_ENV_ID, ENV_NAMESPACE
from npgym.results import Score

_LOCK = threading.Lock()


def _seed(seed: Any) -> int:
    """``seed`` if it is a non-negative integer; else a ``ValueError``."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


class NPGymGemEnv(gem.Env):
    """One npgym task at one tier (``npgym/<Task>-<tier>``) as a GEM env (see the module
    docstring): ``seed`` starts its instance stream, ``options`` are ``gym.make``'s."""

    def __init__(self, task: str, tier: str, seed: int = 0, **options: Any) -> None:
        super().__init__()
        self.seed = _seed(seed)
        self.env = NPGymEnv(task, tier, **options)
        self._started = False

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """The next instance of the stream (the first: the constructor's seed), or seed
        ``seed``'s; returns its prompt and ``info`` naming the task and the instance's seed."""
        if seed is not None:
            seed = _seed(seed)
        elif not self._started:
            seed = self.seed
        self._started = True
        prompt, info = self.env.reset(seed=seed)
        return prompt, {"task": self.env.task.name, "instance_seed": info["instance"].seed}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Score ``action``: the verifier's feedback, or ``TERMINAL_STATE`` at the end."""
        feedback, reward, terminated, truncated, info = self.env.step(action)
        done = bool(terminated or truncated)
        session = self.env.session
        assert session is not None
        if done:
            self._finish(session.scores[-1])
        truncated = done and (
            session.repair.max_attempts == 1 or session.scores[-1].optimality < 1.0
        )
        info = {**info, "feedback": feedback, **self._item_info()}
        return (TERMINAL_STATE if done else feedback), float(reward), done, truncated, info

    def _finish(self, score: Score) -> None:
        """What an episode's final score is reported to: nothing here (the curriculum env
        reports it)."""

    def _item_info(self) -> dict[str, Any]:
        return {}


class NPGymGemCurriculumEnv(NPGymGemEnv):
    """``npgym/Curriculum`` as a GEM env: each ``reset`` draws from the curriculum (``curriculum``,
    or the process's :func:`shared_curriculum` of ``tasks``, ``target`` and
    ``curriculum_options``), each episode's final score is reported to it. ``seed`` (given by
    ``make_vec``) picks nothing: the stream follows the learner. ``options`` are the task
    envs' (``max_attempts``, ``reward``, ...)."""

    def __init__(
        self,
        tasks: Sequence[str] | None = None,
        target: Sequence[float] = (0.3, 0.7),
        curriculum: AdaptiveCurriculum | None = None,
        curriculum_options: dict[str, Any] | None = None,
        seed: int = 0,
        **options: Any,
    ) -> None:
        if curriculum is not None and (tasks or curriculum_options):
            raise ValueError("give a curriculum, or tasks and curriculum_options: not both")
        self.curriculum = curriculum or shared_curriculum(
            tasks, target=target, **(curriculum_options or {})
        )
        super().__init__(self.curriculum.tasks[0], "easy", seed, **options)
        self.options = options
        self.item: CurriculumItem | None = None

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """Draw the curriculum's next item and start its episode (``seed`` is checked and
        ignored: the curriculum's own seed fixes its stream)."""
        if seed is not None:
            _seed(seed)
        with _LOCK:
            self.item = self.curriculum.next()
        self.env = NPGymEnv(self.item.task, **self.options)
        prompt, _ = self.env.reset(options={"instance": self.item.instance})
        return prompt, self._item_info()

    def _finish(self, score: Score) -> None:
        assert self.item is not None
        with _LOCK:
            self.curriculum.report(self.item, score)

    def _item_info(self) -> dict[str, Any]:
        return {} if self.item is None else self.item.info()


def register() -> list[str]:
    """Register every npgym gymnasium id not yet known to GEM (done on import; call it again
    after registering more tasks); returns the ids it registered."""
    import gymnasium

    added = []
    for identifier, spec in gymnasium.registry.items():
        if not identifier.startswith(f"{ENV_NAMESPACE}/") or identifier in ENV_REGISTRY:
            continue
        if identifier == CURRICULUM_ENV_ID:
            gem.register(identifier, f"{__name__}:NPGymGemCurriculumEnv")
        else:
            task, tier = spec.kwargs["task"], spec.kwargs["tier"]
            gem.register(identifier, f"{__name__}:NPGymGemEnv", task=task, tier=tier)
        added.append(identifier)
    return added


register()
