"""What a model and a reader see: composition and Invert prompts, ``npgym list``, the report's
text and pictures, the eval gallery, and the bench scripts' message when torch is missing."""

from __future__ import annotations

import json
import re
import runpy
import sys
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from click.testing import CliRunner
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import npgym
from npgym import datasets
from npgym.capabilities import capability
from npgym.cli import main
from npgym.families.invert import json_kind
from npgym.npbench import plots
from npgym.npbench.evaluate import Completions, evaluate, markdown
from npgym.npbench.plots import plot_compare, registry_order, write_gallery
from npgym.records import Row, make_record
from npgym.render import score_line

ROOT = Path(__file__).resolve().parent.parent

# --- prompts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "opening"),
    [
        (
            "Compose-Chain2",
            "This problem is a chain of 2 parts: each part after the first has a number (C2) "
            "that is worked out from the optimum of the part before it. Solve every part.",
        ),
        (
            "Compose-Chain3",
            "This problem is a chain of 3 parts: each part after the first has a number "
            "(C2, C3) that is worked out from the optimum of the part before it. Solve every part.",
        ),
        ("Compose-Mixed2", "This problem has 2 independent parts. Solve every part."),
    ],
)
def test_a_composition_prompt_opens_with_a_correct_sentence(name: str, opening: str) -> None:
    task = npgym.get_task(name)
    assert task.prompt(task.generate(1, tier="easy")).splitlines()[0] == opening


def test_an_invert_prompt_says_what_each_field_is() -> None:
    task = npgym.get_task("Invert-MeetingScheduling")
    prompt = task.prompt(task.generate(0, tier="easy"))
    answer_format = next(line for line in prompt.splitlines() if line.startswith("Answer format"))
    assert answer_format.endswith(
        'exactly these fields: "meetings" (a list of objects with the fields "attendees" (a list '
        'of integers) and "duration" (an integer)), "availability" (a list of lists of pairs of '
        'integers), "rooms" (a list of integers), "slot" (an integer).'
    )
    assert "integer values" not in prompt and '"..."' not in prompt


@pytest.mark.parametrize(
    ("base", "kinds"),
    [
        ("MaxClique", ["an integer", "a list of pairs of integers"]),
        ("MinBisection", ["an integer", "a list of triples of integers"]),
        ("TSP", ["a list of lists of integers"]),
        ("Knapsack", ["a list of integers", "a list of integers", "an integer"]),
        ("SetCover", ["an integer", "a list of lists of integers"]),
    ],
)
def test_each_field_kind_is_what_the_json_holds(base: str, kinds: list[str]) -> None:
    instance_type = npgym.get_task(base).instance_type
    fields = [instance_type.model_fields[name] for name in instance_type.canonical_fields]
    assert [json_kind(field.annotation) for field in fields] == kinds


def test_a_field_type_without_a_json_description_is_refused() -> None:
    with pytest.raises(TypeError, match="no JSON description"):
        json_kind(str)


# --- npgym list -------------------------------------------------------------------------------


def test_list_aligns_every_column_whatever_the_length_of_the_ids() -> None:
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    names = lines[0::2]
    assert max(len(line.split()[0]) for line in names) > 20  # ids longer than the old width
    starts = {re.search(r"\S+\s+(\S)", line).start(1) for line in names}  # type: ignore[union-attr]
    goals = {line.index("imise ") for line in names}
    ids = {len(line) - len(line.lstrip()) for line in lines[1::2]}
    assert len(starts) == len(goals) == len(ids) == 1 and starts == ids
    invert = next(line for line in names if line.startswith("Invert-TSP "))
    assert "maximise property met (1 or 0)" in invert and "property holds" not in result.output


# --- report.md and the pictures --------------------------------------------------------------


def knapsack_rows(answer: str = "best") -> tuple[list[Row], dict[str, list[str]]]:
    """Three easy Knapsack rows; every answer the reference (``best``) or every one empty."""
    task = npgym.get_task("Knapsack")
    rows, texts = [], {}
    for seed in range(3):
        instance = task.generate(seed, "easy")
        reference = task.reference(instance)
        row = make_record(f"k-{seed}", task, instance, reference)
        rows.append(row)
        best = task.format_answer(reference.solution)
        texts[row["id"]] = [best if answer == "best" else "Answer: []"]
    return rows, texts


