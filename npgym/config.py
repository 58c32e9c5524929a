"""Generator configurations: pydantic models with tier presets and a continuous difficulty knob.

Every task has a config model (a subclass of :class:`GeneratorConfig`) and four presets, the
published NP-ENGINE tiers. The difficulty knob in [0, :data:`MAX_DIFFICULTY`] places the tiers at
0.2 (easy), 0.4 (medium), 0.6 (hard) and 0.8 (benchmark):

- up to 0.8 it interpolates numeric fields linearly between the tiers; below 0.2 it extrapolates
  the easy-medium segment, so 0 is easier than *easy*;
- above 0.8 the instance grows geometrically: each field named in the config's ``growth`` map is
  the benchmark value times ``factor ** exponent``, where ``factor`` rises smoothly from 1 at 0.8
  to :data:`GROWTH_AT_MAX` (10) at :data:`MAX_DIFFICULTY` (2.0); every other field keeps its
  benchmark value, unless the config's ``grown_values`` sets it (a construction used above the
  benchmark tier only). So difficulty 2.0 draws instances ten times the benchmark size.

Integer fields are rounded, every value is clamped to its field's bounds, and non-numeric fields
(a metric, a flag) and the generator ``revision`` come from the tier at or below the knob.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar, cast

import annotated_types
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

TIERS = ("easy", "medium", "hard", "benchmark")
TIER_DIFFICULTY = {"easy": 0.2, "medium": 0.4, "hard": 0.6, "benchmark": 0.8}
MIN_DIFFICULTY = 0.0
MAX_DIFFICULTY = 2.0
"""The top of the difficulty knob: instances there are :data:`GROWTH_AT_MAX` times the
benchmark size."""
GROWTH_AT_MAX = 10.0

C = TypeVar("C", bound="GeneratorConfig")
OverridesT = TypeVar("OverridesT")


class GeneratorConfig(BaseModel):
    """Base of the per-task generator configs: frozen, unknown keys rejected.

    Any pair of fields ``x_min`` / ``x_max`` is checked to be ordered, so a range written
    backwards gets an error that names both fields.

    ``revision`` says which version of the task's generator draws the instance. A task that
    changes what its generator draws keeps the old code under the old revision and moves its
    presets to the new one, so instances of an earlier NP-Bench version stay reproducible
    (``npgym bench build --bench-version``). Revision 1, the first, is left out of dumps: an
    instance written before revisions existed keeps its bytes and reads back as revision 1.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    revision: int = Field(1, ge=1, description="which revision of the task's generator draws")
    latest_revision: ClassVar[int] = 1
    """The newest revision the task's generator implements."""
    revision_fields: ClassVar[Mapping[int, tuple[str, ...]]] = {}
    """The config fields each revision introduced (revision -> names), which only it reads: the
    dump of an earlier revision's config leaves them out, so its instances keep their bytes.
    From its revision on, such a field that defaults to ``None`` must be given, unless it is
    one of :attr:`optional_revision_fields`."""
    optional_revision_fields: ClassVar[frozenset[str]] = frozenset()
    """Revision fields that may stay ``None`` (another field says whether they are read)."""

    growth: ClassVar[Mapping[str, float]] = {}
    """Exponent per field for difficulties above the benchmark tier: the field is the benchmark
    value times ``growth_factor(difficulty) ** exponent`` (1: grows with the instance, 0.5: with
    its square root, -1: shrinks as it grows). Fields not named keep their benchmark value.
    :func:`range_growth` writes the entries of ``x_min`` / ``x_max`` ranges."""

    grown_values: ClassVar[Mapping[str, Any]] = {}
    """Field values set above the benchmark tier only (a construction switched on there), laid
    over the grown config; the published tiers keep the fields' defaults."""

    @model_serializer(mode="wrap")
    def _omit_later_revisions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for revision, names in self.revision_fields.items():
            if self.revision < revision:
                for name in names:
                    data.pop(name, None)
        if data.get("revision") == 1:
            del data["revision"]
        return data

    @model_validator(mode="after")
    def _revision_fields_given(self) -> GeneratorConfig:
        for revision, names in self.revision_fields.items():
            missing = [
                name
                for name in names
                if getattr(self, name) is None and name not in self.optional_revision_fields
            ]
            if self.revision >= revision and missing:
                raise ValueError(f"revision {revision} needs {', '.join(missing)}")
        return self

    @model_validator(mode="after")
    def _ranges_ordered(self) -> GeneratorConfig:
        if self.revision > self.latest_revision:
            raise ValueError(
                f"revision {self.revision} does not exist; this generator has revisions 1 to "
                f"{self.latest_revision}"
            )
        for name in type(self).model_fields:
            if name.endswith("_min"):
                partner = name[: -len("_min")] + "_max"
                low, high = getattr(self, name), getattr(self, partner, None)
                if high is not None and low > high:
                    raise ValueError(f"{name} ({low}) must not exceed {partner} ({high})")
        return self


def range_growth(**exponents: float) -> dict[str, float]:
    """A ``growth`` map in which both ends of each named range grow alike:
    ``range_growth(n=1.0)`` is ``{"n_min": 1.0, "n_max": 1.0}`` (join other fields with ``|``)."""
    return {
        f"{name}_{end}": exponent for name, exponent in exponents.items() for end in ("min", "max")
    }


