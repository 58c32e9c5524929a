"""The lm-evaluation-harness example task, run by the harness itself on an exported NP-Bench."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import npgym
from npgym.npbench.build import BuildSpec, build, read_dataset
from npgym.npbench.export import export_rows
from tests.extras import need

lm_eval = need("lm_eval")

from lm_eval.api.model import LM  # noqa: E402  (after the skip)
from lm_eval.tasks import TaskManager  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "lm_eval"


class OracleLM(LM):
    """Answers every prompt with the reference solution (or with nonsense, half the time)."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__()
        self.answers = answers

    def generate_until(self, requests: list, disable_tqdm: bool = False) -> list[str]:
        return [self.answers.get(request.arguments[0], "no idea") for request in requests]

    def loglikelihood(self, requests: list, disable_tqdm: bool = False) -> list:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: list, disable_tqdm: bool = False) -> list:
        raise NotImplementedError


def test_harness_scores_npbench_with_npgym(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(
        BuildSpec(tasks=("SubsetSum", "Knapsack"), n=2, mix={"easy": 1}),
        tmp_path / "b",
        workers=1,
        progress=False,
    )
    rows = list(read_dataset(tmp_path / "b"))
    export_rows(rows, "jsonl", tmp_path / "np-bench.jsonl")
    answers = {
        row["prompt"]: npgym.get_task(row["task"]).format_answer(
            json.loads(row["reference"])["solution"]
        )
        for row in rows[::2]
    }
    monkeypatch.chdir(tmp_path)
    results = lm_eval.simple_evaluate(
        model=OracleLM(answers),
        tasks=["npbench"],
        task_manager=TaskManager(include_path=str(EXAMPLE)),
    )
    metrics = results["results"]["npbench"]
    assert metrics["success_rate,none"] == 0.5
    assert metrics["average_ratio,none"] == 0.5
    assert metrics["reward,none"] == pytest.approx((2.0 + -2.5) / 2)
