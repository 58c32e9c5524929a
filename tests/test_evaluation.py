"""NP-Bench evaluation reports: fair per-instance averaging, missing answers that are never
scored, the near-1 plot and gallery in every report, and consistency across variants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import npgym
from npgym.npbench.evaluate import AVERAGING, Completions, evaluate, markdown
from npgym.npbench.report import write_report
from npgym.records import make_record
from npgym.variants import expand_variants

JUNK = "I cannot solve this."


def knapsack_rows(count: int, tier: str = "easy") -> list[dict[str, Any]]:
    task = npgym.get_task("Knapsack")
    rows = []
    for seed in range(count):
        instance = task.generate(seed, tier)
        rows.append(dict(make_record(f"{tier}-{seed}", task, instance, task.reference(instance))))
    return rows


def optimal(row: dict[str, Any]) -> str:
    solution = json.loads(row["reference"])["solution"]
    return "Answer: " + npgym.get_task(row["task"]).format_answer(solution)


def test_every_instance_weighs_the_same_whatever_its_sample_count() -> None:
    rows = knapsack_rows(3)
    texts = {rows[0]["id"]: [optimal(rows[0])] * 50, rows[1]["id"]: [JUNK], rows[2]["id"]: [JUNK]}
    report = evaluate(rows, Completions(texts), source="fair")
    knapsack = report["tasks"]["Knapsack"]
    # pooling the 52 samples would say 50/52 = 0.962; per instance it is 1/3
    assert knapsack["success_rate"] == round(1 / 3, 6)
    assert knapsack["average_ratio"] == round(1 / 3, 6)
    assert knapsack["optimal_rate"] == round(1 / 3, 6)
    assert knapsack["format_rate"] == round(1 / 3, 6)
    assert knapsack["mean_reward"] == round((2.0 - 2.5 - 2.5) / 3, 6)
    assert report["overall"]["success_rate"] == round(1 / 3, 6)
    assert report["categories"]["subset selection"]["success_rate"] == round(1 / 3, 6)
    assert report["overall"]["samples"] == 52
    assert report["averaging"] == AVERAGING and "per instance" in AVERAGING
    assert "Averaging: per instance" in markdown(report)
    assert any("different numbers of samples" in w for w in report["problems"]["warnings"])


def test_an_instance_without_completion_is_counted_never_scored(tmp_path: Path) -> None:
    rows = knapsack_rows(4) + knapsack_rows(2, "medium")
    texts = {row["id"]: [optimal(row)] for row in rows[1:4]}  # easy-0 and the medium ones miss
    report = evaluate(rows, Completions(texts), source="partial")
    knapsack = report["tasks"]["Knapsack"]
    assert (knapsack["instances"], knapsack["missing"], knapsack["samples"]) == (3, 3, 3)
    # the answered instances are all optimal; the missing ones are not failures
    assert knapsack["success_rate"] == knapsack["format_rate"] == 1.0
    assert report["overall"]["missing"] == 3
    assert report["tiers"]["easy"]["missing"] == 1
    medium = report["tiers"]["medium"]
    assert (medium["instances"], medium["missing"], medium["success_rate"]) == (0, 2, None)
    assert report["problems"]["missing_completions"] == ["easy-0", "medium-0", "medium-1"]
    text = markdown(report)
    assert "| task (on custom (no NP-Bench rows)) | n | missing |" in text
    assert "| Knapsack | 3 | 3 | 1.000 |" in text
    assert "| medium | 0 | 2 | - | - |" in text
    assert "3 instances had no completion (not scored; counted as missing)" in text
    paths = write_report(report, tmp_path, rows, Completions(texts))
    assert json.loads(paths[0].read_text())["tiers"]["medium"]["success_rate"] is None
    assert paths[2].read_bytes().startswith(b"\x89PNG")  # a group with no answers still draws
    assert "easy-0" not in paths[1].read_text().split("## Gallery")[1]


def test_nothing_answered_reports_no_rates() -> None:
    report = evaluate(knapsack_rows(2), Completions({}), source="silent")
    overall = report["overall"]
    assert (overall["instances"], overall["missing"], overall["success_rate"]) == (0, 2, None)


def test_report_has_tier_metrics_the_gap_plot_and_a_gallery(tmp_path: Path) -> None:
    rows = knapsack_rows(3) + knapsack_rows(3, "medium")
    texts = {row["id"]: [optimal(row)] for row in rows}
    texts["medium-1"] = ["Answer: []"]  # the empty answer: infeasible, ratio 0
    report = evaluate(rows, Completions(texts), source="tiers")
    assert list(report["tiers"]) == ["easy", "medium"]
    assert report["tiers"]["easy"]["average_ratio"] == 1.0
    assert report["tiers"]["medium"]["average_ratio"] == round(2 / 3, 6)
    paths = write_report(report, tmp_path, rows, Completions(texts))
    text = paths[1].read_text()
    assert "| tier (on custom (no NP-Bench rows)) | n | missing |" in text
    assert "## Gallery: worst and best answer per task" in text
    assert "worst: `medium-1`, reward -0.500: empty answer" in text
    assert "![Knapsack best](gallery/Knapsack-best.png)" in text
    for name in ("Knapsack-worst.png", "Knapsack-best.png"):
        assert (tmp_path / "gallery" / name).read_bytes().startswith(b"\x89PNG")
    without_gallery = write_report(report, tmp_path / "plain")
    assert "Gallery" not in without_gallery[1].read_text()


def variant_rows(task_name: str, count: int, k: int) -> list[dict[str, Any]]:
    """Original rows, then k variant rows per original, as ``bench build --variants k`` lays
    them out (``original_id``, ``variant``, ``transforms``)."""
    task = npgym.get_task(task_name)
    originals = [task.generate(seed, "easy") for seed in range(count)]
    rows = []
    for index, (instance, variants) in enumerate(
        zip(originals, expand_variants(originals, k, seed=3), strict=True)
    ):
        original_id = f"{task_name}-{index}"
        rows.append(dict(make_record(original_id, task, instance, task.reference(instance))))
        for j, twin in enumerate(variants):
            row = dict(
                make_record(
                    f"{original_id}-v{j}", task, twin.instance, task.reference(twin.instance)
                )
            )
            row |= {"original_id": original_id, "variant": j, "transforms": list(twin.transforms)}
            rows.append(row)
    return rows


def test_consistency_is_the_share_of_originals_with_agreeing_verdicts() -> None:
    knapsack = variant_rows("Knapsack", 3, 2)
    tsp = variant_rows("TSP", 2, 2)
    by_id = {row["id"]: row for row in knapsack + tsp}
    texts = {identifier: [optimal(row)] for identifier, row in by_id.items()}
    texts["Knapsack-1-v0"] = [JUNK]  # Knapsack-1: optimal, format error, optimal: disagree
    for identifier in ("Knapsack-2", "Knapsack-2-v0", "Knapsack-2-v1"):
        texts[identifier] = [JUNK]  # wrong everywhere, but consistently so
    texts["TSP-0-v1"] = ["Answer: [0, 0]"]  # TSP-0: optimal, optimal, infeasible
    del texts["TSP-1-v0"]  # a missing variant is left out; TSP-1 still has two verdicts
    report = evaluate(knapsack + tsp, Completions(texts), source="variants")
    assert report["tasks"]["Knapsack"]["consistency"] == round(2 / 3, 6)
    assert report["tasks"]["Knapsack"]["variant_originals"] == 3
    assert report["tasks"]["TSP"]["consistency"] == 0.5
    assert report["overall"]["consistency"] == round(3 / 5, 6)
    assert report["overall"]["variant_originals"] == 5
    text = markdown(report)
    assert "## Consistency across variants" in text
    assert "| Knapsack | 3 | 0.667 |" in text and "| all tasks | 5 | 0.600 |" in text


def test_rows_without_variants_report_no_consistency() -> None:
    rows = knapsack_rows(2)
    report = evaluate(rows, Completions({row["id"]: [optimal(row)] for row in rows}))
    assert "consistency" not in report["tasks"]["Knapsack"]
    assert "consistency" not in report["overall"]
    assert "Consistency" not in markdown(report)


@pytest.mark.parametrize("samples", [1, 3])
def test_consistency_compares_samples_index_by_index(samples: int) -> None:
    rows = variant_rows("Knapsack", 1, 1)
    texts = {row["id"]: [optimal(row)] * samples for row in rows}
    texts[rows[1]["id"]][0] = JUNK  # the first sample disagrees, any others agree
    report = evaluate(rows, Completions(texts))
    assert report["overall"]["consistency"] == round((samples - 1) / samples, 6)


def test_a_tier_counts_only_when_it_was_checked() -> None:
    rows = knapsack_rows(2) + knapsack_rows(1, "medium")
    texts = Completions({row["id"]: [optimal(row)] for row in rows})
    assert list(evaluate(rows, texts)["tiers"]) == ["easy", "medium"]  # the caller's own rows
    report = evaluate(rows, texts, tiers_checked={rows[0]["id"]})
    assert list(report["tiers"]) == ["easy", "custom"]
    assert report["tiers"]["custom"]["instances"] == 2


def test_every_table_names_the_dataset_and_compare_warns_on_different_ones() -> None:
    from npgym.npbench.certify import Provenance
    from npgym.npbench.evaluate import compare

    rows = knapsack_rows(2)
    texts = Completions({row["id"]: [optimal(row)] for row in rows})
    label = "custom (derived from NP-Bench v2, 998 of its 1000 rows dropped)"
    report = evaluate(rows, texts, source="a", provenance=Provenance(label, None, frozenset()))
    assert report["dataset"] == label and report["bench_version"] is None
    text = markdown(report)
    assert "NP-Bench version" not in text
    for title in ("task", "category", "tier", "overall"):
        assert f"| {title} (on {label}) |" in text
    official = report | {"dataset": "NP-Bench version 2", "bench_version": 2, "source": "b"}
    side_by_side = compare(report, official)
    assert side_by_side.startswith(f"Warning: the datasets differ ({label} vs NP-Bench version 2)")
    assert "Warning" not in compare(official, official | {"source": "c"})
