"""Certificates end to end: the checker's independence, the proof gate over every task, the
sidecar of a dataset folder, exports, ``npgym verify-certificates`` and ``npgym eval``.

Each task's own certificate format, its mutation and brute-force tests are in
``tests/test_certificates_<task>.py``.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import npgym
from npgym import certificates
from npgym.cli import main
from npgym.npbench import certificates as sidecar
from npgym.npbench.build import BuildSpec
from npgym.records import RecordError, make_record
from npgym.results import Reference, UncertifiedReferenceWarning

CHECKER = Path(certificates.__file__).parent
TASKS = tuple(certificates.MODULES)
SPEC = BuildSpec(tasks=("TSP", "Knapsack", "SetCover"), count=2, seed=7, bench_version=2)
"""Two benchmark instances per task, drawn from another seed than NP-Bench's: a custom folder,
so the official digests cannot vouch for its rows and only the certificates can."""


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


# --- the checker shares nothing -----------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(CHECKER.glob("*.py")), ids=lambda path: path.name)
def test_the_checker_imports_only_the_standard_library_numpy_and_itself(path: Path) -> None:
    """Nothing of the solvers, nothing of npgym but the checker package: a checker that shared
    code with what it checks would prove nothing. numpy is allowed for exact integer arithmetic
    (int64 behind a stated magnitude check), never for floating point."""
    foreign = {
        name
        for name in _imports(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not name.startswith("npgym.certificates")
        and name not in ("__future__", "numpy")
    }
    assert foreign == set(), f"{path.name} imports {sorted(foreign)}"


def test_every_built_in_task_has_a_checker() -> None:
    assert set(TASKS) == set(npgym.list_tasks())
    for task in TASKS:
        module = certificates.checker(task)
        assert npgym.get_task(task).sense == module.SENSE


# --- every task's references check ------------------------------------------------------------


@pytest.mark.parametrize("task_name", TASKS)
@pytest.mark.parametrize("tier", ["easy", "benchmark"])
def test_references_carry_certificates_that_check(task_name: str, tier: str) -> None:
    """What the gate let through checks again from the reference alone, and a proven reference
    is proven by its certificate."""
    task = npgym.get_task(task_name)
    for seed in range(3):
        instance = task.generate(seed, tier)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UncertifiedReferenceWarning)
            reference = task.reference(instance)
        assert reference.proven_optimal, (task_name, tier, seed, reference.solver)
        checked = certificates.check_claim(
            task_name,
            json.loads(instance.to_json()),
            objective=reference.objective,
            solution=reference.solution,
            proven_optimal=True,
            bound=reference.bound,
            certificate=reference.certificate,
        )
        assert checked.proven and checked.bound == reference.objective


@pytest.mark.parametrize("task_name", TASKS)
def test_the_gate_downgrades_a_proof_its_certificate_does_not_back(
    task_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A solver that claims a proof without a certificate (or an outside solver that claims
    optimality wrongly) never reaches ``proven_optimal``: the reference is reported unproven,
    with a warning."""
    task = npgym.get_task(task_name)
    honest = task.solve

    def unbacked(instance: Any, *, exact: bool, time_limit: float) -> Reference:
        return honest(instance, exact=exact, time_limit=time_limit).model_copy(
            update={"certificate": None}
        )

    monkeypatch.setattr(task, "solve", unbacked)
    instance = task.generate(11, "easy")
    with pytest.warns(UncertifiedReferenceWarning, match="no certificate"):
        reference = task.reference(instance)
    assert not reference.proven_optimal and reference.method == "heuristic"
    assert reference.bound is None and reference.gap is None


