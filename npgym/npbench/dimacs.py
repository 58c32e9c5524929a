"""Read DIMACS graph files (``.col``, ``.clq``) as MaxClique, MaxIndependentSet or GraphColoring
instances.

The format (DIMACS challenge, 1993): ``c`` lines are comments; one ``p edge N M`` line (``p col``
in some files) gives N vertices and M edge lines; each ``e U V`` line is an edge between
vertices U and V, numbered from 1. Vertex ``U`` of the file is vertex ``U - 1`` of the
instance. An edge listed twice (``e 1 2`` and ``e 2 1``, as some coloring files do) is one
edge, and the summary says how many lines were merged; a self-loop is refused.

Sizes are bounded before anything is allocated for them: N must be within the graph tasks' cap
(1 to :data:`~npgym.graphs.MAX_VERTICES`) and M at most ``N * (N - 1)`` (every edge in both
directions), both checked on the ``p`` line; then exactly M ``e`` lines must follow, each
stored as it is read (4 bytes a vertex), so memory grows with the file, which is itself at
most :data:`~npgym.npbench.instance_files.MAX_INSTANCE_FILE_BYTES`.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from npgym.graphs import MAX_VERTICES, GraphInstance
from npgym.npbench.instance_files import (
    ImportedInstance,
    InstanceFileError,
    check_row_size,
    parse_integer,
    read_text_lines,
    write_imported,
)
from npgym.tasks.graph_coloring.instance import GraphColoringInstance
from npgym.tasks.max_clique.instance import MaxCliqueInstance
from npgym.tasks.max_independent_set.instance import MaxIndependentSetInstance

INSTANCE_TYPES: dict[str, type[GraphInstance]] = {
    "MaxClique": MaxCliqueInstance,
    "MaxIndependentSet": MaxIndependentSetInstance,
    "GraphColoring": GraphColoringInstance,
}
TASKS = tuple(INSTANCE_TYPES)
"""The tasks a DIMACS graph can become."""


def max_edge_lines(n: int) -> int:
    """Most ``e`` lines a graph of ``n`` vertices may declare: every edge in both directions."""
    return n * (n - 1)


def _problem_line(where: str, fields: list[str]) -> tuple[int, int]:
    """``(N, M)`` of a ``p edge N M`` line, checked against the caps."""
    if len(fields) != 4 or fields[1] not in ("edge", "col"):
        raise InstanceFileError(f"{where}: expected 'p edge N M', got {' '.join(fields)[:60]!r}")
    n = parse_integer(fields[2], where, "the number of vertices")
    m = parse_integer(fields[3], where, "the number of edges")
    if not 1 <= n <= MAX_VERTICES:
        raise InstanceFileError(
            f"{where}: {n:,} vertices is outside what npgym's graph tasks hold "
            f"(1 to {MAX_VERTICES:,})"
        )
    if not 0 <= m <= max_edge_lines(n):
        raise InstanceFileError(
            f"{where}: {m:,} edges is more than a simple graph of {n:,} vertices has, each "
            f"listed both ways ({max_edge_lines(n):,})"
        )
    return n, m


class DimacsGraph:
    """A parsed DIMACS graph: ``n`` vertices and the distinct ``edges`` (0-based, ``u < v``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.n = 0
        declared = -1
        ends = array("i")
        last = 0
        for number, text in read_text_lines(path):
            fields = text.split()
            if not fields or fields[0] == "c":
                continue
            where = f"{path}:{number}"
            kind = fields[0]
            if kind == "p":
                if declared >= 0:
                    raise InstanceFileError(f"{where}: a second 'p' line")
                self.n, declared = _problem_line(where, fields)
            elif kind == "e":
                if declared < 0:
                    raise InstanceFileError(f"{where}: an edge before the 'p edge N M' line")
                if len(ends) == 2 * declared:
                    raise InstanceFileError(
                        f"{where}: more edge lines than the {declared:,} the 'p' line declares"
                    )
                if len(fields) != 3:
                    raise InstanceFileError(f"{where}: expected 'e U V', got {text.strip()[:60]!r}")
                u = parse_integer(fields[1], where, "a vertex")
                v = parse_integer(fields[2], where, "a vertex")
                for vertex in (u, v):
                    if not 1 <= vertex <= self.n:
                        raise InstanceFileError(f"{where}: vertex {vertex} is not in 1..{self.n}")
                if u == v:
                    raise InstanceFileError(f"{where}: edge {u} {v} is a self-loop")
                ends.append(u - 1)
                ends.append(v - 1)
                last = number
            else:
                raise InstanceFileError(
                    f"{where}: expected a 'c', 'p' or 'e' line, got {text.strip()[:60]!r}"
                )
        if declared < 0:
            raise InstanceFileError(f"{path}: no 'p edge N M' line")
        if len(ends) != 2 * declared:
            raise InstanceFileError(
                f"{path}:{last}: {len(ends) // 2:,} edge lines, but the 'p' line declares "
                f"{declared:,}"
            )
        pairs = np.frombuffer(ends, np.int32).reshape(-1, 2).astype(np.int64)
        low, high = pairs.min(axis=1), pairs.max(axis=1)
        keys = np.unique(low * self.n + high)
        self.edges = np.column_stack((keys // self.n, keys % self.n))
        self.merged = declared - len(keys)
        """Edge lines that repeat an edge already listed."""

    def instance(self, task_name: str) -> ImportedInstance:
        """The graph as an instance of ``task_name``, ready to be certified."""
        source = {"source": "dimacs", "file": self.path.name}
        try:
            instance = INSTANCE_TYPES[task_name](
                task=task_name,
                n=self.n,
                edges=tuple(map(tuple, self.edges.tolist())),
                source=source,
            )
        except ValidationError as error:  # the checks above make this unexpected
            raise InstanceFileError(
                f"{self.path}: not a valid {task_name} instance ({error})"
            ) from None
        check_row_size(self.path, instance)
        merged = f", {self.merged:,} repeated edge lines merged" if self.merged else ""
        description = (
            f"{self.path}: {task_name}, {self.n} vertices, {len(self.edges)} edges{merged}"
        )
        record_id = f"dimacs-{self.path.name.split('.')[0]}"
        return ImportedInstance(record_id, instance, description)


def read_dimacs(path: str | Path, task_name: str) -> ImportedInstance:
    """A DIMACS graph file read as an instance of ``task_name`` (one of :data:`TASKS`)."""
    if task_name not in TASKS:
        raise ValueError(f"a DIMACS graph becomes one of {', '.join(TASKS)}, not {task_name}")
    return DimacsGraph(path).instance(task_name)


def import_dimacs_files(
    paths: Iterable[str | Path],
    task_name: str,
    out_dir: str | Path,
    time_limit: float | None = None,
    progress: bool = False,
) -> str:
    """Import DIMACS graph files as ``task_name`` instances into an npgym dataset folder; return
    one summary line per graph. Every file is read and checked before any reference is solved."""
    files = [Path(path) for path in paths]
    items = [read_dimacs(path, task_name) for path in files]
    return write_imported(
        items, out_dir, {"dimacs": [path.name for path in files]}, time_limit, progress
    )
