"""The near-1 report plot and the per-tier metrics behind it."""

from __future__ import annotations

from pathlib import Path

import npgym
from npgym.npbench.evaluate import Completions, evaluate
from npgym.npbench.plots import plot_gaps, tier_metrics, write_gallery
from npgym.records import make_record


def rows_and_answers() -> tuple[list[dict], dict[str, list[str]]]:
    task = npgym.get_task("Knapsack")
    rows, texts = [], {}
    for tier in ("easy", "medium"):
        for seed in range(3):
            instance = task.generate(seed, tier)
            reference = task.reference(instance)
            row = make_record(f"{tier}-{seed}", task, instance, reference)
            rows.append(row)
            best = task.format_answer(reference.solution)
            texts[row["id"]] = [best if tier == "easy" or seed else "Answer: []"]
    return rows, texts


def test_tier_metrics_group_by_tier_and_count_missing_answers() -> None:
    rows, texts = rows_and_answers()
    tiers = tier_metrics(rows, Completions(texts))
    assert list(tiers) == ["easy", "medium"]
    assert tiers["easy"]["average_ratio"] == 1.0 and tiers["easy"]["success_rate"] == 1.0
    # the empty answer is no solution (infeasible, ratio 0) on one of three medium instances
    assert tiers["medium"]["success_rate"] == tiers["medium"]["average_ratio"] == round(2 / 3, 6)
    del texts["easy-0"]
    easy = tier_metrics(rows, Completions(texts))["easy"]
    # a missing answer is counted, never scored as a format failure
    assert (easy["instances"], easy["missing"], easy["format_rate"]) == (2, 1, 1.0)


def test_plot_gaps_writes_a_png_with_or_without_tiers(tmp_path: Path) -> None:
    rows, texts = rows_and_answers()
    report = evaluate(rows, Completions(texts), source="test")
    assert report["tiers"] == tier_metrics(rows, Completions(texts))
    with_tiers = plot_gaps(report, tmp_path / "tiers.png").read_bytes()
    without = plot_gaps({**report, "tiers": {}}, tmp_path / "categories.png").read_bytes()
    assert without.startswith(b"\x89PNG") and with_tiers.startswith(b"\x89PNG")
    assert without != with_tiers


def test_gallery_draws_the_worst_and_best_answer_of_each_task(tmp_path: Path) -> None:
    rows, texts = rows_and_answers()
    section = write_gallery(rows, Completions(texts), tmp_path)
    worst = (tmp_path / "gallery" / "Knapsack-worst.png").read_bytes()
    best = (tmp_path / "gallery" / "Knapsack-best.png").read_bytes()
    assert worst.startswith(b"\x89PNG") and worst != best
    assert "![Knapsack worst](gallery/Knapsack-worst.png)" in section
    assert "worst: `medium-0`, reward -0.500: empty answer" in section
    assert "best: `easy-0`, reward 2.000" in section


def test_gallery_never_draws_a_missing_answer(tmp_path: Path) -> None:
    rows, texts = rows_and_answers()
    del texts["medium-0"]  # the only answer below reward 2 (the empty answer)
    section = write_gallery(rows, Completions(texts), tmp_path)
    assert "medium-0" not in section
    assert "worst: `easy-0`, reward 2.000" in section
