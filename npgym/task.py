"""The task base class: generation, prompt, parsing, verification, reference and reward.

A task subclass supplies the problem-specific parts: ``build`` (the generator), ``prompt``,
``to_solution`` (answer shape), ``check`` (the numba-backed verifier) and ``solve`` (reference
solvers), plus its instance and config types and tier presets. Everything else (seeding, tiers,
difficulty, answer extraction, reward, memoised references, JSON) lives here once.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Literal, TypeVar

import numpy as np
from pydantic import BaseModel

from npgym.answer import (
    MAX_ANSWER_CHARS,
    WHITESPACE,
    AnswerFormatError,
    IntRows,
    answer_tail,
    bounded_text,
    decode_completion,
    extract_answer,
    parse_value_fast,
    render_value,
)
from npgym.config import TIER_DIFFICULTY, GeneratorConfig, overrides_or_config, resolve_config
from npgym.instance import Instance
from npgym.results import NOT_SCANNED, Objective, Reference, Score, Verdict, checked_reference
from npgym.reward import (
    DEFAULT_REWARD,
    RewardConfig,
    RewardSpec,
    Sense,
    clip_ratio,
    gap_closed,
    optimality_ratio,
    resolve_reward,
)

Category = Literal[
    "graph clustering",
    "resource scheduling",
    "graph partitioning",
    "subset selection",
    "path planning",
    "composition",
]
"""The NP-Bench categories, in report order (``composition`` for the composed family tasks): a
closed set, checked when a task registers."""

InstanceT = TypeVar("InstanceT", bound=Instance)
ConfigT = TypeVar("ConfigT", bound=GeneratorConfig)

GUARD_TRIPS: Counter[tuple[str, str]] = Counter()
"""How often :meth:`Task.score`'s last-resort guard caught an exception, by (task, step).

Always zero unless there is a bug; the test suite fails if a fuzz run ever trips it."""

_log = logging.getLogger("npgym")

DEFAULT_TIME_LIMIT = 60.0
"""Nominal seconds of work a reference may spend before it reports its best bound instead.

Solvers turn it into deterministic work budgets (nodes, LP columns, CP-SAT deterministic time;
see :mod:`npgym.heuristics.budget`), calibrated so that an idle machine needs about that long:
whether a reference is proven never depends on machine load. The wall clock only backs this up,
at :data:`npgym.heuristics.budget.SAFETY_FACTOR` times the limit."""


def _reference_key(exact: bool, time_limit: float) -> str:
    """Where :meth:`Task.reference` keeps a reference in the instance's cache."""
    return f"reference:{bool(exact)}:{float(time_limit)}"


_DEFAULT_REFERENCE_KEY = _reference_key(True, DEFAULT_TIME_LIMIT)


def generation_stream(seed: int, difficulty: float | None) -> int | list[int]:
    """The random stream of ``generate(seed, ...)`` at ``difficulty``.

    The benchmark tier (and a complete config passed in, ``difficulty=None``) draws from the seed
    alone, so NP-Bench's bytes never change. Every other difficulty keys the stream by the seed
    and the difficulty (in millionths), so one seed gives unrelated instances in different tiers:
    seed 5 is not the same kind of instance (the same planted structure, the same draws) at
    easy, hard and benchmark.
    """
    if difficulty is None or difficulty == TIER_DIFFICULTY["benchmark"]:
        return seed
    return [seed, round(difficulty * 1_000_000)]


