"""NP-Bench versions and generator revisions: an earlier benchmark stays reproducible byte for byte.

``tests/golden/npbench_v1.json`` holds, per task, the SHA-256 of the 100 NP-Bench version 1
instances' JSON, taken before any generator gained a second revision. The package ships each
version's digest (``npgym/npbench/digests/``, see :func:`npgym.npbench.certify.official_digest`);
the tests here pin it: the ids, fingerprints and prompts fast, the references in a slow test.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

import npgym
from npgym.cli import main
from npgym.datasets import (
    BENCH_TASKS,
    BENCH_VERSION,
    DatasetSpec,
    draw,
    drawn,
    forbidden_fingerprints,
    generate_instance,
)
from npgym.npbench.build import load_manifest
from npgym.npbench.certify import (
    load_official_digest,
    official_digest,
    official_spec,
    official_versions,
)

V1_DIGESTS = json.loads((Path(__file__).parent / "golden" / "npbench_v1.json").read_text())


def _digest(task: str, bench_version: int, count: int = 100) -> str:
    spec = DatasetSpec(tasks=(task,), count=count, reference="none", bench_version=bench_version)
    digest = hashlib.sha256()
    for item in draw(spec):
        digest.update(generate_instance(item, spec).to_json().encode())
    return digest.hexdigest()


@pytest.mark.parametrize("task", BENCH_TASKS[1])
def test_bench_version_1_rebuilds_its_instances_byte_for_byte(task: str) -> None:
    assert _digest(task, bench_version=1) == V1_DIGESTS[task]


def test_revision_1_is_left_out_of_config_dumps() -> None:
    task = npgym.get_task("TSP")
    assert "revision" not in task.config("easy").model_dump(mode="json")
    assert "revision" not in task.generate(0, tier="easy").config


def test_a_revision_the_generator_lacks_is_refused() -> None:
    task = npgym.get_task("TSP")
    latest = type(task.config("easy")).latest_revision
    with pytest.raises(ValidationError, match=f"revision {latest + 1} does not exist"):
        task.config("easy", overrides={"revision": latest + 1})


def test_revision_is_not_interpolated() -> None:
    for name in npgym.list_tasks():
        task = npgym.get_task(name)
        for difficulty in (0.1, 0.3, 0.5, 0.7, 1.3):
            revision = task.config(difficulty=difficulty).revision
            assert revision in {task.config(tier).revision for tier in npgym.TIERS}


def test_bench_version_out_of_range_is_a_clear_error() -> None:
    with pytest.raises(ValidationError, match="bench_version"):
        DatasetSpec(bench_version=BENCH_VERSION + 1)
    result = CliRunner().invoke(
        main, ["bench", "build", "-o", "unused", "--bench-version", str(BENCH_VERSION + 1)]
    )
    assert result.exit_code == 2 and "--bench-version" in result.output


def test_the_manifest_records_the_bench_version(tmp_path: Path) -> None:
    out = tmp_path / "v1"
    result = CliRunner().invoke(
        main,
        [
            *("bench", "build", "-o", str(out), "--n", "2", "--tasks", "SubsetSum"),
            *("--reference", "none", "--workers", "1", "--bench-version", "1"),
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["bench_version"] == 1 and manifest["spec"]["bench_version"] == 1


@pytest.mark.slow
def test_a_partial_build_is_never_reported_as_a_bench_version(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    built = CliRunner().invoke(
        main,
        ["bench", "build", "-o", str(out), "--n", "2", "--tasks", "Knapsack", "--workers", "1"],
    )
    assert built.exit_code == 0, built.output
    evaluated = CliRunner().invoke(main, ["eval", str(out), "--agent", "greedy"])
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads((out / "eval-greedy" / "report.json").read_text())
    label = f"custom (derived from NP-Bench v{BENCH_VERSION}, 998 of its 1000 rows dropped)"
    assert report["bench_version"] is None and report["dataset"] == label
    assert f"NP-Bench version {BENCH_VERSION}" not in evaluated.output
    assert f"| task (on {label}) |" in evaluated.output
    assert list(report["tiers"]) == ["benchmark"]  # regenerated from the spec: tier checked


@pytest.mark.parametrize("version", sorted(BENCH_TASKS))
def test_the_shipped_digest_pins_each_versions_ids_instances_and_prompts(version: int) -> None:
    """The fast half of the pin: the official spec draws exactly the digest's ids, instance
    fingerprints and prompt hashes (generation only; the slow test solves the references)."""
    digest = load_official_digest(version)
    spec = DatasetSpec.model_validate(official_spec(version) | {"reference": "none"})
    assert digest["spec"] == official_spec(version) and digest["bench_version"] == version
    made: dict[str, list[list[str]]] = {}
    for item, instance in drawn(spec, forbidden_fingerprints(spec)):
        prompt = npgym.get_task(item.task).prompt(instance)
        made.setdefault(item.task, []).append(
            [item.record_id, instance.fingerprint(), hashlib.sha256(prompt.encode()).hexdigest()]
        )
    assert {task: [entry[:3] for entry in rows] for task, rows in digest["tasks"].items()} == made
    entries = [entry for rows in digest["tasks"].values() for entry in rows]
    assert all(entry[4] is True for entry in entries)  # every official reference is proven
    assert all(entry[3] is None or type(entry[3]) is int for entry in entries)


def test_the_digests_ship_in_the_wheel() -> None:
    setup = (Path(__file__).parents[1] / "setup.py").read_text()
    assert '"npbench/digests/*.json"' in setup
    assert official_versions() == list(range(1, BENCH_VERSION + 1))


FRESH_BUILD = "NPGYM_FRESH_BENCH"
"""An environment variable naming a folder that ``npgym bench build -o FOLDER`` has just built
with the defaults (the current version): CI's README main job, on a clean clone. The pin of the
current version checks that build instead of building the same 1,000 rows again (about 40
CPU-seconds); :func:`official_digest` refuses a folder that is not exactly an official build."""


@pytest.mark.slow
@pytest.mark.parametrize("version", sorted(BENCH_TASKS))
def test_a_fresh_official_build_gives_the_shipped_digest(version: int, tmp_path: Path) -> None:
    """The whole pin: building NP-Bench version N again (about a minute each) gives its digest,
    references included; a changed solver or prompt shows here first."""
    fresh = os.environ.get(FRESH_BUILD)
    if fresh and version == BENCH_VERSION:
        out = Path(fresh)
        assert load_manifest(out)["bench_version"] == version, f"{FRESH_BUILD}={fresh}"
    else:
        out = tmp_path / f"v{version}"
        options = ["--bench-version", str(version), "--workers", "2"]
        result = CliRunner().invoke(main, ["bench", "build", "-o", str(out), *options])
        assert result.exit_code == 0, result.output
    assert official_digest(out) == load_official_digest(version)


def test_comparing_reports_of_different_versions_warns() -> None:
    from npgym.npbench.evaluate import compare

    metrics = {"success_rate": 1.0, "average_ratio": 1.0}
    report = {"source": "a", "tasks": {"TSP": metrics}, "overall": metrics}
    assert compare(report | {"bench_version": 1}, report | {"bench_version": 2}).startswith(
        "Warning: NP-Bench versions differ (1 vs 2)"
    )
    assert "Warning" not in compare(report | {"bench_version": 2}, report | {"bench_version": 2})


@pytest.mark.slow
def test_an_exact_build_with_unproven_references_exits_non_zero(tmp_path: Path) -> None:
    out = tmp_path / "hard"
    arguments = ["bench", "build", "-o", str(out), "--n", "2", "--tasks", "TSP", "--workers", "1"]
    tiny_budget = ["--split", "train", "--tier", "benchmark", "--time-limit", "0.1"]
    failed = CliRunner().invoke(main, [*arguments, *tiny_budget])
    rows = [json.loads(line) for line in (out / "TSP.jsonl").read_text().splitlines()]
    unproven = [row["id"] for row in rows if not row["proven_optimal"]]
    if not unproven:
        pytest.fail("a 0.1 s budget proved every benchmark TSP: pick a harder instance")
    assert failed.exit_code == 1 and "not proven optimal" in failed.output
    assert unproven[0] in failed.output
    again = CliRunner().invoke(main, [*arguments, *tiny_budget])
    assert again.exit_code == 1  # a rerun on the finished folder says it again
    accepted = CliRunner().invoke(main, [*arguments, *tiny_budget, "--allow-unproven"])
    assert accepted.exit_code == 0, accepted.output
