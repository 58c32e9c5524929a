"""verl: a dataset class that draws its rows from an adaptive curriculum.

Name it in verl's config and give the curriculum's options under ``data.npgym_curriculum``::

    data.train_files=npgym-curriculum
    data.custom_cls.path=pkg://npgym.integrations.verl_curriculum
    data.custom_cls.name=CurriculumRLHFDataset
    +data.npgym_curriculum.tasks=[TSP,Knapsack]
    +data.npgym_curriculum.journal=/path/to/run/curriculum.jsonl   # or NPGYM_CURRICULUM_JOURNAL
    +data.npgym_curriculum.size=100000        # the epoch length verl sees
    # optional: seed, target, start, step, window, pass_ratio, min_difficulty, max_difficulty,
    # memory (AdaptiveCurriculum's options), reference (exact|heuristic|none), multi_turn,
    # backend (auto|ray|journal), actor_timeout, actor_start_timeout,
    # reference_workers, prefetch (a reference pool per drawing process; off by default)
    reward.custom_reward_function.path=<npgym/integrations/verl.py>
    reward.custom_reward_function.name=compute_score

Only the data file named ``npgym-curriculum`` is drawn: real files (``data.val_files``, e.g. an
``npgym export --format verl`` of NP-Bench) are read as :class:`RLHFDataset` reads them, so
validation stays fixed and does not report. Each draw ignores the sampler's index and takes the
curriculum's next item; its ``extra_info`` carries its ``curriculum_key`` (and ``difficulty``),
never where to report: :func:`npgym.integrations.verl.compute_score` reports every sample's score
(each of a GRPO group's samples is one report) to the curriculum its process is configured with.
Prompts are not filtered by length: pick ``max_difficulty`` so they fit
``data.max_prompt_length``.

**How reward workers find the journal.** Through the environment, never through rows (a row is
data; see :mod:`npgym.integrations.curriculum`): ``NPGYM_CURRICULUM_JOURNAL`` (the journal's
absolute path), ``NPGYM_CURRICULUM_BACKEND`` and ``NPGYM_CURRICULUM_ACTOR_TIMEOUT``
(:mod:`npgym.integrations.ray_curriculum`). The dataset sets all three in its own process (and
so in processes it starts), from its options; an option left out is read from its variable, and
a variable that disagrees with its option is refused. verl scores in other Ray workers, which do
not see the dataset's process's environment, so export the journal before launching::

    export NPGYM_CURRICULUM_JOURNAL=/runs/r1/curriculum.jsonl   # then no journal option needed
    python -m verl.trainer.main_ppo ... data.train_files=npgym-curriculum ...

(on a cluster started with ``ray start``, export it before ``ray start`` on every node, or add
``+ray_kwargs.ray_init.runtime_env.env_vars.NPGYM_CURRICULUM_JOURNAL=...``). A reward worker
given a row with a key and no journal raises :class:`~npgym.curriculum.CurriculumError`.

Where the curriculum lives (``+data.npgym_curriculum.backend``):

- ``ray`` (what ``auto``, the default, picks when Ray is initialised, as it always is under
  verl's trainer): a named, detached Ray actor pinned to the node that builds the dataset keeps
  the journal on that node's disk (:mod:`npgym.integrations.ray_curriculum`). The dataset and
  its dataloader workers draw from that journal file as the ``journal`` backend does (no Ray
  call, so forked DataLoader workers are fine); reward workers on any node report to the actor
  that their ``NPGYM_CURRICULUM_JOURNAL`` names, which appends to the same journal under the same
  lock. ``actor_timeout``
  (seconds per call, default :data:`~npgym.integrations.ray_curriculum.CALL_TIMEOUT_S`) and
  ``actor_start_timeout`` (:data:`~npgym.integrations.ray_curriculum.START_TIMEOUT_S`) bound
  every call to the actor.
- ``journal`` (what ``auto`` picks without Ray): the journal file under a file lock, one machine
  only (:class:`npgym.integrations.curriculum.CurriculumJournal`): rewards must be computed on
  the machine whose dataset drew the row.

Either way, before each draw the dataset replays the journal's new lines, so the frontier
follows the reports even across dataloader worker processes. Draws run ahead of training by the
dataloader's prefetch (``data.dataloader_num_workers=0`` keeps that to one batch).

``reference_workers=K`` (default 0: off) gives each drawing process (the trainer's, or each
DataLoader worker) a :class:`npgym.reference_pool.ReferencePool` of ``K`` workers, which computes
each drawn row's reference and those of the draws expected next, ``prefetch`` in flight (default
:data:`npgym.reference_pool.DEFAULT_PREFETCH`); rows are the same as without it
(:class:`npgym.integrations.curriculum.CurriculumPrefetch`). It pays most with
``data.dataloader_num_workers=0``: DataLoader workers already compute rows ahead in parallel.
"""

