"""The base class of every task's instance: immutable, validated, losslessly JSON-serialisable."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, TypeVar, cast, overload

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, Strict

if TYPE_CHECKING:
    from typing_extensions import Self

Int = Annotated[int, Strict()]
"""An integer field that rejects bools, floats and numeric strings when read back from JSON."""
NonNegInt = Annotated[int, Strict(), Field(ge=0)]
FiniteFloat = Annotated[float, Strict(), Field(allow_inf_nan=False)]
"""A float field that rejects NaN, infinities and numeric strings (JSON integers are fine)."""

T = TypeVar("T")


class derived(Generic[T]):  # noqa: N801 (a decorator, named like property)
    """A read-only value derived from an instance's fields, computed on first access and kept in
    the instance's private cache (like ``functools.cached_property``, but outside the model's
    ``__dict__``, so ``dict(instance)``, equality and JSON never see it).

    For the arrays the verifiers take: an access after the first is one dict lookup, which
    matters on the scoring path. A validator that already built the value may store it under the
    attribute's name with :meth:`Instance.cached`.
    """

    def __init__(self, compute: Callable[[Any], T]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> derived[T]: ...

    @overload
    def __get__(self, instance: Instance, owner: type | None = None) -> T: ...

    def __get__(self, instance: Instance | None, owner: type | None = None) -> T | derived[T]:
        if instance is None:
            return self
        cache = instance.__pydantic_private__["_cache"]  # type: ignore[index]  # no cast(): hot
        try:
            return cache[self.name]
        except KeyError:
            value = cache[self.name] = self.compute(instance)
            return value


class field_array(derived[np.ndarray]):  # noqa: N801 (declared like a derived attribute)
    """A field of integers (a tuple) as a read-only int64 array, derived once per instance:
    ``weight_array = field_array("weights")``, for the verifiers and solvers."""

    def __init__(self, field: str) -> None:
        super().__init__(lambda instance: read_only(np.array(getattr(instance, field), np.int64)))
        self.__doc__ = f"``{field}`` as a read-only int64 array (built once per instance)."

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


def read_only(array: np.ndarray) -> np.ndarray:
    """``array``, made read-only: a derived array is shared by every reader of the instance
    (verifiers, solvers, renderers), so none may change it."""
    array.setflags(write=False)
    return array


META_FIELDS = ("task", "tier", "seed", "difficulty", "config", "source")
"""Fields that describe how an instance was made rather than the problem itself."""


class Instance(BaseModel):
    """One problem instance: the task's data fields plus generator metadata.

    Fields hold plain Python values (ints, tuples) so the instance is immutable, compares by
    value and round-trips through JSON exactly: ``Task.from_json(inst.to_json()) == inst``. The
    numpy arrays that the verifiers need are derived once per instance and kept in a private cache
    (see :meth:`cached`), which takes no part in equality or serialisation.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", ignored_types=(derived,))

    task: str
    tier: str | None = None
    seed: NonNegInt | None = None
    difficulty: FiniteFloat | None = None
    config: dict[str, Any] | None = None
    """The generator config that made the instance (``None`` for imported instances)."""
    source: dict[str, Any] | None = Field(None, exclude_if=lambda value: value is None)
    """Where an imported instance comes from (file, question id...); left out of the JSON of
    generated instances, so their bytes do not depend on it."""

    _cache: dict[Any, Any] = PrivateAttr(default_factory=dict)
    """Derived arrays, memoised references and kept scores (``Task.score``), by key."""

    canonical_fields: ClassVar[tuple[str, ...]] = ()
    """The task's data fields that docs/tasks.md names as the export contract."""
    meta_fields: ClassVar[tuple[str, ...]] = ()
    """Task fields that describe the generator's construction (a planted solution, a label)
    rather than the problem; like :data:`META_FIELDS` they stay out of :meth:`fingerprint`."""

    def to_json(self) -> str:
        """Compact, deterministic JSON with the canonical fields at the top level."""
        return self.model_dump_json()

    def fingerprint(self) -> str:
        """SHA-256 of the problem data alone (no metadata): equal problems, equal fingerprints.

        Used to detect the same instance in two datasets however it was generated.
        """
        data = self.model_dump_json(exclude={*META_FIELDS, *self.meta_fields} - {"task"})
        return hashlib.sha256(data.encode()).hexdigest()

    def cached(self, key: str, compute: Callable[..., T], *args: Any) -> T:
        """Return ``compute(*args)``, computed once per instance and kept under ``key`` (pass
        arguments rather than a closure where the call is hot: a lookup then builds nothing)."""
        cache = self.__pydantic_private__["_cache"]  # type: ignore[index]  # direct: fast
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = compute(*args)
            return value

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (with ``update`` laid over its fields) whose cache starts empty: derived arrays,
        references and scores belong to the fields they were computed from."""
        copied = super().model_copy(update=update, deep=deep)
        private = cast(dict[str, Any], copied.__pydantic_private__)
        object.__setattr__(copied, "__pydantic_private__", {**private, "_cache": {}})
        return copied

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return self.cached("hash", lambda: hash(self.to_json()))
