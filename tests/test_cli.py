"""The npgym command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym.cli import main
from npgym.seeding import derive_seed


def test_list_names_every_task() -> None:
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0
    for task in npgym.list_tasks():
        assert f"npgym/{task}-benchmark" in result.output


def test_generate_then_score(tmp_path: Path) -> None:
    data = tmp_path / "tsp.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        main, ["generate", "TSP", "--tier", "easy", "-n", "3", "--seed", "5", "-o", str(data)]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    assert len(rows) == 3
    task = npgym.get_task("TSP")
    for index, row in enumerate(rows):
        assert row["seed"] == derive_seed(5, "TSP", "easy", index)
        instance = task.from_json(row["instance"])
        assert instance == task.generate(row["seed"], tier="easy")
        assert row["prompt"] == task.prompt(instance)
        assert row["proven_optimal"] and row["reference_method"] == "exact"
        assert json.loads(row["reference"])["objective"] == row["reference_objective"]

    completions = tmp_path / "completions.jsonl"
    answers = [
        {
            "id": rows[0]["id"],
            "completion": task.format_answer(json.loads(rows[0]["reference"])["solution"]),
        },
        {"id": rows[1]["id"], "completions": ["Answer: [0, 0]", "nothing"]},
        {"id": "not-in-data", "completion": "Answer: [1]"},
    ]
    completions.write_text("".join(json.dumps(a) + "\n" for a in answers))
    scores_path = tmp_path / "scores.jsonl"
    result = runner.invoke(
        main, ["score", str(data), "--completions", str(completions), "-o", str(scores_path)]
    )
    assert result.exit_code == 0, result.output
    scored = [json.loads(line) for line in scores_path.read_text().splitlines()]
    assert [s["reward"] for s in scored[0]["scores"]] == [2.0]
    assert [s["reward"] for s in scored[1]["scores"]] == [-0.5, -2.5]
    # a row without completion is never scored as an answer, as in npgym eval
    assert scored[2]["scores"] == []
    assert "1 completion ids not in" in result.output
    assert "1 rows had no completion; not scored" in result.output
    # averaged per instance: (1 + 0) / 2, where pooling the 3 samples would say 1/3
    assert "3 completions (averaged per instance)" in result.output
    assert "success rate 50.0%" in result.output


def test_generate_rejects_bad_config() -> None:
    result = CliRunner().invoke(main, ["generate", "TSP", "--config", '{"n_min": 0}'])
    assert result.exit_code != 0 and "n_min" in result.output
    result = CliRunner().invoke(main, ["generate", "Nope"])
    assert result.exit_code != 0 and "unknown task" in result.output


def test_score_reports_a_malformed_file(tmp_path: Path) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": 1}\nnot json\n')
    result = CliRunner().invoke(main, ["score", str(data)])
    assert result.exit_code != 0 and "bad.jsonl:2" in result.output


def test_derived_seeds_do_not_overlap_across_base_seeds() -> None:
    first = {derive_seed(0, "TSP", "easy", i) for i in range(1000)}
    second = {derive_seed(1, "TSP", "easy", i) for i in range(1000)}
    assert len(first) == 1000 and not first & second


def test_each_command_only_parses_its_options_and_calls_one_function() -> None:
    """cli.py is thin: a command's body is its docstring and one call, run_x(parse_options(
    XOptions, values)) (run_list() for list); the work lives in npgym.commands."""
    import ast
    import inspect

    from npgym import cli

    tree = ast.parse(inspect.getsource(cli))
    commands = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("command" in ast.unparse(decorator) for decorator in node.decorator_list)
    ]
    assert len(commands) == 12
    for function in commands:
        body = function.body[1:] if ast.get_docstring(function) else function.body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), function.name
        call = body[0].value
        assert isinstance(call, ast.Call) and ast.unparse(call.func).startswith("run_"), (
            function.name
        )
        for argument in call.args:
            assert ast.unparse(argument).startswith("parse_options("), function.name


@given(count=st.integers(-3, 3), workers=st.integers(-3, 3))
def test_options_models_refuse_what_the_command_line_refuses(count: int, workers: int) -> None:
    from npgym.commands import GenerateOptions, OptionsError, parse_options

    values = {"task_name": "TSP", "count": count, "workers": workers}
    if count >= 1 and workers >= 1:
        assert parse_options(GenerateOptions, values).count == count
    else:
        with pytest.raises(OptionsError, match=r"count|workers"):
            parse_options(GenerateOptions, values)


def test_options_that_do_not_fit_together_are_a_usage_error() -> None:
    from npgym.commands import EvalOptions, GenerateOptions, OptionsError, parse_options

    with pytest.raises(OptionsError, match="--tier or --difficulty"):
        parse_options(GenerateOptions, {"task_name": "TSP", "tier": "easy", "difficulty": 0.5})
    with pytest.raises(OptionsError, match="one of --completions"):
        parse_options(EvalOptions, {"dataset": "x", "agent": "greedy", "endpoint": "http://h"})
    with pytest.raises(OptionsError, match=r"(?i)colour: extra"):
        parse_options(EvalOptions, {"dataset": "x", "agent": "greedy", "colour": "red"})
    result = CliRunner().invoke(main, ["generate", "TSP", "--tier", "easy", "--difficulty", "0.5"])
    assert result.exit_code == 2 and "--tier or --difficulty" in result.output


@pytest.mark.parametrize(("difficulty", "accepted"), [(1.5, True), (2.0, True), (2.01, False)])
def test_generate_takes_every_difficulty_the_tasks_take(
    tmp_path: Path, difficulty: float, accepted: bool
) -> None:
    """The CLI and the tasks go to MAX_DIFFICULTY = 2; the dataset spec used to stop at 1, so
    ``generate --difficulty 1.5`` was always refused."""
    output = tmp_path / "rows.jsonl"
    arguments = ["generate", "Knapsack", "--difficulty", str(difficulty), "-n", "2"]
    result = CliRunner().invoke(main, [*arguments, "--reference", "none", "-o", str(output)])
    if accepted:
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in output.read_text().splitlines()]
        assert [row["difficulty"] for row in rows] == [difficulty, difficulty]
    else:
        assert result.exit_code == 2 and "difficulty" in result.output


def test_eval_and_serve_options_refuse_what_would_pass_through() -> None:
    """A NaN temperature used to reach the server; a foreign env id reached the server app."""
    from npgym.commands import EvalOptions, OptionsError, ServeOptions, parse_options

    with pytest.raises(OptionsError, match="temperature"):
        parse_options(EvalOptions, {"dataset": "x", "agent": "greedy", "temperature": "nan"})
    with pytest.raises(OptionsError, match="not an npgym environment"):
        parse_options(ServeOptions, {"env_id": "CartPole-v1"})
    assert parse_options(ServeOptions, {"env_id": "npgym/TSP-easy"}).port == 8000


def test_each_command_s_parameters_are_its_options_model_s_fields() -> None:
    """click hands every parameter to the model, which forbids extras: a parameter the model
    lacks (or a field no parameter fills) would break the command on every call."""
    from npgym import cli, commands

    pairs = {
        "generate": commands.GenerateOptions,
        "score": commands.ScoreOptions,
        "bench build": commands.BuildOptions,
        "export": commands.ExportOptions,
        "show": commands.ShowOptions,
        "import np-engine": commands.ImportOptions,
        "import tsplib": commands.ImportOptions,
        "import dimacs": commands.DimacsImportOptions,
        "verify-certificates": commands.VerifyCertificatesOptions,
        "eval": commands.EvalOptions,
        "serve": commands.ServeOptions,
    }
    for path, model in pairs.items():
        command: Any = cli.main
        for part in path.split():
            command = command.commands[part]
        names = {parameter.name for parameter in command.params}
        assert names == set(model.model_fields), path
