"""A scoring process that lives for days: its memory stays flat, every entry point reads a bounded
part of its input, and a bad reference or weight is refused up front, so no reward is ever NaN
or infinite."""

from __future__ import annotations

import gc
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import answer
from npgym.answer import MAX_SCAN_BYTES, MAX_SCAN_CHARS, decode_completion
from npgym.integrations.verl import compute_score
from npgym.results import MAX_REFERENCE_MAGNITUDE, Reference
from npgym.reward import MAX_REWARD_WEIGHT, RewardConfig
from npgym.scoring import MEMOS_KEY, SCORE_MEMO_SIZE, SCORE_MEMOS_PER_INSTANCE

BAD_REFERENCES = [
    "abc",
    "692",
    True,
    np.bool_(False),
    math.nan,
    math.inf,
    -math.inf,
    np.float64("nan"),
    [1],
    {"x": 1},
    b"1",
    MAX_REFERENCE_MAGNITUDE * 10,
    10**400,
]


def _knapsack() -> tuple[npgym.Task, npgym.Instance, Reference]:
    task = npgym.get_task("Knapsack")
    instance = task.generate(0, tier="easy")
    return task, instance, task.reference(instance, exact=False)


def _memos(instance: npgym.Instance) -> dict:
    return instance.__pydantic_private__["_cache"][MEMOS_KEY]


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


# --- the score memo ----------------------------------------------------------------------------


def test_memos_per_instance_stay_bounded_as_references_and_weights_vary() -> None:
    """5,000 calls, each with a fresh RewardConfig and a fresh reference objective, keep at most
    SCORE_MEMOS_PER_INSTANCE memos of at most SCORE_MEMO_SIZE scores each (it was one memo per
    call, without bound), and every score equals a fresh instance's."""
    task, instance, reference = _knapsack()
    answer_text = f"Answer: {reference.solution}"
    for call in range(5_000):
        weights = RewardConfig(format_ok=1.0 + call % 7 / 10)
        task.score(instance, answer_text, reference.objective + call, weights)
        task.score(instance, f"Answer: [{call}]", reference.objective + call, weights)
    memos = _memos(instance)
    assert len(memos) == SCORE_MEMOS_PER_INSTANCE
    assert all(len(memo) <= SCORE_MEMO_SIZE for _, memo in memos.values())
    weights = RewardConfig(format_ok=1.5)
    assert task.score(instance, answer_text, 7, weights) == task.score(
        instance.model_copy(), answer_text, 7, weights
    )


@given(calls=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1)), min_size=1, max_size=12))
@settings(max_examples=40)
def test_the_last_calls_state_is_reused_only_for_the_same_objects(
    calls: list[tuple[int, int]],
) -> None:
    """Any order of references (the default, a Reference, two numbers) and weights scores as a
    fresh instance does: the state kept from the last call serves only the very same objects."""
    task, instance, reference = _knapsack()
    references = [None, reference, reference.objective + 5, reference.objective - 1]
    weights = [RewardConfig(), RewardConfig(format_ok=0.5)]
    answer_text = f"Answer: {reference.solution}"
    for which_reference, which_weights in calls:
        chosen = references[which_reference], weights[which_weights]
        assert task.score(instance, answer_text, *chosen) == task.score(
            instance.model_copy(), answer_text, *chosen
        )


@pytest.mark.parametrize("pairs", [SCORE_MEMOS_PER_INSTANCE, SCORE_MEMOS_PER_INSTANCE + 1])
def test_memo_limit_is_least_recently_used(pairs: int) -> None:
    """At the limit every (weights, reference) pair keeps its memo; one past it, the least
    recently used one is dropped, and a pair in use is not."""
    task, instance, _ = _knapsack()
    weights = RewardConfig()
    for objective in range(1, pairs + 1):
        task.score(instance, "Answer: [0]", objective, weights)
        task.score(instance, "Answer: [0]", 1, weights)  # pair 1 stays the most recent
    kept = {key[1] for key in _memos(instance)}
    assert len(kept) == min(pairs, SCORE_MEMOS_PER_INSTANCE)
    assert 1 in kept
    if pairs > SCORE_MEMOS_PER_INSTANCE:
        assert 2 not in kept  # the least recently used


