"""TRL integration: reward functions, datasets, the repair environment, and GRPOTrainer running
for real on CPU with a tiny randomly initialised Qwen2 and a tokenizer trained here."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

import npgym
from npgym.integrations.smoke import tiny_model, warm_started, warm_up
from npgym.integrations.trl import (
    ENVIRONMENT_INSTRUCTION,
    NPGymEnvironment,
    completion_text,
    feasibility_reward,
    format_reward,
    make_dataset,
    make_iterable_dataset,
    make_reward,
    npgym_reward,
    optimality_reward,
    reward_parts,
)
from npgym.multiturn import RepairConfig
from tests.extras import need
from tests.tiny import tiny_tokenizer

pytest.importorskip("datasets", reason="the TRL integration needs: pip install 'npgym[trl]'")

TASK = npgym.get_task("SubsetSum")


@pytest.fixture(scope="module")
def dataset():
    return make_dataset(["SubsetSum", "TSP"], n=3, mix={"easy": 2, "medium": 1})


def _columns(dataset, rows: list[int]) -> dict:
    return {key: [dataset[i][key] for i in rows] for key in ("task", "instance", "reference")}


def _optimal(row: dict) -> str:
    solution = json.loads(row["reference"])["solution"]
    return "Let me think.\n" + npgym.get_task(row["task"]).format_answer(solution)


def test_dataset_columns_mix_and_reproducibility(dataset) -> None:
    assert len(dataset) == 6
    assert set(dataset.column_names) >= {"prompt", "task", "instance", "reference", "id"}
    assert [row["tier"] for row in dataset] == ["easy", "easy", "medium"] * 2
    first = dataset[0]
    task, instance = npgym.get_task(first["task"]), None
    instance = task.from_json(first["instance"])
    assert first["prompt"] == [{"role": "user", "content": task.prompt(instance)}]
    again = make_dataset(["SubsetSum", "TSP"], n=3, mix={"easy": 2, "medium": 1})
    assert again["instance"] == dataset["instance"]


def test_plain_text_rows_for_base_models() -> None:
    rows = make_dataset(["SubsetSum"], n=2, mix={"easy": 1}, chat=False)
    for row in rows:
        instance = TASK.from_json(row["instance"])
        assert row["prompt"] == TASK.prompt(instance)  # text, no chat messages
    with pytest.raises(ValueError, match="chat=False"):
        make_dataset(["SubsetSum"], n=1, mix={"easy": 1}, environment=True, chat=False)


def test_reward_functions_score_plain_and_conversational_completions(dataset) -> None:
    rows = [0, 1, 3]
    columns = _columns(dataset, rows)
    plain = [_optimal(dataset[0]), "no answer", "Answer: [0, 0]"]
    chat = [[{"role": "assistant", "content": text}] for text in plain]
    logged: dict[str, float] = {}
    for completions in (plain, chat):
        rewards = npgym_reward(
            prompts=[None] * 3,
            completions=completions,
            log_metric=logged.__setitem__,
            **columns,
        )
        assert rewards == [2.0, -2.5, -0.5]
        for part in (format_reward, feasibility_reward, optimality_reward):
            values = part(
                prompts=[None] * 3,
                completions=completions,
                log_metric=logged.__setitem__,
                **columns,
            )
            assert values == [None] * 3  # TRL leaves None out of the total: no double counting
    parts = ("format_reward", "feasibility_reward", "optimality_reward")
    assert sum(logged[f"npgym/{part}"] for part in parts) == pytest.approx(sum(rewards) / 3)
    assert logged == {
        "npgym/feasible_rate": pytest.approx(1 / 3),
        "npgym/format_rate": pytest.approx(2 / 3),
        "npgym/mean_ratio": pytest.approx(1 / 3),
        "npgym/format_reward": pytest.approx(1 / 3),
        "npgym/feasibility_reward": pytest.approx(-1.0),
        "npgym/optimality_reward": pytest.approx(1 / 3),
        "npgym/baseline_rate": 0.0,
    }
    strict = make_reward("strict")(prompts=[None] * 3, completions=plain, **columns)
    assert strict == [2.0, pytest.approx(-2.5), -0.5]
    with pytest.raises(ValueError, match="'np-engine', 'strict'"):
        make_reward("paper")
    with pytest.raises(ValueError, match="valid presets"):
        reward_parts("paper")
    assert completion_text([{"content": "a"}, {"content": None}]) == "a\n"


def test_curriculum_ramps_difficulty_and_stream_is_endless() -> None:
    ramp = make_dataset(["SubsetSum"], n=4, curriculum=(0.1, 0.9), reference="heuristic")
    difficulties = [json.loads(row["instance"])["difficulty"] for row in ramp]
    assert difficulties == sorted(difficulties) and difficulties[0] == 0.1
    stream = make_iterable_dataset(["SubsetSum", "TSP"], reference="none")
    rows = list(stream.take(5))
    assert [row["task"] for row in rows] == ["SubsetSum", "TSP", "SubsetSum", "TSP", "SubsetSum"]
    assert len({row["instance"] for row in rows}) == 5


def test_environment_tool_feedback_and_reward(dataset) -> None:
    row = dataset[0]
    env = NPGymEnvironment(repair=RepairConfig(max_attempts=2))
    text = env.reset(**row)
    assert TASK.prompt(TASK.from_json(row["instance"])) in text
    assert "submit_solution" in text
    assert env.get_reward() == -2.5
    assert env.submit_solution("[0, 0]").startswith("Infeasible: index 0 used twice")
    solution = json.loads(row["reference"])["solution"]
    assert "optimal" in env.submit_solution(str(solution))
    assert env.get_reward() == 2.0
    assert env.submit_solution("[1]") == "No attempts left."
    fresh = NPGymEnvironment(tasks=["SubsetSum"], tier="easy")
    assert "Answer:" in fresh.reset()


# --- GRPOTrainer, for real ---------------------------------------------------------------------

torch = need("torch")
trl = need("trl")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

TOOL_CALL = (
    '<tool_call>\n{"name": "submit_solution", "arguments": {"answer": "[0, 1]"}}\n</tool_call>'
)


def _tokenizer(texts: list[str]):
    """The test tokenizer with TRL's Qwen2.5 chat template, which supports tool calls."""
    from trl.chat_template_utils import qwen2_5_chat_template

    return tiny_tokenizer(texts, qwen2_5_chat_template)