from __future__ import annotations

import os
from typing import Any

from omegaconf import DictConfig, OmegaConf
from verl.utils.dataset.rl_dataset import RLHFDataset

from npgym.curriculum import AdaptiveCurriculum
from npgym.datasets import ReferenceMode
from npgym.integrations.curriculum import (
    KEY_FIELD,
    CurriculumJournal,
    CurriculumPrefetch,
    curriculum_record,
)
from npgym.integrations.ray_curriculum import (
    CONFIG_KEY,
    RayCurriculum,
    export_environment,
    read_curriculum_config,
)
from npgym.reference_pool import DEFAULT_PREFETCH, ReferencePool
from npgym.trainer_rows import verl_row

CURRICULUM_FILES = "npgym-curriculum"
"""The ``data.train_files`` value that makes :class:`CurriculumRLHFDataset` draw."""


class CurriculumDraws:
    """Stands in for ``RLHFDataset.dataframe``: ``size`` rows, each a fresh curriculum draw."""

    def __init__(
        self,
        journal: CurriculumJournal,
        size: int,
        reference: ReferenceMode = "exact",
        multi_turn: bool = False,
        actor: RayCurriculum | None = None,
        reference_workers: int = 0,
        prefetch: int = DEFAULT_PREFETCH,
    ) -> None:
        self.journal = journal
        """Where draws come from: this node's journal replica (no Ray call, so it can be used
        in forked DataLoader workers)."""
        self.actor = actor
        """The Ray actor keeping the same journal, that reward workers report to; ``None``:
        they report to the journal file."""
        self.size = size
        self.reference: ReferenceMode = reference
        self.multi_turn = multi_turn
        self.reference_workers = reference_workers
        self.prefetch = prefetch
        self._prefetch: tuple[int, CurriculumPrefetch] | None = None

    def __len__(self) -> int:
        return self.size

    def _pool(self) -> CurriculumPrefetch | None:
        """This process's reference pool (``None`` when off), made on first use in each
        process: a DataLoader worker forked from the dataset must not share its parent's."""
        if not self.reference_workers or self.reference == "none":
            return None
        if self._prefetch is None or self._prefetch[0] != os.getpid():
            pool = ReferencePool(self.reference_workers, self.prefetch)
            self._prefetch = (
                os.getpid(),
                CurriculumPrefetch(self.journal.curriculum, pool, self.reference),
            )
        return self._prefetch[1]

    def __getitem__(self, index: int) -> dict[str, Any]:
        item = self.journal.next()
        record = curriculum_record(item, self.reference, self._pool())
        row = verl_row(record, index, "train", self.multi_turn)
        row["extra_info"] |= {KEY_FIELD: item.key, "difficulty": item.difficulty}
        return row


def curriculum_draws(options: Any, max_samples: int = -1) -> CurriculumDraws:
    """The draws configured by ``data.npgym_curriculum`` (a mapping; see the module docstring).
    Sets this process's reporting environment (``NPGYM_CURRICULUM_JOURNAL`` and the others)."""
    if isinstance(options, DictConfig):
        options = OmegaConf.to_container(options, resolve=True)
    settings = dict(options) if isinstance(options, dict) else {}
    multi_turn = bool(settings.pop("multi_turn", False))
    reference_workers = int(settings.pop("reference_workers", 0))
    prefetch = int(settings.pop("prefetch", DEFAULT_PREFETCH))
    if reference_workers:  # the pool's own checks, at config time rather than the first draw
        ReferencePool(reference_workers, prefetch).close()
    config = read_curriculum_config(settings, max_samples, f"data.train_files={CURRICULUM_FILES}")
    export_environment(config.journal, config.backend, config.timeout)
    actor = None
    if config.backend == "ray":  # the actor is started first: it refuses a journal of other options
        actor = RayCurriculum.start(
            AdaptiveCurriculum(config.tasks, **config.options),
            config.journal,
            timeout=config.timeout,
            start_timeout=config.start_timeout,
        )
    replica = CurriculumJournal(AdaptiveCurriculum(config.tasks, **config.options), config.journal)
    return CurriculumDraws(
        replica, config.size, config.reference, multi_turn, actor, reference_workers, prefetch
    )


class CurriculumRLHFDataset(RLHFDataset):
    """verl's RLHF dataset whose rows come from an adaptive curriculum (module docstring)."""

    def _draws_from_curriculum(self) -> bool:
        return [str(path) for path in self.original_data_files] == [CURRICULUM_FILES]

    def _download(self, use_origin_parquet: bool = False) -> None:
        if not self._draws_from_curriculum():
            super()._download(use_origin_parquet)

    def _read_files_and_tokenize(self) -> None:
        if not self._draws_from_curriculum():
            super()._read_files_and_tokenize()
            return
        self.dataframe = curriculum_draws(self.config.get(CONFIG_KEY), self.max_samples)
