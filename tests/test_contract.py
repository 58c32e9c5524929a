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


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_task_is_registered_with_its_tiers(task_name: str) -> None:
    testing.check_registration(npgym.get_task(task_name))


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_check_env_passes(task_name: str, tier: str) -> None:
    testing.check_env_passes(npgym.get_task(task_name), tier)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_generation_matches_golden_file(task_name: str, tier: str) -> None:
    testing.check_golden(npgym.get_task(task_name), tier, golden.path(task_name, tier))


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_golden_file_header_hashes_its_own_content(task_name: str, tier: str) -> None:
    text = golden.path(task_name, tier).read_text()
    assert text.splitlines()[1].split()[:2] == ["#", "sha256"]
    assert text.splitlines()[1].split()[2] == testing.golden_digest(text)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_same_seed_same_instance_and_prompt(task_name: str, tier: str) -> None:
    testing.check_determinism(npgym.get_task(task_name), tier)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_json_round_trip_is_lossless_and_canonical(task_name: str, tier: str) -> None:
    testing.check_json_round_trip(npgym.get_task(task_name), tier)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_reference_is_accepted_and_scores_two(task_name: str, tier: str) -> None:
    testing.check_reference(npgym.get_task(task_name), tier, golden.SEEDS[0])


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_env_reset_matches_generate(task_name: str, tier: str) -> None:
    testing.check_env_reset_matches_generate(npgym.get_task(task_name), tier)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_verifier_agrees_with_python_twin(task_name: str, tier: str) -> None:
    testing.check_verifier_twin(npgym.get_task(task_name), tier)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_fused_kernel_scores_like_the_parser(task_name: str, tier: str) -> None:
    testing.check_fused_kernel(npgym.get_task(task_name), tier)


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_declared_capabilities_work(task_name: str, tier: str) -> None:
    testing.check_capabilities(npgym.get_task(task_name), tier)


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_prompt_is_ascii_and_ends_with_the_answer_instruction(task_name: str) -> None:
    testing.check_prompt(npgym.get_task(task_name))


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_difficulty_knob_spans_zero_to_one(task_name: str) -> None:
    testing.check_difficulty_knob(npgym.get_task(task_name))


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_bad_config_gets_an_error_naming_the_field(task_name: str) -> None:
    testing.check_bad_config(npgym.get_task(task_name))


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_verify_rejects_garbage_without_raising(task_name: str) -> None:
    testing.check_garbage(npgym.get_task(task_name))


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
