"""Knapsack certificates: an upper bound on the most value within the capacity.

The instance is its JSON object: ``weights`` (integers >= 1), ``values`` (integers >= 0) and
``capacity`` (an integer >= 0), ``weights`` and ``values`` of the same length n >= 1. The
witness is a list of distinct item ids (0-based) whose weights sum to at most ``capacity``; its
objective is the sum of their values. A certificate is one of:

- ``{"kind": "dp"}``: the checker reruns the 0/1 dynamic programme over capacities,
  ``best[c]`` = the most value within weight ``c``, for ``c`` up to ``room = min(capacity,
  sum(weights))``, and the bound is ``best[room]``, the optimum itself. With ``"scale": s``
  (an integer >= 1; 1 when absent), the programme runs on the weights ``weights[i] // s``
  within ``room // s``, a relaxation (a set weighing at most ``room`` weighs at most
  ``room // s`` scaled down, as that sum is an integer), so its optimum bounds the true one.
  Refused when the scaled ``room`` exceeds :data:`DP_MAX_ROOM` or ``n * (room + 1)`` exceeds
  :data:`DP_MAX_CELLS` (its cost), or when ``sum(values)`` reaches 2**62 (it runs in int64
  arrays; below that no sum overflows).
- ``{"kind": "lagrangian", "tree": [node, ...]}``: a branching tree, flattened in pre-order.
  A node is ``["split", i]`` (item ``i``, free at that node; its two subtrees follow: first the
  one where item ``i`` is taken, then the one where it is left out), ``["over"]`` (a leaf whose
  taken items already weigh more than ``capacity``: no solution there) or ``["bound", p, q]``
  (a leaf with the multiplier ``lambda = p / q``, ``p >= 0``, ``q >= 1``). At a bound leaf with
  taken items T (weight ``w_T``, value ``v_T``) and free items F, every solution there is worth
  at most ``floor((q * v_T + p * (capacity - w_T) + sum over i in F of max(0, q * values[i] -
  p * weights[i])) / q)``: for ``x`` feasible, ``v.x <= v.x + lambda * (capacity - w.x)``. The
  certificate's bound is the largest leaf bound. A single ``["bound", p, q]`` node is the
  plain Lagrangian (with ``lambda`` the critical ratio, Dantzig's LP) bound. Refused when the
  number of leaves times n exceeds :data:`TREE_MAX_WORK`.

Cost: ``dp``: at most :data:`DP_MAX_CELLS` int64 cell updates (about 0.3 s);
``lagrangian``: at most :data:`TREE_MAX_WORK` integer steps (about 2 s) plus the tree's length.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from npgym.certificates import CertificateError, integer, integers

SENSE: Literal["min", "max"] = "max"

DP_MAX_CELLS = 100_000_000
"""Largest ``n * (room + 1)`` dynamic programme the checker reruns for a ``dp`` certificate."""
DP_MAX_ROOM = 10_000_000
"""Largest ``room`` (capacity used by the programme) of a ``dp`` certificate: 80 MB per array."""
TREE_MAX_WORK = 10_000_000
"""Largest ``leaves * n`` of a ``lagrangian`` certificate's tree."""
INT64_VALUE_LIMIT = 2**62
"""A ``dp`` certificate needs ``sum(values)`` below this, so no int64 sum overflows."""


