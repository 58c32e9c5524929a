"""The report pictures (bars, shortfall, comparison) and the per-tier metrics behind them."""

from __future__ import annotations

from pathlib import Path

import pytest

import npgym
from npgym.npbench.evaluate import Completions, evaluate
from npgym.npbench.plots import plot_compare, plot_report, tier_metrics, write_gallery
from npgym.records import make_record, record_reference


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


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    header = path.read_bytes()[:24]
    assert header.startswith(b"\x89PNG")
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def test_report_picture_draws_the_tier_panel_only_for_several_tiers(tmp_path: Path) -> None:
    rows, texts = rows_and_answers()
    report = evaluate(rows, Completions(texts), source="test")
    assert report["tiers"] == tier_metrics(rows, Completions(texts))
    _, with_tiers = png_size(plot_report(report, tmp_path / "tiers.png"))
    one_tier = {**report, "tiers": {"easy": report["tiers"]["easy"]}}
    _, without = png_size(plot_report(one_tier, tmp_path / "one.png"))
    assert without < with_tiers
    _, none = png_size(plot_report({**report, "tiers": {}}, tmp_path / "none.png"))
    assert none == without


def test_report_picture_styles_differ_and_unknown_ones_are_refused(tmp_path: Path) -> None:
    rows, texts = rows_and_answers()
    report = evaluate(rows, Completions(texts), source="test")
    bars = plot_report(report, tmp_path / "bars.png").read_bytes()
    shortfall = plot_report(report, tmp_path / "gaps.png", "shortfall").read_bytes()
    assert bars != shortfall
    with pytest.raises(ValueError, match="unknown plot style"):
        plot_report(report, tmp_path / "x.png", "log")  # type: ignore[arg-type]


def test_compare_picture_puts_reports_side_by_side(tmp_path: Path) -> None:
    rows, texts = rows_and_answers()
    first = evaluate(rows, Completions(texts), source="first")
    task = npgym.get_task("Knapsack")
    optimal = {
        row["id"]: [task.format_answer(reference.solution)]
        for row in rows
        if (reference := record_reference(row)) is not None
    }
    oracle = evaluate(rows, Completions(optimal), source="oracle")
    two = plot_compare([first, oracle], tmp_path / "two.png")
    three = plot_compare([first, oracle, first], tmp_path / "three.png")
    assert png_size(two) == png_size(three) and two.read_bytes() != three.read_bytes()
    with pytest.raises(ValueError, match="at least two reports"):
        plot_compare([first], tmp_path / "one.png")


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
    assert "every answer scored the same, reward 2.000; the first, `easy-0`" in section
