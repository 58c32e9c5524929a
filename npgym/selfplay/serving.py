"""Serving the self-play pool: a curriculum that mixes generated and written instances, and
the author's reward for writing problems at the edge of the solver's ability.

**The mix.** :class:`SelfPlayCurriculum` wraps an :class:`~npgym.curriculum.AdaptiveCurriculum`
and a :class:`~npgym.selfplay.pool.SelfPlayPool`. Each :meth:`SelfPlayCurriculum.next` draws one
uniform number from its own seeded generator (``derive_seed("selfplay-curriculum", seed)``):
below ``pool_ratio`` (default :data:`DEFAULT_POOL_RATIO`, a quarter of the forward rows) and
with a non-empty pool, it serves a pool entry; otherwise the curriculum's next item. The pool
entry served is the one served least so far, ties broken by admission index, so a newly
admitted instance is served next and gathers the solver's attempts quickly. Pool items have the
key ``selfplay/<index>`` and the difficulty :data:`POOL_DIFFICULTY` (they are not on the
knob). The same calls in the same order (draws, reports, admissions) give the same items.

Reports (:meth:`SelfPlayCurriculum.report`) of generated items go to the curriculum and move its
frontiers; reports of pool items are counted per entry (attempts and passes, a pass as the
curriculum counts one: feasible and ratio at least its ``pass_ratio``) and move no frontier.

**The author's reward** (SvS's signal: problems at the edge of the solver's ability are the
useful ones). With ``p`` the solver's pass rate on a written instance and the band
``(low, high)`` (default: the curriculum's own target band), :func:`band_reward` is

- ``1`` for ``low <= p <= high``;
- ``p / low`` below the band;
- ``(1 - p) / (1 - high)`` above it.

It is 0 exactly at ``p = 0`` (the solver never solves it: no learning signal, and maybe beyond
any solver) and at ``p = 1`` (it always does: nothing to learn), 1 across the band, and linear
and continuous in between; a GRPO group whose samples all pass or all fail has no advantage to
learn from, which is why these ends earn nothing. Two ways to measure ``p``:

- later, from serving: :meth:`SelfPlayCurriculum.author_reward` of an entry once it has
  ``min_attempts`` reports (``None`` before); for logging, and for trainers that can reward late;
- now, SvS-style: :func:`author_reward` samples the solver ``k`` times on the admitted
  instance's prompt through a ``solve(prompts) -> completions`` callable and scores each
  against the pool's proven reference. A refused instance earns 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.datasets import ReferenceMode
from npgym.integrations.trl import completion_text
from npgym.records import Row, make_record
from npgym.registry import get_task
from npgym.results import Score
from npgym.seeding import derive_seed
from npgym.selfplay.pool import Admission, PoolEntry, SelfPlayPool

DEFAULT_POOL_RATIO = 0.25
"""The share of forward rows served from the pool (when it is not empty) by default."""
DEFAULT_MIN_ATTEMPTS = 8
"""Solver reports an entry needs before its pass rate counts (for the author's reward)."""
DEFAULT_SOLVER_SAMPLES = 8
"""Solver samples :func:`author_reward` draws per written instance by default (SvS's k)."""
MAX_SOLVER_SAMPLES = 1024
"""The most solver samples :func:`author_reward` takes per instance."""
KEY_PREFIX = "selfplay/"
"""A pool item's key is this followed by its entry's admission index."""
POOL_DIFFICULTY = -1.0
"""The difficulty of a pool item: written instances are not on the difficulty knob."""
STATE_VERSION = 1
"""Version of :meth:`SelfPlayCurriculum.state_dict`'s layout; another version is refused."""


def _check_band(band: tuple[float, float]) -> tuple[float, float]:
    """``band`` as two floats, refused unless ``0 <= low < high <= 1``."""
    try:
        low, high = (float(bound) for bound in band)
    except (TypeError, ValueError):
        raise ValueError(f"a pass-rate band is two numbers (low, high), got {band!r}") from None
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"a pass-rate band needs 0 <= low < high <= 1, got {band!r}")
    return low, high


