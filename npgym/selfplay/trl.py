"""Self-play in TRL: one policy writes problems (Invert rows) and solves them (forward rows).

::

    from npgym.curriculum import AdaptiveCurriculum
    from npgym.selfplay import SelfPlayPool
    from npgym.selfplay.serving import SelfPlayCurriculum
    from npgym.selfplay.trl import selfplay_dataset, selfplay_reward
    pool = SelfPlayPool(["Knapsack", "TSP"], journal="run/pool.jsonl")
    serving = SelfPlayCurriculum(AdaptiveCurriculum(["Knapsack", "TSP"], seed=0), pool)
    trainer = GRPOTrainer(model, reward_funcs=[selfplay_reward(serving, model="run1")],
                          train_dataset=selfplay_dataset(serving),
                          args=GRPOConfig(max_steps=..., shuffle_dataset=False))

:func:`selfplay_dataset` is endless and alternates the two roles, author first: row ``2j`` is an
author row, the prompt of ``npgym/Invert-<Task>-<tier>`` (the tasks in turn, the prompt's seed
``derive_seed("selfplay-invert", seed, task, j)``), and row ``2j + 1`` a forward row drawn from
the :class:`~npgym.selfplay.serving.SelfPlayCurriculum` (generated, or from the pool at its
ratio). Rows are TRL rows (``prompt``, ``task``, ``instance``, ``reference``, ...) plus
``selfplay_role`` (:data:`ROLE_FIELD`: ``author`` or ``solver``) and ``curriculum_key``
(empty on author rows). As with the curriculum, keep ``shuffle_dataset=False`` and one trainer
process.

:func:`selfplay_reward` scores every completion with npgym's reward (an author row with the
Invert task's: +1 / -1 format, +1 when the written instance has the stated property), then

- reports every forward sample's score to the serving curriculum under its key (a pool item's
  score counts for its entry, a generated one's moves the frontier);
- offers every author sample to the pool (``offer(env_id, completion, prompt_seed=..., step=
  trainer step, model=model)``), so admitted instances are served back as forward rows;
- with ``band_weight > 0`` and a ``solve`` callable, adds ``band_weight`` times the SvS author
  reward (:func:`~npgym.selfplay.serving.author_reward`: the solver sampled ``k`` times now on
  each admitted instance, its pass rate rewarded for falling in the band; 0 when refused).

So an author sample's reward is ``R_invert + band_weight * B(p)`` and a solver sample's is the
npgym reward. It logs through TRL's ``log_metric``: ``npgym/selfplay/pool_size``, the share of
the batch's offers per reason (``npgym/selfplay/offers/<reason>``), the pool items' pass rate
and the share of rated entries in the band, and each task's frontier difficulty.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from npgym.datasets import ReferenceMode
from npgym.integrations.curriculum import KEY_FIELD
from npgym.integrations.trl import LogMetric, RewardFunction, completion_text, score_completions
from npgym.records import Row, make_record
from npgym.registry import env_id, get_task
from npgym.reward import DEFAULT_REWARD, RewardSpec, resolve_reward
from npgym.seeding import derive_seed
from npgym.selfplay.pool import REASONS
from npgym.selfplay.serving import (
    DEFAULT_SOLVER_SAMPLES,
    SelfPlayCurriculum,
    Solve,
    author_reward,
)
from npgym.trainer_rows import trl_row

ROLE_FIELD = "selfplay_role"
"""The column saying whether a row asks the policy to write a problem or to solve one."""
AUTHOR = "author"
"""The role of an Invert row: the policy writes an instance."""
SOLVER = "solver"
"""The role of a forward row: the policy solves an instance."""
INVERT_TIERS = ("easy", "medium", "hard", "benchmark")
"""The tiers an author row's Invert prompt may be drawn at."""


def invert_record(task: str, index: int, *, tier: str = "easy", seed: int = 0) -> Row:
    """The npgym row of the ``index``-th author prompt for ``task``: the prompt of
    ``npgym/Invert-<task>-<tier>`` of seed ``derive_seed("selfplay-invert", seed, task,
    index)`` (its instance carries that seed and tier), with its witness reference."""
    invert = get_task(f"Invert-{get_task(task).name}")
    prompt_seed = derive_seed("selfplay-invert", seed, invert.name, index)
    instance = invert.generate(prompt_seed, tier=tier)
    return make_record(
        f"selfplay/author/{invert.name}/{index}", invert, instance, invert.reference(instance)
    )


def invert_row(task: str, index: int, *, tier: str = "easy", seed: int = 0) -> dict[str, Any]:
    """The ``index``-th author row for ``task`` (:func:`invert_record`) as a TRL row."""
    return {
        **trl_row(invert_record(task, index, tier=tier, seed=seed)),
        KEY_FIELD: "",
        ROLE_FIELD: AUTHOR,
    }