class Task(ABC, Generic[InstanceT, ConfigT]):
    """One NP-hard task. Subclasses set the class attributes and implement the abstract methods."""

    name: ClassVar[str]
    category: ClassVar[Category]
    """NP-Bench category, one of :data:`Category`."""
    sense: ClassVar[Sense]
    objective_name: ClassVar[str]
    """What the objective measures, for feedback text ("tour length", "clique size")."""
    instance_type: ClassVar[type[Instance]]
    tiers: ClassVar[Mapping[str, GeneratorConfig]]

    # --- optional capabilities (npgym.capabilities): the object, or "module:attribute" -------
    episode: ClassVar[type | str | None] = None
    """Its structured-mode :class:`npgym.structured.Episode` subclass (``mode="structured"``)."""
    drawer: ClassVar[Callable[..., Any] | str | None] = None
    """``draw(fig, instance, solution, partial)``: its picture (``rgb_array``, ``npgym show``)."""
    variant_maker: ClassVar[Callable[..., Any] | str | None] = None
    """``(instance, rng) -> Variant``: a variant with the same optima (``npgym.variants``)."""

    # --- generation --------------------------------------------------------------------------

    def config(
        self,
        tier: str | None = None,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | BaseModel | None = None,
    ) -> ConfigT:
        """The generator config for a tier (default ``medium``) or a difficulty in [0, 2].

        ``overrides`` lays field values over it (``{"n_min": 60, "n_max": 80}``) or replaces it
        with a complete config; bad values raise a ``pydantic.ValidationError`` naming the field.
        """
        return resolve_config(self.tiers, tier, difficulty, overrides)  # type: ignore[return-value]

    def generate(
        self,
        seed: int,
        tier: str | None = None,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | BaseModel | None = None,
        *,
        config: Mapping[str, Any] | BaseModel | None = None,
    ) -> InstanceT:
        """A fresh instance; the same arguments give the same instance on every machine.

        ``overrides`` lays generator field values over the tier or replaces its config, as in
        :meth:`config`; ``config=`` is its deprecated old name.
        """
        overrides = overrides_or_config(overrides, config, "Task.generate")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        resolved = self.config(tier, difficulty, overrides)
        if isinstance(overrides, BaseModel):
            tier, difficulty = None, None
        elif difficulty is None:
            tier = tier or "medium"
            difficulty = TIER_DIFFICULTY[tier]
        rng = np.random.default_rng(generation_stream(int(seed), difficulty))
        fields = self.build(rng, resolved)
        return self.instance_type(  # type: ignore[return-value]
            task=self.name,
            tier=tier,
            seed=int(seed),
            difficulty=difficulty,
            config=resolved.model_dump(mode="json"),
            **fields,
        )

    @abstractmethod
    def build(self, rng: np.random.Generator, config: ConfigT) -> dict[str, Any]:
        """Draw the instance's data fields from ``rng``.

        Only integer draws, ``rng.random()``, permutations and choices: they give the same values
        on every platform, whereas normal or exponential draws go through libm and may not.
        """

    def from_json(self, text: str | bytes) -> InstanceT:
        """Read an instance back from :meth:`Instance.to_json` output (validated)."""
        return self.instance_type.model_validate_json(text)  # type: ignore[return-value]

    # --- prompt -------------------------------------------------------------------------------

    @abstractmethod
    def prompt(self, instance: InstanceT) -> str:
        """The problem statement: data, objective, exact answer format, and the instruction to
        think step by step and finish with ``Answer: <answer>``. Plain ASCII."""

    # --- answers ------------------------------------------------------------------------------

    @abstractmethod
    def to_solution(self, value: Any) -> Any:
        """Coerce a parsed answer value (or a solution a user passes) into the task's solution
        shape, raising :class:`AnswerFormatError` when it does not have that shape."""

    @abstractmethod
    def check(self, instance: InstanceT, solution: Any) -> Verdict:
        """Feasibility and objective of a solution already in the task's shape."""

    def check_answer(self, instance: InstanceT, answer: bytes) -> tuple[int, ...] | None:
        """The fast path of :meth:`score`: read and check the answer text in one numba call.

        ``answer`` is the UTF-8 answer text (at most :data:`MAX_ANSWER_CHARS` characters). A task
        with a fused kernel returns that kernel's raw result, whose first item is the verifier's
        code, or :data:`npgym.results.NOT_SCANNED` first when the scanner did not read the answer
        (any shape but the task's, and every malformed answer): :meth:`score` then parses it
        with the full parser. A result must carry everything :meth:`verdict` needs, so that
        equal results mean equal verdicts. ``None`` (the default): the task has no fused kernel.
        """
        return None

    def verdict(self, instance: InstanceT, result: tuple[int, ...]) -> Verdict:
        """The verdict of a raw result of :meth:`check_answer` (tasks with a fused kernel)."""
        raise NotImplementedError(f"{self.name} has no fused verifier kernel")

    def check_python(self, instance: InstanceT, solution: Any) -> Verdict:
        """The verdict of the verifier's pure-Python twin, which must equal :meth:`check`'s.

        :func:`npgym.testing.check_task` compares the two on random solutions; a task whose
        verifier has no twin leaves this unimplemented, and the check says so.
        """
        raise NotImplementedError(f"{self.name} has no pure-Python twin of its verifier")

    def parse(self, completion: str) -> Any:
        """The solution in a model's completion; raises :class:`AnswerFormatError`."""
        return self.to_solution(parse_value_fast(extract_answer(completion)))

    def verify(self, instance: InstanceT, solution: Any) -> Verdict:
        """Verdict on an already-parsed solution (a list, nested lists, an array...)."""
        try:
            shaped = self.to_solution(solution)
        except AnswerFormatError as error:
            return Verdict(False, None, str(error))
        return self.check(instance, shaped)

    def format_answer(self, solution: Any) -> str:
        """The ``Answer: ...`` text that :meth:`score` accepts for ``solution``.

        ``solution`` must already be in the task's solution shape (:meth:`to_solution`): anything
        else (a string where integers belong, a list passed as text) raises
        :class:`AnswerFormatError` rather than being rendered into text that would then parse.
        """
        return "Answer: " + render_value(self.to_solution(solution))

    # --- baselines ----------------------------------------------------------------------------

    @abstractmethod
    def random_solution(self, instance: InstanceT, rng: np.random.Generator) -> Any:
        """A random answer in the task's shape: the floor that any model should beat."""

    @abstractmethod
    def greedy_solution(self, instance: InstanceT) -> Any:
        """The task's simple constructive heuristic, without local search or proof."""

    @abstractmethod
    def baseline_solution(self, instance: InstanceT) -> Any | None:
        """The feasible answer that takes no thought, or ``None`` where no such answer exists.

        For minimisation the trivially feasible answer (every vertex its own colour, all
        subsets, the identity tour, the first balanced split); for maximisation the smallest
        non-empty one (one vertex, one item, one meeting), because an empty answer is not a
        solution. The ``"strict"`` reward measures progress from it; feasible on every instance.
        """

    def baseline(self, instance: InstanceT) -> Objective | None:
        """The objective of :meth:`baseline_solution` (``None`` without one), memoised."""
        return instance.cached("baseline", self._baseline_objective, instance)

    def _baseline_objective(self, instance: InstanceT) -> Objective | None:
        solution = self.baseline_solution(instance)
        if solution is None:
            return None
        verdict = self.verify(instance, solution)
        if not verdict.feasible:
            raise RuntimeError(f"{self.name} baseline_solution is infeasible: {verdict.reason}")
        return verdict.objective

    # --- reference ----------------------------------------------------------------------------

    def reference(
        self, instance: InstanceT, *, exact: bool = True, time_limit: float | None = None
    ) -> Reference:
        """The best known solution: heuristic, then (``exact=True``) a proof of optimality.

        ``time_limit`` (default :data:`DEFAULT_TIME_LIMIT`) is the work budget in nominal
        seconds: the same instance and limit give the same reference on every machine. Never
        raises on a valid instance; an unproven reference is ``method="heuristic"`` with a bound
        and gap. Memoised per instance, so scoring many completions of one instance solves it
        once.
        """
        if exact is True and time_limit is None:  # score()'s call: a constant key
            key, limit = _DEFAULT_REFERENCE_KEY, DEFAULT_TIME_LIMIT
        else:
            limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
            if not limit >= 0:  # also refuses NaN, which would otherwise mean "no budget"
                raise ValueError(f"time_limit must be a non-negative number, got {time_limit!r}")
            key = _reference_key(exact, limit)
        return instance.cached(key, self._solve, instance, exact, limit)

    def _solve(self, instance: InstanceT, exact: bool, time_limit: float) -> Reference:
        return self.solve(instance, exact=exact, time_limit=time_limit)

    @abstractmethod
    def solve(self, instance: InstanceT, *, exact: bool, time_limit: float) -> Reference:
        """Compute a reference: the fast heuristic, then the exact method when ``exact``, every
        phase within a deterministic work budget of ``time_limit`` nominal seconds. Deterministic
        unless the wall-clock safety net fires, which the reference's ``solver`` then says."""

    # --- scoring ------------------------------------------------------------------------------

    def ratio(self, objective: Objective, reference_objective: Objective | None) -> float:
        """Unclipped optimality ratio of a feasible answer (docs/contract.md, "Reward")."""
        if reference_objective is None:
            raise ValueError(f"{self.name} reference has no objective")
        return optimality_ratio(objective, reference_objective, self.sense)

    def score(
        self,
        instance: InstanceT,
        completion: str,
        reference: Reference | Objective | None = None,
        reward: RewardSpec = None,
    ) -> Score:
        """Reward a completion (text in, :class:`Score` out). Never raises on any completion.

        ``reference`` is the reference (or its objective) to compare against; by default the
        task's exact reference, computed once per instance. Anything but a :class:`Reference`
        with a finite (or no) objective, a finite number or ``None`` raises ``ValueError`` (see
        :func:`npgym.results.checked_reference`), so the reward is always a finite number.
        ``reward`` is a preset name (``"np-engine"``, the default, or ``"strict"``; see
        :mod:`npgym.reward`) or a :class:`RewardConfig`; an unknown name raises ``ValueError``.
        Any input that is not text, or that no step can read, is a format failure with a reason;
        ``bytes`` are decoded as UTF-8, only their end (see
        :func:`npgym.answer.decode_completion`). An unexpected exception in a step is a bug: the
        last-resort guard turns it into a format failure whose reason names the step, and counts
        it in :data:`GUARD_TRIPS` so that tests can insist it never happens.
        """
        weights = DEFAULT_REWARD if reward is None else resolve_reward(reward)
        reference, reference_objective, memo = self._scoring(instance, reference, weights)
        try:
            if isinstance(completion, bytes):
                completion = decode_completion(completion)
            segment = extract_answer(completion)
        except AnswerFormatError as error:
            return _extract_failure(memo, weights, reference_objective, str(error))
        except Exception as error:  # the last-resort guard (see _score_answer)
            return self._guard(weights, reference_objective, "extract", error)
        return self._score_answer(instance, segment, weights, reference, reference_objective, memo)

    def _scoring(
        self, instance: InstanceT, reference: Reference | Objective | None, weights: RewardConfig
    ) -> tuple[Reference | Objective, Objective | None, ScoreMemo]:
        """The reference (the default one when ``None``), its objective, and the scores kept on
        ``instance`` for them and ``weights``."""
        cache = instance.__pydantic_private__["_cache"]  # type: ignore[index]  # Instance.cached's
        if reference is None:
            reference = cache.get(_DEFAULT_REFERENCE_KEY) or self.reference(instance)
        else:
            reference = checked_reference(reference)
        reference_objective = reference.objective if isinstance(reference, Reference) else reference
        # The scores kept for these weights and this objective (see SCORE_MEMO_SIZE), the
        # least recently used set dropped past SCORE_MEMOS_PER_INSTANCE; `is`, because an id is
        # reused only once the weights it named are gone.
        memos: OrderedDict[Any, tuple[RewardConfig, ScoreMemo]] | None = cache.get(_MEMOS_KEY)
        if memos is None:
            memos = cache[_MEMOS_KEY] = OrderedDict()
        key = (id(weights), reference_objective)
        entry = memos.get(key)
        if entry is None or entry[0] is not weights:
            entry = memos[key] = (weights, {})
            if len(memos) > SCORE_MEMOS_PER_INSTANCE:
                memos.popitem(last=False)
        else:
            memos.move_to_end(key)
        return reference, reference_objective, entry[1]

    def _score_answer(
        self,
        instance: InstanceT,
        segment: str,
        weights: RewardConfig,
        reference: Reference | Objective,
        reference_objective: Objective | None,
        memo: ScoreMemo,
    ) -> Score:
        """The steps of :meth:`score` after extraction, on the answer text ``segment``."""
        step = "scan"
        value: Any = None
        key: Any = None  # where the score is kept, when nothing but the key decides it
        try:
            try:
                if segment[:1] in _SCAN_STARTS:  # the scanner reads nothing else
                    answer = segment[:MAX_ANSWER_CHARS].encode("utf-8", "surrogatepass")
                    result = self.check_answer(instance, answer)
                    if result is not None and result[0] != NOT_SCANNED:
                        step = "reward"
                        score = memo.get(result)
                        if score is None:
                            verdict = self.verdict(instance, result)
                            score = self._reward(instance, weights, verdict, reference_objective)
                            _keep(memo, result, score)
                        return score
                step = "tokenise"
                value = parse_value_fast(segment)
                if type(value) is str and len(value) <= _WORD_KEY_CHARS:
                    key = ("word", value)  # a word's score is the word's alone
                    score = memo.get(key)
                    if score is not None:
                        return score
                step = "shape"
                solution = self.to_solution(value)
            except AnswerFormatError as error:
                reason = str(error)
                # The credit of a list that failed to take the task's shape depends on the
                # list's outline; every other failure's score is its step's and reason's alone.
                if key is None and not (step == "shape" and _is_list(value)):
                    key = (step, reason)
                score = memo.get(key) if key is not None else None
                if score is None:
                    credit = _format_credit(weights, step, value, reference)
                    score = _failed(weights, False, None, reference_objective, reason, credit)
                    if key is not None:
                        _keep(memo, key, score)
                return score
            step = "verify"
            verdict = self.check(instance, solution)
            step = "reward"
            score = self._reward(instance, weights, verdict, reference_objective)
            if key is not None:
                _keep(memo, key, score)
            return score
        except Exception as error:  # the last-resort guard: a bug, never a model's fault
            return self._guard(weights, reference_objective, step, error)

    def _guard(
        self,
        weights: RewardConfig,
        reference_objective: Objective | None,
        step: str,
        error: Exception,
    ) -> Score:
        """The format failure that stands for a bug in ``step``, counted and logged."""
        GUARD_TRIPS[(self.name, step)] += 1
        _log.exception("npgym %s: unexpected error in the %s step of score()", self.name, step)
        reason = f"internal error in the {step} step ({type(error).__name__}); please report"
        return _failed(weights, False, None, reference_objective, reason)

    def _reward(
        self,
        instance: InstanceT,
        weights: RewardConfig,
        verdict: Verdict,
        reference_objective: Objective | None,
    ) -> Score:
        """The score of ``verdict`` against the reference objective and the instance's baseline."""
        return _reward(self, weights, verdict, reference_objective, self.baseline(instance))

    def score_many(
        self,
        instance: InstanceT,
        completions: Sequence[str],
        reference: Reference | Objective | None = None,
        reward: RewardSpec = None,
    ) -> list[Score]:
        """Score a group of completions of one instance (the GRPO case); never raises.

        Equal to :meth:`score` on each completion. A score depends on a completion only through
        its answer text (what follows the last marker), so each completion's answer is extracted
        once, and completions that differ in their reasoning but end in the same answer share
        one (immutable) result: the answer is read, verified and rewarded once per group.
        Each completion is bounded as in :meth:`score`: only its last
        :data:`npgym.answer.MAX_SCAN_CHARS` characters are read.
        """
        weights = DEFAULT_REWARD if reward is None else resolve_reward(reward)
        reference, reference_objective, memo = self._scoring(instance, reference, weights)
        scores: list[Score] = []
        by_tail: dict[str, Score] = {}  # what follows the last "Answer:" decides the score
        by_answer: dict[str, Score] = {}
        for text in completions:
            if type(text) is not str:  # bytes, or no text at all: score() says what it is
                scores.append(self.score(instance, text, reference, weights))
                continue
            text = bounded_text(text)
            tail = answer_tail(text)
            score = by_tail.get(tail) if tail is not None else None
            if score is None:
                try:
                    segment = extract_answer(text)
                except AnswerFormatError as error:
                    score = _extract_failure(memo, weights, reference_objective, str(error))
                except Exception as error:  # the last-resort guard (see _score_answer)
                    score = self._guard(weights, reference_objective, "extract", error)
                else:
                    score = by_answer.get(segment)
                    if score is None:
                        score = by_answer[segment] = self._score_answer(
                            instance, segment, weights, reference, reference_objective, memo
                        )
                if tail is not None:
                    by_tail[tail] = score
            scores.append(score)
        return scores

    def feedback(self, score: Score) -> str:
        """One line a model can act on: why the answer failed, or how good it was."""
        if not score.format_ok:
            return f"Format error: {score.reason}. Finish with 'Answer: <answer>' as instructed."
        if not score.feasible:
            return f"Infeasible: {score.reason}."
        if score.optimality >= 1.0:
            return f"Feasible and optimal: {self.objective_name} {score.objective}."
        better = "lower" if self.sense == "min" else "higher"
        return f"Feasible, {self.objective_name} {score.objective}; the best known is {better}."