def band_reward(pass_rate: float, band: tuple[float, float]) -> float:
    """The author's reward for a solver pass rate (the module docstring's formula): 1 inside
    ``band``, falling linearly to 0 at a pass rate of 0 below it and of 1 above it."""
    low, high = _check_band(band)
    if not 0.0 <= pass_rate <= 1.0:  # NaN too
        raise ValueError(f"a pass rate lies in [0, 1], got {pass_rate!r}")
    if pass_rate < low:
        return pass_rate / low
    if pass_rate > high:
        return (1.0 - pass_rate) / (1.0 - high)
    return 1.0


def pool_key(index: int) -> str:
    """The curriculum key of the pool entry admitted ``index``-th."""
    return f"{KEY_PREFIX}{index}"


def _entry_index(key: str) -> int | None:
    """The entry index a pool key names (``None`` for a key that is not a pool key)."""
    if not key.startswith(KEY_PREFIX):
        return None
    digits = key.removeprefix(KEY_PREFIX)
    if not digits.isdigit() or not digits.isascii() or (digits != "0" and digits[0] == "0"):
        raise CurriculumError(f"{key!r} is not a pool key ({KEY_PREFIX}<index>)")
    return int(digits)


@dataclass(slots=True)
class _EntryStats:
    """How often one pool entry was served and reported, and how often the solver passed."""

    served: int = 0
    attempts: int = 0
    passes: int = 0


