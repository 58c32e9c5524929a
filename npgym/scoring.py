"""The scoring engine: completion text in, :class:`~npgym.results.Score` out.

One pipeline for every task: extract the answer (:mod:`npgym.answer`), read and check it (the
task's fused kernel, else its parser, shape and verifier), then reward the verdict
(:func:`npgym.reward.verdict_score`). The task contract (:class:`npgym.task.Task`) supplies the
steps; this module runs them, keeps the scores that recur, and guards against bugs, so that
``score()`` never raises on any completion. ``Task.score`` and ``Task.score_many`` are
:func:`score` and :func:`score_many` themselves (no wrapper: a call costs what it did).

The engine knows a task only through :class:`ScoredTask`, so it never imports the task module.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

from npgym.answer import (
    MAX_ANSWER_CHARS,
    MAX_SCAN_CHARS,
    WHITESPACE,
    AnswerFormatError,
    answer_key,
    decode_completion,
    extract_answer,
    parse_value_fast,
)
from npgym.instance import Instance
from npgym.results import (
    DEFAULT_REFERENCE_KEY,
    NOT_SCANNED,
    Objective,
    Reference,
    Score,
    Verdict,
    checked_reference,
)
from npgym.reward import (
    DEFAULT_REWARD,
    RewardConfig,
    RewardSpec,
    Sense,
    failed_score,
    format_credit,
    is_list,
    resolve_reward,
    verdict_score,
)

GUARD_TRIPS: Counter[tuple[str, str]] = Counter()
"""How often the last-resort guard caught an exception, by (task, step).

Always zero unless there is a bug; the test suite fails if a fuzz run ever trips it."""

SCORE_MEMO_SIZE = 64
"""Most scores kept per instance, reward and reference objective.

A score is a function of the verdict, the reference objective, the baseline and the weights
alone; a fused kernel's result determines the verdict, and so does a word or a failure's step and
reason. Completions that reach the same result (every optimal answer of a GRPO group, say) share
one immutable :class:`Score`; every answer is still read and checked on each call."""
SCORE_MEMOS_PER_INSTANCE = 4
"""Most (reward config, reference objective) pairs whose scores an instance keeps, the least
recently used dropped first: a trainer that varies its rewards or references, call after call,
keeps at most 4 x :data:`SCORE_MEMO_SIZE` scores per instance (about 60 KB)."""
MEMOS_KEY = "score_memos"
"""Where the score memos live in the instance's cache (see :meth:`Instance.cached`)."""
LAST_STATE_KEY = "score_state"
"""Where the instance's cache keeps the last call's reference and weights (the very objects) with
the state :func:`scoring_state` made of them: the next call with the same objects, a trainer's
usual case, skips the checks and the memo lookup."""
_WORD_KEY_CHARS = 64
"""Longest word answer whose score is kept (a longer one is scored each time)."""
_SCAN_STARTS = "[(" + WHITESPACE
"""The first characters of every answer the scanner reads (the empty answer is among them)."""

ScoreMemo = dict[Any, Score]


ScoringState = tuple[RewardConfig, Reference | Objective, Objective | None, ScoreMemo]
"""What scoring a completion of one instance needs besides its text: ``(weights, reference,
reference_objective, memo)``, the reward weights, the reference (or its objective), the
reference objective, and the scores kept for them. A plain tuple: unpacking one is the fastest
read on ``score()``'s hot path (a named tuple's unpacking costs 30 ns more)."""


_log = logging.getLogger("npgym")


class ScoredTask(Protocol):
    """What the engine asks of a task: the steps of :class:`npgym.task.Task` it runs."""

    @property
    def name(self) -> str: ...

    @property
    def sense(self) -> Sense: ...

    def reference(
        self, instance: Any, *, exact: bool = True, time_limit: float | None = None
    ) -> Reference: ...

    def check_answer(self, instance: Any, answer: bytes) -> tuple[int, ...] | None: ...

    def verdict(self, instance: Any, result: tuple[int, ...]) -> Verdict: ...

    def to_solution(self, value: Any) -> Any: ...

    def check(self, instance: Any, solution: Any) -> Verdict: ...

    def ratio(self, objective: Objective, reference_objective: Objective | None) -> float: ...

    def baseline(self, instance: Any) -> Objective | None: ...

    def _score_answer(self, instance: Any, segment: str, state: ScoringState) -> Score: ...


