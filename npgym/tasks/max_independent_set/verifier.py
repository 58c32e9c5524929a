"""MaxIndependentSet verifier: the MaxClique vertex-set kernel with the rule reversed (no two
listed vertices adjacent), and its pure-Python twin.

The task (its ``adjacent`` False) calls :func:`~npgym.tasks.max_clique.verifier.check_vertex_set`
(and its fused twin :func:`~npgym.tasks.max_clique.verifier.scan_check_vertex_set`) itself rather
than through a numba wrapper defined here: numba's on-disk cache would not notice a change in a
kernel that a cached wrapper in another file calls.
"""

from __future__ import annotations

from npgym.tasks.max_clique.verifier import (
    BAD_PAIR,
    OK,
    OUT_OF_RANGE,
    REPEATED,
    check_vertex_set,
    check_vertex_set_python,
    reason,
    scan_check_vertex_set,
)

__all__ = [
    "BAD_PAIR",
    "OK",
    "OUT_OF_RANGE",
    "REPEATED",
    "check_vertex_set",
    "check_vertex_set_python",
    "reason",
    "scan_check_vertex_set",
]
