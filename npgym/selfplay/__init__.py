"""Self-play: a policy writes its own problems, npgym proves them, the curriculum serves them.

:class:`SelfPlayPool` admits the instances a policy writes (an Invert answer, or an instance in a
task's JSON form) only when they are read within the caps, valid, proven optimal with a
certificate, new (not in the pool, the generator's stream or NP-Bench) and not trivial; each
refusal has a reason (:data:`REASONS`), counted. Admitted entries keep their provenance and
persist in a crash-safe journal (:mod:`npgym.selfplay.journal`). See :mod:`npgym.selfplay.pool`.
:class:`SelfPlayCurriculum` serves a mix of generated and pool instances, and
:func:`band_reward` / :func:`author_reward` reward the author (:mod:`npgym.selfplay.serving`).
"""

from npgym.selfplay.journal import PoolJournalError
from npgym.selfplay.pool import (
    MAX_MODEL_CHARS,
    REASONS,
    Admission,
    PoolEntry,
    Provenance,
    SelfPlayPool,
    relabelling_key,
    writable_tasks,
)
from npgym.selfplay.serving import (
    AuthorReward,
    SelfPlayCurriculum,
    author_reward,
    band_reward,
)

__all__ = [
    "MAX_MODEL_CHARS",
    "REASONS",
    "Admission",
    "AuthorReward",
    "PoolEntry",
    "PoolJournalError",
    "Provenance",
    "SelfPlayCurriculum",
    "SelfPlayPool",
    "author_reward",
    "band_reward",
    "relabelling_key",
    "writable_tasks",
]