def _config(tmp_path: Path, **overrides: object):
    options = {
        "output_dir": str(tmp_path),
        "per_device_train_batch_size": 4,
        "num_generations": 2,
        "max_completion_length": 16,
        "max_steps": 2,
        "logging_steps": 1,
        "learning_rate": 1e-4,
        "report_to": "none",
        "use_cpu": True,
        "save_strategy": "no",
        "seed": 0,
    } | overrides
    return trl.GRPOConfig(**options)


GROUPS_OF_FOUR = {
    "per_device_train_batch_size": 8,
    "num_generations": 4,
    "temperature": 1.0,
    "beta": 0.0,
}
"""The learning tests' sampling: two prompts of four completions a step, at temperature 1 (so a
group's completions differ), no KL term."""


def test_grpo_learns_from_the_strict_reward(tmp_path: Path) -> None:
    """A tiny model warmed up on reference answers, then GRPO on MaxClique with "strict": the
    rewards differ within a group, so the loss has a gradient and the weights move; the logged
    reward is the combined reward alone (the parts only log), and its parts sum to it."""
    data = make_dataset(["MaxClique"], n=4, mix={"easy": 1})
    task = npgym.get_task("MaxClique")
    answers = [task.format_answer(json.loads(row["reference"])["solution"]) for row in data]
    tokenizer, model = warm_started(data["prompt"], answers, steps=40, hidden_size=64)
    before = {name: value.detach().clone() for name, value in model.named_parameters()}
    strict = make_reward("strict")
    seen: list = []

    def recorded(prompts: list, completions: list, **columns: list) -> list[float]:
        seen.extend(zip(completions, columns["instance"], strict=True))
        return strict(prompts, completions, **columns)

    recorded.__name__ = "npgym_reward"
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[recorded, *reward_parts("strict")],
        args=_config(tmp_path, **GROUPS_OF_FOUR, max_completion_length=20, learning_rate=1e-3),
        train_dataset=data,
        processing_class=tokenizer,
    )
    trainer.train()
    assert len(seen) == 2 * 8  # two steps of eight completions, the trainer's own
    logs = [entry for entry in trainer.state.log_history if "rewards/npgym_reward/mean" in entry]
    assert len(logs) == 2
    expected = [
        strict([None], [completion], task=[task_of(instance)], instance=[instance])[0]
        for completion, instance in seen
    ]
    assert sum(entry["reward"] for entry in logs) / 2 == pytest.approx(sum(expected) / 16)
    for entry in logs:
        assert entry["reward"] == pytest.approx(entry["rewards/npgym_reward/mean"])
        parts = sum(entry[f"npgym/{p}_reward"] for p in ("format", "feasibility", "optimality"))
        assert parts == pytest.approx(entry["reward"])
        assert {"npgym/feasible_rate", "npgym/format_rate", "npgym/mean_ratio"} <= entry.keys()
    assert max(entry["reward_std"] for entry in logs) > 0
    assert max(entry["grad_norm"] for entry in logs) > 0
    moved = max(
        (value - before[name]).abs().max().item() for name, value in model.named_parameters()
    )
    assert moved > 0