def _extract_failure(
    memo: ScoreMemo, weights: RewardConfig, reference_objective: Objective | None, reason: str
) -> Score:
    """The score of a completion with no answer to read (kept per reason)."""
    key = ("extract", reason)
    score = memo.get(key)
    if score is None:
        score = _failed(weights, False, None, reference_objective, reason)
        _keep(memo, key, score)
    return score


def _reward(
    task: Task[Any, Any],
    weights: RewardConfig,
    verdict: Verdict,
    reference_objective: Objective | None,
    baseline_objective: Objective | None,
) -> Score:
    """The score of an answer that parsed into the task's shape.

    On a maximisation task an objective of 0 (the empty answer) is not a solution: it scores as
    infeasible, in every preset. Under ``optimality="gap"`` the feasibility term runs linearly
    from ``infeasible`` (no better than the baseline) to ``optimality_weight`` (optimal).
    """
    if not verdict.feasible:
        reason = verdict.reason
        return _failed(
            weights, True, verdict.objective, reference_objective, reason, 0.0, baseline_objective
        )
    objective = verdict.objective
    if task.sense == "max" and objective == 0:
        return _failed(weights, True, 0, reference_objective, EMPTY_ANSWER, 0.0, baseline_objective)
    ratio = task.ratio(objective, reference_objective)  # type: ignore[arg-type]
    no_gain = _no_better(task.sense, objective, baseline_objective)
    if weights.optimality == "ratio":
        optimality = clip_ratio(ratio)
        feasibility_reward = weights.optimality_weight * optimality
    else:
        if ratio >= 1.0 or objective is None:
            optimality = 1.0
        else:
            optimality = gap_closed(
                objective,
                baseline_objective,
                reference_objective,  # type: ignore[arg-type]
                task.sense,
            )
        span = weights.optimality_weight - weights.infeasible
        feasibility_reward = weights.infeasible + span * optimality
    return Score(
        reward=weights.format_ok + feasibility_reward,
        format_ok=True,
        feasible=True,
        objective=objective,
        reference_objective=reference_objective,
        ratio=ratio,
        optimality=optimality,
        reason="",
        format_reward=weights.format_ok,
        feasibility_reward=feasibility_reward,
        baseline_objective=baseline_objective,
        no_better_than_baseline=no_gain,
    )


