"""lm-evaluation-harness hooks for NP-Bench: score a generation with npgym's verifier."""

from __future__ import annotations

from typing import Any

from npgym.records import record_instance, record_reference


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """NP-Bench metrics of one generation: feasible (Success Rate), clipped optimality ratio
    (Average Ratio, 0 when infeasible) and the npgym reward."""
    task, instance = record_instance(doc)
    score = task.score(instance, results[0], record_reference(doc))
    return {
        "success_rate": float(score.feasible),
        "average_ratio": score.optimality,
        "reward": score.reward,
    }
