"""SetCover certificates: a lower bound on the fewest subsets that cover the universe.

The instance is its JSON object: ``universe_size`` (an integer u from 1 to
:data:`MAX_UNIVERSE`) and ``subsets`` (1 to :data:`MAX_SUBSETS` lists of distinct elements in
``0..u-1``). The witness is ``"Impossible"`` (objective ``None``)
or a list of distinct subset ids (0-based) whose union is the universe; its objective is their
number. A certificate is one of:

- ``{"kind": "uncovered", "element": e}``: no subset holds element ``e``, so no cover exists;
  it proves the optimum ``None`` (the answer ``Impossible``).
- ``{"kind": "dual", "tree": [node, ...]}``: a branching tree, flattened in pre-order. A node
  is ``["split", j]`` (subset ``j``, free at that node; its two subtrees follow: first the one
  where ``j`` is in the cover, then the one where it is left out), ``["empty", e]`` (a leaf
  where element ``e`` is in no subset taken and every subset holding it is left out: no cover
  there) or ``["prices", s, y]`` (a leaf with an integer ``scale`` s >= 1 and u integer prices
  ``y[e] >= 0``, one per element). At a prices leaf with the subsets taken T, the elements they
  leave uncovered U and the free subsets F (neither taken nor left out), every subset in F must
  have ``sum of y[e] over its elements in U <= s``; then every cover there has at least
  ``|T| + ceil(sum of y[e] over U / s)`` subsets (LP duality: ``y / s`` is a feasible solution
  of the dual of the covering LP ``min sum x``, ``sum over j holding e of x_j >= 1``, ``x >= 0``,
  so its value bounds every cover by weak duality). Prices of covered elements are ignored. The
  certificate's bound is the smallest leaf bound; a single prices node is the root LP dual.

Cost: at most :data:`TREE_MAX_WORK` integer steps (leaves times ``u + sum of subset sizes``;
about 2 s) plus the tree's length.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from npgym.certificates import CertificateError, integer, integers

SENSE: Literal["min", "max"] = "min"
IMPOSSIBLE = "Impossible"
TREE_MAX_WORK = 10_000_000
"""Largest ``leaves * (u + sum of subset sizes)`` of a ``dual`` certificate's tree."""
MAX_UNIVERSE = 2000
"""Largest ``universe_size`` the checker reads (npgym's instances have at most this many)."""
MAX_SUBSETS = 2000
"""Most subsets the checker reads (npgym's instances have at most this many)."""


def _sets(instance: Mapping[str, Any]) -> tuple[int, list[list[int]]]:
    """The universe size and the subsets, validated."""
    universe = integer(instance.get("universe_size"), "universe_size")
    subsets = instance.get("subsets")
    if not 1 <= universe <= MAX_UNIVERSE or not isinstance(subsets, list):
        raise CertificateError(f"universe_size must be 1 to {MAX_UNIVERSE} and subsets a list")
    if not 1 <= len(subsets) <= MAX_SUBSETS:
        raise CertificateError(f"there must be 1 to {MAX_SUBSETS} subsets")
    for subset in subsets:  # type(...) by map: the subsets are most of a check's cost
        if (
            type(subset) is not list
            or not set(map(type, subset)) <= {int}
            or len(set(subset)) != len(subset)
            or (subset and not 0 <= min(subset) <= max(subset) < universe)
        ):
            raise CertificateError(f"every subset must list distinct elements 0..{universe - 1}")
    return universe, subsets


def check_pair(
    instance: Mapping[str, Any], solution: Any, certificate: Mapping[str, Any]
) -> tuple[int | None, int | None]:
    """:func:`objective` and :func:`bound` together, reading the instance once."""
    universe, subsets = _sets(instance)
    return _objective(universe, subsets, solution), _bound(universe, subsets, certificate)


def objective(instance: Mapping[str, Any], solution: Any) -> int | None:
    """The number of subsets of ``solution``, a cover, or ``None`` for a correct
    ``"Impossible"``."""
    return _objective(*_sets(instance), solution)


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int | None:
    """The lower bound on the cover size that ``certificate`` proves (``None``: no cover)."""
    return _bound(*_sets(instance), certificate)


