"""What a task can do beyond text, declared on the task itself.

Every task scores text. Some modes need more, and a task declares each such capability as a
class attribute of its :class:`~npgym.task.Task` subclass, ``None`` when it lacks it. No module
outside the task keeps a table of tasks: each mode asks the task, through :func:`capability`,
so a plug-in gets every mode it declares, exactly as the built-in tasks do.

- ``episode``: an :class:`npgym.structured.Episode` subclass, for ``mode="structured"``;
- ``vector``: an :class:`npgym.vector.BatchedEpisode` subclass, the task's structured episodes
  stepped over a batch in compiled code, for ``gym.make_vec(..., mode="structured",
  vectorization_mode="vector_entry_point")``;
- ``drawer``: ``draw(fig, instance, solution, partial)`` drawing on a matplotlib figure, for
  pictures (``render_mode="rgb_array"``, ``npgym show``, eval's gallery);
- ``variant_maker``: ``(instance, rng) -> npgym.variants.Variant``, a variant whose optima are
  the original's, for variants (``npgym.variants.variant``, ``bench build --variants``);
- ``inverse``: an :class:`npgym.inverse.InverseProblem`, for inverse problems
  (``npgym/Invert-<Task>``).

A declaration is the object itself or a lazy ``"module:attribute"`` string, imported on first
use (so ``import npgym`` does not import matplotlib or numba-heavy modules). A task that lacks a
capability is refused with :class:`MissingCapabilityError`, naming the task, the capability and
the mode; a malformed declaration (a string that does not resolve, a class that is not an
``Episode`` or a ``BatchedEpisode``, a drawer that is not callable) with
:class:`MalformedCapabilityError`, on first use and by :func:`npgym.testing.check_task`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from npgym.inverse import InverseProblem

if TYPE_CHECKING:
    from npgym.task import Task

CAPABILITIES: dict[str, str] = {
    "episode": "mode='structured'",
    "vector": "make_vec(..., mode='structured', vectorization_mode='vector_entry_point')",
    "drawer": "pictures (render_mode='rgb_array', npgym show, eval's gallery)",
    "variant_maker": "variants (npgym.variants.variant, bench build --variants)",
    "inverse": "inverse problems (npgym/Invert-<Task>)",
}
"""Each optional capability and the mode that needs it."""

_RESOLVED: dict[tuple[type, str], Any] = {}


class MissingCapabilityError(ValueError):
    """A mode was asked of a task that does not declare the capability it needs."""


class MalformedCapabilityError(TypeError):
    """A task declares a capability that is not what the protocol asks for."""


def declared(task: Task[Any, Any], name: str) -> Any:
    """The raw declaration of capability ``name`` on ``task``'s class (``None`` when absent).

    Read from the class, so that a function declared as a class attribute is not bound as a
    method.
    """
    if name not in CAPABILITIES:
        raise ValueError(f"unknown capability {name!r}; known: {', '.join(CAPABILITIES)}")
    return getattr(type(task), name, None)


def has_capability(task: Task[Any, Any], name: str) -> bool:
    """Whether ``task`` declares capability ``name`` (nothing is imported or checked)."""
    return declared(task, name) is not None


def capability(task: Task[Any, Any], name: str) -> Any:
    """The resolved capability ``name`` of ``task``, checked once and then cached.

    Raises :class:`MissingCapabilityError` when the task does not declare it, and
    :class:`MalformedCapabilityError` when the declaration is not what the protocol asks for.
    """
    key = (type(task), name)
    if key in _RESOLVED:
        return _RESOLVED[key]
    value = declared(task, name)
    if value is None:
        raise MissingCapabilityError(
            f"task {task.name!r} declares no {name} (Task.{name}), which {CAPABILITIES[name]} needs"
        )
    if isinstance(value, str):
        value = _import(task, name, value)
    _check(task, name, value)
    _RESOLVED[key] = value
    return value


def check_declarations(task_class: type[Task[Any, Any]]) -> None:
    """Resolve and check every capability ``task_class`` declares, as registration does: a
    malformed one raises :class:`MalformedCapabilityError` before any mode asks for it."""
    for name in CAPABILITIES:
        value = getattr(task_class, name, None)
        if value is not None:
            _check(
                task_class,
                name,
                _import(task_class, name, value) if isinstance(value, str) else value,
            )


def _import(task: Task[Any, Any] | type[Task[Any, Any]], name: str, target: str) -> Any:
    """The object a lazy ``"module:attribute"`` declaration names."""
    module_name, colon, attribute = target.partition(":")
    if not colon or not module_name or not attribute:
        raise MalformedCapabilityError(
            f"task {task.name!r}: {name} = {target!r} is not 'module:attribute'"
        )
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise MalformedCapabilityError(
            f"task {task.name!r}: {name} = {target!r} does not resolve ({error})"
        ) from error


CLASS_CAPABILITIES = {
    "episode": ("npgym.structured", "Episode"),
    "vector": ("npgym.vector", "BatchedEpisode"),
}
"""The capabilities declared as a class: the module and name of the base class they extend."""


def _check(task: Task[Any, Any] | type[Task[Any, Any]], name: str, value: Any) -> None:
    """Refuse a declaration of the wrong kind."""
    if name in CLASS_CAPABILITIES:
        module, base = CLASS_CAPABILITIES[name]
        if not (isinstance(value, type) and _is_subclass_named(value, module, base)):
            raise MalformedCapabilityError(
                f"task {task.name!r}: {name} must be an {module}.{base} subclass, got {value!r}"
            )
    elif name == "inverse":
        if not isinstance(value, InverseProblem):
            raise MalformedCapabilityError(
                f"task {task.name!r}: inverse must be an npgym.inverse.InverseProblem, "
                f"got {value!r:.60}"
            )
    elif not callable(value):
        raise MalformedCapabilityError(
            f"task {task.name!r}: {name} must be callable, got {type(value).__name__}"
        )


def _is_subclass_named(value: type, module: str, qualname: str) -> bool:
    """Whether ``value`` subclasses ``module.qualname`` (``npgym.structured.Episode``...), told
    from its MRO by name, so that this module imports nothing of the modes that use it."""
    return any(
        base.__module__ == module and base.__qualname__ == qualname for base in value.__mro__
    )