@pytest.mark.slow
def test_sixty_thousand_varied_calls_keep_memory_flat() -> None:
    """The issue's case: 60,000 calls on one Knapsack instance with varying reward configs and
    references grew a process by 105 MB; now by less than 10 MB."""
    task, instance, reference = _knapsack()
    texts = [f"Answer: {reference.solution}", "Answer: [0, 1]", "no answer", "Answer: [99]"]
    for call in range(2_000):  # warm up: kernels, allocator pools
        task.score(instance, texts[call % 4], reference.objective + call, RewardConfig())
    gc.collect()
    before = _rss_mb()
    for call in range(60_000):
        weights = RewardConfig(infeasible=-1.5 - call % 11 / 100)
        task.score(instance, texts[call % 4], reference.objective + call, weights)
    gc.collect()
    assert _rss_mb() - before < 10


# --- bounded input at every entry point --------------------------------------------------------


_UTF8_AND_JUNK = st.lists(
    st.one_of(
        st.binary(max_size=6),
        st.text(max_size=4).map(lambda text: text.encode("utf-8", "surrogatepass")),
    ),
    max_size=30,
).map(b"".join)


@settings(max_examples=500, deadline=None)
@given(data=_UTF8_AND_JUNK)
def test_decoding_a_long_completion_keeps_the_searched_end(data: bytes) -> None:
    """decode_completion keeps exactly the last MAX_SCAN_CHARS characters of the whole decoding,
    wherever the cut falls (inside a multi-byte sequence, in invalid bytes): checked with the
    limits shrunk so that hypothesis can reach them."""
    scan_chars = 4
    scan_bytes = 4 * scan_chars + 16
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(answer, "MAX_SCAN_BYTES", scan_bytes)
        decoded = decode_completion(data)
    whole = data.decode("utf-8", errors="replace")
    assert decoded[-scan_chars:] == whole[-scan_chars:]
    assert len(decoded) >= min(len(whole), scan_chars)


@pytest.mark.parametrize("extra", [0, 1])
def test_bytes_at_and_past_the_decoding_limit(extra: int) -> None:
    """Bytes of exactly MAX_SCAN_BYTES are decoded whole; one byte more and only the end is
    decoded; the score is the same as the decoded text's either way."""
    task, instance, reference = _knapsack()
    ending = f"Answer: {reference.solution}".encode()
    data = "é".encode() * ((MAX_SCAN_BYTES + extra - len(ending)) // 2) + b"x" * (
        (MAX_SCAN_BYTES + extra - len(ending)) % 2
    )
    data += ending
    assert len(data) == MAX_SCAN_BYTES + extra
    decoded = decode_completion(data)
    assert (decoded == data.decode()) is (extra == 0)
    assert decoded[-MAX_SCAN_CHARS:] == data.decode()[-MAX_SCAN_CHARS:]
    assert task.score(instance, data, reference) == task.score(instance, data.decode(), reference)


