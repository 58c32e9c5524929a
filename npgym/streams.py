"""numpy's seeded random streams, reproduced in numba, so a batch of instances is drawn in one
compiled call with exactly the numbers ``np.random.default_rng(entropy)`` would give.

The batched env (:mod:`npgym.vector`) draws every instance from its own stream, as
``task.generate`` does; building a numpy ``Generator`` per instance costs tens of microseconds,
more than a whole episode's steps. These functions follow numpy's published algorithms
(``SeedSequence`` mixing, ``PCG64`` with its XSL-RR output, Lemire's bounded integers, Floyd's
sampling without replacement and its shuffle) on a state of six ``uint64`` words: the 128-bit
LCG state and increment (high, low), and PCG64's buffered 32-bit half. Tests compare them with
numpy on many seeds; a numpy release that changed its streams would fail them.
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.jit import njit

STATE_WORDS = 6
"""uint64 words of one stream: state high/low, increment high/low, has-32-bit flag, buffer."""
_POOL = 4


def entropy_words(values: list[int] | int) -> np.ndarray:
    """The uint32 words ``SeedSequence(values)`` hashes: each non-negative int little-endian,
    at least one word each."""
    words: list[int] = []
    for value in [values] if isinstance(values, int) else values:
        if value < 0:
            raise ValueError(f"entropy must be non-negative, got {value}")
        words.append(value & 0xFFFFFFFF)
        value >>= 32
        while value:
            words.append(value & 0xFFFFFFFF)
            value >>= 32
    return np.array(words, np.uint32)


@njit
def _mul64(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The 128-bit product of two uint64 as (high, low)."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo, a_hi = a & m32, a >> s32
    b_lo, b_hi = b & m32, b >> s32
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    middle = (p0 >> s32) + (p1 & m32) + (p2 & m32)
    low = (p0 & m32) | (middle << s32)
    high = p3 + (p1 >> s32) + (p2 >> s32) + (middle >> s32)
    return high, low


@njit
def _step(state: np.ndarray) -> None:
    """state = state * MULT + inc (mod 2**128)."""
    high, low = _mul64(state[1], np.uint64(0x4385DF649FCCF645))
    high += state[0] * np.uint64(0x4385DF649FCCF645) + state[1] * np.uint64(0x2360ED051FC65DA4)
    new_low = low + state[3]
    carry = np.uint64(1) if new_low < low else np.uint64(0)
    state[0] = high + state[2] + carry
    state[1] = new_low


@njit
def next_uint64(state: np.ndarray) -> np.uint64:
    """PCG64's next 64-bit output (XSL-RR)."""
    _step(state)
    value = state[0] ^ state[1]
    rotation = state[0] >> np.uint64(58)
    return (value >> rotation) | (value << ((np.uint64(64) - rotation) & np.uint64(63)))


@njit
def next_uint32(state: np.ndarray) -> np.uint64:
    """PCG64's next 32-bit output: the low half of a 64-bit one, then its buffered high half."""
    if state[4]:
        state[4] = np.uint64(0)
        return state[5]
    value = next_uint64(state)
    state[4] = np.uint64(1)
    state[5] = value >> np.uint64(32)
    return value & np.uint64(0xFFFFFFFF)


@njit
def _hashmix(value: np.uint64, hash_const: np.ndarray) -> np.uint64:
    """SeedSequence's hashmix on 32-bit words kept in uint64 (numba widens uint32 products)."""
    m32 = np.uint64(0xFFFFFFFF)
    value = (value ^ hash_const[0]) & m32
    hash_const[0] = (hash_const[0] * np.uint64(0x931E8875)) & m32
    value = (value * hash_const[0]) & m32
    return value ^ (value >> np.uint64(16))


@njit
def seed_state(words: np.ndarray, count: int, state: np.ndarray) -> None:
    """Set ``state`` to ``PCG64(SeedSequence(entropy))``'s, given the entropy's ``count``
    uint32 words (:func:`entropy_words`)."""
    m32 = np.uint64(0xFFFFFFFF)
    pool = np.zeros(_POOL, np.uint64)
    hash_const = np.array([0x43B0D7E5], np.uint64)
    for index in range(_POOL):
        value = np.uint64(words[index]) if index < count else np.uint64(0)
        pool[index] = _hashmix(value, hash_const)
    for source in range(_POOL):
        for target in range(_POOL):
            if source != target:
                value = _hashmix(pool[source], hash_const)
                mixed = (np.uint64(0xCA01F9DD) * pool[target] - np.uint64(0x4973F715) * value) & m32
                pool[target] = mixed ^ (mixed >> np.uint64(16))
    for source in range(_POOL, count):
        for target in range(_POOL):
            value = _hashmix(np.uint64(words[source]), hash_const)
            mixed = (np.uint64(0xCA01F9DD) * pool[target] - np.uint64(0x4973F715) * value) & m32
            pool[target] = mixed ^ (mixed >> np.uint64(16))
    out = np.zeros(8, np.uint64)
    generate = np.uint64(0x8B51F9DD)
    for index in range(8):
        value = pool[index % _POOL] ^ generate
        generate = (generate * np.uint64(0x58F38DED)) & m32
        value = (value * generate) & m32
        out[index] = value ^ (value >> np.uint64(16))
    seed_high = out[0] | (out[1] << np.uint64(32))
    seed_low = out[2] | (out[3] << np.uint64(32))
    inc_high = out[4] | (out[5] << np.uint64(32))
    inc_low = out[6] | (out[7] << np.uint64(32))
    state[0] = np.uint64(0)
    state[1] = np.uint64(0)
    state[2] = (inc_high << np.uint64(1)) | (inc_low >> np.uint64(63))
    state[3] = (inc_low << np.uint64(1)) | np.uint64(1)
    _step(state)
    low = state[1] + seed_low
    carry = np.uint64(1) if low < state[1] else np.uint64(0)
    state[0] = state[0] + seed_high + carry
    state[1] = low
    _step(state)
    state[4] = np.uint64(0)
    state[5] = np.uint64(0)