def test_report_opens_with_a_plain_sentence_and_explains_every_column() -> None:
    rows, texts = knapsack_rows()
    del texts["k-2"]
    text = markdown(evaluate(rows, Completions(texts), source="mymodel"))
    opening = text.split("\n\n")[1]
    assert opening.startswith(
        "This report scores the answers of `mymodel` to 2 instances of 1 task (1 more got no "
        "answer and are not scored), from custom"
    )
    assert "Success Rate 1.000" in opening and "Average Ratio 1.000" in opening
    legend = text.split("## Columns")[1]
    header = next(line for line in text.splitlines() if line.startswith("| task"))
    for column in [cell.strip() for cell in header.strip("|").split("|")][1:]:
        assert f"**{column}**" in legend, column


def test_bar_labels_use_one_number_format_for_every_metric() -> None:
    assert plots._value(1.0, "bars") == "1.000"
    assert plots._value(0.959, "bars") == "0.959"
    assert plots._value(1.0, "shortfall") == "1.000 (perfect)"


def test_compare_orders_tasks_as_the_registry_does_even_from_report_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rates = {"success_rate": 0.5, "average_ratio": 0.5}
    reports = []
    for source in ("a", "b"):
        tasks = dict.fromkeys(("SubsetSum", "Knapsack", "MaxClique"), rates)
        report = {"source": source, "tasks": tasks, "overall": rates}
        reports.append(json.loads(json.dumps(report, sort_keys=True)))  # as report.json has it
    assert list(reports[0]["tasks"]) == ["Knapsack", "MaxClique", "SubsetSum"]
    drawn: list[list[str]] = []
    real_bars = plots._bars
    monkeypatch.setattr(plots, "_bars", lambda axis, names, *rest: drawn.append(list(names)))
    plot_compare(reports, tmp_path / "compare.png")
    monkeypatch.setattr(plots, "_bars", real_bars)
    assert drawn[0] == ["MaxClique", "SubsetSum", "Knapsack", "overall"]
    assert registry_order(["Compose-Chain2", "Knapsack", "TSP", "Knapsack"]) == [
        "TSP",
        "Knapsack",
        "Compose-Chain2",
    ]


# --- the gallery ------------------------------------------------------------------------------


def test_gallery_shows_one_picture_when_every_answer_scored_the_same(tmp_path: Path) -> None:
    rows, texts = knapsack_rows()
    section = write_gallery(rows, Completions(texts), tmp_path)
    assert "every answer scored the same, reward 2.000; the first, `k-0`" in section
    assert "worst" not in section.split("### Knapsack")[1]
    assert sorted(path.name for path in (tmp_path / "gallery").iterdir()) == ["Knapsack-all.png"]
    texts["k-1"] = ["Answer: []"]
    section = write_gallery(rows, Completions(texts), tmp_path / "mixed")
    assert "worst: `k-1`" in section and "best: `k-0`" in section


def test_the_reference_is_called_optimum_only_when_it_is_proven() -> None:
    task = npgym.get_task("Knapsack")
    instance = task.generate(0, "easy")
    reference = task.reference(instance)
    score = task.score(instance, task.format_answer(reference.solution), reference)
    assert f"(optimum {reference.objective}, ratio 1.000)" in score_line(task, score, proven=True)
    assert f"(best known {reference.objective}," in score_line(task, score)


def draw(name: str, instance: Any, solution: Any) -> Figure:
    """The task's drawing on a figure (as :func:`npgym.render.draw` makes it), kept to inspect."""
    task = npgym.get_task(name)
    figure = Figure(figsize=(7.2, 5.4), dpi=100)
    FigureCanvasAgg(figure)
    shaped = None if solution is None else task.to_solution(solution)
    capability(task, "drawer")(figure, instance, shaped, False)
    figure.canvas.draw()
    return figure


def test_a_tsp_without_coordinates_is_drawn_as_its_distance_matrix() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, "benchmark")
    assert instance.coordinates is None
    tour = [*range(instance.n), 0]
    figure = draw("TSP", instance, tour)
    axes = figure.axes[0]
    assert axes.images and "no coordinates" in axes.get_title()
    marks = sum(np.shape(collection.get_offsets())[0] for collection in axes.collections)
    assert marks == 2 * instance.n  # each leg at its two cells
    mapped = draw("TSP", task.generate(0, "easy"), None).axes[0]
    assert not mapped.images  # cities with coordinates stay on their map