def selfplay_dataset(
    serving: SelfPlayCurriculum,
    tasks: Sequence[str] | None = None,
    *,
    tier: str = "easy",
    seed: int = 0,
    reference: ReferenceMode = "exact",
) -> Any:
    """An endless ``datasets.IterableDataset`` alternating author rows (Invert prompts of
    ``tasks``, default the curriculum's, at ``tier``) and forward rows from ``serving``
    (module docstring). One trainer process only (``WORLD_SIZE`` 1)."""
    if tier not in INVERT_TIERS:
        raise ValueError(f"tier must be one of {INVERT_TIERS}, got {tier!r}")
    names = [get_task(name).name for name in (tasks or serving.curriculum.tasks)]
    if not names:
        raise ValueError("give one or more tasks for the author rows")
    outside = [name for name in names if name not in serving.pool.tasks]
    if outside:
        raise ValueError(
            f"the pool takes no instances of {', '.join(outside)} (its tasks: "
            f"{', '.join(serving.pool.tasks)}): the author's offers would be refused"
        )
    from datasets import IterableDataset

    def rows() -> Iterator[dict[str, Any]]:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            raise RuntimeError(
                "selfplay_dataset serves one trainer process: with several, each would hold "
                "its own pool and curriculum"
            )
        index = 0
        while True:
            task = names[index % len(names)]
            yield invert_row(task, index // len(names), tier=tier, seed=seed)
            item = serving.next()
            row = trl_row(serving.record(item, reference))
            yield {**row, KEY_FIELD: item.key, ROLE_FIELD: SOLVER}
            index += 1

    return IterableDataset.from_generator(rows)


def _prompt_of(instance_json: str) -> tuple[str, int]:
    """The Invert env id and prompt seed of an author row's instance (the row's own fields)."""
    fields = json.loads(instance_json)
    return env_id(fields["task"], fields["tier"]), int(fields["seed"])


def selfplay_reward(
    serving: SelfPlayCurriculum,
    reward: RewardSpec = DEFAULT_REWARD,
    *,
    model: str | None = None,
    band_weight: float = 0.0,
    solve: Solve | None = None,
    k: int = DEFAULT_SOLVER_SAMPLES,
) -> RewardFunction:
    """The self-play reward function for rows of :func:`selfplay_dataset` (module docstring):
    forward samples scored and reported, author samples scored and offered to
    ``serving.pool`` under the ``model`` tag, plus ``band_weight`` times the SvS author reward
    when ``band_weight > 0`` (then ``solve`` is required)."""
    weights = resolve_reward(reward)
    if not 0.0 <= band_weight < float("inf"):
        raise ValueError(f"band_weight must be a finite number >= 0, got {band_weight!r}")
    if band_weight > 0 and solve is None:
        raise ValueError("band_weight > 0 rewards the solver's pass rate: give solve=")

    def selfplay_reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        task: Sequence[str],
        instance: Sequence[str],
        reference: Sequence[str | None] | None = None,
        log_metric: LogMetric | None = None,
        trainer_state: Any = None,
        **columns: Any,
    ) -> list[float]:
        scores = score_completions(completions, task, instance, reference, weights)
        roles, keys = columns[ROLE_FIELD], columns[KEY_FIELD]
        step = getattr(trainer_state, "global_step", None)
        rewards, reasons = [], []
        for index, score in enumerate(scores):
            value = score.reward
            if roles[index] == SOLVER:
                serving.report(keys[index], score)
            elif roles[index] == AUTHOR:
                text = completion_text(completions[index])
                environment, prompt_seed = _prompt_of(instance[index])
                admission = serving.pool.offer(
                    environment,
                    text if isinstance(text, str) else "",
                    prompt_seed=prompt_seed,
                    step=step,
                    model=model,
                )
                reasons.append(admission.reason)
                if band_weight > 0:
                    assert solve is not None
                    author = author_reward(
                        serving.pool,
                        admission,
                        solve,
                        band=serving.band,
                        k=k,
                        pass_ratio=serving.curriculum.pass_ratio,
                    )
                    value += band_weight * author.reward
            else:
                raise ValueError(f"{ROLE_FIELD} must be {AUTHOR!r} or {SOLVER!r}")
            rewards.append(value)
        if log_metric is not None:
            _log(serving, reasons, log_metric)
        return rewards

    return selfplay_reward


def _log(serving: SelfPlayCurriculum, reasons: list[str], log_metric: LogMetric) -> None:
    """The pool's size, this batch's offers per reason, the pool items' pass rate and band
    share, and each task's frontier."""
    stats = serving.stats()
    pool: Mapping[str, float] = stats["selfplay"]
    log_metric("npgym/selfplay/pool_size", float(pool["entries"]))
    log_metric("npgym/selfplay/pool_pass_rate", pool["pass_rate"])
    log_metric("npgym/selfplay/in_band", pool["in_band"])
    if reasons:
        for reason in REASONS:
            log_metric(f"npgym/selfplay/offers/{reason}", reasons.count(reason) / len(reasons))
    for name in serving.curriculum.tasks:
        log_metric(f"npgym/curriculum/{name}/difficulty", serving.curriculum.difficulty(name))
