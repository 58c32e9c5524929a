"""npgym.streams against numpy: the same seeds give the same numbers, draw for draw."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils import seeding
from hypothesis import given, settings
from hypothesis import strategies as st

from npgym.streams import (
    STATE_WORDS,
    bounded,
    choice_without_replacement,
    entropy_words,
    floyd_applies,
    integer,
    next_seeds,
    next_uint64,
    permutation,
    seed_instance_stream,
    seed_state,
    uniform,
)

ENTROPY = st.lists(st.integers(0, 2**200), min_size=1, max_size=4) | st.integers(0, 2**130)


def stream(entropy: int | list[int]) -> np.ndarray:
    words = entropy_words(entropy)
    state = np.zeros(STATE_WORDS, np.uint64)
    seed_state(words, words.size, state)
    return state


@given(entropy=ENTROPY)
@settings(max_examples=200)
def test_seeding_and_raw_output_match_pcg64(entropy: int | list[int]) -> None:
    """Any entropy, short or longer than SeedSequence's pool of four words."""
    ours = stream(entropy)
    theirs = np.random.default_rng(entropy)
    expected = theirs.integers(0, 2**64, size=4, dtype=np.uint64)
    assert [int(next_uint64(ours)) for _ in range(4)] == expected.tolist()


@given(
    entropy=ENTROPY,
    low=st.integers(-(2**40), 2**40),
    width=st.integers(1, 2**40) | st.integers(1, 50),
)
@settings(max_examples=300)
def test_integers_match_generator_integers(entropy: int | list[int], low: int, width: int) -> None:
    ours, theirs = stream(entropy), np.random.default_rng(entropy)
    for _ in range(5):  # also exercises the buffered 32-bit halves
        assert integer(ours, low, low + width) == theirs.integers(low, low + width)


@given(seed=st.integers(0, 2**70))
@settings(max_examples=200)
def test_next_seeds_match_gymnasium_np_random(seed: int) -> None:
    """What the single env draws for its next instance: ``np_random.integers(2**63)``."""
    generator, _ = seeding.np_random(seed)
    states = stream(seed)[None, :].copy()
    out = np.zeros(1, np.int64)
    for _ in range(3):
        next_seeds(states, np.array([0]), out)
        assert out[0] == generator.integers(2**63)


@given(
    entropy=ENTROPY,
    population=st.integers(1, 20_000),
    share=st.floats(0, 1),
)
@settings(max_examples=300)
def test_choice_without_replacement_matches_numpy(
    entropy: int | list[int], population: int, share: float
) -> None:
    size = int(share * population)
    if not floyd_applies(population, size):
        return
    ours, theirs = stream(entropy), np.random.default_rng(entropy)
    expected = theirs.choice(population, size=size, replace=False)
    np.testing.assert_array_equal(choice_without_replacement(ours, population, size), expected)
    assert integer(ours, 0, 1000) == theirs.integers(0, 1000)  # the same state after


@given(seed=st.integers(0, 2**63 - 1), key=st.integers(-1, 2_000_000))
def test_instance_streams_are_generation_streams(seed: int, key: int) -> None:
    state = np.zeros(STATE_WORDS, np.uint64)
    seed_instance_stream(seed, key, state)
    theirs = np.random.default_rng(seed if key < 0 else [seed, key])
    assert integer(state, 0, 2**40) == theirs.integers(0, 2**40)


@pytest.mark.parametrize(
    "inclusive_range", [0, 1, 2**32 - 2, 2**32 - 1, 2**32, 2**64 - 2, 2**64 - 1]
)
def test_bounded_at_its_range_edges(inclusive_range: int) -> None:
    """Each edge of numpy's bounded draw (none, 32-bit Lemire, all 32 bits, 64-bit Lemire,
    all 64 bits) against ``Generator.integers`` on uint64."""
    ours, theirs = stream(7), np.random.default_rng(7)
    for _ in range(3):
        expected = theirs.integers(0, inclusive_range, dtype=np.uint64, endpoint=True)
        assert int(bounded(ours, np.uint64(inclusive_range))) == int(expected)


def test_negative_entropy_is_refused() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        entropy_words([3, -1])


@given(entropy=ENTROPY, n=st.integers(0, 300) | st.integers(0, 5000))
@settings(max_examples=200)
def test_uniform_and_permutation_match_the_generator(entropy: int | list[int], n: int) -> None:
    """``random()`` and ``permutation(n)``, interleaved as the generators draw them."""
    ours, theirs = stream(entropy), np.random.default_rng(entropy)
    assert uniform(ours) == theirs.random()
    assert permutation(ours, n).tolist() == theirs.permutation(n).tolist()
    assert uniform(ours) == theirs.random()