@pytest.mark.parametrize("crowded", [False, True])
def test_meeting_labels_are_never_cut_by_a_bar(crowded: bool) -> None:
    """Each room-row label lies inside its own bar or on free space of its row."""
    task = npgym.get_task("MeetingScheduling")
    instance = task.generate(0, "medium")
    day, slot, rooms = instance.day_start, instance.slot, instance.n_rooms
    schedule = [
        # crowded: every meeting in room 0, one slot apart (clashes, long red labels)
        [m, 0, day + m * slot] if crowded else [m, m % rooms, day + 2 * slot * (m // rooms)]
        for m in range(instance.n_meetings)
    ]
    figure = draw("MeetingScheduling", instance, schedule)
    axes = figure.axes[0]
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    spans = {m: (day_at, day_at + instance.meetings[m].duration) for m, _, day_at in schedule}
    rows = {m: room for m, room, _ in schedule}
    assert len(axes.texts) == instance.n_meetings
    boxes = []
    for text in axes.texts:
        box = text.get_window_extent(renderer).transformed(axes.transData.inverted())
        meeting = int(re.match(r"m(\d+)", text.get_text()).group(1))  # type: ignore[union-attr]
        start, end = spans[meeting]
        on_row = [spans[m] for m in spans if rows[m] == rows[meeting] and m != meeting]
        uncovered = min([s for s, _ in on_row if start <= s < end] + [end])
        inside = start <= box.x0 and box.x1 <= uncovered
        free = all(box.x1 <= s or e <= box.x0 for s, e in [*on_row, (start, end)])
        assert inside or free, (text.get_text(), box.x0, box.x1, start, end)
        boxes.append((rows[meeting], box.x0, box.x1))
    for index, (row, x0, x1) in enumerate(boxes):  # no two labels of a row overlap
        assert all(r != row or b1 <= x0 or x1 <= b0 for r, b0, b1 in boxes[index + 1 :])


# --- the cold build's progress ---------------------------------------------------------------


class CompilesTwo:
    """A task whose generation compiles two kernels no one compiled before."""

    def generate(self, seed: int, tier: str) -> None:
        for _ in range(2):

            @numba.njit(cache=False)
            def total(values: Any) -> Any:
                return values.sum()

            total(np.arange(3))


@pytest.mark.parametrize("every", [0.0, 1e9])
def test_a_long_compile_says_how_far_it_got_at_most_every_few_seconds(
    every: float, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(datasets, "_warmed", set())
    monkeypatch.setattr(datasets, "get_task", lambda name: CompilesTwo())
    monkeypatch.setattr(datasets, "COMPILE_PROGRESS_EVERY", every)
    datasets.warm_up(["TSP"], references=False)
    lines = capsys.readouterr().err.splitlines()
    message = datasets.COMPILING_MESSAGE
    assert lines[0] == f"{message}: 1/1 TSP ..." and lines[-1].startswith(f"{message}: done in ")
    progress = [
        re.fullmatch(rf"{re.escape(message)}: 1/1 TSP \.\.\. (\d+) kernels, \d+ s", line)
        for line in lines[1:-1]
    ]
    assert all(progress)
    counts = [int(match.group(1)) for match in progress if match]
    # numba counts the kernels it compiles for them too (the overloads they call)
    expected = len(counts) >= 2 if every == 0.0 else not counts
    assert expected and counts == list(range(1, len(counts) + 1))


# --- the bench scripts without torch ----------------------------------------------------------


def test_reinforce_tsp_says_what_to_install_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(ROOT / "bench" / "reinforce_tsp.py"), run_name="__main__")
    assert str(stop.value.code).startswith("bench/reinforce_tsp.py needs PyTorch: pip install")


def test_learning_curve_says_what_to_install_without_trl(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import learning_curve

    monkeypatch.setitem(sys.modules, "trl", None)
    with pytest.raises(SystemExit) as stop:
        learning_curve.main(["--smoke", "--output", "/nonexistent/never-written"])
    message = str(stop.value.code)
    assert message.startswith("bench/learning_curve.py needs PyTorch and TRL")
    missing = message.rpartition("(missing: ")[2]  # trl, and torch too in a [test]-only venv
    assert message.endswith(")") and "trl" in missing.rstrip(")").split(", ")
    assert "\n" not in message