@njit
def bounded(state: np.ndarray, inclusive_range: np.uint64) -> np.uint64:
    """A uniform integer in 0..inclusive_range, as numpy's ``random_bounded_uint64`` (Lemire)."""
    if inclusive_range == 0:
        return np.uint64(0)
    if inclusive_range <= np.uint64(0xFFFFFFFF):
        if inclusive_range == np.uint64(0xFFFFFFFF):
            return next_uint32(state)
        excluded = inclusive_range + np.uint64(1)
        product = next_uint32(state) * excluded
        leftover = product & np.uint64(0xFFFFFFFF)
        if leftover < excluded:
            threshold = (np.uint64(0xFFFFFFFF) - inclusive_range) % excluded
            while leftover < threshold:
                product = next_uint32(state) * excluded
                leftover = product & np.uint64(0xFFFFFFFF)
        return product >> np.uint64(32)
    if inclusive_range == np.uint64(0xFFFFFFFFFFFFFFFF):
        return next_uint64(state)
    excluded = inclusive_range + np.uint64(1)
    high, leftover = _mul64(next_uint64(state), excluded)
    if leftover < excluded:
        threshold = (np.uint64(0xFFFFFFFFFFFFFFFF) - inclusive_range) % excluded
        while leftover < threshold:
            high, leftover = _mul64(next_uint64(state), excluded)
    return high


@njit
def integer(state: np.ndarray, low: int, high: int) -> int:
    """``Generator.integers(low, high)``: one int64 in ``low..high - 1``."""
    return low + np.int64(bounded(state, np.uint64(high - low - 1)))


@njit
def choice_without_replacement(state: np.ndarray, population: int, size: int) -> np.ndarray:
    """``Generator.choice(population, size, replace=False)`` where numpy uses Floyd's
    algorithm (``population <= 10000`` or ``size <= population // 50``), then its shuffle."""
    out = np.empty(size, np.int64)
    set_size = np.uint64(np.int64(1.2 * size))
    mask = set_size
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> np.uint64(shift)
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    table = np.full(np.int64(mask) + 1, empty, np.uint64)
    for j in range(population - size, population):
        value = bounded(state, np.uint64(j))
        slot = value & mask
        while table[slot] != empty and table[slot] != value:
            slot = (slot + np.uint64(1)) & mask
        if table[slot] == empty:
            table[slot] = value
            out[j - population + size] = np.int64(value)
        else:
            slot = np.uint64(j) & mask
            while table[slot] != empty:
                slot = (slot + np.uint64(1)) & mask
            table[slot] = np.uint64(j)
            out[j - population + size] = j
    for i in range(size - 1, 0, -1):
        j = np.int64(bounded(state, np.uint64(i)))
        out[i], out[j] = out[j], out[i]
    return out


@njit
def uniform(state: np.ndarray) -> float:
    """``Generator.random()``: the top 53 bits of a 64-bit output, in [0, 1)."""
    return np.float64(next_uint64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit
def permutation(state: np.ndarray, n: int) -> np.ndarray:
    """``Generator.permutation(n)``: numpy's shuffle of ``0..n-1``, each swap index drawn by
    masked rejection on 32-bit outputs (its ``random_interval``; ``n <= 2**32``)."""
    out = np.arange(n)
    for i in range(n - 1, 0, -1):
        mask = np.uint64(i)
        for shift in (1, 2, 4, 8, 16, 32):
            mask |= mask >> np.uint64(shift)
        value = next_uint32(state) & mask
        while value > np.uint64(i):
            value = next_uint32(state) & mask
        j = np.int64(value)
        out[i], out[j] = out[j], out[i]
    return out


def floyd_applies(population: int, size: int) -> bool:
    """Whether numpy's ``choice(population, size, replace=False)`` takes Floyd's path."""
    return not (population > 10000 and size > population // 50)


@njit
def seed_instance_stream(seed: int, key: int, state: np.ndarray) -> None:
    """Set ``state`` to ``np.random.default_rng([seed, key])``'s (``key < 0``: ``[seed]``):
    the stream ``task.generate`` draws an instance from (:func:`npgym.task.generation_stream`)."""
    words = np.zeros(4, np.uint32)
    count = 0
    value = np.uint64(seed)
    words[count] = np.uint32(value & np.uint64(0xFFFFFFFF))
    count += 1
    value >>= np.uint64(32)
    while value:
        words[count] = np.uint32(value & np.uint64(0xFFFFFFFF))
        count += 1
        value >>= np.uint64(32)
    if key >= 0:
        words[count] = np.uint32(key)
        count += 1
    seed_state(words, count, state)


@njit
def next_seeds(states: np.ndarray, slots: np.ndarray, out: np.ndarray) -> None:
    """``generator.integers(2**63)`` from each slot's stream: the next instance seed, as the
    single env draws it from its ``np_random``."""
    for index in range(slots.shape[0]):
        out[index] = np.int64(bounded(states[slots[index]], np.uint64(2**63 - 1)))