@pytest.mark.parametrize("task_name", TASKS)
def test_a_certificate_for_another_instance_proves_nothing_here(
    task_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A valid certificate of one instance, handed to another: the gate checks it on the
    instance it is for, so a borrowed proof is refused (or proves only what it proves here)."""
    task = npgym.get_task(task_name)
    donor = task.reference(task.generate(0, "benchmark"))
    honest = task.solve

    def borrowed(instance: Any, *, exact: bool, time_limit: float) -> Reference:
        reference = honest(instance, exact=exact, time_limit=time_limit)
        return reference.model_copy(update={"certificate": donor.certificate})

    monkeypatch.setattr(task, "solve", borrowed)
    instance = task.generate(1, "benchmark")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertifiedReferenceWarning)
        reference = task.reference(instance)
    if reference.proven_optimal:  # then the donor's certificate really proves this optimum
        certificates.check_claim(
            task_name,
            json.loads(instance.to_json()),
            objective=reference.objective,
            solution=reference.solution,
            proven_optimal=True,
            bound=reference.bound,
            certificate=reference.certificate,
        )


# --- limits and hostile values ----------------------------------------------------------------


def _padded(size: int) -> dict[str, Any]:
    """A certificate of exactly ``size`` bytes of compact JSON (of an unknown kind)."""
    base = {"kind": "padding", "pad": ""}
    overhead = len(json.dumps(base, separators=(",", ":")))
    return {"kind": "padding", "pad": "x" * (size - overhead)}


@pytest.mark.parametrize("task_name", TASKS)
def test_a_certificate_at_the_size_limit_is_read_and_one_past_it_is_not(task_name: str) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(0, "easy")
    reference = task.reference(instance)
    data = json.loads(instance.to_json())
    limit = certificates.MAX_CERTIFICATE_BYTES
    at_limit = _padded(limit)
    assert len(json.dumps(at_limit, separators=(",", ":"))) == limit
    with pytest.raises(certificates.CertificateError) as read:
        certificates.check(task_name, data, reference.solution, at_limit)
    assert "over the limit" not in str(read.value)
    with pytest.raises(certificates.CertificateError, match="over the limit"):
        certificates.check(task_name, data, reference.solution, _padded(limit + 1))


HOSTILE = [None, 0, -1, 10**400, 1.5, "x", [], [[[]]], {}, {"kind": None}, {"kind": 7}, True]


@pytest.mark.parametrize("task_name", TASKS)
@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_hostile_certificates_and_solutions_are_refused_not_crashed_on(
    task_name: str, value: Any
) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(0, "easy")
    reference = task.reference(instance)
    data = json.loads(instance.to_json())
    with pytest.raises(certificates.CertificateError):
        certificates.check(task_name, data, reference.solution, value)
    if isinstance(reference.certificate, dict):
        for key in reference.certificate:
            if key == "kind":
                continue
            broken = {**reference.certificate, key: value}
            try:
                checked = certificates.check(task_name, data, reference.solution, broken)
            except certificates.CertificateError:
                continue
            assert _valid(task_name, checked.bound, reference.objective)
    try:  # a hostile solution is refused, unless it is a solution ([] of a Knapsack)
        checked = certificates.check(task_name, data, value, reference.certificate)
    except certificates.CertificateError:
        return
    verdict = task.verify(instance, task.to_solution(value))
    assert verdict.feasible and verdict.objective == checked.objective


def _valid(task_name: str, bound: int | None, optimum: Any) -> bool:
    """Whether ``bound`` is a true bound of a proven ``optimum``."""
    if bound is None or optimum is None:
        return bound == optimum
    return bound <= optimum if npgym.get_task(task_name).sense == "min" else bound >= optimum


def test_check_claim_names_each_claim_that_fails() -> None:
    task = npgym.get_task("Knapsack")
    instance = task.generate(3, "easy")
    reference = task.reference(instance)
    data = json.loads(instance.to_json())
    claims = {
        "objective": reference.objective,
        "solution": reference.solution,
        "proven_optimal": True,
        "bound": reference.bound,
        "certificate": reference.certificate,
    }
    certificates.check_claim("Knapsack", data, **claims)
    assert reference.objective is not None
    with pytest.raises(certificates.CertificateError, match="objective"):
        certificates.check_claim("Knapsack", data, **{**claims, "objective": 10**6})
    with pytest.raises(certificates.CertificateError, match="states the bound"):
        certificates.check_claim(
            "Knapsack",
            data,
            **{**claims, "proven_optimal": False, "bound": reference.objective - 1},
        )
    with pytest.raises(certificates.CertificateError, match="no certificate"):
        certificates.check_claim("Knapsack", data, **{**claims, "certificate": None})
    with pytest.raises(certificates.CertificateError, match="no certificate checker"):
        certificates.check_claim("Invert-Knapsack", data, **claims)


# --- dataset folders, exports and commands ----------------------------------------------------


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(main, [*args], catch_exceptions=False)


def _sidecar(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "certificates.jsonl").read_text().splitlines()]


def _write_sidecar(folder: Path, lines: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / "certificates.jsonl").write_text(text)


def test_a_build_writes_every_proven_reference_s_certificate_beside_its_rows(built: Path) -> None:
    rows = [
        json.loads(line)
        for task in SPEC.tasks
        for line in (built / f"{task}.jsonl").read_text().splitlines()
    ]
    lines = _sidecar(built)
    assert [line["id"] for line in lines] == [row["id"] for row in rows]
    assert all("certificate" not in row and "certificate" not in row["reference"] for row in rows)
    result = _invoke("verify-certificates", str(built))
    assert result.exit_code == 0, result.output
    assert "| TSP | 2 | 0 | 0 | 0 |" in result.output


def test_a_dataset_without_certificates_is_refused_by_eval_and_verify(copy: Path) -> None:
    (copy / "certificates.jsonl").unlink()
    for command in (("verify-certificates", str(copy)), ("eval", str(copy), "--agent", "greedy")):
        result = CliRunner().invoke(main, list(command))
        assert result.exit_code == 1, result.output
        assert "no certificate" in result.output


def test_a_forged_proven_reference_in_a_custom_folder_is_refused_without_deep(
    copy: Path,
) -> None:
    """A worse but feasible tour marked proven, every column and the manifest consistent: the
    digests do not know this custom folder, only the certificate check catches it."""
    from tests.test_hostile_bench import _forge_reference, _row_edit

    _row_edit("TSP", _forge_reference)(copy)
    result = CliRunner().invoke(
        main, ["eval", str(copy), "--agent", "greedy", "-o", str(copy / "r")]
    )
    assert result.exit_code == 1, result.output
    assert "not backed by a certificate" in result.output


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda lines: lines[1:], "no certificate"),
        (lambda lines: [*lines, lines[0]], "second certificate"),
        (lambda lines: [{**lines[0], "extra": 1}, *lines[1:]], "expected"),
        (lambda lines: [{**lines[0], "id": 5}, *lines[1:]], "expected"),
        (lambda lines: [{**lines[0], "certificate": [1, 2]}, *lines[1:]], "JSON object"),
    ],
    ids=["missing-line", "duplicate-id", "extra-key", "id-not-text", "not-an-object"],
)
def test_a_tampered_sidecar_is_refused_naming_what_is_wrong(
    copy: Path, edit: Any, message: str
) -> None:
    _write_sidecar(copy, edit(_sidecar(copy)))
    result = CliRunner().invoke(main, ["verify-certificates", str(copy)])
    assert result.exit_code == 1 and message in result.output, result.output
    assert "Traceback" not in result.output


def test_a_sidecar_that_is_a_link_or_a_fifo_is_never_read(copy: Path, tmp_path: Path) -> None:
    target = copy / "certificates.jsonl"
    target.rename(tmp_path / "elsewhere.jsonl")
    target.symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(RecordError, match="not a regular file"):
        sidecar.read_certificates(copy)
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(RecordError, match="not a regular file"):
        sidecar.read_certificates(copy)


@pytest.mark.parametrize("fmt", ["jsonl", "trl", "parquet", "verl"])
def test_exports_carry_certificates_that_check(built: Path, tmp_path: Path, fmt: str) -> None:
    suffix = ".jsonl" if fmt in ("jsonl", "trl") else ".parquet"
    output = tmp_path / f"export{suffix}"
    assert _invoke("export", str(built), "--format", fmt, "-o", str(output)).exit_code == 0
    rows = sidecar.exported_rows(output)
    assert all(isinstance(row["certificate"], str) for row in rows)
    report = sidecar.check_rows(rows)
    assert sum(report.certified.values()) == len(rows) and not report.refused
    result = _invoke("verify-certificates", str(output))
    assert result.exit_code == 0, result.output


def test_an_export_whose_certificate_was_edited_is_refused(built: Path, tmp_path: Path) -> None:
    output = tmp_path / "export.jsonl"
    _invoke("export", str(built), "--format", "jsonl", "-o", str(output))
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    rows[0]["certificate"] = None
    output.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = CliRunner().invoke(main, ["verify-certificates", str(output)])
    assert result.exit_code == 1 and rows[0]["id"] in result.output, result.output


def test_rows_keep_their_bytes_and_the_reference_json_has_no_certificate() -> None:
    task = npgym.get_task("SubsetSum")
    instance = task.generate(0, "easy")
    reference = task.reference(instance)
    assert reference.certificate is not None
    row = make_record("x", task, instance, reference)
    assert "certificate" not in json.loads(row["reference"])
    assert Reference.model_validate_json(reference.model_dump_json()) == reference


@pytest.mark.parametrize("task_name", ["TSP", "MeetingScheduling"])
def test_rows_written_to_standard_output_hold_nothing_else(task_name: str) -> None:
    """The certified LPs run HiGHS, whose first model of a process prints a banner on the C
    library's standard output: a row stream piped out of ``npgym generate`` must not hold it."""
    import subprocess

    command = [sys.executable, "-m", "npgym", "generate", task_name, "--tier", "benchmark"]
    done = subprocess.run([*command, "-n", "1"], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["task"] == task_name, done.stdout[:300]
