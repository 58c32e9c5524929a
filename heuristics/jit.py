"""Shared numba helpers for solvers and verifiers: an ``njit`` that caches compiled code on disk
when it can and never fails at import.

Public (``npgym.heuristics.jit``): the verifiers and ``npgym.kernels`` use it, not only solvers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba

F = TypeVar("F", bound=Callable[..., Any])

_warned = False


def njit(function: F) -> F:
    """Compile ``function`` in nopython mode with an on-disk cache.

    numba writes its cache beside the source or under ``NUMBA_CACHE_DIR``; when neither is
    writable (a read-only site-packages and no cache directory) it raises at decoration time.
    Then we compile without the cache, so each new process pays the compile cost once, and say so
    once. The dispatcher is typed as the function it compiles, so callers keep its signature.
    """
    global _warned
    try:
        return cast(F, numba.njit(cache=True, nogil=True)(function))
    except RuntimeError:
        if not _warned:
            _warned = True
            warnings.warn(
                "numba cannot write its cache here; set NUMBA_CACHE_DIR to a writable directory "
                "so compiled verifiers are reused across processes",
                RuntimeWarning,
                stacklevel=2,
            )
        return cast(F, numba.njit(cache=False, nogil=True)(function))
