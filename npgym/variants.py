"""Variants that keep the optimum (see :mod:`npgym.families.variants`)."""

from npgym.families.variants import (
    Variant,
    consistency,
    expand_variants,
    variant,
    verdict_label,
)

__all__ = ["Variant", "consistency", "expand_variants", "variant", "verdict_label"]