SCORE_MEMO_SIZE = 64
"""Most scores :meth:`Task.score` keeps per instance, reward and reference objective.

A score is a function of the verdict, the reference objective, the baseline and the weights
alone; a fused kernel's result determines the verdict, and so does a word or a failure's step and
reason. Completions that reach the same result (every optimal answer of a GRPO group, say) share
one immutable :class:`Score`; every answer is still read and checked on each call."""
SCORE_MEMOS_PER_INSTANCE = 4
"""Most (reward config, reference objective) pairs whose scores an instance keeps, the least
recently used dropped first: a trainer that varies its rewards or references, call after call,
keeps at most 4 x :data:`SCORE_MEMO_SIZE` scores per instance (about 60 KB)."""
_MEMOS_KEY = "score_memos"
"""Where the score memos live in the instance's cache (see :meth:`Instance.cached`)."""
_WORD_KEY_CHARS = 64
"""Longest word answer whose score is kept (a longer one is scored each time)."""
_SCAN_STARTS = "[(" + WHITESPACE
"""The first characters of every answer the scanner reads (the empty answer is among them)."""

ScoreMemo = dict[Any, Score]


def _keep(memo: ScoreMemo, key: Any, score: Score) -> None:
    """Keep ``score`` under ``key`` while the memo holds fewer than :data:`SCORE_MEMO_SIZE`, so
    hostile answers cannot grow it without bound."""
    if len(memo) < SCORE_MEMO_SIZE:
        memo[key] = score