def resolve_config(
    presets: Mapping[str, C],
    tier: str | None,
    difficulty: float | None,
    overrides: Mapping[str, Any] | BaseModel | None,
) -> C:
    """The config for a tier or a difficulty, with ``overrides`` applied and validated.

    ``overrides`` may be a complete config of the task's type (used as is) or a mapping of field
    values laid over the preset.
    """
    config_type = type(presets[TIERS[0]])
    if isinstance(overrides, BaseModel):
        if not isinstance(overrides, config_type):
            raise TypeError(f"expected a {config_type.__name__}, got {type(overrides).__name__}")
        return overrides
    if tier is not None and difficulty is not None:
        raise ValueError("give a tier or a difficulty, not both")
    if difficulty is not None:
        base = interpolate(presets, difficulty)
    else:
        tier = tier or "medium"
        if tier not in presets:
            raise ValueError(f"unknown tier {tier!r}; choose one of {', '.join(TIERS)}")
        base = presets[tier]
    if not overrides:
        return base
    return config_type.model_validate({**base.model_dump(), **dict(overrides)})


def overrides_or_config(overrides: OverridesT, config: OverridesT, where: str) -> OverridesT:
    """The generator overrides given to ``where``, under their name or the deprecated ``config``.

    ``config=`` is the keyword's old name: it keeps working for one release, with a
    ``DeprecationWarning``, and giving both is a ``TypeError``. (An instance's stored ``config``
    field, the resolved generator config, keeps its name.)
    """
    if config is None:
        return overrides
    if overrides is not None:
        raise TypeError(f"{where} got overrides= and its deprecated alias config=; give overrides=")
    warnings.warn(
        f"{where}(config=...) is deprecated; use overrides=...", DeprecationWarning, stacklevel=3
    )
    return config


def growth_factor(difficulty: float) -> float:
    """How many times the benchmark size an instance at ``difficulty`` is (1 up to 0.8).

    Geometric in the difficulty: 1 at the benchmark tier, :data:`GROWTH_AT_MAX` at
    :data:`MAX_DIFFICULTY`, so each step of the knob multiplies the size by the same amount.
    """
    top = TIER_DIFFICULTY["benchmark"]
    if difficulty <= top:
        return 1.0
    return float(GROWTH_AT_MAX ** ((difficulty - top) / (MAX_DIFFICULTY - top)))


def check_difficulty(difficulty: object) -> float:
    """``difficulty`` as a float, or a ``ValueError`` that states the accepted range."""
    if (
        isinstance(difficulty, bool)
        or not isinstance(difficulty, (int, float))
        or not MIN_DIFFICULTY <= difficulty <= MAX_DIFFICULTY
    ):
        raise ValueError(
            f"difficulty must be a number in [{MIN_DIFFICULTY:g}, {MAX_DIFFICULTY:g}] "
            f"(easy 0.2, medium 0.4, hard 0.6, benchmark 0.8, {GROWTH_AT_MAX:g}x the benchmark "
            f"size at {MAX_DIFFICULTY:g}), got {difficulty!r}"
        )
    return float(difficulty)


def interpolate(presets: Mapping[str, C], difficulty: float) -> C:
    """The config at ``difficulty`` in [0, :data:`MAX_DIFFICULTY`] (see the module docstring)."""
    difficulty = check_difficulty(difficulty)
    if difficulty > TIER_DIFFICULTY["benchmark"]:
        return _grow(presets["benchmark"], growth_factor(difficulty))
    anchors = [(TIER_DIFFICULTY[tier], presets[tier]) for tier in TIERS]
    segment = 0
    while segment < len(anchors) - 2 and difficulty > anchors[segment + 1][0]:
        segment += 1
    (x0, low), (x1, high) = anchors[segment], anchors[segment + 1]
    weight = (difficulty - x0) / (x1 - x0)
    floor_preset = anchors[0][1]
    for x, preset in anchors:
        if x <= difficulty:
            floor_preset = preset
    config_type = type(low)
    values: dict[str, Any] = {}
    for name, field in config_type.model_fields.items():
        a, b = getattr(low, name), getattr(high, name)
        if name == "revision" or isinstance(a, bool) or not isinstance(a, (int, float)):
            values[name] = getattr(floor_preset, name)
            continue
        value = a + (b - a) * weight
        values[name] = _clamp(
            _rounded(value, integral=isinstance(a, int) and isinstance(b, int)), field.metadata
        )
    return config_type.model_validate(values)


def _grow(benchmark: C, factor: float) -> C:
    """``benchmark`` with every field of its ``growth`` map scaled by ``factor ** exponent`` and
    its ``grown_values`` set."""
    config_type = type(benchmark)
    values = benchmark.model_dump()
    for name, exponent in config_type.growth.items():
        base = values[name]
        value = _rounded(base * factor**exponent, integral=isinstance(base, int))
        values[name] = _clamp(value, config_type.model_fields[name].metadata)
    values.update(config_type.grown_values)
    return config_type.model_validate(values)


def _rounded(value: float, *, integral: bool) -> int | float:
    """Round half up to an int for integer fields; six decimals for float fields."""
    return math.floor(value + 0.5) if integral else round(value, 6)


def _clamp(value: float, constraints: list[Any]) -> Any:
    """Clamp ``value`` into the bounds declared on a pydantic field (``Field(ge=..., le=...)``)."""
    integral = isinstance(value, int)
    for constraint in constraints:
        if isinstance(constraint, annotated_types.Ge):
            value = max(value, cast(float, constraint.ge))
        elif isinstance(constraint, annotated_types.Gt):
            low = cast(float, constraint.gt)
            value = max(value, low + 1 if integral else math.nextafter(low, math.inf))
        elif isinstance(constraint, annotated_types.Le):
            value = min(value, cast(float, constraint.le))
        elif isinstance(constraint, annotated_types.Lt):
            high = cast(float, constraint.lt)
            value = min(value, high - 1 if integral else math.nextafter(high, -math.inf))
    return value


def validation_summary(error: ValidationError) -> str:
    """A pydantic validation error on one line: each failing field and why, e.g. ``count:
    Input should be less than or equal to 100000`` (for command-line messages)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'value'}: {item['msg']}"
        for item in error.errors()
    )
