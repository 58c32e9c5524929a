"""NP-Bench: deterministic resumable builds, exports that datasets/verl/TRL read, evaluation."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym import datasets
from npgym.cli import main
from npgym.npbench import build as building
from npgym.npbench.build import BuildError, BuildSpec, build, plan, read_dataset, tier_counts
from npgym.npbench.evaluate import (
    Completions,
    CompletionsError,
    best_ratio_at_k,
    compare,
    evaluate,
    pass_at_k,
    read_completions,
)
from npgym.npbench.export import export_rows
from npgym.npbench.report import write_report
from tests.extras import need

SMALL = BuildSpec(tasks=("TSP",), n=4, mix={"easy": 1.0})


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bench")
    build(SMALL, folder, workers=1, progress=False)
    return folder


def test_tier_counts_follow_the_mix_exactly() -> None:
    assert tier_counts(1000, {"easy": 5, "medium": 4, "hard": 1}) == [
        ("easy", 500),
        ("medium", 400),
        ("hard", 100),
    ]
    for n in range(1, 30):
        counts = tier_counts(n, {"easy": 5, "medium": 4, "hard": 1})
        assert sum(count for _, count in counts) == n


def test_plan_draws_independent_seeds_per_split() -> None:
    bench = plan(BuildSpec(tasks=("TSP",), n=50))
    train = plan(BuildSpec(tasks=("TSP",), n=50, split="train", mix={"benchmark": 1.0}))
    shifted = plan(BuildSpec(tasks=("TSP",), n=50, seed=1))
    seeds = [{item.seed for item in items} for items in (bench, train, shifted)]
    assert all(len(group) == 50 for group in seeds)
    assert not seeds[0] & seeds[1] and not seeds[0] & seeds[2]
    assert [item.record_id for item in bench][:2] == ["TSP-benchmark-00000", "TSP-benchmark-00001"]


def test_build_rows_and_manifest(built: Path) -> None:
    manifest = building.load_manifest(built)
    entry = manifest["tasks"]["TSP"]
    rows = list(read_dataset(built))
    assert entry["count"] == len(rows) == 4
    assert entry["proven_optimal"] == 1.0
    task = npgym.get_task("TSP")
    for row, seed in zip(rows, entry["seeds"], strict=True):
        instance = task.from_json(row["instance"])
        assert instance == task.generate(seed, tier="easy")
        assert json.loads(row["reference"])["objective"] == row["reference_objective"]
    assert not (built / building.JOURNAL).exists()


def test_build_is_identical_with_two_workers(built: Path, tmp_path: Path) -> None:
    build(SMALL, tmp_path, workers=2, progress=False)
    assert _files(tmp_path) == _files(built)


def test_interrupted_build_resumes_without_recomputing(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_run = building.make_rows

    def crash_after_two(*args: Any, **options: Any) -> Iterator[building.ItemResult]:
        yield from itertools.islice(real_run(*args, **options), 2)
        raise KeyboardInterrupt

    monkeypatch.setattr(building, "make_rows", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        build(SMALL, tmp_path, workers=1, progress=False)
    journal = tmp_path / building.JOURNAL / "rows.jsonl"
    journal.write_bytes(journal.read_bytes() + b'{"record": {"id": "cut sh')  # crash mid-write
    monkeypatch.setattr(building, "make_rows", real_run)
    summary = build(SMALL, tmp_path, workers=1, progress=False)
    assert (summary.resumed, summary.computed) == (2, 2)
    assert _files(tmp_path) == _files(built)


def test_a_different_interrupted_build_is_not_mixed_in(tmp_path: Path) -> None:
    (tmp_path / building.JOURNAL).mkdir()
    (tmp_path / building.JOURNAL / "spec.json").write_text("{}")
    with pytest.raises(BuildError, match="different spec"):
        build(SMALL, tmp_path, workers=1, progress=False)


def test_overlap_with_excluded_data_fails_loudly(built: Path, tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="4 instances overlap"):
        build(SMALL, tmp_path / "again", workers=1, exclude=[built], progress=False)
    summary = build(
        SMALL, tmp_path / "dropped", workers=1, exclude=[built], drop_overlap=True, progress=False
    )
    assert summary.manifest["tasks"] == {}


def test_train_build_redraws_benchmark_instances(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train = BuildSpec(tasks=("TSP",), n=2, split="train", mix={"easy": 1.0}, reference="none")
    first = plan(train)[0]
    clash = npgym.get_task("TSP").generate(first.seed, tier="easy").fingerprint()
    monkeypatch.setattr(datasets, "forbidden_fingerprints", lambda spec: {clash: "NP-Bench"})
    summary = build(train, tmp_path, workers=1, progress=False)
    entry = summary.manifest["tasks"]["TSP"]
    assert clash not in entry["fingerprints"] and entry["count"] == 2
    assert entry["ids"][0] == first.record_id and entry["seeds"][0] != first.seed


def test_default_benchmark_fingerprints_are_distinct() -> None:
    assert len(building.benchmark_fingerprints(["TSP"])) == building.BENCH_SIZE


def test_exports_load_with_hugging_face_datasets(built: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = list(read_dataset(built))
    task = npgym.get_task("TSP")
    for fmt, name, loader in [
        ("jsonl", "all.jsonl", "json"),
        ("parquet", "all.parquet", "parquet"),
        ("verl", "verl.parquet", "parquet"),
        ("trl", "trl.parquet", "parquet"),
        ("trl", "trl.jsonl", "json"),
    ]:
        path = tmp_path / name
        assert export_rows(rows, fmt, path) == len(rows)
        loaded = datasets.load_dataset(loader, data_files=str(path), split="train")
        assert len(loaded) == len(rows)
        first = loaded[0]
        if fmt == "verl":
            assert first["data_source"] == "npgym/TSP-easy"
            assert first["prompt"] == [{"role": "user", "content": rows[0]["prompt"]}]
            assert first["reward_model"] == {
                "style": "rule",
                "ground_truth": rows[0]["reference_objective"],
            }
            instance_json = first["extra_info"]["instance"]
            assert first["extra_info"]["index"] == 0
        elif fmt == "trl":
            assert first["prompt"][0]["content"] == rows[0]["prompt"]
            instance_json = first["instance"]
        else:
            assert first["id"] == rows[0]["id"]
            instance_json = first["instance"]
        assert task.from_json(instance_json) == task.from_json(rows[0]["instance"])


def test_plain_trl_exports_for_base_models(built: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = list(read_dataset(built))
    for name, loader in [("plain.jsonl", "json"), ("plain.parquet", "parquet")]:
        path = tmp_path / name
        assert export_rows(rows, "trl", path, conversational=False) == len(rows)
        loaded = datasets.load_dataset(loader, data_files=str(path), split="train")
        assert loaded[0]["prompt"] == rows[0]["prompt"]  # the problem text, no chat wrapper
    with pytest.raises(ValueError, match="chat template"):
        export_rows(rows, "verl", tmp_path / "verl.parquet", conversational=False)
    runner = CliRunner()
    out = tmp_path / "cli.jsonl"
    plain = ["export", str(built), "--format", "trl", "--plain", "-o", str(out)]
    result = runner.invoke(main, plain)
    assert result.exit_code == 0, result.output
    assert isinstance(json.loads(out.read_text().splitlines()[0])["prompt"], str)
    verl = ["export", str(built), "--format", "verl", "--plain", "-o", str(tmp_path / "v.parquet")]
    result = runner.invoke(main, verl)
    assert result.exit_code != 0 and "chat template" in result.output


def _brute_pass_at_k(outcomes: list[bool], k: int) -> float:
    subsets = list(itertools.combinations(outcomes, k))
    return sum(any(subset) for subset in subsets) / len(subsets)


@given(outcomes=st.lists(st.booleans(), min_size=1, max_size=8), data=st.data())
def test_pass_at_k_is_the_exact_subset_average(outcomes: list[bool], data: st.DataObject) -> None:
    k = data.draw(st.integers(1, len(outcomes)))
    assert math.isclose(pass_at_k(len(outcomes), sum(outcomes), k), _brute_pass_at_k(outcomes, k))


@given(ratios=st.lists(st.floats(0, 1), min_size=1, max_size=8), data=st.data())
def test_best_ratio_at_k_is_the_exact_subset_average(
    ratios: list[float], data: st.DataObject
) -> None:
    k = data.draw(st.integers(1, len(ratios)))
    subsets = list(itertools.combinations(ratios, k))
    expected = sum(max(subset) for subset in subsets) / len(subsets)
    assert math.isclose(best_ratio_at_k(ratios, k), expected, abs_tol=1e-12)


def _optimal(row: dict) -> str:
    solution = json.loads(row["reference"])["solution"]
    return "Thinking...\n" + npgym.get_task(row["task"]).format_answer(solution)


def test_evaluate_metrics_and_problems(built: Path, tmp_path: Path) -> None:
    rows = list(read_dataset(built))
    texts = {
        rows[0]["id"]: [_optimal(rows[0]), "no answer"],
        rows[1]["id"]: ["Answer: [0, 0]", _optimal(rows[1])],
        rows[2]["id"]: [_optimal(rows[2]), _optimal(rows[2])],
        "stranger": ["Answer: [1]", "x"],
    }
    report = evaluate(rows, Completions(texts), source="test")
    tsp = report["tasks"]["TSP"]
    # 3 answered instances (6 samples), averaged per instance: (1/2 + 1/2 + 1) / 3; the 4th
    # instance has no completion: missing, not scored.
    assert (tsp["instances"], tsp["missing"], tsp["samples"]) == (3, 1, 6)
    assert tsp["success_rate"] == tsp["average_ratio"] == round(2 / 3, 6)
    assert tsp["pass_at_k"] == {"1": round(2 / 3, 6), "2": 1.0}
    assert report["categories"]["path planning"]["success_rate"] == round(2 / 3, 6)
    assert report["tiers"]["easy"]["missing"] == 1
    assert report["overall"]["samples"] == 6 and report["overall"]["missing"] == 1
    assert report["problems"]["missing_completions"] == [rows[3]["id"]]
    assert report["problems"]["unknown_ids"] == ["stranger"]
    paths = write_report(report, tmp_path)
    assert [p.name for p in paths] == ["report.json", "report.md", "report.png"]
    assert paths[2].read_bytes().startswith(b"\x89PNG")
    assert "| TSP | 3 | 1 | 0.667 | 0.667 |" in paths[1].read_text()
    other = evaluate(rows, Completions({row["id"]: [_optimal(row)] for row in rows}), "oracle")
    side_by_side = compare(report, other)
    assert "| overall | 0.667 | 1.000 | +0.333 |" in side_by_side


def test_completion_files_are_read_strictly(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"id": "a", "completion": "x"}\n{"id": "b", "completions": ["y", "z"]}\n{"id": "c", "comp'
    )
    completions = read_completions(path)
    assert completions.texts == {"a": ["x"], "b": ["y", "z"]}
    assert "truncated last line" in completions.warnings[0]
    for content, message in [
        ('{"id": "a", "completion": "x"}\n{"id": "a", "completion": "y"}\n', "already given"),
        ('{"id": "a", "completion": 3}\n', "expected 'completion'"),
        ('{"completion": "x"}\n', "with an id"),
        ('not json\n{"id": "a", "completion": "x"}\n', ":1: not valid JSON"),
    ]:
        path.write_text(content)
        with pytest.raises(CompletionsError, match=message):
            read_completions(path)


def test_cli_build_eval_export_and_compare(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = tmp_path / "np-bench"
    options = ["--n", "3", "--tasks", "TSP", "--tier", "easy", "--workers", "1"]
    result = runner.invoke(main, ["bench", "build", "-o", str(folder), *options])
    assert result.exit_code == 0, result.output
    assert "100% proven optimal" in result.output
    result = runner.invoke(main, ["eval", str(folder), "--agent", "heuristic"])
    assert result.exit_code == 0, result.output
    assert "| TSP | 3 | 0 | 1.000 |" in result.output
    heuristic_report = folder / "eval-heuristic" / "report.json"
    assert heuristic_report.exists()
    # the heuristic solves all three optimally: one picture stands for every answer
    report_md = (folder / "eval-heuristic" / "report.md").read_text()
    assert "![TSP every answer](gallery/TSP-all.png)" in report_md
    assert (folder / "eval-heuristic" / "gallery" / "TSP-all.png").exists()
    plain = tmp_path / "no-gallery"
    result = runner.invoke(
        main, ["eval", str(folder), "--agent", "heuristic", "--no-gallery", "-o", str(plain)]
    )
    assert result.exit_code == 0, result.output
    # the gallery only draws: the numbers are the same without it
    assert (plain / "report.json").read_bytes() == heuristic_report.read_bytes()
    assert not (plain / "gallery").exists() and "Gallery" not in (plain / "report.md").read_text()
    completions = tmp_path / "c.jsonl"
    rows = list(read_dataset(folder))
    completions.write_text(
        json.dumps({"id": rows[0]["id"], "completion": _optimal(rows[0])}) + "\n"
    )
    command = ["eval", str(folder), "--completions", str(completions), "-o", str(tmp_path / "r")]
    result = runner.invoke(main, command)
    assert result.exit_code != 0 and "2 instances have no answer" in result.output
    result = runner.invoke(main, [*command, "--allow-missing"])
    assert result.exit_code == 0, result.output
    assert "2 instances had no completion" in (tmp_path / "r" / "report.md").read_text()
    assert "| TSP | 1 | 2 | 1.000 |" in result.output  # missing answers are not scored
    pair = [str(heuristic_report), str(tmp_path / "r" / "report.json")]
    result = runner.invoke(main, ["eval", "--compare", *pair, "-o", str(tmp_path / "cmp")])
    assert result.exit_code == 0 and "| overall |" in result.output
    assert (tmp_path / "cmp" / "compare.png").read_bytes().startswith(b"\x89PNG")
    result = runner.invoke(
        main, ["export", str(folder), "--format", "verl", "-o", str(tmp_path / "v.parquet")]
    )
    assert result.exit_code == 0 and (tmp_path / "v.parquet").exists()
    result = runner.invoke(main, ["eval", str(folder)])
    assert result.exit_code != 0 and "one of --completions" in result.output
    result = runner.invoke(main, ["bench", "build", "-o", str(tmp_path / "x"), "--tasks", "Nope"])
    assert result.exit_code != 0 and "unknown task" in result.output


@pytest.mark.xdist_group("ray")  # with the Ray curriculum's tests (tests/test_ray_curriculum.py)
def test_ray_backend_writes_the_same_bytes(built: Path, tmp_path: Path) -> None:
    need("ray")
    build(SMALL, tmp_path, workers=2, backend="ray", progress=False)
    assert _files(tmp_path) == _files(built)
