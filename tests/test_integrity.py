"""A built folder is what its manifest says: tampering is refused, finished builds are left
alone, variants and task families build, long commands show progress, a killed build resumes
to the same bytes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numba
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from npgym import datasets
from npgym.cli import main
from npgym.instance import Instance
from npgym.npbench import build as building
from npgym.npbench.build import (
    BuildError,
    BuildSpec,
    IntegrityError,
    build,
    read_dataset,
    verify_dataset,
)
from npgym.records import load_row, make_record
from npgym.variants import variant

SPEC = BuildSpec(tasks=("TSP", "SubsetSum", "SetCover"), n=3, mix={"easy": 1.0})


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def _rows(folder: Path, task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / f"{task}.jsonl").read_text().splitlines()]


def _write(folder: Path, task: str, rows: list[dict[str, Any]], manifest_too: bool) -> None:
    """Replace a task file; with ``manifest_too`` rewrite its manifest entry to match, as a
    careful tamperer would."""
    path = folder / f"{task}.jsonl"
    path.write_text("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows))
    if not manifest_too:
        return
    manifest = json.loads((folder / "manifest.json").read_text())
    entry = manifest["tasks"][task]
    entry |= {
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "count": len(rows),
        "proven_optimal": round(sum(row["proven_optimal"] for row in rows) / len(rows), 6),
        "ids": [row["id"] for row in rows],
        "seeds": [row["seed"] for row in rows],
        "fingerprints": [load_row(row).instance.fingerprint() for row in rows],
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def _double_objectives(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    doubled = []
    for row in rows:
        reference = json.loads(row["reference"])
        reference["objective"] *= 2
        doubled.append(
            row
            | {"reference": json.dumps(reference), "reference_objective": reference["objective"]}
        )
    return doubled


def test_an_untouched_build_verifies(built: Path) -> None:
    rows = verify_dataset(built)
    assert [row["task"] for row in rows] == ["TSP"] * 3 + ["SubsetSum"] * 3 + ["SetCover"] * 3
    assert list(read_dataset(built)) == rows


@pytest.mark.parametrize("manifest_too", [False, True])
def test_doubled_tsp_objectives_are_refused(copy: Path, manifest_too: bool) -> None:
    _write(copy, "TSP", _double_objectives(_rows(copy, "TSP")), manifest_too)
    expected = "reference solution verifies to" if manifest_too else "sha256 differs"
    with pytest.raises(IntegrityError, match=expected) as caught:
        list(read_dataset(copy))
    assert "TSP.jsonl" in str(caught.value)
    assert len(list(read_dataset(copy, verify=False))) == 9


@pytest.mark.parametrize("manifest_too", [False, True])
def test_deleted_rows_are_refused(copy: Path, manifest_too: bool) -> None:
    _write(copy, "SetCover", _rows(copy, "SetCover")[:1], manifest_too)
    expected = "SetCover-easy-00001" if manifest_too else "SetCover.jsonl: sha256 differs"
    with pytest.raises(IntegrityError, match=expected):
        verify_dataset(copy)


@pytest.mark.parametrize("manifest_too", [False, True])
def test_a_duplicated_row_is_refused(copy: Path, manifest_too: bool) -> None:
    rows = _rows(copy, "SubsetSum")
    _write(copy, "SubsetSum", [*rows, rows[0]], manifest_too)
    expected = "the same id as row 'SubsetSum-easy-00000'" if manifest_too else "sha256 differs"
    with pytest.raises(IntegrityError, match=expected):
        verify_dataset(copy)


def test_a_changed_objective_column_alone_is_refused(copy: Path) -> None:
    rows = _rows(copy, "TSP")
    rows[1]["reference_objective"] += 1
    _write(copy, "TSP", rows, manifest_too=True)
    with pytest.raises(IntegrityError, match=r"TSP-easy-00001.*reference_objective"):
        verify_dataset(copy)


def test_eval_and_export_refuse_a_tampered_folder_unless_told(copy: Path, tmp_path: Path) -> None:
    _write(copy, "TSP", _double_objectives(_rows(copy, "TSP")), manifest_too=True)
    runner = CliRunner()
    evaluated = [
        "eval",
        str(copy),
        "--agent",
        "heuristic",
        "-o",
        str(tmp_path / "r"),
        "--allow-missing",
    ]
    exported = ["export", str(copy), "--format", "jsonl", "-o", str(tmp_path / "x.jsonl")]
    for command in (evaluated, exported):
        result = runner.invoke(main, command)
        assert result.exit_code == 1, result.output
        assert "TSP.jsonl" in result.output and "reference solution" in result.output
        result = runner.invoke(main, [*command, "--no-verify"])
        assert result.exit_code == 0, result.output


def test_a_finished_build_is_verified_and_left_alone(
    built: Path, copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_work(*args: Any, **options: Any) -> Any:
        raise AssertionError("a finished build was computed again")

    monkeypatch.setattr(building, "make_rows", no_work)
    before = _files(copy)
    summary = build(SPEC, copy, workers=1, progress=False)
    assert summary.already_built and summary.computed == 0
    assert _files(copy) == before
    options = ["--n", "3", "--tasks", "TSP,SubsetSum,SetCover", "--tier", "easy"]
    result = CliRunner().invoke(main, ["bench", "build", "-o", str(copy), *options])
    assert result.exit_code == 0 and "nothing to do" in result.output
    with pytest.raises(BuildError, match="different spec"):
        build(SPEC.model_copy(update={"count": 4}), copy, workers=1, progress=False)
    with pytest.raises(BuildError, match="different spec"):
        build(SPEC, copy, workers=1, progress=False, variants=1)
    _write(copy, "TSP", _double_objectives(_rows(copy, "TSP")), manifest_too=True)
    with pytest.raises(IntegrityError):
        build(SPEC, copy, workers=1, progress=False)


def test_variants_are_extra_rows_with_their_own_references(tmp_path: Path) -> None:
    spec = BuildSpec(tasks=("TSP", "Knapsack"), n=2, mix={"easy": 1.0})
    build(spec, tmp_path / "a", workers=1, progress=False, variants=2)
    rows = verify_dataset(tmp_path / "a")
    assert [row["id"] for row in rows[:3]] == [
        "TSP-easy-00000",
        "TSP-easy-00000-v1",
        "TSP-easy-00000-v2",
    ]
    assert len(rows) == 2 * 2 * 3
    originals = {row["id"]: row for row in rows if "original_id" not in row}
    for row in rows:
        if "original_id" not in row:
            continue
        original = originals[row["original_id"]]
        _task, instance, _ = load_row(original)
        made = variant(instance, datasets.derive_seed(spec.seed, row["variant"] - 1))
        assert row["transforms"] == list(made.transforms)
        assert load_row(row).instance == made.instance
        assert row["proven_optimal"]
        mapped = made.objective_to_original(row["reference_objective"])
        assert mapped == original["reference_objective"]
        assert row["variant"] in (1, 2)
    build(spec, tmp_path / "b", workers=2, progress=False, variants=2)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    table = pq.read_table(_export(tmp_path / "a", tmp_path / "rows.parquet"))
    assert {"original_id", "variant", "transforms"} <= set(table.column_names)


def _export(folder: Path, output: Path) -> Path:
    result = CliRunner().invoke(
        main, ["export", str(folder), "--format", "parquet", "-o", str(output)]
    )
    assert result.exit_code == 0, result.output
    return output


def test_variants_of_an_edited_folder_are_checked_against_the_plan(tmp_path: Path) -> None:
    spec = BuildSpec(tasks=("Knapsack",), n=2, mix={"easy": 1.0})
    build(spec, tmp_path, workers=1, progress=False, variants=1)
    rows = _rows(tmp_path, "Knapsack")
    _write(tmp_path, "Knapsack", [row for row in rows if row.get("variant") != 1], True)
    with pytest.raises(IntegrityError, match="missing: Knapsack-easy-00000-v1"):
        verify_dataset(tmp_path)


def test_variants_need_a_task_that_has_them(tmp_path: Path) -> None:
    spec = BuildSpec(tasks=("Invert-MaxClique",), n=1, mix={"easy": 1.0})
    with pytest.raises(BuildError, match="--variants"):
        build(spec, tmp_path, workers=1, progress=False, variants=1)


def test_task_families_build_as_np_bench_splits(tmp_path: Path) -> None:
    families = "Compose-Chain2,Aggregate-Knapsack,Invert-MaxClique"
    options = ["--n", "1", "--tasks", families, "--tier", "easy", "--workers", "1"]
    result = CliRunner().invoke(main, ["bench", "build", "-o", str(tmp_path), *options])
    assert result.exit_code == 0, result.output
    rows = verify_dataset(tmp_path)
    assert [row["task"] for row in rows] == families.split(",")
    assert all(row["proven_optimal"] for row in rows)


def test_long_commands_print_progress_lines_when_not_on_a_terminal(
    built: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    options = ["--n", "2", "--tasks", "Knapsack", "--tier", "easy", "--workers", "1"]
    result = runner.invoke(main, ["bench", "build", "-o", str(tmp_path / "b"), *options])
    assert result.exit_code == 0, result.output
    assert "build: 2/2 finished" in result.stderr
    result = runner.invoke(
        main, ["export", str(built), "--format", "trl", "-o", str(tmp_path / "t.jsonl")]
    )
    assert result.exit_code == 0, result.output
    assert "verify: 9/9 finished" in result.stderr and "export: 9/9 finished" in result.stderr


def test_a_cold_compile_shows_progress_per_task_and_a_warm_one_says_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fresh_kernel() -> Any:
        @numba.njit(cache=False)
        def total(values: Any) -> Any:
            return values.sum()

        return total

    class Compiles:
        """A task whose generation compiles a kernel no one compiled before."""

        def generate(self, seed: int, tier: str) -> Instance:
            import numpy as np

            fresh_kernel()(np.arange(3))
            return None  # type: ignore[return-value]

    monkeypatch.setattr(datasets, "_warmed", set())
    monkeypatch.setattr(datasets, "get_task", lambda name: Compiles())
    monkeypatch.setattr(datasets, "COMPILE_PROGRESS_EVERY", 1e9)  # no lines in between
    datasets.warm_up(["A", "B"], references=False)
    datasets.warm_up(["A", "C"], references=False)
    lines = capsys.readouterr().err.splitlines()
    message = datasets.COMPILING_MESSAGE
    assert lines[:2] == [f"{message}: 1/2 A ...", f"{message}: 2/2 B ..."]
    assert lines[3] == f"{message}: 1/1 C ..."  # A was warmed by the first call
    assert [line.startswith(f"{message}: done in ") for line in lines] == [0, 0, 1, 0, 1]
    datasets.warm_up(["A"], references=False)  # warmed before: nothing compiles, nothing said
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_a_build_killed_with_sigkill_resumes_to_the_same_bytes(tmp_path: Path) -> None:
    options = ["--n", "12", "--tasks", "TSP,Knapsack", "--tier", "medium", "--workers", "2"]
    command = [sys.executable, "-c", "from npgym.cli import main; main()", "bench", "build"]
    killed = tmp_path / "killed"
    journal = killed / building.JOURNAL / "rows.jsonl"
    process = subprocess.Popen([*command, "-o", str(killed), *options], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not (journal.exists() and journal.read_bytes().count(b"\n") >= 2):
        assert process.poll() is None, "the build ended before it could be killed"
        assert time.monotonic() < deadline, "the build wrote no rows"
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    assert journal.exists() and not (killed / "manifest.json").exists()
    done = journal.read_bytes().count(b"\n")
    assert done < 24, "the whole build finished before the kill"
    subprocess.run([*command, "-o", str(killed), *options], check=True, capture_output=True)
    whole = tmp_path / "whole"
    subprocess.run([*command, "-o", str(whole), *options], check=True, capture_output=True)
    assert _files(killed) == _files(whole)
    assert not (killed / building.JOURNAL).exists()


def test_an_import_shows_progress_and_verifies(tmp_path: Path) -> None:
    distances = [[0, 3, 4, 5], [3, 0, 6, 7], [4, 6, 0, 8], [5, 7, 8, 0]]
    question = {str(i): {str(j): d for j, d in enumerate(row)} for i, row in enumerate(distances)}
    knapsack = {
        "capacity": 5,
        "items": {"0": {"weight": 2, "value": 3}, "1": {"weight": 4, "value": 5}},
    }
    source = tmp_path / "tsp.json"
    source.write_text(json.dumps({"questions": {"question1": question, "question2": knapsack}}))
    result = CliRunner().invoke(
        main, ["import", "np-engine", str(source), "-o", str(tmp_path / "d")]
    )
    assert result.exit_code == 0, result.output
    assert "import: 2/2 finished" in result.stderr
    rows = verify_dataset(tmp_path / "d")
    assert [row["reference_objective"] for row in rows] == [22, 5]


def test_a_damaged_journal_line_is_named(tmp_path: Path) -> None:
    spec = BuildSpec(tasks=("Knapsack",), n=2, mix={"easy": 1.0})
    journal = tmp_path / building.JOURNAL
    journal.mkdir(parents=True)
    (journal / "spec.json").write_text(spec.model_dump_json())
    (journal / "rows.jsonl").write_text('{"record": {"id": "x"}, "fingerprint": "f"}\n{oops\n')
    with pytest.raises(BuildError, match=r"rows.jsonl:2: not a journal entry"):
        build(spec, tmp_path, workers=1, progress=False)


def test_variant_rows_are_derived_again_from_their_originals(tmp_path: Path) -> None:
    from npgym.npbench.certify import regenerate

    spec = BuildSpec(tasks=("Knapsack",), count=2, mix={"easy": 1.0})
    build(spec, tmp_path, workers=1, progress=False, variants=2)
    rows = verify_dataset(tmp_path)
    assert regenerate(tmp_path, rows) == [row["id"] for row in rows]
    edited = _rows(tmp_path, "Knapsack")
    task, original, _ = load_row(edited[0])
    other = variant(original, datasets.derive_seed(spec.seed, 7)).instance  # not variant 1
    record = make_record(edited[1]["id"], task, other, task.reference(other))
    edited[1] = {**edited[1], **record}
    _write(tmp_path, "Knapsack", edited, manifest_too=True)
    with pytest.raises(IntegrityError, match="is not variant 1 of 'Knapsack-easy-00000'"):
        regenerate(tmp_path, verify_dataset(tmp_path))
