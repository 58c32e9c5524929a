"""The command line on bad input and bad machines: every failure is one line naming the problem
and a non-zero exit, nothing already written is lost, two builds never share a folder, and
eval does not take a rewritten manifest's word for its instances and references."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import npgym
from npgym import commands
from npgym.cli import main
from npgym.datasets import MAX_COUNT, MAX_MIX_WEIGHT, MAX_TIME_LIMIT, DatasetSpec
from npgym.npbench import build as building
from npgym.npbench.build import BuildSpec
from tests.test_integrity import _rows, _write

SPEC = BuildSpec(tasks=("TSP", "SubsetSum"), n=3, mix={"easy": 1.0})


def _one_line_error(result: Result) -> str:
    """The error line of a failed command, after checking there is one line and no traceback."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines and "Traceback" not in result.output, result.output
    return lines[-1]


def _eval(folder: Path, tmp_path: Path, *options: str) -> Result:
    command = ["eval", str(folder), "--agent", "heuristic", "-o", str(tmp_path / "report")]
    return CliRunner().invoke(main, [*command, *options])


# --- manifests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [MAX_COUNT + 1, 999_999_999])
def test_a_manifest_count_past_the_limit_is_one_line(
    copy: Path, tmp_path: Path, count: int
) -> None:
    """A rewritten manifest whose spec asks for 999,999,999 instances planned 10^9 ids; now the
    spec is refused at once."""
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["spec"]["count"] = count
    (copy / "manifest.json").write_text(json.dumps(manifest))
    line = _one_line_error(_eval(copy, tmp_path))
    assert "spec is not valid" in line and str(MAX_COUNT) in line.replace(",", "")


