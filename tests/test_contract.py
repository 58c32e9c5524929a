"""The contract every registered task and tier must meet (docs/contract.md).

Each test runs one check of :mod:`npgym.testing` (the checks ``check_task`` runs for a task in
another package) on every registered task, or every task and tier.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym import testing
from npgym.answer import render_value
from tests import golden

CASES = [(task, tier) for task in npgym.list_tasks() for tier in npgym.TIERS]
TASK_NAMES = npgym.list_tasks()


TASK_CLAIMS = {
    "task_is_registered_with_its_tiers": testing.check_registration,
    "kernel_parameters_name_instance_or_task_attributes": testing.check_kernel_parameters,
    "prompt_is_ascii_and_ends_with_the_answer_instruction": testing.check_prompt,
    "difficulty_knob_spans_zero_to_one": testing.check_difficulty_knob,
    "bad_config_gets_an_error_naming_the_field": testing.check_bad_config,
    "verify_rejects_garbage_without_raising": testing.check_garbage,
}
"""What every task meets, each claim checked by its function of :mod:`npgym.testing`."""

TIER_CLAIMS = {
    "check_env_passes": testing.check_env_passes,
    "same_seed_same_instance_and_prompt": testing.check_determinism,
    "json_round_trip_is_lossless_and_canonical": testing.check_json_round_trip,
    "env_reset_matches_generate": testing.check_env_reset_matches_generate,
    "verifier_agrees_with_python_twin": testing.check_verifier_twin,
    "fused_kernel_scores_like_the_parser": testing.check_fused_kernel,
    "declared_capabilities_work": testing.check_capabilities,
}
"""What every task meets on every tier, each claim checked by its function of
:mod:`npgym.testing`."""


@pytest.mark.parametrize("task_name", TASK_NAMES)
@pytest.mark.parametrize("claim", TASK_CLAIMS)
def test_every_task_meets_the_contract(claim: str, task_name: str) -> None:
    TASK_CLAIMS[claim](npgym.get_task(task_name))


@pytest.mark.parametrize(("task_name", "tier"), CASES)
@pytest.mark.parametrize("claim", TIER_CLAIMS)
def test_every_tier_meets_the_contract(claim: str, task_name: str, tier: str) -> None:
    TIER_CLAIMS[claim](npgym.get_task(task_name), tier)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_generation_matches_golden_file(task_name: str, tier: str) -> None:
    testing.check_golden(npgym.get_task(task_name), tier, golden.path(task_name, tier))


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_golden_file_header_hashes_its_own_content(task_name: str, tier: str) -> None:
    text = golden.path(task_name, tier).read_text()
    assert text.splitlines()[1].split()[:2] == ["#", "sha256"]
    assert text.splitlines()[1].split()[2] == testing.golden_digest(text)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_reference_is_accepted_and_scores_two(task_name: str, tier: str) -> None:
    testing.check_reference(npgym.get_task(task_name), tier, golden.SEEDS[0])


values = st.recursive(
    st.integers(-(10**20), 10**20) | st.sampled_from(["Impossible", "x", "None"]),
    lambda children: st.lists(children, max_size=12),
    max_leaves=60,
)
noise = st.text(max_size=40)


def _text_strategy() -> st.SearchStrategy[str]:
    structured = st.builds(
        lambda before, value, after, marker: before + marker + _render_loose(value) + after,
        noise,
        values,
        noise,
        st.sampled_from(["Answer: ", "**Answer:** ", "answer:", "\\boxed{", "Answer: ```json\n"]),
    )
    return st.text(max_size=300) | structured


def _render_loose(value: object) -> str:
    try:
        return render_value(value)
    except TypeError:
        return str(value)


@pytest.mark.parametrize("task_name", TASK_NAMES)
@given(data=st.data())
def test_score_never_raises_and_rewards_are_consistent(task_name: str, data: st.DataObject) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(data.draw(st.integers(0, 3)), tier="easy")
    reference = task.reference(instance, exact=False)
    completion = data.draw(_text_strategy())
    score = task.score(instance, completion, reference)
    if not score.format_ok:
        assert score.reward == testing.FORMAT_FAILURE and not score.feasible
    elif not score.feasible:
        assert score.reward == testing.INFEASIBLE and score.reason
    else:
        assert 1.0 <= score.reward <= 2.0
        assert math.isclose(score.reward, 1.0 + score.optimality)
        assert task.verify(instance, task.parse(completion)).objective == score.objective


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_baseline_agents_give_answers_in_the_task_shape(task_name: str) -> None:
    testing.check_baselines(npgym.get_task(task_name))
