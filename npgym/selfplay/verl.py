"""Self-play in verl: every node's author rows offer to one pool, held by the curriculum actor.

Name the dataset class and the reward function in verl's config, with the curriculum's options
(as :mod:`npgym.integrations.verl_curriculum`) and the self-play options::

    data.train_files=npgym-curriculum
    data.custom_cls.path=pkg://npgym.selfplay.verl
    data.custom_cls.name=SelfPlayRLHFDataset
    data.dataloader_num_workers=0             # draws call the actor (no Ray in forked workers)
    +data.npgym_curriculum.tasks=[Knapsack,TSP]
    +data.npgym_curriculum.journal=/runs/r1/curriculum.jsonl
    +data.npgym_curriculum.size=100000
    +data.npgym_selfplay.journal=/runs/r1/pool.jsonl    # or NPGYM_SELFPLAY_JOURNAL
    # optional: pool_ratio, seed, band, min_attempts (SelfPlayCurriculum), tier (of the Invert
    # prompts), stream_seed, stream_seeds, hardness ("greedy" or "none"), exclude_benchmark
    reward.custom_reward_function.path=pkg://npgym.selfplay.verl   # or this file's path
    reward.custom_reward_function.name=compute_score

**One actor, one pool.** Under Ray the dataset starts (or finds) the curriculum actor of
:mod:`npgym.integrations.ray_curriculum` (the same name, namespace, node pinning and bounded
calls) with a :class:`SelfPlayService` body: the curriculum's journal replica as before, plus
a journal-backed :class:`~npgym.selfplay.SelfPlayPool` (its journal on the actor's node, the
curriculum attached, so an instance the curriculum served is refused as ``generated``) and a
:class:`~npgym.selfplay.serving.SelfPlayCurriculum` over both. Draws alternate, author first:
an author row (the prompt of ``npgym/Invert-<Task>-<tier>``, the tasks in turn, seed
``derive_seed("selfplay-invert", seed, task, j)``, as in TRL) and a forward row served by the
actor (generated, or a pool entry at ``pool_ratio``). Rows carry ``selfplay_role`` and, forward
rows, ``curriculum_key`` in ``extra_info``, never where to report.

:func:`compute_score` is :func:`npgym.integrations.verl.compute_score` (forward rows report to
the actor, which counts a pool item's score for its entry) plus, on an author row, an offer of
the response to the pool, through the actor that ``NPGYM_CURRICULUM_JOURNAL`` names, from any
node: every node's admissions reach one pool, in the actor's order. Every sample returns the
same keys: the npgym reward and its parts, ``selfplay_author`` (1 on an author row) and
``selfplay_admitted`` (1 when its instance was admitted), so verl logs the admission rate. The
model tag of the provenance comes from ``NPGYM_SELFPLAY_MODEL`` (:data:`MODEL_ENV`).

**Without Ray** (backend ``journal``: one machine), reward processes offer to the pool journal
that ``NPGYM_SELFPLAY_JOURNAL`` (:data:`POOL_JOURNAL_ENV`) names, each through its own replica
of the pool (the journal's lock orders their admissions); the dataset's process serves from its
own :class:`SelfPlayService`. Pool items are served only with the Ray backend: without it,
reports of pool items reach no served entry, so forward rows come from the curriculum alone.

The actor keeps the alternation and the pool items' served and attempt counters in memory: a
restarted actor replays the curriculum's and the pool's journals (nothing admitted is lost) and
counts those afresh.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.datasets import ReferenceMode
from npgym.integrations import verl as npgym_verl
from npgym.integrations.curriculum import KEY_FIELD, configured_journal
from npgym.integrations.ray_curriculum import (
    ACTOR_NAMESPACE,
    CALL_TIMEOUT_S,
    START_TIMEOUT_S,
    CurriculumService,
    RayCurriculum,
    actor_name,
    configured_backend,
    configured_timeout,
)
from npgym.records import make_record
from npgym.registry import get_task
from npgym.results import Reference
from npgym.selfplay.pool import SelfPlayPool
from npgym.selfplay.serving import SelfPlayCurriculum
from npgym.selfplay.trl import AUTHOR, INVERT_TIERS, ROLE_FIELD, SOLVER, invert_record
from npgym.trainer_rows import verl_row

POOL_JOURNAL_ENV = "NPGYM_SELFPLAY_JOURNAL"
"""The environment variable naming, as an absolute path, the pool's journal (the ``journal``
backend's reward processes offer to it)."""
MODEL_ENV = "NPGYM_SELFPLAY_MODEL"
"""The environment variable holding the model tag recorded with each admission (optional)."""
CONFIG_KEY = "npgym_selfplay"
"""The key of the self-play options in verl's ``data`` config."""
POOL_OPTIONS = ("stream_seed", "stream_seeds", "hardness", "exclude_benchmark")
"""The pool's options that ``data.npgym_selfplay`` may set."""
SERVING_OPTIONS = ("pool_ratio", "seed", "band", "min_attempts")
"""The serving curriculum's options that ``data.npgym_selfplay`` may set."""