def score(
    task: ScoredTask,
    instance: Any,
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
    state = scoring_state(task, instance, reference, weights)
    try:
        if isinstance(completion, bytes):
            completion = decode_completion(completion)
        segment = extract_answer(completion)
    except AnswerFormatError as error:
        return _extract_failure(state, str(error))
    except Exception as error:  # the last-resort guard (see score_answer)
        return guard(task, state, "extract", error)
    return task._score_answer(instance, segment, state)


def score_many(
    task: ScoredTask,
    instance: Any,
    completions: Sequence[str],
    reference: Reference | Objective | None = None,
    reward: RewardSpec = None,
) -> list[Score]:
    """Score a group of completions of one instance (the GRPO case); never raises.

    Equal to :func:`score` on each completion. A score depends on a completion only through
    its answer text (what follows the last marker), so each completion's answer is extracted
    once, and completions that differ in their reasoning but end in the same answer share
    one (immutable) result: the answer is read, verified and rewarded once per group.
    Each completion is bounded as in :func:`score`: only its last
    :data:`npgym.answer.MAX_SCAN_CHARS` characters are read.
    """
    weights = DEFAULT_REWARD if reward is None else resolve_reward(reward)
    state = scoring_state(task, instance, reference, weights)
    scores: list[Score] = []
    by_key: dict[str | None, Score] = {}  # answer_key's (None: neither a marker nor a box)
    by_answer: dict[str, Score] = {}
    kept, keep_score, key_of = by_key.get, scores.append, answer_key  # locals: the loop is hot
    for text in completions:
        if type(text) is not str:  # bytes, or no text at all: score() says what it is
            keep_score(score(task, instance, text, reference, weights))
            continue
        if len(text) > MAX_SCAN_CHARS:  # extract_answer's bound
            text = text[-MAX_SCAN_CHARS:]
        key = key_of(text)
        result = kept(key)
        if result is None:
            result = by_key[key] = _answer_score(task, instance, text, state, by_answer)
        keep_score(result)
    return scores


def _answer_score(
    task: ScoredTask, instance: Any, text: str, state: ScoringState, by_answer: dict[str, Score]
) -> Score:
    """The score of the answer of ``text``, kept in ``by_answer`` for the group's other
    completions with the same answer text."""
    try:
        segment = extract_answer(text)
    except AnswerFormatError as error:
        return _extract_failure(state, str(error))
    except Exception as error:  # the last-resort guard (see score_answer)
        return guard(task, state, "extract", error)
    result = by_answer.get(segment)
    if result is None:
        result = by_answer[segment] = task._score_answer(instance, segment, state)
    return result


def scoring_state(
    task: ScoredTask,
    instance: Instance,
    reference: Reference | Objective | None,
    weights: RewardConfig,
) -> ScoringState:
    """``weights``, the reference (the default one when ``None``), its objective, and the
    scores kept on ``instance`` for them."""
    cache = instance.__pydantic_private__["_cache"]  # type: ignore[index]  # Instance.cached's
    last = cache.get(LAST_STATE_KEY)
    if last is not None and last[0] is reference and last[1] is weights:
        state: ScoringState = last[2]
        return state
    given = reference
    if reference is None:
        reference = cache.get(DEFAULT_REFERENCE_KEY) or task.reference(instance)
    else:
        reference = checked_reference(reference)
    reference_objective = reference.objective if isinstance(reference, Reference) else reference
    # The scores kept for these weights and this objective (see SCORE_MEMO_SIZE), the
    # least recently used set dropped past SCORE_MEMOS_PER_INSTANCE; `is`, because an id is
    # reused only once the weights it named are gone.
    memos: OrderedDict[Any, tuple[RewardConfig, ScoreMemo]] | None = cache.get(MEMOS_KEY)
    if memos is None:
        memos = cache[MEMOS_KEY] = OrderedDict()
    key = (id(weights), reference_objective)
    entry = memos.get(key)
    if entry is None or entry[0] is not weights:
        entry = memos[key] = (weights, {})
        if len(memos) > SCORE_MEMOS_PER_INSTANCE:
            memos.popitem(last=False)
    else:
        memos.move_to_end(key)
    state = (weights, reference, reference_objective, entry[1])
    cache[LAST_STATE_KEY] = (given, weights, state)
    return state


def score_answer(task: ScoredTask, instance: Any, segment: str, state: ScoringState) -> Score:
    """The steps after extraction, on the answer text ``segment``: the fused kernel when the
    scanner reads the answer, else parse, shape and verify; then the reward."""
    weights, reference, reference_objective, memo = state
    step = "scan"
    value: Any = None
    key: Any = None  # where the score is kept, when nothing but the key decides it
    try:
        try:
            if segment[:1] in _SCAN_STARTS:  # the scanner reads nothing else
                answer = segment[:MAX_ANSWER_CHARS].encode("utf-8", "surrogatepass")
                result = task.check_answer(instance, answer)
                if result is not None and result[0] != NOT_SCANNED:
                    step = "reward"
                    kept = memo.get(result)
                    if kept is None:
                        verdict = task.verdict(instance, result)
                        kept = reward_verdict(task, instance, weights, verdict, reference_objective)
                        keep(memo, result, kept)
                    return kept
            step = "tokenise"
            value = parse_value_fast(segment)
            if type(value) is str and len(value) <= _WORD_KEY_CHARS:
                key = ("word", value)  # a word's score is the word's alone
                kept = memo.get(key)
                if kept is not None:
                    return kept
            step = "shape"
            solution = task.to_solution(value)
        except AnswerFormatError as error:
            reason = str(error)
            # The credit of a list that failed to take the task's shape depends on the
            # list's outline; every other failure's score is its step's and reason's alone.
            if key is None and not (step == "shape" and is_list(value)):
                key = (step, reason)
            kept = memo.get(key) if key is not None else None
            if kept is None:
                credit = format_credit(weights, step, value, reference)
                kept = failed_score(weights, False, None, reference_objective, reason, credit)
                if key is not None:
                    keep(memo, key, kept)
            return kept
        step = "verify"
        verdict = task.check(instance, solution)
        step = "reward"
        kept = reward_verdict(task, instance, weights, verdict, reference_objective)
        if key is not None:
            keep(memo, key, kept)
        return kept
    except Exception as error:  # the last-resort guard: a bug, never a model's fault
        return guard(task, state, step, error)


def reward_verdict(
    task: ScoredTask,
    instance: Any,
    weights: RewardConfig,
    verdict: Verdict,
    reference_objective: Objective | None,
) -> Score:
    """The score of ``verdict`` against the reference objective and the instance's baseline."""
    baseline = task.baseline(instance)
    return verdict_score(weights, verdict, reference_objective, baseline, task.sense, task.ratio)


def guard(task: ScoredTask, state: ScoringState, step: str, error: Exception) -> Score:
    """The format failure that stands for a bug in ``step``, counted and logged."""
    GUARD_TRIPS[(task.name, step)] += 1
    _log.exception("npgym %s: unexpected error in the %s step of score()", task.name, step)
    weights, _, reference_objective, _ = state
    reason = f"internal error in the {step} step ({type(error).__name__}); please report"
    return failed_score(weights, False, None, reference_objective, reason)


def keep(memo: ScoreMemo, key: Any, score: Score) -> None:
    """Keep ``score`` under ``key`` while the memo holds fewer than :data:`SCORE_MEMO_SIZE`, so
    hostile answers cannot grow it without bound."""
    if len(memo) < SCORE_MEMO_SIZE:
        memo[key] = score


def _extract_failure(state: ScoringState, reason: str) -> Score:
    """The score of a completion with no answer to read (kept per reason)."""
    weights, _, reference_objective, memo = state
    key = ("extract", reason)
    kept = memo.get(key)
    if kept is None:
        kept = failed_score(weights, False, None, reference_objective, reason)
        keep(memo, key, kept)
    return kept
