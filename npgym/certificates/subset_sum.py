"""SubsetSum certificates: an upper bound on the most indices whose numbers sum to the target.

The instance is its JSON object: ``numbers`` (a non-empty list of integers >= 1) and ``target``
(an integer >= 1). The witness is a list of distinct indices (0-based) whose numbers sum to
exactly ``target``; its objective is how many there are. A certificate is one of:

- ``{"kind": "dp"}``: the checker reruns the dynamic programme over (sum, count) pairs, and
  the bound is the most numbers summing to exactly ``target``, the optimum itself. With K the
  ``smallest`` bound below (no subset summing to at most ``target`` has more than K numbers),
  the pairs reached, ``sum <= target``, are the bits ``sum * (K + 1) + count`` of one Python
  integer, and each number ``x`` adds its shift by ``x * (K + 1) + 1``, masked to
  ``(target + 1) * (K + 1)`` bits (numbers past ``target`` are skipped). Its cost is
  ``n * (target + 1) * (K + 1)`` bit operations, refused past :data:`DP_MAX_BITS` (about 2 s
  there) or an integer wider than :data:`DP_MAX_WIDTH` bits; the task's own limits (500
  numbers, a target of 100000) stay below both, and its published instances cost well under a
  millisecond each.
- ``{"kind": "smallest"}``: the bound is K, the largest k whose k smallest numbers sum to at
  most ``target`` (any k numbers sum to at least that much), at the cost of a sort.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import accumulate
from typing import Any, Literal

from npgym.certificates import CertificateError, integer, integers

SENSE: Literal["min", "max"] = "max"

DP_MAX_BITS = 30_000_000_000
"""Largest ``n * (target + 1) * (K + 1)`` programme the checker reruns for a ``dp`` certificate."""
DP_MAX_WIDTH = 100_000_000
"""Largest ``(target + 1) * (K + 1)``, the bits of the programme's integer (12.5 MB)."""


def _numbers(instance: Mapping[str, Any]) -> tuple[list[int], int]:
    """The instance's numbers and target, validated."""
    numbers = integers(instance["numbers"], "numbers")
    target = integer(instance["target"], "target")
    if not numbers or min(numbers) < 1 or target < 1:
        raise CertificateError("numbers must be a non-empty list of integers >= 1, target >= 1")
    return numbers, target


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """How many indices ``solution`` lists: distinct ones whose numbers sum to the target."""
    numbers, target = _numbers(instance)
    chosen = integers(solution, "the solution")
    if len(set(chosen)) != len(chosen) or not all(0 <= index < len(numbers) for index in chosen):
        raise CertificateError("the solution must list distinct indices 0..n-1")
    if sum(numbers[index] for index in chosen) != target:
        raise CertificateError("the solution's numbers do not sum to the target")
    return len(chosen)


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The upper bound on the optimum that ``certificate`` proves."""
    numbers, target = _numbers(instance)
    kind = certificate.get("kind")
    if len(certificate) != 1 or kind not in ("dp", "smallest"):
        raise CertificateError(f"unknown certificate kind {kind!r:.40} or unexpected fields")
    most = sum(1 for total in accumulate(sorted(numbers)) if total <= target)
    if kind == "smallest":
        return most
    stride = most + 1  # the count of a pair reached never passes K, so never the next sum
    width = (target + 1) * stride
    if width > DP_MAX_WIDTH or len(numbers) * width > DP_MAX_BITS:
        raise CertificateError(
            f"dp over {len(numbers)} numbers, target {target} and at most {most} of them: "
            f"past the limits of {DP_MAX_WIDTH} bits wide and {DP_MAX_BITS} bit operations"
        )
    mask = (1 << width) - 1
    reached = 1  # the pair (sum 0, count 0)
    for number in numbers:
        if number <= target:  # a larger one reaches no sum within the target
            reached |= (reached << (number * stride + 1)) & mask
    counts = reached >> (target * stride)  # the counts reached at the target, as bits
    if not counts:
        raise CertificateError("no subset of the numbers sums to the target")
    return counts.bit_length() - 1
