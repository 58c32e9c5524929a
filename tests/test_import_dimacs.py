"""DIMACS import: graphs as MaxClique, MaxIndependentSet and GraphColoring instances, checked
against the published optima of classic graphs, malformed and hostile files, and the CLI round
trip to ``npgym eval``."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import get_args

import pytest
from click.testing import CliRunner

from npgym.cli import main
from npgym.graphs import MAX_VERTICES, GraphInstance
from npgym.npbench import dimacs
from npgym.npbench.instance_files import (
    MAX_INSTANCE_FILE_BYTES,
    ImportedInstance,
    InstanceFileError,
)
from npgym.registry import get_task

MYCIEL3 = """\
c Z. Mycielski, Scientia, Series A, Vol. 3, 1989, pp. 1-13.
c Chromatic number = 4
p edge 11 20
e 1 2
e 1 4
e 1 7
e 1 9
e 2 3
e 2 6
e 2 8
e 3 5
e 3 7
e 3 10
e 4 5
e 4 6
e 4 10
e 5 8
e 5 9
e 6 11
e 7 11
e 8 11
e 9 11
e 10 11
"""


def queen5_5() -> str:
    """queen5_5.col (DIMACS coloring benchmark) by its definition: the squares of a 5 x 5 board,
    adjacent when a queen moves between them; every edge listed both ways, as the published
    file does (p edge 25 320)."""
    squares = [(row, column) for row in range(5) for column in range(5)]
    lines = []
    for (i, (r1, c1)), (j, (r2, c2)) in combinations(enumerate(squares, 1), 2):
        if r1 == r2 or c1 == c2 or abs(r1 - r2) == abs(c1 - c2):
            lines += [f"e {i} {j}", f"e {j} {i}"]
    return f"c queen5_5\np edge 25 {len(lines)}\n" + "\n".join(lines) + "\n"


PUBLISHED = {
    # myciel3 is the Groetzsch graph: triangle-free, chromatic number 4, independence number 5.
    ("myciel3", "GraphColoring"): (MYCIEL3, 4),
    ("myciel3", "MaxClique"): (MYCIEL3, 2),
    ("myciel3", "MaxIndependentSet"): (MYCIEL3, 5),
    ("queen5_5", "GraphColoring"): (queen5_5(), 5),
    ("queen5_5", "MaxClique"): (queen5_5(), 5),
    ("queen5_5", "MaxIndependentSet"): (queen5_5(), 5),
}


def graph(item: ImportedInstance) -> GraphInstance:
    assert isinstance(item.instance, GraphInstance)
    return item.instance


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("graph", "task_name"), PUBLISHED)
def test_the_proven_reference_is_the_published_optimum(
    graph: str, task_name: str, tmp_path: Path
) -> None:
    text, optimum = PUBLISHED[graph, task_name]
    item = dimacs.read_dimacs(write(tmp_path, f"{graph}.col", text), task_name)
    task = get_task(task_name)
    reference = task.reference(item.instance)
    assert reference.proven_optimal and reference.objective == optimum
    assert task.verify(item.instance, reference.solution).objective == optimum


def test_vertices_are_renumbered_from_zero_and_repeated_edges_merged(tmp_path: Path) -> None:
    item = dimacs.read_dimacs(write(tmp_path, "queen5_5.col", queen5_5()), "MaxClique")
    assert graph(item).n == 25 and len(graph(item).edges) == 160
    assert graph(item).edges[0] == (0, 1)  # e 1 2
    assert item.record_id == "dimacs-queen5_5"
    assert item.description.endswith(
        "MaxClique, 25 vertices, 160 edges, 160 repeated edge lines merged"
    )
    assert item.instance.source == {"source": "dimacs", "file": "queen5_5.col"}


def test_p_col_and_blank_lines_and_carriage_returns_are_read(tmp_path: Path) -> None:
    text = "c a .clq file\r\n\r\np col 3 2\r\ne 1 2\r\ne 2 3\r\n"
    item = dimacs.read_dimacs(write(tmp_path, "t.clq", text), "MaxClique")
    assert graph(item).n == 3 and graph(item).edges == ((0, 1), (1, 2))


MALFORMED = {
    "no p line": ("e 1 2\n", "t.col:1: an edge before the 'p edge N M' line"),
    "two p lines": ("p edge 3 0\np edge 3 0\n", "t.col:2: a second 'p' line"),
    "p line shape": ("p graph 3 0\n", "t.col:1: expected 'p edge N M'"),
    "vertex count": ("p edge three 0\n", "t.col:1: the number of vertices must be an integer"),
    "vertex out of range": ("p edge 3 1\ne 1 4\n", "t.col:2: vertex 4 is not in 1..3"),
    "vertex zero": ("p edge 3 1\ne 0 1\n", "t.col:2: vertex 0 is not in 1..3"),
    "self-loop": ("p edge 3 1\ne 2 2\n", "t.col:2: edge 2 2 is a self-loop"),
    "edge shape": ("p edge 3 1\ne 1 2 3\n", "t.col:2: expected 'e U V'"),
    "python-only integer": ("p edge 3 1\ne 1 2_0\n", "t.col:2: a vertex must be an integer"),
    "other line": ("p edge 3 1\nn 1 5\n", "t.col:2: expected a 'c', 'p' or 'e' line"),
    "too many edges": ("p edge 3 1\ne 1 2\ne 2 3\n", "t.col:3: more edge lines than the 1"),
    "too few edges": ("p edge 3 2\ne 1 2\n", "t.col:2: 1 edge lines, but the 'p' line declares 2"),
    "empty": ("c nothing\n", "t.col: no 'p edge N M' line"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_file_is_one_error_naming_its_line(case: str, tmp_path: Path) -> None:
    text, message = MALFORMED[case]
    with pytest.raises(InstanceFileError, match=message.replace(".", r"\.")):
        dimacs.read_dimacs(write(tmp_path, "t.col", text), "MaxClique")


def test_the_cli_says_one_error_line_naming_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "t.col", MALFORMED["self-loop"][0])
    result = CliRunner().invoke(
        main, ["import", "dimacs", str(path), "--task", "MaxClique", "-o", str(tmp_path / "d")]
    )
    assert result.exit_code == 1
    assert result.output == f"Error: {path}:2: edge 2 2 is a self-loop\n"


def test_the_cli_needs_a_known_task(tmp_path: Path) -> None:
    path = write(tmp_path, "t.col", MYCIEL3)
    result = CliRunner().invoke(
        main, ["import", "dimacs", str(path), "--task", "TSP", "-o", str(tmp_path / "d")]
    )
    assert result.exit_code == 2 and "'TSP' is not one of" in result.output


@pytest.mark.parametrize(
    ("n", "accepted"), [(MAX_VERTICES, True), (MAX_VERTICES + 1, False), (10**9, False)]
)
def test_the_vertex_count_is_bounded_on_the_p_line(n: int, accepted: bool, tmp_path: Path) -> None:
    path = write(tmp_path, "t.col", f"p edge {n} 0\n")
    if accepted:
        assert graph(dimacs.read_dimacs(path, "MaxClique")).n == MAX_VERTICES
    else:
        with pytest.raises(InstanceFileError, match=f"t.col:1: {n:,} vertices is outside"):
            dimacs.read_dimacs(path, "MaxClique")


@pytest.mark.parametrize("edges", [dimacs.max_edge_lines(4) + 1, 10**12])
def test_the_edge_count_is_bounded_on_the_p_line(edges: int, tmp_path: Path) -> None:
    """More edge lines than a simple graph has, each listed both ways, is refused before any
    edge is read: a 'p edge 4 10**12' line allocates nothing."""
    path = write(tmp_path, "t.col", f"p edge 4 {edges}\ne 1 2\n")
    with pytest.raises(InstanceFileError, match=f"t.col:1: {edges:,} edges is more than"):
        dimacs.read_dimacs(path, "MaxClique")


def test_the_most_edge_lines_a_p_line_may_declare(tmp_path: Path) -> None:
    """At the limit: K4 with every edge listed both ways (12 lines)."""
    lines = [f"e {u} {v}" for u in range(1, 5) for v in range(1, 5) if u != v]
    assert len(lines) == dimacs.max_edge_lines(4)
    path = write(tmp_path, "k4.col", f"p edge 4 {len(lines)}\n" + "\n".join(lines) + "\n")
    item = dimacs.read_dimacs(path, "MaxClique")
    assert len(graph(item).edges) == 6


@pytest.mark.parametrize(
    ("size", "accepted"), [(MAX_INSTANCE_FILE_BYTES, True), (MAX_INSTANCE_FILE_BYTES + 1, False)]
)
def test_a_file_is_read_only_up_to_the_limit(size: int, accepted: bool, tmp_path: Path) -> None:
    head = "p edge 3 0\nc "
    path = tmp_path / "big.col"
    path.write_text(head + "x" * (size - len(head) - 1) + "\n")
    assert path.stat().st_size == size
    if accepted:
        assert graph(dimacs.read_dimacs(path, "MaxClique")).n == 3
    else:
        with pytest.raises(InstanceFileError, match="larger than 67,108,864 bytes"):
            dimacs.read_dimacs(path, "MaxClique")


@pytest.mark.parametrize("task_name", dimacs.TASKS)
def test_import_then_eval_the_folder(task_name: str, tmp_path: Path) -> None:
    files = [write(tmp_path, "myciel3.col", MYCIEL3), write(tmp_path, "queen5_5.col", queen5_5())]
    out = tmp_path / "imported"
    runner = CliRunner()
    command = ["import", "dimacs", *map(str, files), "--task", task_name, "-o", str(out)]
    result = runner.invoke(main, command)
    assert result.exit_code == 0, result.output
    assert f"myciel3.col: {task_name}, 11 vertices, 20 edges: reference" in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"] == {"dimacs": ["myciel3.col", "queen5_5.col"]}
    rows = [json.loads(line) for line in (out / f"{task_name}.jsonl").read_text().splitlines()]
    assert [row["id"] for row in rows] == ["dimacs-myciel3", "dimacs-queen5_5"]
    expected = {name: PUBLISHED[name, task_name][1] for name in ("myciel3", "queen5_5")}
    assert [row["reference_objective"] for row in rows] == list(expected.values())
    assert all(row["proven_optimal"] for row in rows)
    report_dir = tmp_path / "report"
    evaluated = runner.invoke(main, ["eval", str(out), "--agent", "greedy", "-o", str(report_dir)])
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads((report_dir / "report.json").read_text())
    assert report["overall"]["instances"] == 2 and report["overall"]["success_rate"] == 1.0


def test_a_device_is_read_only_up_to_the_limit() -> None:
    """/dev/zero never ends: it is refused after the limit's bytes, not read forever."""
    with pytest.raises(InstanceFileError, match="/dev/zero: larger than 67,108,864 bytes"):
        dimacs.read_dimacs("/dev/zero", "MaxClique")


@pytest.mark.parametrize(
    ("path", "model"),
    [("tsplib", "ImportOptions"), ("dimacs", "DimacsImportOptions")],
)
def test_each_import_command_s_parameters_are_its_options_model_s_fields(
    path: str, model: str
) -> None:
    from npgym import cli, commands

    command = cli.main.commands["import"].commands[path]  # type: ignore[attr-defined]
    names = {parameter.name for parameter in command.params}
    assert names == set(getattr(commands, model).model_fields)


def test_the_cli_offers_the_tasks_the_reader_makes() -> None:
    from npgym.commands import DimacsTask

    assert get_args(DimacsTask) == dimacs.TASKS