class SelfPlayCurriculum:
    """Generated instances from ``curriculum`` mixed with written ones from ``pool`` (module
    docstring). ``band`` (default: the curriculum's ``target``) and ``min_attempts`` define the
    author's reward of an entry (:meth:`author_reward`). ``draw`` draws a generated item
    (default ``curriculum.next``; a journal replica's ``next`` keeps a curriculum shared by
    several processes in step, :mod:`npgym.selfplay.verl`).

    >>> from npgym.selfplay import SelfPlayPool
    >>> serving = SelfPlayCurriculum(AdaptiveCurriculum(["Knapsack"]), SelfPlayPool(["Knapsack"]))
    >>> item = serving.next()  # the curriculum's, until the pool admits something
    >>> serving.report(item, 2.0)
    True
    """

    def __init__(
        self,
        curriculum: AdaptiveCurriculum,
        pool: SelfPlayPool,
        *,
        pool_ratio: float = DEFAULT_POOL_RATIO,
        seed: int = 0,
        band: tuple[float, float] | None = None,
        min_attempts: int = DEFAULT_MIN_ATTEMPTS,
        draw: Callable[[], CurriculumItem] | None = None,
    ) -> None:
        if isinstance(pool_ratio, bool) or not 0.0 <= float(pool_ratio) <= 1.0:
            raise ValueError(f"pool_ratio must lie in [0, 1], got {pool_ratio!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        if isinstance(min_attempts, bool) or not isinstance(min_attempts, int) or min_attempts < 1:
            raise ValueError(f"min_attempts must be a positive integer, got {min_attempts!r}")
        self.curriculum = curriculum
        self.pool = pool
        self.pool_ratio = float(pool_ratio)
        self.seed = seed
        self.band = _check_band(band if band is not None else curriculum.target)
        self.min_attempts = min_attempts
        self._draw = draw or curriculum.next
        self._rng = np.random.default_rng(derive_seed("selfplay-curriculum", seed))
        self._stats: list[_EntryStats] = []

    # --- issuing --------------------------------------------------------------------------------

    def next(self) -> CurriculumItem:
        """The next forward item: a pool entry with probability ``pool_ratio`` (when the pool
        has one), else the curriculum's next item."""
        draw = float(self._rng.random())
        entries = self.pool.entries()
        self._track(entries)
        if draw < self.pool_ratio and entries:
            index = min(range(len(entries)), key=lambda i: (self._stats[i].served, i))
            self._stats[index].served += 1
            entry = entries[index]
            return CurriculumItem(entry.task, entry.instance, POOL_DIFFICULTY, pool_key(index))
        return self._draw()

    def _track(self, entries: Sequence[PoolEntry]) -> None:
        """Counters for every entry admitted so far (the pool only grows)."""
        while len(self._stats) < len(entries):
            self._stats.append(_EntryStats())

    def entry(self, item: CurriculumItem | str) -> PoolEntry | None:
        """The pool entry a pool item serves (``None`` for a generated item)."""
        index = _entry_index(item.key if isinstance(item, CurriculumItem) else item)
        return None if index is None else self._served_entry(index)

    def _served_entry(self, index: int) -> PoolEntry:
        entries = self.pool.entries()
        if index >= len(entries) or index >= len(self._stats) or not self._stats[index].served:
            raise CurriculumError(f"pool item {pool_key(index)!r} was never served")
        return entries[index]

    def record(self, item: CurriculumItem, reference: ReferenceMode = "exact") -> Row:
        """The npgym row of a served item: a pool item with the pool's proven reference, a
        generated one solved as ``reference`` asks (as a curriculum row is)."""
        entry = self.entry(item)
        task = get_task(item.task)
        if entry is not None:
            return make_record(f"curriculum/{item.key}", task, item.instance, entry.reference)
        solved = None
        if reference != "none":
            solved = task.reference(item.instance, exact=reference == "exact")
        return make_record(f"curriculum/{item.key}", task, item.instance, solved)

    # --- learning -------------------------------------------------------------------------------

    def accepts(self, key: object) -> bool:
        """Whether :meth:`report` takes ``key``: a served pool item, or an item the curriculum
        issued and remembers."""
        if not isinstance(key, str):
            return False
        try:
            index = _entry_index(key)
        except CurriculumError:
            return False
        if index is None:
            return self.curriculum.accepts(key)
        return index < len(self._stats) and self._stats[index].served > 0

    def report(self, item: CurriculumItem | str, score: Score | float) -> bool:
        """Record the solver's result on a served item; returns whether it passed. A pool
        item's result is counted for its entry; a generated item's goes to the curriculum."""
        key = item.key if isinstance(item, CurriculumItem) else item
        index = _entry_index(key)
        if index is None:
            return self.curriculum.report(key, score)
        self._served_entry(index)
        passed = self.curriculum.passed(score)
        stats = self._stats[index]
        stats.attempts += 1
        stats.passes += passed
        return passed

    def pass_rate(self, index: int) -> float | None:
        """The solver's pass rate on entry ``index`` (``None`` before ``min_attempts``)."""
        stats = self._stats[index] if index < len(self._stats) else _EntryStats()
        if stats.attempts < self.min_attempts:
            return None
        return stats.passes / stats.attempts

    def author_reward(self, index: int) -> float | None:
        """The author's reward for entry ``index`` from its served pass rate
        (:func:`band_reward`; ``None`` before ``min_attempts`` reports)."""
        rate = self.pass_rate(index)
        return None if rate is None else band_reward(rate, self.band)

    def stats(self) -> dict[str, dict[str, float]]:
        """The curriculum's per-task statistics and, under ``selfplay``, the pool's: entries,
        pool items served and reported, their pass rate, entries rated (``min_attempts``
        reports or more) and the share of rated entries whose pass rate is in the band."""
        low, high = self.band
        attempts = sum(stats.attempts for stats in self._stats)
        rated = [
            rate for index in range(len(self._stats)) if (rate := self.pass_rate(index)) is not None
        ]
        return {
            **self.curriculum.stats(),
            "selfplay": {
                "entries": len(self.pool),
                "served": sum(stats.served for stats in self._stats),
                "reports": attempts,
                "pass_rate": (
                    sum(stats.passes for stats in self._stats) / attempts if attempts else 0.0
                ),
                "rated": len(rated),
                "in_band": (
                    sum(low <= rate <= high for rate in rated) / len(rated) if rated else 0.0
                ),
            },
        }

    # --- resuming -------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue identically with the same pool (JSON-serialisable):
        the options, the generator, the per-entry counters and the curriculum's state."""
        return {
            "version": STATE_VERSION,
            "options": {
                "pool_ratio": self.pool_ratio,
                "seed": self.seed,
                "band": list(self.band),
                "min_attempts": self.min_attempts,
            },
            "rng": self._rng.bit_generator.state,
            "entries": [[s.served, s.attempts, s.passes] for s in self._stats],
            "curriculum": self.curriculum.state_dict(),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any], pool: SelfPlayPool) -> SelfPlayCurriculum:
        """A self-play curriculum that continues exactly where :meth:`state_dict` was taken,
        serving ``pool`` (the same pool, reopened from its journal)."""
        version = state.get("version") if isinstance(state, dict) else None
        if version != STATE_VERSION:
            raise CurriculumError(
                f"self-play curriculum state version {version!r} is not {STATE_VERSION}"
            )
        try:
            options = dict(state["options"])
            options["band"] = tuple(options["band"])
            serving = cls(AdaptiveCurriculum.from_state(state["curriculum"]), pool, **options)
            serving._rng.bit_generator.state = state["rng"]
            serving._stats = [_EntryStats(*map(int, counts)) for counts in state["entries"]]
        except (KeyError, TypeError, ValueError) as error:
            raise CurriculumError(f"malformed self-play curriculum state: {error}") from error
        if len(serving._stats) > len(pool):
            raise CurriculumError(
                f"the state counts {len(serving._stats)} pool entries, the pool holds "
                f"{len(pool)}: not the pool it was taken with"
            )
        return serving


