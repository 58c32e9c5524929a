"""Seeds for datasets: independent streams keyed by (base seed, task, tier, index).

``seed + i`` would make datasets built from neighbouring base seeds share almost all their
instances; hashing the key through ``numpy.random.SeedSequence`` gives unrelated seeds instead.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _word(key: int | str) -> int:
    """A key as a non-negative integer; strings go through SHA-256 (stable across processes)."""
    if isinstance(key, str):
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    if key < 0:
        raise ValueError(f"seed keys must be non-negative, got {key}")
    return int(key)


def derive_seed(*keys: int | str) -> int:
    """A 63-bit instance seed determined by ``keys``, e.g. ``derive_seed(0, "TSP", "hard", 17)``."""
    sequence = np.random.SeedSequence([_word(key) for key in keys])
    return int(sequence.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
