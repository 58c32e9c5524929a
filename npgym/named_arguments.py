"""Kernels called by their parameter names: a kernel's parameters name the attributes that fill
them, so a task or a batch declares a kernel and never writes its call out.

A task's verifier kernels take the instance's arrays and numbers (``matrix``, ``edge_array``,
``capacity``) and the task's constants (MaxClique's ``adjacent``); a batch's kernels take its
buffers. One convention, read once per kernel from the Python function numba compiled.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache
from typing import Any


@cache
def parameter_names(kernel: Callable[..., Any]) -> tuple[str, ...]:
    """The parameter names of a kernel (a numba dispatcher's, or a plain function's)."""
    return tuple(inspect.signature(getattr(kernel, "py_func", kernel)).parameters)


def named_values(names: tuple[str, ...], *owners: object) -> tuple[Any, ...]:
    """The value of each name, from the first of ``owners`` that has an attribute of that name;
    ``AttributeError`` naming the owners when none has."""
    values = []
    for name in names:
        for owner in owners:
            value = getattr(owner, name, _MISSING)
            if value is not _MISSING:
                values.append(value)
                break
        else:
            kinds = " or ".join(type(owner).__name__ for owner in owners)
            raise AttributeError(f"no {kinds} attribute fills the kernel parameter {name!r}")
    return tuple(values)


def kernel_values(
    kernel: Callable[..., Any], leading: int, trailing: int, *owners: object
) -> tuple[Any, ...]:
    """The values of ``kernel``'s parameters between its first ``leading`` and last
    ``trailing`` ones (those the caller passes itself), by name (:func:`named_values`)."""
    names = parameter_names(kernel)
    return named_values(names[leading : len(names) - trailing], *owners)


_MISSING = object()
