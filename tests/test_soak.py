"""The soak benchmark (``bench/soak.py``): a short run meets every goal, and its verdict fails
when an entry point raises, returns a non-finite reward or accepts a bad reference.

CI also runs ``python -m bench.soak --short`` over every registered env id and the server.
"""

from __future__ import annotations

import math

import pytest

from bench import soak
from npgym.results import Score
from npgym.task import Task

IDS = ("npgym/Knapsack-easy", "npgym/Invert-SubsetSum-easy", "npgym/Compose-Mixed2-easy")


def test_a_short_soak_meets_every_goal() -> None:
    figures = soak.run(completions=1_500, server_steps=0, seed=1, curriculum=0, ids=IDS)
    assert soak.verdict(figures) == []
    calls = sum(tally.calls for tally in figures["tallies"].values())
    assert calls >= 1_500
    assert sum(tally.refused for tally in figures["tallies"].values()) > 0  # bad references met


@pytest.mark.parametrize("broken", ["raise", "nan", "accept"])
def test_the_verdict_fails_on_a_planted_defect(
    broken: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    score = Task.score

    def planted(self: Task, instance: object, completion: object, *args: object) -> Score:
        if broken == "raise":
            raise RuntimeError("planted")
        if broken == "accept":  # a bad reference goes through without a ValueError
            return score(self, instance, completion)  # type: ignore[arg-type]
        result = score(self, instance, completion)  # type: ignore[arg-type]
        return Score(**{**result.to_dict(), "reward": math.nan})

    monkeypatch.setattr(Task, "score", planted)
    figures = soak.run(completions=300, server_steps=0, seed=2, curriculum=0, ids=IDS[:1])
    missed = " ".join(soak.verdict(figures))
    expected = {"raise": "exceptions", "nan": "non-finite", "accept": "exceptions"}[broken]
    assert expected in missed
