"""A bench folder is evidence, not truth: a corpus of tampered folders, each evaluated with the
default checks (no ``--deep``).

Each case edits a fresh copy of one small bench build (two NP-Bench v2 instances of TSP, Knapsack
and SetCover: official rows, so the shipped digest applies) as an attacker would, often
rewriting the manifest to match, and says what ``npgym eval`` must do: refuse the folder with
one ``Error:`` line naming what is wrong (no traceback), or score it under an honest label
("custom (...)", never "NP-Bench version N") with unchecked tiers reported as ``custom``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import CliRunner, Result

import npgym
from npgym.cli import main
from npgym.datasets import BENCH_VERSION
from npgym.npbench import build as building
from npgym.npbench import certify
from npgym.npbench.build import BuildSpec, IntegrityError, load_manifest, verify_dataset
from npgym.npbench.export import LeakedPromptError, export_rows
from npgym.records import Row, load_row, make_record
from npgym.results import Reference

SPEC = BuildSpec(tasks=("TSP", "Knapsack", "SetCover"), count=2)
"""Two NP-Bench instances per task (tier ``benchmark``, the official ids and instances)."""
PARTIAL = f"custom (derived from NP-Bench v{BENCH_VERSION}, 994 of its 1000 rows dropped)"
"""The honest label of the untouched fixture: 6 of the 1000 official rows."""

Edit = Callable[[Path], None]


# --- helpers ----------------------------------------------------------------------------------


def _manifest(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "manifest.json").read_text()))


def _save(folder: Path, manifest: Any) -> None:
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))


def _rows(folder: Path, task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / f"{task}.jsonl").read_text().splitlines()]


def _write(folder: Path, task: str, rows: list[dict[str, Any]], manifest_too: bool = True) -> None:
    """Replace a task file; with ``manifest_too`` rewrite its manifest entry to match, as a
    careful tamperer would."""
    path = folder / f"{task}.jsonl"
    path.write_text("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows))
    if not manifest_too:
        return
    manifest = _manifest(folder)
    manifest["tasks"][task] |= {
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "count": len(rows),
        "proven_optimal": round(
            sum(row.get("proven_optimal") is True for row in rows) / len(rows), 6
        ),
        "ids": [row["id"] for row in rows],
        "seeds": [row["seed"] for row in rows],
        "fingerprints": [
            load_row(row | {"reference": None}).instance.fingerprint() for row in rows
        ],
    }
    _save(folder, manifest)


def _set(path: str, value: Any) -> Edit:
    """Set one manifest field (a dotted path; ``DELETE`` removes it)."""

    def edit(folder: Path) -> None:
        manifest = _manifest(folder)
        *parents, last = path.split(".")
        node = manifest
        for key in parents:
            node = node[key]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
        _save(folder, manifest)

    return edit


DELETE = object()


def _raw(text: str) -> Edit:
    """Replace the manifest with raw text (bad JSON, huge numbers...)."""

    def edit(folder: Path) -> None:
        (folder / "manifest.json").write_text(text)

    return edit


def _raw_field(path: str, literal: str) -> Edit:
    """Set a manifest field to a literal JSON token that Python's json writes no other way
    (``NaN``, ``1e400``, a 5000-digit number)."""

    def edit(folder: Path) -> None:
        _set(path, "@@MARK@@")(folder)
        text = (folder / "manifest.json").read_text().replace('"@@MARK@@"', literal)
        (folder / "manifest.json").write_text(text)

    return edit


def _row_edit(task: str, change: Callable[[dict[str, Any]], None], index: int = 0) -> Edit:
    """Edit one row in place and rewrite the manifest entry to match."""

    def edit(folder: Path) -> None:
        rows = _rows(folder, task)
        change(rows[index])
        _write(folder, task, rows)

    return edit


def _answer(row: dict[str, Any]) -> str:
    solution = json.loads(row["reference"])["solution"]
    return npgym.get_task(row["task"]).format_answer(solution)


def _leak(row: dict[str, Any]) -> None:
    row["prompt"] += f"\n\n(Hint: the optimal answer is Answer: {_answer(row)})"


def _leak_quietly(row: dict[str, Any]) -> None:
    """A leak that keeps the prompt's length: the answer replaces its last characters."""
    hint = f"Answer: {_answer(row)}"
    row["prompt"] = row["prompt"][: -len(hint)] + hint