def test_huge_completions_cost_what_the_bounded_end_costs() -> None:
    """A 120 MB completion, as bytes, in score_many or as a TRL-style str, is read only at its
    end: it scores like its last MAX_SCAN_CHARS characters, within a generous CPU bound (the
    whole decode took 372 ms)."""
    task, instance, reference = _knapsack()
    ending = f" Answer: {reference.solution}"
    huge_text = "é" * (120 * 2**20 // 2) + ending
    huge_bytes = huge_text.encode()
    expected = task.score(instance, huge_text[-MAX_SCAN_CHARS:], reference)
    assert expected.reward == 2.0
    start = time.process_time()
    assert task.score(instance, huge_bytes, reference) == expected
    assert task.score_many(instance, [huge_text, huge_bytes], reference) == [expected] * 2
    assert time.process_time() - start < 0.25


def test_score_many_refuses_what_is_not_text_item_by_item() -> None:
    task, instance, reference = _knapsack()
    scores = task.score_many(instance, [None, 5, ["Answer: [0]"]], reference)  # type: ignore[list-item]
    assert [score.reason for score in scores] == ["completion is not text"] * 3


# --- references and weights --------------------------------------------------------------------


@pytest.mark.parametrize("bad", BAD_REFERENCES, ids=repr)
def test_bad_references_are_refused_at_every_scoring_entry(bad: object) -> None:
    """A reference that is not a finite number (or a Reference with one) raises a ValueError
    naming it, from score, score_many and verl's compute_score: no guard trip ("internal
    error"), no NaN reward."""
    task, instance, reference = _knapsack()
    answer_text = f"Answer: {reference.solution}"
    with pytest.raises(ValueError, match="reference"):
        task.score(instance, answer_text, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reference"):
        task.score_many(instance, [answer_text], bad)  # type: ignore[arg-type]
    if isinstance(bad, float):
        with pytest.raises(ValueError, match=r"reference\.objective"):
            task.score(instance, answer_text, reference.model_copy(update={"objective": bad}))
    info = {"task": "Knapsack", "instance": instance.to_json()}
    with pytest.raises(ValueError, match="reference"):
        compute_score("npgym/Knapsack-easy", answer_text, bad, info)


def test_references_at_the_magnitude_limit_are_accepted() -> None:
    task, instance, reference = _knapsack()
    answer_text = f"Answer: {reference.solution}"
    for objective in (MAX_REFERENCE_MAGNITUDE, int(MAX_REFERENCE_MAGNITUDE), np.int64(5), 0):
        assert math.isfinite(task.score(instance, answer_text, objective).reward)
    info = {"task": "Knapsack", "instance": instance.to_json()}
    good = compute_score("npgym/Knapsack-easy", answer_text, np.int64(reference.objective), info)
    assert good["score"] == 2.0


@pytest.mark.parametrize("weight", [MAX_REWARD_WEIGHT, -MAX_REWARD_WEIGHT])
def test_weights_at_the_limit_are_accepted_and_past_it_refused(weight: float) -> None:
    assert RewardConfig(optimality_weight=weight, infeasible=-MAX_REWARD_WEIGHT)
    with pytest.raises(ValueError, match="optimality_weight"):
        RewardConfig(optimality_weight=weight * 1.000001)


_WEIGHT = st.floats(-MAX_REWARD_WEIGHT, MAX_REWARD_WEIGHT)


@st.composite
def _reward_configs(draw: st.DrawFn) -> RewardConfig:
    """Valid reward configs across the whole weight range (the validator picks the valid ones)."""
    fields = {
        name: draw(_WEIGHT)
        for name in ("format_ok", "format_fail", "infeasible", "optimality_weight")
    }
    fields["optimality"] = draw(st.sampled_from(["ratio", "gap"]))
    credit = (fields["format_ok"] - fields["format_fail"]) / 4
    if credit > 0 and draw(st.booleans()):
        fields.update(marker_credit=credit, value_credit=credit, shape_credit=credit)
    try:
        return RewardConfig(**fields)
    except ValueError:
        return RewardConfig(optimality=fields["optimality"])


@settings(max_examples=300, deadline=None)
@given(
    weights=_reward_configs(),
    objective=st.one_of(
        st.integers(-(10**300), 10**300),
        st.floats(-MAX_REFERENCE_MAGNITUDE, MAX_REFERENCE_MAGNITUDE),
    ),
    answer_index=st.integers(0, 4),
)
def test_reward_is_finite_for_every_accepted_reference_and_weights(
    weights: RewardConfig, objective: float, answer_index: int
) -> None:
    """Whatever reference objective and weights score() accepts, the reward is finite: huge and
    tiny references, zero, negative ones, weights up to MAX_REWARD_WEIGHT, either preset shape."""
    task, instance, reference = _knapsack()
    texts = [f"Answer: {reference.solution}", "Answer: [0]", "Answer: []", "Answer: [x", "none"]
    score = task.score(instance, texts[answer_index], objective, weights)
    assert math.isfinite(score.reward)
    assert math.isfinite(score.format_reward) and math.isfinite(score.feasibility_reward)


def test_verl_row_with_a_bad_ground_truth_and_no_reference() -> None:
    """verl's hook uses ground_truth only when the row has no reference: NaN there is refused,
    while a row with its reference ignores a NaN ground truth."""
    _, instance, reference = _knapsack()
    answer_text = f"Answer: {reference.solution}"
    with_reference = {
        "task": "Knapsack",
        "instance": instance.to_json(),
        "reference": reference.model_dump_json(),
    }
    assert compute_score("npgym/Knapsack-easy", answer_text, math.nan, with_reference)["score"]
    without = {"task": "Knapsack", "instance": instance.to_json()}
    with pytest.raises(ValueError, match="finite"):
        compute_score("npgym/Knapsack-easy", answer_text, math.nan, without)