EMPTY_ANSWER = "empty answer"
"""The reason given when a maximisation answer has objective 0: the empty set is no solution."""


def _no_better(sense: Sense, objective: Objective | None, baseline: Objective | None) -> bool:
    """Whether a feasible answer's objective fails to improve on the baseline's."""
    if objective is None or baseline is None:
        return False
    return objective <= baseline if sense == "max" else objective >= baseline


def _format_credit(
    weights: RewardConfig, step: str, value: Any, reference: Reference | Objective
) -> float:
    """Partial credit for an unparseable answer: marker found, bracketed value, right outline.

    ``step`` is the parse step that failed: past ``extract`` the marker was found; past
    ``tokenise`` a value was read, which earns more if it is a list, and more again if it has
    the nesting and lengths of the reference solution (when the reference carries one).
    """
    if step == "extract":
        return 0.0
    credit = weights.marker_credit
    if step != "shape" or not _is_list(value):
        return credit
    credit += weights.value_credit
    if isinstance(reference, Reference) and _outline(value) == _outline(reference.solution):
        credit += weights.shape_credit
    return credit


def _is_list(value: Any) -> bool:
    """Whether a parsed value is a list: plain, or as the scanner makes them (arrays, rows)."""
    return isinstance(value, (list, np.ndarray, IntRows))


def _outline(value: Any) -> Any:
    """The nesting and lengths of a value, without its entries (``None`` for a scalar)."""
    if isinstance(value, (np.ndarray, IntRows)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_outline(item) for item in value]
    return None


def _failed(
    weights: RewardConfig,
    format_ok: bool,
    objective: Objective | None,
    reference_objective: Objective | None,
    reason: str,
    credit: float = 0.0,
    baseline_objective: Objective | None = None,
) -> Score:
    """The score of an answer that failed to parse (plus any graded ``credit``) or is infeasible."""
    format_reward = (weights.format_ok if format_ok else weights.format_fail) + credit
    return Score(
        reward=format_reward + weights.infeasible,
        format_ok=format_ok,
        feasible=False,
        objective=objective,
        reference_objective=reference_objective,
        ratio=None,
        optimality=0.0,
        reason=reason,
        format_reward=format_reward,
        feasibility_reward=weights.infeasible,
        baseline_objective=baseline_objective,
    )