def _forge_reference(row: dict[str, Any]) -> None:
    """A worse but feasible solution, marked proven optimal, with every column consistent: it
    verifies to its objective, so only the official digest (or ``--deep``) can tell."""
    task, instance, reference = load_row(row)
    assert reference is not None
    baseline = task.baseline_solution(instance)
    verdict = task.verify(instance, baseline)
    assert verdict.feasible and verdict.objective != reference.objective
    forged = reference.model_copy(
        update={"solution": baseline, "objective": verdict.objective, "bound": verdict.objective}
    )
    row |= make_record(row["id"], task, instance, forged)


def _null_objective(row: dict[str, Any]) -> None:
    reference = json.loads(row["reference"]) | {"objective": None, "bound": None}
    row |= {"reference": json.dumps(reference, separators=(",", ":")), "reference_objective": None}


def _null_objective_impossible(row: dict[str, Any]) -> None:
    """The null objective with an ``Impossible`` witness: the verifier itself refutes it."""
    _null_objective(row)
    reference = json.loads(row["reference"]) | {"solution": "Impossible"}
    row["reference"] = json.dumps(reference, separators=(",", ":"))


def _column(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(row: dict[str, Any]) -> None:
        if value is DELETE:
            del row[key]
        else:
            row[key] = value

    return change


def _reference_field(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(row: dict[str, Any]) -> None:
        reference = json.loads(row["reference"]) | {key: value}
        row["reference"] = json.dumps(reference, separators=(",", ":"))

    return change


def _drop_rows(listed: bool) -> Edit:
    """Remove Knapsack's second row; ``listed``: name it under ``dropped`` as
    ``--drop-overlap`` does."""

    def edit(folder: Path) -> None:
        rows = _rows(folder, "Knapsack")
        _write(folder, "Knapsack", rows[:1])
        if listed:
            _set("dropped", [rows[1]["id"]])(folder)

    return edit


def _drop_unplanned(folder: Path) -> None:
    _set("dropped", ["TSP-benchmark-99999"])(folder)


def _as_import(folder: Path) -> None:
    """Remove the spec (so nothing is regenerated) and pass the folder off as an import."""
    manifest = _manifest(folder)
    del manifest["spec"], manifest["bench_version"]
    manifest["source"] = {"np-engine": ["questions.json"]}
    _save(folder, manifest)


def _easy_swap(folder: Path) -> None:
    """Every instance swapped for an easy one labelled ``benchmark`` (instance and row), with
    exact references and their certificates, consistent columns and no spec: a folder that
    claims to be hard."""
    certificates = []
    for task_name in ("TSP", "Knapsack", "SetCover"):
        task = npgym.get_task(task_name)
        rows = []
        for old in _rows(folder, task_name):
            easy = task.generate(old["seed"] % 1000, "easy")
            disguised = task.from_json(
                json.dumps(json.loads(easy.to_json()) | {"tier": "benchmark", "difficulty": 0.8})
            )
            reference = task.reference(disguised)
            rows.append(make_record(old["id"], task, disguised, reference))
            certificates.append({"id": old["id"], "certificate": reference.certificate})
        _write(folder, task_name, [dict(row) for row in rows])
    lines = "".join(json.dumps(line) + "\n" for line in certificates)
    (folder / "certificates.jsonl").write_text(lines)
    _as_import(folder)


def _swap_instance_keep_spec(folder: Path) -> None:
    task = npgym.get_task("Knapsack")
    rows = _rows(folder, "Knapsack")
    easy = task.generate(rows[0]["seed"], "easy")
    rows[0] = dict(make_record(rows[0]["id"], task, easy, task.reference(easy)))
    rows[0]["seed"] = _rows(folder, "Knapsack")[0]["seed"]
    _write(folder, "Knapsack", rows)


def _link_task_file(folder: Path) -> None:
    outside = folder.parent / "elsewhere.jsonl"
    shutil.copy(folder / "TSP.jsonl", outside)
    (folder / "TSP.jsonl").unlink()
    (folder / "TSP.jsonl").symlink_to(outside)


def _link_manifest(folder: Path) -> None:
    outside = folder.parent / "manifest-elsewhere.json"
    shutil.copy(folder / "manifest.json", outside)
    (folder / "manifest.json").unlink()
    (folder / "manifest.json").symlink_to(outside)


def _sparse(name: str, size: int) -> Edit:
    """Replace a file by a sparse one of ``size`` bytes (no disk used, nothing to read)."""

    def edit(folder: Path) -> None:
        path = folder / name
        path.unlink()
        with open(path, "wb") as handle:
            handle.truncate(size)

    return edit


def _fifo(folder: Path) -> None:
    (folder / "TSP.jsonl").unlink()
    os.mkfifo(folder / "TSP.jsonl")


def _directory(folder: Path) -> None:
    (folder / "TSP.jsonl").unlink()
    (folder / "TSP.jsonl").mkdir()


def _missing(folder: Path) -> None:
    (folder / "TSP.jsonl").unlink()


def _task_file_bytes(data: bytes) -> Edit:
    def edit(folder: Path) -> None:
        path = folder / "TSP.jsonl"
        path.write_bytes(data)
        manifest = _manifest(folder)
        manifest["tasks"]["TSP"]["sha256"] = hashlib.sha256(data).hexdigest()
        _save(folder, manifest)

    return edit


def _official_spec_v1(folder: Path) -> None:
    """Claim version 1 everywhere (spec and top level): the v1 generators make other
    instances, so regeneration refuses it."""
    manifest = _manifest(folder)
    manifest["bench_version"] = 1
    manifest["spec"]["bench_version"] = 1
    _save(folder, manifest)


# --- the corpus -------------------------------------------------------------------------------

REFUSED: list[Any] = [
    # manifest fields, mistyped or out of range (one Error: line naming the field)
    pytest.param(_set("tasks.TSP.ids", None), "tasks.TSP.ids", id="ids-null"),
    pytest.param(_set("dropped", 5), "dropped", id="dropped-number"),
    pytest.param(_set("variants", "x"), "variants", id="variants-text"),
    pytest.param(_set("variants", 0), "variants", id="variants-zero"),
    pytest.param(_set("schema_version", "1"), "schema_version", id="schema-text"),
    pytest.param(_set("schema_version", 2), "schema_version", id="schema-unknown"),
    pytest.param(_set("row_schema_version", None), "row_schema_version", id="row-schema-null"),
    pytest.param(_set("npgym_version", 5), "npgym_version", id="npgym-version-number"),
    pytest.param(_set("bench_version", "2"), "bench_version", id="bench-version-text"),
    pytest.param(_set("bench_version", 1), "bench_version", id="bench-version-changed"),
    pytest.param(_set("bench_version", 99), "bench_version", id="bench-version-unknown"),
    pytest.param(_set("bench_version", DELETE), "bench_version", id="bench-version-removed"),
    pytest.param(_raw_field("bench_version", "1e400"), "bench_version", id="bench-version-inf"),
    pytest.param(_set("tasks", None), "tasks", id="tasks-null"),
    pytest.param(_set("tasks", []), "tasks", id="tasks-list"),
    pytest.param(_set("tasks", {}), "tasks", id="tasks-empty"),
    pytest.param(_set("tasks.TSP", None), "tasks.TSP", id="entry-null"),
    pytest.param(_set("tasks.TSP.file", "../TSP.jsonl"), "tasks.TSP.file", id="file-dotdot"),
    pytest.param(_set("tasks.TSP.file", "/etc/passwd"), "tasks.TSP.file", id="file-absolute"),
    pytest.param(_set("tasks.TSP.file", "Knapsack.jsonl"), "tasks.TSP.file", id="file-other"),
    pytest.param(_set("tasks.TSP.sha256", 123), "tasks.TSP.sha256", id="sha-number"),
    pytest.param(_set("tasks.TSP.sha256", "zz"), "tasks.TSP.sha256", id="sha-short"),
    pytest.param(_set("tasks.TSP.count", "2"), "tasks.TSP.count", id="count-text"),
    pytest.param(_set("tasks.TSP.count", -1), "tasks.TSP.count", id="count-negative"),
    pytest.param(_set("tasks.TSP.count", 10**30), "tasks.TSP.count", id="count-huge"),
    pytest.param(_set("tasks.TSP.count", True), "tasks.TSP.count", id="count-bool"),
    pytest.param(_set("tasks.TSP.count", 3), "count says 3", id="count-wrong"),
    pytest.param(_raw_field("tasks.TSP.count", "9" * 5000), "manifest", id="count-5000-digits"),
    pytest.param(_set("tasks.TSP.proven_optimal", "1"), "proven_optimal", id="share-text"),
    pytest.param(_raw_field("tasks.TSP.proven_optimal", "NaN"), "proven_optimal", id="share-nan"),
    pytest.param(_set("tasks.TSP.proven_optimal", 2), "proven_optimal", id="share-above-1"),
    pytest.param(_set("tasks.TSP.seeds", None), "tasks.TSP.seeds", id="seeds-null"),
    pytest.param(_set("tasks.TSP.seeds", ["x", "y"]), "tasks.TSP.seeds", id="seeds-text"),
    pytest.param(_set("tasks.TSP.seeds", [-1, -2]), "tasks.TSP.seeds", id="seeds-negative"),
    pytest.param(_set("tasks.TSP.fingerprints", [1, 2]), "fingerprints", id="prints-numbers"),
    pytest.param(_set("tasks.TSP.ids", [["a"], ["b"]]), "tasks.TSP.ids", id="ids-lists"),
    pytest.param(_set("tasks.TSP.ids", ["TSP-benchmark-00000"]), "ids lists 1", id="ids-short"),
    pytest.param(_set("evil", 1), "evil", id="extra-key"),
    pytest.param(_set("tasks.TSP.evil", 1), "tasks.TSP.evil", id="extra-entry-key"),
    pytest.param(_set("schema_version", DELETE), "schema_version", id="missing-schema"),
    pytest.param(_set("tasks", DELETE), "tasks", id="missing-tasks"),
    pytest.param(_set("tasks.TSP.sha256", DELETE), "tasks.TSP.sha256", id="missing-sha"),
    pytest.param(_set("spec", "x"), "spec", id="spec-text"),
    pytest.param(_set("spec.count", "many"), "spec is not valid", id="spec-count-text"),
    pytest.param(_set("source", {"x": 1}), "spec or an import source", id="spec-and-source"),
    pytest.param(_set("spec.tasks", ["Nope"]), "spec is not valid: tasks", id="spec-unknown-task"),
    pytest.param(
        _set("spec.mix", {"benchmark": "x"}), "spec is not valid: mix", id="spec-mix-text"
    ),
    pytest.param(_set("spec.seed", -1), "spec is not valid: seed", id="spec-seed-negative"),
    pytest.param(_set("spec.evil", 1), "spec is not valid: evil", id="spec-extra-key"),
    pytest.param(_raw("[1, 2]"), "not a JSON object", id="manifest-array"),
    pytest.param(_raw("{oops"), "not a valid manifest", id="manifest-not-json"),
    pytest.param(_raw("[" * 100_000), "not a valid manifest", id="manifest-nested"),
    pytest.param(
        _raw('{"a": "\udcff"}'.encode("utf-8", "surrogatepass").decode("latin-1")),
        "manifest",
        id="manifest-bad-utf8",
    ),
    # dropped rows that the spec never planned
    pytest.param(
        _drop_unplanned, "dropped lists ids its spec does not plan", id="dropped-unplanned"
    ),
    # rows: prompts leaking the answer, forged or mistyped references, changed columns
    pytest.param(_row_edit("TSP", _leak), "prompt is not the one", id="prompt-leak"),
    pytest.param(
        _row_edit("Knapsack", _leak_quietly), "prompt is not the one", id="prompt-leak-same-length"
    ),
    pytest.param(
        _row_edit("SetCover", _leak, index=1), "prompt is not the one", id="prompt-leak-setcover"
    ),
    pytest.param(_row_edit("Knapsack", _forge_reference), "forged", id="forged-proven-objective"),
    pytest.param(_row_edit("TSP", _forge_reference), "forged", id="forged-proven-tour"),
    pytest.param(_row_edit("Knapsack", _null_objective), "verifies to", id="objective-null-proven"),
    pytest.param(
        _row_edit("Knapsack", _null_objective_impossible),
        "infeasible",
        id="objective-null-impossible",
    ),
    pytest.param(
        _row_edit("Knapsack", _column("proven_optimal", "yes")), "proven_optimal", id="proven-text"
    ),
    pytest.param(
        _row_edit("Knapsack", _column("proven_optimal", 1)), "proven_optimal", id="proven-int"
    ),
    pytest.param(
        _row_edit("Knapsack", _column("reference_objective", "5")),
        "reference_objective",
        id="objective-column-text",
    ),
    pytest.param(
        _row_edit("Knapsack", _column("reference_objective", float("nan"))),
        "reference_objective",
        id="objective-column-nan",
    ),
    pytest.param(
        _row_edit("Knapsack", _reference_field("objective", 1e400)),
        "verifies to",
        id="objective-inf",
    ),
    pytest.param(
        _row_edit("Knapsack", _reference_field("proven_optimal", "yes")),
        "'reference'",
        id="reference-proven-text",
    ),
    pytest.param(
        _row_edit("Knapsack", _reference_field("hint", "x")), "bad reference", id="reference-extra"
    ),
    pytest.param(_row_edit("Knapsack", _column("tier", "easy")), "'tier'", id="tier-changed"),
    pytest.param(
        _row_edit("Knapsack", _column("difficulty", 0.1)), "'difficulty'", id="difficulty-changed"
    ),
    pytest.param(
        _row_edit("Knapsack", _column("hint", "Answer: [1]")), "'hint'", id="extra-column"
    ),
    pytest.param(_row_edit("Knapsack", _column("prompt", DELETE)), "prompt", id="prompt-missing"),
    pytest.param(
        _row_edit("Knapsack", _column("variant", "x")), "variant row needs", id="variant-mark-text"
    ),
    pytest.param(_swap_instance_keep_spec, "another instance than its spec", id="instance-swapped"),
    pytest.param(_official_spec_v1, "another instance than its spec", id="spec-claims-v1"),
    # files: links, sizes, kinds
    pytest.param(_link_task_file, "symbolic link", id="task-file-symlink"),
    pytest.param(_link_manifest, "symbolic link", id="manifest-symlink"),
    pytest.param(_sparse("TSP.jsonl", 2**40), "bytes", id="task-file-1TiB-sparse"),
    pytest.param(_sparse("manifest.json", 2**40), "bytes", id="manifest-1TiB-sparse"),
    pytest.param(_fifo, "not a regular file", id="task-file-fifo"),
    pytest.param(_directory, "not a regular file", id="task-file-directory"),
    pytest.param(_missing, "missing", id="task-file-missing"),
    pytest.param(_task_file_bytes(b"\xff\xfe\n"), "TSP.jsonl", id="task-file-bad-utf8"),
    pytest.param(_task_file_bytes(b"[" * 100_000 + b"\n"), "TSP.jsonl", id="task-file-nested"),
    pytest.param(_task_file_bytes(b"[1, 2]\n[3]\n"), "TSP.jsonl", id="task-file-arrays"),
]

ACCEPTED: list[Any] = [
    # scored, under an honest label: never an official version
    pytest.param(
        _drop_rows(listed=True),
        f"v{BENCH_VERSION}, 995 of its 1000 rows dropped",
        ["benchmark"],
        id="dropped-listed",
    ),
    pytest.param(_easy_swap, "custom (no NP-Bench rows)", ["custom"], id="easy-swap-no-spec"),
    pytest.param(_as_import, PARTIAL, ["benchmark"], id="spec-removed"),
]


def _eval(folder: Path, tmp_path: Path, *options: str) -> Result:
    empty = tmp_path / "none.jsonl"
    empty.write_text("")
    arguments = ["eval", str(folder), "--completions", str(empty), "-o", str(tmp_path / "r")]
    return CliRunner().invoke(main, [*arguments, "--allow-missing", *options])


def _one_error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize(("edit", "named"), REFUSED)
def test_a_tampered_folder_fails_the_default_check(
    copy: Path, tmp_path: Path, edit: Edit, named: str
) -> None:
    edit(copy)
    assert named in _one_error_line(_eval(copy, tmp_path))


@pytest.mark.parametrize(("edit", "label", "tiers"), ACCEPTED)
def test_a_partial_or_unchecked_folder_is_labelled_custom(
    copy: Path, tmp_path: Path, edit: Edit, label: str, tiers: list[str]
) -> None:
    edit(copy)
    result = _eval(copy, tmp_path)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert label in report["dataset"] and report["dataset"].startswith("custom (")
    assert report["bench_version"] is None and "NP-Bench version" not in result.output
    assert list(report["tiers"]) == tiers
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert markdown.count(f"(on {report['dataset']})") >= 4  # task, category, tier, overall


def test_the_untouched_fixture_is_an_honest_partial(built: Path, tmp_path: Path) -> None:
    result = _eval(built, tmp_path)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["dataset"] == PARTIAL and report["bench_version"] is None
    assert "compared with the NP-Bench digests" in report["verification"]


# --- the official label, against a digest made of the fixture ---------------------------------


@pytest.fixture
def fixture_is_official(built: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Make the fixture's rows the (only) official version ``BENCH_VERSION``: the digest that
    :func:`certify.official_digest` would write for it."""
    tasks: dict[str, list[list[Any]]] = {}
    for row in verify_dataset(built):
        tasks.setdefault(row["task"], []).append(certify._row_digest(row))
    digest = {"bench_version": BENCH_VERSION, "spec": certify.official_spec(BENCH_VERSION)}
    digest["tasks"] = tasks
    monkeypatch.setattr(certify, "official_versions", lambda: [BENCH_VERSION])
    monkeypatch.setattr(certify, "load_official_digest", lambda version: digest)
    return digest


@pytest.mark.usefixtures("fixture_is_official")
def test_exactly_the_official_rows_are_labelled_with_the_version(
    built: Path, copy: Path, tmp_path: Path
) -> None:
    result = _eval(built, tmp_path)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["dataset"] == f"NP-Bench version {BENCH_VERSION}"
    assert report["bench_version"] == BENCH_VERSION
    _drop_rows(listed=True)(copy)
    result = _eval(copy, tmp_path)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["dataset"] == (
        f"custom (derived from NP-Bench v{BENCH_VERSION}, 1 of its 6 rows dropped)"
    )
    assert report["bench_version"] is None
    assert "NP-Bench version" not in (tmp_path / "r" / "report.md").read_text()


@pytest.mark.usefixtures("fixture_is_official")
def test_a_forged_proven_flag_on_an_official_row_is_caught_without_deep(
    copy: Path, tmp_path: Path
) -> None:
    _row_edit("Knapsack", _forge_reference, index=1)(copy)
    line = _one_error_line(_eval(copy, tmp_path))
    assert "Knapsack-benchmark-00001" in line and "forged" in line


def test_a_flipped_proven_flag_is_not_official(
    fixture_is_official: dict[str, Any], built: Path
) -> None:
    rows = verify_dataset(built)
    rows[0] = rows[0] | {"proven_optimal": False}
    assert certify.provenance(rows).bench_version is None


# --- limits: at the limit and just past it ----------------------------------------------------


@pytest.mark.parametrize("extra", [0, 1])
def test_task_file_size_limit(copy: Path, monkeypatch: pytest.MonkeyPatch, extra: int) -> None:
    size = (copy / "TSP.jsonl").stat().st_size
    monkeypatch.setattr(building, "MAX_TASK_FILE_BYTES", size - extra)
    if extra:
        with pytest.raises(IntegrityError, match=f"{size} bytes, more than the {size - 1}"):
            verify_dataset(copy)
    else:
        assert len(verify_dataset(copy)) == 6


@pytest.mark.parametrize("extra", [0, 1])
def test_manifest_size_limit(copy: Path, monkeypatch: pytest.MonkeyPatch, extra: int) -> None:
    size = (copy / "manifest.json").stat().st_size
    monkeypatch.setattr(building, "MAX_MANIFEST_BYTES", size - extra)
    if extra:
        with pytest.raises(IntegrityError, match="more than the"):
            load_manifest(copy)
    else:
        assert load_manifest(copy)["tasks"]


@pytest.mark.parametrize("extra", [0, 1])
def test_id_length_limit(copy: Path, extra: int) -> None:
    _set("dropped", ["x" * (building.MAX_ID_CHARS + extra)])(copy)
    if extra:
        with pytest.raises(IntegrityError, match=r"dropped\.0"):
            load_manifest(copy)
    else:
        with pytest.raises(IntegrityError, match="dropped lists ids its spec does not plan"):
            verify_dataset(copy)


def test_hashing_streams_in_bounded_chunks(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    real = building._open_regular

    def counting(path: Path, limit: int) -> Any:
        handle = real(path, limit)
        original = handle.read

        def read(size: int = -1) -> bytes:
            reads.append(size)
            return original(size)

        handle.read = read  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(building, "_open_regular", counting)
    monkeypatch.setattr(building, "HASH_CHUNK_BYTES", 1024)
    building._sha256(copy / "TSP.jsonl")
    assert reads and all(0 < size <= 1024 for size in reads)


# --- export -----------------------------------------------------------------------------------


def test_export_refuses_a_leaked_prompt_even_unverified(copy: Path, tmp_path: Path) -> None:
    _row_edit("TSP", _leak)(copy)
    output = tmp_path / "out.jsonl"
    for extra in ([], ["--no-verify"]):
        result = CliRunner().invoke(
            main, ["export", str(copy), "--format", "trl", "-o", str(output), *extra]
        )
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output
        assert result.output.splitlines()[-1].startswith("Error: ")
        assert "prompt is not the one" in result.output and not output.exists()
    with pytest.raises(LeakedPromptError, match="TSP-benchmark-00000"):
        export_rows(cast("list[Row]", _rows(copy, "TSP")), "jsonl", output)


def test_reference_objects_round_trip_as_the_build_wrote_them(built: Path) -> None:
    """The canonical-column check relies on this: a reference's JSON is its model's dump."""
    for row in verify_dataset(built):
        assert Reference.model_validate_json(row["reference"]).row_json() == row["reference"]


@pytest.mark.usefixtures("fixture_is_official")
def test_an_unverified_folder_is_never_labelled_official(built: Path, tmp_path: Path) -> None:
    result = _eval(built, tmp_path, "--no-verify")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["dataset"] == "custom (not verified: --no-verify)"
    assert report["bench_version"] is None and list(report["tiers"]) == ["custom"]


@pytest.mark.parametrize("extra", [0, 1])
def test_seed_limit(copy: Path, extra: int) -> None:
    _set("tasks.TSP.seeds", [building.MAX_SEED + extra, 0])(copy)
    if extra:
        with pytest.raises(IntegrityError, match=r"tasks\.TSP\.seeds\.0"):
            load_manifest(copy)
    else:  # a valid manifest, which the rows then contradict
        with pytest.raises(IntegrityError, match="seed of row 'TSP-benchmark-00000'"):
            verify_dataset(copy)