Solve = Callable[[list[str]], Sequence[Any]]
"""``solve(prompts) -> completions``: the solver's completion (text, or chat messages) for each
prompt, e.g. a vLLM or ``transformers`` generation with the trainer's current model."""


@dataclass(frozen=True, slots=True)
class AuthorReward:
    """The SvS-style author reward of one offer: the reward, and the solver's pass rate on the
    written instance (``None`` when it was refused and so never solved)."""

    reward: float
    pass_rate: float | None
    scores: tuple[Score, ...] = ()


def author_reward(
    pool: SelfPlayPool,
    admission: Admission,
    solve: Solve,
    *,
    band: tuple[float, float] = (0.3, 0.7),
    k: int = DEFAULT_SOLVER_SAMPLES,
    pass_ratio: float = 1.0,
) -> AuthorReward:
    """Score an author's offer now, SvS-style: sample the solver ``k`` times (one ``solve``
    call with ``k`` copies of the admitted instance's prompt), score each completion against
    the pool's proven reference, and reward the pass rate with :func:`band_reward`. A pass is a
    feasible answer whose clipped optimality ratio is at least ``pass_ratio``. A refused offer
    earns 0 and calls nothing."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SOLVER_SAMPLES:
        raise ValueError(f"k must be an integer in [1, {MAX_SOLVER_SAMPLES}], got {k!r}")
    if not 0.0 < pass_ratio <= 1.0:
        raise ValueError(f"pass_ratio must lie in (0, 1], got {pass_ratio!r}")
    _check_band(band)
    if not admission.admitted or admission.entry is None:
        return AuthorReward(0.0, None)
    entry = pool.entry(admission.entry.fingerprint)
    task = get_task(entry.task)
    completions = list(solve([task.prompt(entry.instance)] * k))
    if len(completions) != k:
        raise ValueError(f"solve returned {len(completions)} completions for {k} prompts")
    scores = tuple(
        task.score(entry.instance, completion_text(completion), entry.reference)
        for completion in completions
    )
    rate = sum(s.feasible and s.optimality >= pass_ratio for s in scores) / k
    return AuthorReward(band_reward(rate, band), rate, scores)
