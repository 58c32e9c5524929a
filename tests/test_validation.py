"""Strict instance JSON: metadata and sizes reject NaN, infinities, numeric strings and bools."""

from __future__ import annotations

import json

import pydantic
import pytest

import npgym

TASK_NAMES = npgym.list_tasks()


@pytest.mark.parametrize("task_name", TASK_NAMES)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), "0.5", True])
def test_difficulty_must_be_a_finite_number(task_name: str, bad: object) -> None:
    task = npgym.get_task(task_name)
    data = json.loads(task.generate(0, tier="easy").to_json())
    with pytest.raises(pydantic.ValidationError, match="difficulty"):
        task.from_json(json.dumps({**data, "difficulty": bad}))


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_an_integer_difficulty_still_reads_back(task_name: str) -> None:
    task = npgym.get_task(task_name)
    data = json.loads(task.generate(0, tier="easy").to_json())
    assert task.from_json(json.dumps({**data, "difficulty": 1})).difficulty == 1.0


GRAPH_TASKS = [
    name for name in TASK_NAMES if "n" in npgym.get_task(name).instance_type.model_fields
]


@pytest.mark.parametrize("task_name", GRAPH_TASKS)
@pytest.mark.parametrize("bad", ["16", 16.0, True])
def test_vertex_count_must_be_an_integer(task_name: str, bad: object) -> None:
    task = npgym.get_task(task_name)
    data = json.loads(task.generate(0, tier="easy").to_json())
    with pytest.raises(pydantic.ValidationError, match="n"):
        task.from_json(json.dumps({**data, "n": bad}))