def _objective(universe: int, subsets: list[list[int]], solution: Any) -> int | None:
    """:func:`objective` on the parsed instance."""
    covered = {e for subset in subsets for e in subset}
    if solution == IMPOSSIBLE:
        if len(covered) == universe:
            raise CertificateError("Impossible, but the subsets together cover the universe")
        return None
    chosen = integers(solution, "the solution")
    if len(set(chosen)) != len(chosen) or not all(0 <= j < len(subsets) for j in chosen):
        raise CertificateError("the solution must list distinct subsets 0..m-1")
    if len({e for j in chosen for e in subsets[j]}) != universe:
        raise CertificateError("the solution's subsets leave an element uncovered")
    return len(chosen)


def _bound(universe: int, subsets: list[list[int]], certificate: Mapping[str, Any]) -> int | None:
    """:func:`bound` on the parsed instance."""
    kind = certificate.get("kind")
    if kind == "uncovered" and set(certificate) == {"kind", "element"}:
        element = integer(certificate["element"], "the element")
        if not 0 <= element < universe or any(element in subset for subset in subsets):
            raise CertificateError(f"element {element} is not one that no subset holds")
        return None
    if kind == "dual" and set(certificate) == {"kind", "tree"}:
        return _tree_bound(universe, subsets, certificate["tree"])
    raise CertificateError(f"unknown certificate kind {kind!r:.40} or unexpected fields")


def _tree_bound(universe: int, subsets: list[list[int]], tree: Any) -> int:
    """The smallest leaf bound of a complete pre-order branching tree."""
    m = len(subsets)
    if not isinstance(tree, list) or not tree:
        raise CertificateError("the tree must be a non-empty list of nodes")
    leaves = sum(1 for node in tree if isinstance(node, list) and node[:1] != ["split"])
    if leaves * (universe + sum(map(len, subsets))) > TREE_MAX_WORK:
        raise CertificateError(f"{leaves} leaves: past {TREE_MAX_WORK} steps")
    state = [0] * m  # 0 free, 1 taken, -1 left out
    cover = [0] * universe  # how many taken subsets hold each element
    open_splits: list[int] = []  # subsets split on, on the path from the root
    best: int | None = None
    for position, node in enumerate(tree):
        if not isinstance(node, list) or not node:
            raise CertificateError(f"node {position} must be a non-empty list")
        if node[0] == "split" and len(node) == 2:
            j = integer(node[1], "a split's subset")
            if not 0 <= j < m or state[j] != 0:
                raise CertificateError(f"node {position} splits on subset {j}, not free there")
            _take(state, cover, subsets, j, 1)
            open_splits.append(j)
            continue
        if node[0] == "empty" and len(node) == 2:
            e = integer(node[1], "an element")
            if (
                not 0 <= e < universe
                or cover[e]
                or any(state[j] >= 0 and e in subsets[j] for j in range(m))
            ):
                raise CertificateError(f"leaf {position}: element {e} can still be covered")
        elif node[0] == "prices" and len(node) == 3:
            leaf = _prices_bound(node[1], node[2], subsets, state, cover, position)
            best = leaf if best is None else min(best, leaf)
        else:
            raise CertificateError(f"node {position} is not a split, empty or prices node")
        while open_splits and state[open_splits[-1]] == -1:
            state[open_splits.pop()] = 0  # both subtrees done
        if not open_splits:
            if position != len(tree) - 1:
                raise CertificateError(f"the tree ends at node {position}, before the list")
            break
        _take(state, cover, subsets, open_splits[-1], -1)  # the left-out subtree follows
    if open_splits or best is None:
        raise CertificateError("the tree is incomplete or has no prices leaf")
    return best


def _take(state: list[int], cover: list[int], subsets: list[list[int]], j: int, to: int) -> None:
    """Set subset ``j`` taken (``to`` 1) or, from taken, left out (``to`` -1)."""
    for e in subsets[j]:
        cover[e] += to
    state[j] = to


def _prices_bound(
    scale: Any,
    prices: Any,
    subsets: list[list[int]],
    state: list[int],
    cover: list[int],
    position: int,
) -> int:
    """``|T| + ceil(sum of the uncovered prices / scale)`` once every free subset's uncovered
    prices are checked to sum to at most ``scale``."""
    scale, prices = integer(scale, "a scale"), integers(prices, "the prices")
    if scale < 1 or len(prices) != len(cover) or min(prices) < 0:
        raise CertificateError(f"leaf {position}: need a scale >= 1 and u prices >= 0")
    for j, subset in enumerate(subsets):
        if state[j] == 0 and sum(prices[e] for e in subset if not cover[e]) > scale:
            raise CertificateError(f"leaf {position}: subset {j}'s prices sum past the scale")
    total = sum(price for e, price in enumerate(prices) if not cover[e])
    return state.count(1) + -(-total // scale)
