"""Pictures: rgb_array renders, npgym show, and matplotlib staying unloaded until needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from click.testing import CliRunner

import npgym
from npgym import testing
from npgym.cli import main
from npgym.render import draw, draw_answer

TASK_NAMES = testing.tasks_declaring("drawer")


def wrong_answer(task_name: str, good: object) -> object:
    """A small, typical mistake on top of a good solution."""
    if task_name in ("TSP", "HamiltonianCycle"):
        return [*good[:2], *good[3:]]  # a city dropped (TSP) or a non-edge step, maybe
    if task_name == "GraphColoring":
        return [0] * len(good)  # every edge clashes
    if task_name == "MinBisection":
        return [good[0] + good[1][:3], good[1][3:]]  # unbalanced
    if task_name == "MeetingScheduling":
        clash = good[0][2] if good else 0  # every meeting in room 0 at one time: a clash
        return [[m, 0, clash] for m, _, _ in good] or [[0, 0, 0]]
    if task_name == "SetCover":
        return good[:-1] if isinstance(good, list) else [0]
    if task_name in ("MaxClique", "MaxIndependentSet", "Knapsack", "SubsetSum"):
        return list(range(12))
    raise AssertionError(task_name)


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_a_wrong_answer_changes_the_picture(task_name: str) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(5, "easy")
    good = task.reference(instance, exact=False).solution
    bad = wrong_answer(task_name, good)
    right_text, wrong_text = task.format_answer(good), task.format_answer(bad)
    assert task.score(instance, right_text).feasible
    assert not task.score(instance, wrong_text).feasible
    pictures = [draw_answer(task, instance, text) for text in (None, right_text, wrong_text)]
    for picture in pictures:
        assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    blank, right, wrong = pictures
    assert right.shape == wrong.shape == blank.shape
    assert (right != wrong).any() and (blank != right).any()
    # red (the mistake colour) appears where the wrong answer is drawn, not in the right one
    assert red_pixels(wrong) > red_pixels(right)


def red_pixels(picture: np.ndarray) -> int:
    r, g, b = (picture[..., channel].astype(int) for channel in range(3))
    return int(((r > 180) & (g < 80) & (b < 80)).sum())


def test_unparseable_answers_still_draw_the_instance() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, "easy")
    for text in ("no answer here", "Answer: [[[", "Answer: " + "9" * 5000):
        picture = draw_answer(task, instance, text)
        assert picture.shape[2] == 3


def test_text_env_renders_the_last_answer() -> None:
    env = gym.make("npgym/TSP-easy", render_mode="rgb_array", exact_reference=False)
    env.reset(seed=0)
    before = env.render()
    env.step("Answer: [0, 1, 2, 0]")
    after = env.render()
    assert before.shape == after.shape and (before != after).any()


def test_structured_env_renders_the_partial_solution() -> None:
    env = gym.make("npgym/MaxClique-easy", mode="structured", render_mode="rgb_array")
    observation, _ = env.reset(seed=0)
    first = env.render()
    env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert (env.render() != first).any()


def test_partial_solutions_do_not_mark_unfinished_parts_as_mistakes() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, "easy")
    partial = draw(task, instance, [0, 1, 2], partial=True)
    finished = draw(task, instance, [0, 1, 2], partial=False)
    assert red_pixels(partial) < red_pixels(finished)


def test_import_and_make_do_not_load_matplotlib() -> None:
    code = (
        "import sys, gymnasium as gym, npgym\n"
        "gym.make('npgym/TSP-easy').reset(seed=0)\n"
        "gym.make('npgym/TSP-easy', mode='structured').reset(seed=0)\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib loaded'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_show_draws_a_row_of_a_generated_file(tmp_path: Path) -> None:
    runner = CliRunner()
    data = tmp_path / "knapsack.jsonl"
    result = runner.invoke(
        main, ["generate", "Knapsack", "--tier", "easy", "-n", "2", "-o", str(data)]
    )
    assert result.exit_code == 0, result.output
    row_id = data.read_text().splitlines()[1].split('"id":"')[1].split('"')[0]
    outputs = []
    for extra in (["--answer", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"], ["--reference"]):
        out = tmp_path / f"{len(outputs)}.png"
        result = runner.invoke(main, ["show", str(data), "--row", row_id, *extra, "-o", str(out)])
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    assert outputs[0].startswith(b"\x89PNG") and outputs[0] != outputs[1]


def test_show_reads_an_instance_file_and_reports_bad_input(tmp_path: Path) -> None:
    task = npgym.get_task("GraphColoring")
    source = tmp_path / "instance.json"
    source.write_text(task.generate(1, "easy").to_json())
    runner = CliRunner()
    out = tmp_path / "out.png"
    result = runner.invoke(
        main, ["show", str(source), "--answer", "Answer: [0, 0]", "-o", str(out)]
    )
    assert result.exit_code == 0 and out.exists()
    result = runner.invoke(main, ["show", str(source), "--row", "x", "-o", str(out)])
    assert result.exit_code != 0 and "drop --row" in result.output
    broken = tmp_path / "broken.json"
    broken.write_text('{"task": "TSP"}')
    result = runner.invoke(main, ["show", str(broken), "-o", str(out)])
    assert result.exit_code != 0 and "not a valid instance" in result.output
    result = runner.invoke(
        main, ["show", str(source), "--reference", "--answer", "[0]", "-o", str(out)]
    )
    assert result.exit_code != 0 and "not both" in result.output