class SelfPlayService(CurriculumService):
    """The curriculum actor's body with a pool: draws alternate author and forward items, pool
    items' reports count for their entries, and :meth:`offer` admits to the pool (module
    docstring). Usable without Ray, as the ``journal`` backend's local service."""

    def __init__(
        self,
        curriculum: AdaptiveCurriculum,
        journal: str,
        pool_journal: str,
        pool_options: Mapping[str, Any] | None = None,
        serving_options: Mapping[str, Any] | None = None,
        tier: str = "easy",
    ) -> None:
        super().__init__(curriculum, journal)
        if tier not in INVERT_TIERS:
            raise ValueError(f"tier must be one of {INVERT_TIERS}, got {tier!r}")
        replica = self.journal.curriculum
        self.pool = SelfPlayPool(
            replica.tasks, journal=pool_journal, curriculum=replica, **dict(pool_options or {})
        )
        options = dict(serving_options or {})
        if "band" in options:
            options["band"] = tuple(options["band"])
        self.serving = SelfPlayCurriculum(replica, self.pool, draw=self.journal.next, **options)
        self.tier = tier
        self._draws = 0

    def selfplay_header(self) -> dict[str, Any]:
        """The options an actor found by name must agree with: the pool's, the serving
        curriculum's and the Invert prompts' tier."""
        return _header_of(self.pool, self.serving, self.tier)

    def draw(self) -> tuple[str, Any, Any]:
        """The next row's role and what makes it: ``("author", task, j)`` (the ``j``-th Invert
        prompt of ``task``) or ``("solver", item, reference)`` (a pool entry's proven reference,
        ``None`` for a generated item, whose reference the drawing process computes)."""
        self.journal.sync()
        count, self._draws = self._draws, self._draws + 1
        tasks = self.serving.curriculum.tasks
        if count % 2 == 0:
            turn = count // 2
            return AUTHOR, tasks[turn % len(tasks)], turn // len(tasks)
        item = self.serving.next()
        entry = self.serving.entry(item)
        return SOLVER, item, None if entry is None else entry.reference

    def report(self, key: str, score: dict[str, Any]) -> None:
        """A pool item's score counts for its entry; any other goes to the curriculum."""
        if key.startswith("selfplay/"):
            from npgym.results import Score

            self.serving.report(key, Score(**score))
        else:
            super().report(key, score)

    def offer(
        self,
        env_id: str,
        completion: str,
        prompt_seed: int | None,
        step: int | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """Offer a written instance to the pool (after the curriculum journal's new lines, so
        what the curriculum served is known); the admission as a small dict."""
        self.journal.sync()
        return _summary(
            self.pool.offer(env_id, completion, prompt_seed=prompt_seed, step=step, model=model)
        )

    def selfplay_stats(self) -> dict[str, Any]:
        """The serving statistics (``selfplay`` block included) and the pool's counts."""
        self.journal.sync()
        return {"stats": self.serving.stats(), "counts": self.pool.counts()}


def _summary(admission: Any) -> dict[str, Any]:
    entry = admission.entry
    return {
        "admitted": admission.admitted,
        "reason": admission.reason,
        "detail": admission.detail,
        "index": None if entry is None else entry.index,
    }


def _selfplay_header(
    curriculum: AdaptiveCurriculum,
    pool_options: Mapping[str, Any] | None,
    serving_options: Mapping[str, Any] | None,
    tier: str,
) -> dict[str, Any]:
    """The :meth:`SelfPlayService.selfplay_header` a service of these options has (made
    without journals: a pool computes nothing before its first offer)."""
    pool = SelfPlayPool(curriculum.tasks, curriculum=curriculum, **dict(pool_options or {}))
    options = dict(serving_options or {})
    if "band" in options:
        options["band"] = tuple(options["band"])
    return _header_of(pool, SelfPlayCurriculum(curriculum, pool, **options), tier)


def _header_of(pool: SelfPlayPool, serving: SelfPlayCurriculum, tier: str) -> dict[str, Any]:
    """The options of a self-play service's pool, serving curriculum and Invert tier."""
    return {
        "pool": pool.options(),
        "serving": {
            "pool_ratio": serving.pool_ratio,
            "seed": serving.seed,
            "band": list(serving.band),
            "min_attempts": serving.min_attempts,
        },
        "tier": tier,
    }


class RaySelfPlay(RayCurriculum):
    """A handle on a curriculum actor whose body is a :class:`SelfPlayService` (picklable;
    :meth:`start` creates or finds it, as :meth:`RayCurriculum.start` does)."""

    @classmethod
    def start_selfplay(
        cls,
        curriculum: AdaptiveCurriculum,
        journal: str | Path,
        pool_journal: str | Path,
        pool_options: Mapping[str, Any] | None = None,
        serving_options: Mapping[str, Any] | None = None,
        tier: str = "easy",
        *,
        timeout: float = CALL_TIMEOUT_S,
        start_timeout: float = START_TIMEOUT_S,
    ) -> RaySelfPlay:
        """The self-play actor keeping ``journal`` and ``pool_journal``, started on this node if
        the cluster has none; one with other options, on another node, or without a pool (a
        plain curriculum actor) is refused."""
        handle, actor, here = cls._launch(
            SelfPlayService,
            (
                curriculum,
                str(Path(journal).absolute()),
                str(Path(pool_journal).absolute()),
                dict(pool_options or {}),
                dict(serving_options or {}),
                tier,
            ),
            curriculum,
            journal,
            timeout=timeout,
            start_timeout=start_timeout,
        )
        if not hasattr(actor, "selfplay_header"):
            raise CurriculumError(
                f"curriculum actor {handle.name!r} holds no self-play pool (started by a plain "
                "curriculum dataset): end it (ray.kill) or use a new journal file"
            )
        wanted = _selfplay_header(curriculum, pool_options, serving_options, tier)
        found = handle.selfplay_header()
        if found != wanted:
            raise CurriculumError(
                f"curriculum actor {handle.name!r} keeps a pool or serving with other options "
                f"({found}); use new journal files"
            )
        handle.check_node(here)
        return handle

    def selfplay_header(self) -> dict[str, Any]:
        """The actor's pool, serving and tier options."""
        header: dict[str, Any] = self._call("selfplay_header")
        return header

    def draw(self) -> tuple[str, Any, Any]:
        """The next row's role and what makes it (:meth:`SelfPlayService.draw`)."""
        drawn: tuple[str, Any, Any] = self._call("draw")
        return drawn

    def offer(
        self,
        env_id: str,
        completion: str,
        prompt_seed: int | None,
        step: int | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """Offer a written instance to the actor's pool; the admission as a small dict."""
        summary: dict[str, Any] = self._call("offer", env_id, completion, prompt_seed, step, model)
        return summary

    def selfplay_stats(self) -> dict[str, Any]:
        """The actor's serving statistics and pool counts."""
        stats: dict[str, Any] = self._call("selfplay_stats")
        return stats


def configured_pool_journal() -> Path | None:
    """The pool journal :data:`POOL_JOURNAL_ENV` names (``None`` when unset); a relative path
    is refused (reward workers may run in other folders)."""
    value = os.environ.get(POOL_JOURNAL_ENV)
    if not value:
        return None
    path = Path(value)
    if not path.is_absolute():
        raise CurriculumError(f"{POOL_JOURNAL_ENV} must be an absolute path, got {value!r}")
    return path


_local: dict[tuple[str, str], SelfPlayService] = {}
"""This process's services of the ``journal`` backend, by (curriculum journal, pool journal)."""


def _header(path: Path, what: str) -> dict[str, Any]:
    """The first line of the journal at ``path`` (read at most 64 KiB; the replica that
    opens it next checks it fully), refused when there is no such file: reward processes never
    make journals."""
    try:
        with open(path, "rb") as file:
            header = json.loads(file.readline(1 << 16))
    except FileNotFoundError:
        raise CurriculumError(
            f"{what} {path} not found: rewards must be computed on the machine whose dataset "
            "made it (a journal is a local file)"
        ) from None
    except (OSError, ValueError) as error:
        raise CurriculumError(f"{what} {path}: no journal header ({error})") from None
    if not isinstance(header, dict):
        raise CurriculumError(f"{what} {path}: no journal header")
    return header


def _local_service(journal: Path, pool_journal: Path) -> SelfPlayService:
    """This process's replica of the curriculum and the pool, made from the journals' headers
    (the curriculum's tasks and options, the pool's options) on first use."""
    key = (str(journal), str(pool_journal))
    if key not in _local:
        try:
            state = _header(journal, "curriculum journal")["curriculum"]
            options = dict(state["options"])
            options["target"] = tuple(options["target"])
            curriculum = AdaptiveCurriculum(state["tasks"], **options)
            pool = dict(_header(pool_journal, "pool journal")["pool"])
        except (KeyError, TypeError, ValueError) as error:
            raise CurriculumError(f"a self-play journal's header is malformed: {error}") from None
        pool_options = {name: pool[name] for name in POOL_OPTIONS if name in pool}
        _local[key] = SelfPlayService(curriculum, str(journal), str(pool_journal), pool_options)
    return _local[key]


def offer_to_pool(
    env_id: str, completion: str, prompt_seed: int | None, step: int | None = None
) -> dict[str, Any]:
    """Offer a written instance to the pool this process is configured with (its environment:
    the curriculum actor under Ray, else the pool journal); the admission as a small dict."""
    journal = configured_journal()
    if journal is None:
        raise CurriculumError(
            "an author row's score offers to the pool, but NPGYM_CURRICULUM_JOURNAL is not set "
            "in this process: set it (the curriculum journal's absolute path)"
        )
    model = os.environ.get(MODEL_ENV) or None
    if configured_backend() == "ray":
        handle = RaySelfPlay(actor_name(journal), ACTOR_NAMESPACE, configured_timeout())
        return handle.offer(env_id, completion, prompt_seed, step, model)
    pool_journal = configured_pool_journal()
    if pool_journal is None:
        raise CurriculumError(
            f"an author row's score offers to the pool, but {POOL_JOURNAL_ENV} is not set in "
            "this process: set it (the pool journal's absolute path)"
        )
    return _local_service(journal, pool_journal).offer(env_id, completion, prompt_seed, step, model)


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    reward: Any = None,
    **_: Any,
) -> dict[str, float]:
    """verl's reward hook for self-play rows: :func:`npgym.integrations.verl.compute_score`,
    plus an offer of an author row's response to the pool (module docstring)."""
    info = extra_info or {}
    result = npgym_verl.compute_score(data_source, solution_str, ground_truth, info, reward)
    admitted = 0.0
    author = info.get(ROLE_FIELD) == AUTHOR
    if author:
        fields = json.loads(info["instance"])
        environment = f"npgym/{fields['task']}-{fields['tier']}"
        admitted = float(offer_to_pool(environment, solution_str, int(fields["seed"]))["admitted"])
    return {**result, "selfplay_author": float(author), "selfplay_admitted": admitted}


class SelfPlayDraws:
    """Stands in for ``RLHFDataset.dataframe``: ``size`` rows, alternately author and forward,
    drawn from a :class:`SelfPlayService` (local) or a :class:`RaySelfPlay` actor."""

    def __init__(
        self,
        source: SelfPlayService | RaySelfPlay,
        size: int,
        reference: ReferenceMode = "exact",
        tier: str = "easy",
        seed: int = 0,
    ) -> None:
        self.source = source
        self.size = size
        self.reference: ReferenceMode = reference
        self.tier = tier
        self.seed = seed

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> dict[str, Any]:
        role, what, reference = self.source.draw()
        if role == AUTHOR:
            record = invert_record(what, reference, tier=self.tier, seed=self.seed)
            row = verl_row(record, index, "train")
            row["extra_info"] |= {ROLE_FIELD: AUTHOR, KEY_FIELD: ""}
            return row
        item: CurriculumItem = what
        task = get_task(item.task)
        solved: Reference | None = reference
        if solved is None and self.reference != "none":
            solved = task.reference(item.instance, exact=self.reference == "exact")
        row = verl_row(
            make_record(f"curriculum/{item.key}", task, item.instance, solved), index, "train"
        )
        row["extra_info"] |= {
            ROLE_FIELD: SOLVER,
            KEY_FIELD: item.key,
            "difficulty": item.difficulty,
        }
        return row


def selfplay_draws(
    curriculum_options: Any, selfplay_options: Any, max_samples: int = -1
) -> SelfPlayDraws:
    """The draws configured by ``data.npgym_curriculum`` and ``data.npgym_selfplay`` (module
    docstring). Sets this process's reporting environment, the pool journal's included."""
    from omegaconf import DictConfig, OmegaConf

    from npgym.integrations.ray_curriculum import export_environment, read_curriculum_config

    def plain(options: Any) -> dict[str, Any]:
        if isinstance(options, DictConfig):
            options = OmegaConf.to_container(options, resolve=True)
        return dict(options or {})

    settings, selfplay = plain(curriculum_options), plain(selfplay_options)
    config = read_curriculum_config(settings, max_samples, "self-play")
    journal, size, reference = config.journal, config.size, config.reference
    timeout, start_timeout, backend = config.timeout, config.start_timeout, config.backend
    settings = config.options
    named_pool = selfplay.pop("journal", None)
    pool_journal = Path(named_pool).absolute() if named_pool else configured_pool_journal()
    if pool_journal is None:
        raise ValueError(
            f"self-play needs a pool journal: data.{CONFIG_KEY}.journal or {POOL_JOURNAL_ENV}"
        )
    tier = str(selfplay.pop("tier", "easy"))
    pool_options = {name: selfplay.pop(name) for name in POOL_OPTIONS if name in selfplay}
    serving_options = {name: selfplay.pop(name) for name in SERVING_OPTIONS if name in selfplay}
    if selfplay:
        raise ValueError(f"unknown data.{CONFIG_KEY} options: {', '.join(sorted(selfplay))}")
    if backend == "journal":  # reports of pool items would reach no served entry
        serving_options["pool_ratio"] = 0.0
    current = os.environ.get(POOL_JOURNAL_ENV)
    if current and current != str(pool_journal):
        raise ValueError(
            f"the environment sets {POOL_JOURNAL_ENV}={current!r}, but the pool journal is "
            f"{str(pool_journal)!r}: reward processes would offer elsewhere; unset it or make "
            "them agree"
        )
    export_environment(journal, backend, timeout)
    os.environ[POOL_JOURNAL_ENV] = str(pool_journal)
    curriculum = AdaptiveCurriculum(config.tasks, **settings)
    source: SelfPlayService | RaySelfPlay
    if backend == "ray":
        source = RaySelfPlay.start_selfplay(
            curriculum,
            journal,
            pool_journal,
            pool_options,
            serving_options,
            tier,
            timeout=timeout,
            start_timeout=start_timeout,
        )
    else:
        source = SelfPlayService(
            curriculum, str(journal), str(pool_journal), pool_options, serving_options, tier
        )
    seed = int(serving_options.get("seed", 0))
    return SelfPlayDraws(source, size, reference, tier, seed)


def _dataset_class() -> type:
    """verl's curriculum dataset class drawing self-play rows (made on first use: importing
    this module needs no verl)."""
    from npgym.integrations.verl_curriculum import CurriculumRLHFDataset

    class SelfPlayRLHFDataset(CurriculumRLHFDataset):
        """verl's RLHF dataset whose rows alternate author and forward self-play rows."""

        def _read_files_and_tokenize(self) -> None:
            if not self._draws_from_curriculum():
                super()._read_files_and_tokenize()
                return
            self.dataframe = selfplay_draws(
                self.config.get("npgym_curriculum"), self.config.get(CONFIG_KEY), self.max_samples
            )

    SelfPlayRLHFDataset.__module__ = __name__
    return SelfPlayRLHFDataset


def __getattr__(name: str) -> Any:
    """``SelfPlayRLHFDataset``, made when verl's loader asks for it (it needs verl)."""
    if name == "SelfPlayRLHFDataset":
        globals()[name] = cls = _dataset_class()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