def test_counts_at_and_past_the_limit() -> None:
    assert DatasetSpec(tasks=("TSP",), count=MAX_COUNT, reference="none").n == MAX_COUNT
    with pytest.raises(ValueError, match="count"):
        DatasetSpec(tasks=("TSP",), count=MAX_COUNT + 1, reference="none")


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\udcff", "[" * 100_000])
def test_an_invalid_manifest_is_one_line(copy: Path, tmp_path: Path, text: str) -> None:
    (copy / "manifest.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    assert "manifest.json: not a valid manifest" in _one_line_error(_eval(copy, tmp_path))


# --- files -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["TSP.jsonl", "manifest.json"])
def test_export_never_overwrites_the_datasets_own_files(copy: Path, name: str) -> None:
    before = (copy / name).read_bytes()
    result = CliRunner().invoke(
        main, ["export", str(copy), "--format", "jsonl", "-o", str(copy / name)]
    )
    assert "one of the dataset's own files" in _one_line_error(result)
    assert (copy / name).read_bytes() == before


def test_a_full_disk_is_one_line_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails halfway (ENOSPC) leaves the file that was there untouched."""
    output = tmp_path / "rows.jsonl"
    output.write_text("earlier rows\n")

    def full_disk(records: Any, handle: Any) -> int:
        handle.write("half a row")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(output))

    monkeypatch.setattr(commands, "write_jsonl", full_disk)
    command = ["generate", "SubsetSum", "--tier", "easy", "-n", "2", "-o", str(output)]
    line = _one_line_error(CliRunner().invoke(main, command))
    assert "No space left on device" in line
    assert output.read_text() == "earlier rows\n"
    assert [path.name for path in tmp_path.iterdir()] == ["rows.jsonl"]


def test_an_unwritable_output_folder_is_one_line() -> None:
    """/proc refuses new files even to root (tests run as root, so chmod would not do)."""
    command = ["generate", "SubsetSum", "--tier", "easy", "-n", "1", "-o", "/proc/npgym/x.jsonl"]
    _one_line_error(CliRunner().invoke(main, command))


# --- numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "accepted"), [(str(MAX_TIME_LIMIT), True), ("86400.5", False), ("1e308", False)]
)
def test_time_limits_at_and_past_the_limit(value: str, accepted: bool, tmp_path: Path) -> None:
    command = ["generate", "SubsetSum", "--tier", "easy", "-n", "1", "--time-limit", value]
    result = CliRunner().invoke(main, [*command, "-o", str(tmp_path / "x.jsonl")])
    if accepted:
        assert result.exit_code == 0, result.output
    else:
        assert "--time-limit" in _one_line_error(result)


@pytest.mark.parametrize(
    ("mix", "refused"),
    [(f"easy:{MAX_MIX_WEIGHT:g}", ""), ("easy:1e309", "not finite"), ("easy:2e6", "mix weights")],
)
def test_mix_weights_at_and_past_the_limit(mix: str, refused: str, tmp_path: Path) -> None:
    command = ["bench", "build", "-o", str(tmp_path / "b"), "--tasks", "SubsetSum", "--n", "2"]
    result = CliRunner().invoke(main, [*command, "--mix", mix, "--reference", "none"])
    if refused:
        assert refused in _one_line_error(result)
    else:
        assert result.exit_code == 0, result.output


def test_compare_refuses_missing_and_bad_reports(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"source": "a", "tasks": {}, "overall": {}}))
    missing = _one_line_error(
        CliRunner().invoke(main, ["eval", "--compare", str(good), str(tmp_path / "none.json")])
    )
    assert "does not exist" in missing
    for text in ("{oops", "[]", json.dumps({"source": "b", "tasks": {"TSP": 1}, "overall": {}})):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        line = _one_line_error(CliRunner().invoke(main, ["eval", "--compare", str(bad), str(bad)]))
        assert "bad.json: not a report.json" in line


@pytest.mark.parametrize("url", ["localhost:8000/v1", "http://[::1/v1", "ftp://x/v1", "http://"])
def test_a_malformed_endpoint_url_is_one_line(built: Path, url: str, tmp_path: Path) -> None:
    pytest.importorskip("httpx")
    command = ["eval", str(built), "--endpoint", url, "--model", "m", "-o", str(tmp_path / "r")]
    assert "cannot reach" in _one_line_error(CliRunner().invoke(main, command))


@pytest.mark.parametrize(
    "content", [b"[" * 100_000, b"\xff\xfe not utf-8", b'{"q": {"city_1": "x"}}', b"null"]
)
def test_hostile_import_files_are_one_line(content: bytes, tmp_path: Path) -> None:
    hostile = tmp_path / "questions.json"
    hostile.write_bytes(content)
    command = ["import", "np-engine", str(hostile), "-o", str(tmp_path / "out")]
    _one_line_error(CliRunner().invoke(main, command))


# --- one build per folder ----------------------------------------------------------------------


def test_a_second_build_into_a_locked_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    command = ["bench", "build", "-o", str(folder), "--tasks", "SubsetSum", "--n", "2"]
    with building._locked(folder):
        line = _one_line_error(CliRunner().invoke(main, [*command, "--tier", "easy"]))
        assert f"another build is writing to {folder} (pid {os.getpid()})" in line
        assert not (folder / "manifest.json").exists()
    assert not (folder / building.LOCK).exists()
    result = CliRunner().invoke(main, [*command, "--tier", "easy"])
    assert result.exit_code == 0, result.output
    assert not (folder / building.LOCK).exists()


# --- a manifest does not certify itself --------------------------------------------------------


def test_a_swapped_instance_with_a_rewritten_manifest_is_refused(
    copy: Path, tmp_path: Path
) -> None:
    """Another instance (with its own valid reference) and a manifest rewritten to match pass
    the manifest check; regenerating from the recorded spec catches it, by default."""
    task = npgym.get_task("TSP")
    rows = _rows(copy, "TSP")
    other = task.generate(10_000, tier="easy")
    reference = task.reference(other)
    rows[1] |= {
        "instance": other.to_json(),
        "prompt": task.prompt(other),
        "reference": reference.row_json(),
        "reference_objective": reference.objective,
        "seed": other.seed,
    }
    _write(copy, "TSP", rows, manifest_too=True)
    assert _eval(copy, tmp_path, "--no-verify").exit_code == 0
    line = _one_line_error(_eval(copy, tmp_path))
    assert "TSP-easy-00001" in line and "another instance than its spec generates" in line


def test_a_planted_worse_reference_marked_proven_is_refused_with_or_without_deep(
    copy: Path, tmp_path: Path
) -> None:
    """A worse tour planted as the proven optimum (the manifest rewritten to match) verifies
    to its own objective; its certificate proves a lower bound, so the default check refuses
    it, and --deep, which solves the reference again, refuses it too."""
    task = npgym.get_task("TSP")
    rows = _rows(copy, "TSP")
    instance = task.from_json(rows[0]["instance"])
    reference = json.loads(rows[0]["reference"])
    tour = list(reference["solution"])
    worse = None
    for i in range(1, len(tour) - 1):
        swapped = [*tour[:i], tour[i + 1], tour[i], *tour[i + 2 :]]
        verdict = task.verify(instance, swapped)
        if verdict.feasible and verdict.objective > reference["objective"]:
            worse = (swapped, verdict.objective)
            break
    assert worse is not None
    reference |= {"solution": worse[0], "objective": worse[1], "bound": worse[1], "gap": 0.0}
    rows[0] |= {
        "reference": json.dumps(reference, separators=(",", ":")),
        "reference_objective": worse[1],
    }
    _write(copy, "TSP", rows, manifest_too=True)
    line = _one_line_error(_eval(copy, tmp_path))
    assert "TSP-easy-00000: marked proven, but the certificate bounds the optimum" in line
    line = _one_line_error(_eval(copy, tmp_path, "--deep"))
    assert "TSP-easy-00000" in line and "marked proven" in line


def test_the_report_says_which_checks_ran(built: Path, tmp_path: Path) -> None:
    for options, expected in (
        ((), "regenerated from the recorded spec"),
        (("--deep",), "solved again (--deep)"),
        (("--no-verify",), "none (--no-verify)"),
    ):
        result = _eval(built, tmp_path, *options)
        assert result.exit_code == 0, result.output
        report = json.loads((tmp_path / "report" / "report.json").read_text())
        assert expected in report["verification"]
        assert f"Dataset checks: {report['verification']}" in result.output