def _items(instance: Mapping[str, Any]) -> tuple[list[int], list[int], int]:
    """The instance's weights, values and capacity, validated."""
    weights = integers(instance["weights"], "weights")
    values = integers(instance["values"], "values")
    capacity = integer(instance["capacity"], "capacity")
    if not weights or len(weights) != len(values):
        raise CertificateError("weights and values must be non-empty lists of one length")
    if min(weights) < 1 or min(values) < 0 or capacity < 0:
        raise CertificateError("weights must be >= 1, values and the capacity >= 0")
    return weights, values, capacity


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """The total value of ``solution``, a list of distinct items within the capacity."""
    weights, values, capacity = _items(instance)
    chosen = integers(solution, "the solution")
    if len(set(chosen)) != len(chosen) or not all(0 <= item < len(weights) for item in chosen):
        raise CertificateError("the solution must list distinct items 0..n-1")
    if sum(weights[item] for item in chosen) > capacity:
        raise CertificateError("the solution's items weigh more than the capacity")
    return sum(values[item] for item in chosen)


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The upper bound on the optimum that ``certificate`` proves."""
    weights, values, capacity = _items(instance)
    kind = certificate.get("kind")
    if kind == "dp" and set(certificate) <= {"kind", "scale"}:
        scale = integer(certificate.get("scale", 1), "the scale")
        if scale < 1:
            raise CertificateError(f"the scale must be at least 1, got {scale}")
        return _dp_bound(weights, values, min(capacity, sum(weights)), scale)
    if kind == "lagrangian" and set(certificate) == {"kind", "tree"}:
        return _tree_bound(weights, values, capacity, certificate["tree"])
    raise CertificateError(f"unknown certificate kind {kind!r:.40} or unexpected fields")


def _dp_bound(weights: list[int], values: list[int], room: int, scale: int) -> int:
    """The optimum within ``room`` of the weights divided by ``scale`` (rounded down), by the
    dynamic programme over capacities in int64 arrays."""
    room //= scale
    if room > DP_MAX_ROOM or len(weights) * (room + 1) > DP_MAX_CELLS:
        raise CertificateError(
            f"dp over {len(weights)} items and capacity {room}: past the limits of "
            f"{DP_MAX_ROOM} capacity and {DP_MAX_CELLS} cells"
        )
    if sum(values) >= INT64_VALUE_LIMIT:
        raise CertificateError("dp: the values sum past 2**62")
    best = np.zeros(room + 1, dtype=np.int64)  # best[c]: the most value within weight c
    for weight, value in zip(weights, values, strict=True):
        weight //= scale
        if weight == 0:
            best += value  # weightless once scaled: always taken
        elif weight <= room:
            best[weight:] = np.maximum(best[weight:], best[:-weight] + value)
    return int(best[room])


def _tree_bound(weights: list[int], values: list[int], capacity: int, tree: Any) -> int:
    """The largest leaf bound of a complete pre-order branching tree."""
    n = len(weights)
    if not isinstance(tree, list) or not tree:
        raise CertificateError("the tree must be a non-empty list of nodes")
    leaves = sum(1 for node in tree if isinstance(node, list) and node[:1] != ["split"])
    if leaves * n > TREE_MAX_WORK:
        raise CertificateError(f"{leaves} leaves of {n} items: past {TREE_MAX_WORK} steps")
    free, taken = [True] * n, [False] * n
    open_splits: list[int] = []  # items split on, on the path from the root
    weight_in = value_in = 0
    best: int | None = None
    for position, node in enumerate(tree):
        if not isinstance(node, list) or not node:
            raise CertificateError(f"node {position} must be a non-empty list")
        if node[0] == "split" and len(node) == 2:
            item = integer(node[1], "a split's item")
            if not 0 <= item < n or not free[item]:
                raise CertificateError(f"node {position} splits on item {item}, not free there")
            free[item], taken[item] = False, True
            weight_in, value_in = weight_in + weights[item], value_in + values[item]
            open_splits.append(item)
            continue
        if node == ["over"]:
            if weight_in <= capacity:
                raise CertificateError(f"leaf {position} is not over the capacity")
        elif node[0] == "bound" and len(node) == 3:
            p, q = integer(node[1], "a multiplier"), integer(node[2], "a scale")
            if p < 0 or q < 1:
                raise CertificateError(f"leaf {position}: multiplier {p}/{q} not >= 0")
            total = q * value_in + p * (capacity - weight_in)
            for i in range(n):
                if free[i] and q * values[i] > p * weights[i]:
                    total += q * values[i] - p * weights[i]
            best = total // q if best is None else max(best, total // q)
        else:
            raise CertificateError(f"node {position} is not a split, over or bound node")
        while open_splits and not free[open_splits[-1]] and not taken[open_splits[-1]]:
            free[open_splits.pop()] = True  # both subtrees done
        if not open_splits:
            if position != len(tree) - 1:
                raise CertificateError(f"the tree ends at node {position}, before the list")
            break
        item = open_splits[-1]  # its taken subtree is done: the left-out one follows
        taken[item] = False
        weight_in, value_in = weight_in - weights[item], value_in - values[item]
    if open_splits or best is None:
        raise CertificateError("the tree is incomplete or has no bound leaf")
    return best