def task_of(instance_json: str) -> str:
    return json.loads(instance_json)["task"]


def _tool_call(answer: object) -> str:
    call = {"name": "submit_solution", "arguments": {"answer": str(answer)}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"


def test_grpo_trainer_runs_the_repair_environment(tmp_path: Path) -> None:
    """A tiny model taught two tool calls per prompt (the optimal answer and an infeasible one)
    drives the full tool loop: reset with the row, submit_solution feedback, the environment's
    "strict" reward logged by the trainer. Sampling mixes the calls, so rewards differ within a
    group and the update has a gradient that moves the weights."""
    data = make_dataset(["SubsetSum"], n=2, mix={"easy": 1}, environment=True)
    assert data[0]["prompt"][0]["content"] == ENVIRONMENT_INSTRUCTION
    good = [_tool_call(json.loads(row["reference"])["solution"]) for row in data]
    tokenizer = _tokenizer([row["instance"] for row in data] + [TOOL_CALL, *good] * 10)
    model = tiny_model(tokenizer)
    probe = NPGymEnvironment()
    pairs = []  # (the prompt as text with the tool's schema, a tool call to learn)
    for row, call in zip(data, good, strict=True):
        message = row["prompt"][-1]
        prompt = [{**message, "content": message["content"] + probe.reset(**row)}]
        text = tokenizer.apply_chat_template(
            prompt, tools=[probe.submit_solution], add_generation_prompt=True, tokenize=False
        )
        pairs.extend((text, answer) for answer in (TOOL_CALL, call))
    assert tokenizer.eos_token == "<|im_end|>"  # warm_up ends each answer with it
    warm_up(model, tokenizer, pairs, steps=40 * len(pairs), learning_rate=3e-3)
    before = {name: value.detach().clone() for name, value in model.named_parameters()}
    trainer = trl.GRPOTrainer(
        model=model,
        args=_config(tmp_path, **GROUPS_OF_FOUR, max_completion_length=64, max_steps=1),
        train_dataset=data,
        processing_class=tokenizer,
        environment_factory=functools.partial(
            NPGymEnvironment, repair=RepairConfig(max_attempts=2), reward="strict"
        ),
    )
    trainer.train()
    entry = next(e for e in trainer.state.log_history if "rewards/NPGymEnvironment/mean" in e)
    assert entry["tools/call_frequency"] > 0
    assert entry["frac_reward_zero_std"] < 1  # some group's episodes earned different rewards
    assert entry["grad_norm"] > 0
    moved = max((v - before[name]).abs().max().item() for name, v in model.named_parameters())
    assert moved > 0
