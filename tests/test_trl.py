"""TRL integration: reward functions, datasets, the repair environment, and GRPOTrainer running
for real on CPU with a tiny randomly initialised Qwen2 and a tokenizer trained here."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

import npgym
from npgym.integrations.trl import (
    ENVIRONMENT_INSTRUCTION,
    NPGymEnvironment,
    completion_text,
    feasibility_reward,
    format_reward,
    make_dataset,
    make_iterable_dataset,
    npgym_reward,
    optimality_reward,
)
from npgym.multiturn import RepairConfig
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
        parts = [
            part(prompts=[None] * 3, completions=completions, **columns)
            for part in (format_reward, feasibility_reward, optimality_reward)
        ]
        assert [sum(values) for values in zip(*parts, strict=True)] == rewards
    assert logged == {
        "npgym/feasible_rate": pytest.approx(1 / 3),
        "npgym/format_rate": pytest.approx(2 / 3),
        "npgym/mean_ratio": pytest.approx(1 / 3),
    }
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

torch = pytest.importorskip("torch", reason="the GRPO test needs torch (CPU build)")
trl = pytest.importorskip("trl", reason="the GRPO test needs: pip install 'npgym[trl]'")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

TOOL_CALL = (
    '<tool_call>\n{"name": "submit_solution", "arguments": {"answer": "[0, 1]"}}\n</tool_call>'
)


def _tokenizer(texts: list[str]):
    """The test tokenizer with TRL's Qwen2.5 chat template, which supports tool calls."""
    from trl.chat_template_utils import qwen2_5_chat_template

    return tiny_tokenizer(texts, qwen2_5_chat_template)


def _model(tokenizer):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return Qwen2ForCausalLM(config)


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


def test_grpo_trainer_trains_with_npgym_rewards(dataset, tmp_path: Path) -> None:
    tokenizer = _tokenizer([row["prompt"][0]["content"] for row in dataset])
    seen: list = []

    def recorded(prompts: list, completions: list, **columns: list) -> list[float]:
        seen.extend(zip(completions, columns["instance"], strict=True))
        return npgym_reward(prompts, completions, **columns)

    recorded.__name__ = "npgym_reward"
    trainer = trl.GRPOTrainer(
        model=_model(tokenizer),
        reward_funcs=[recorded, format_reward, feasibility_reward, optimality_reward],
        args=_config(tmp_path),
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    assert len(seen) == 2 * 4  # two steps of four completions, the trainer's own
    logs = [entry for entry in trainer.state.log_history if "rewards/npgym_reward/mean" in entry]
    assert len(logs) == 2
    expected = [
        npgym_reward([None], [completion], task=[task_of(instance)], instance=[instance])[0]
        for completion, instance in seen
    ]
    mean_logged = sum(entry["rewards/npgym_reward/mean"] for entry in logs) / 2
    assert mean_logged == pytest.approx(sum(expected) / len(expected))
    for entry in logs:
        parts = sum(
            entry[f"rewards/{p}_reward/mean"] for p in ("format", "feasibility", "optimality")
        )
        assert parts == pytest.approx(entry["rewards/npgym_reward/mean"])
        assert {"npgym/feasible_rate", "npgym/format_rate", "npgym/mean_ratio"} <= entry.keys()


def task_of(instance_json: str) -> str:
    return json.loads(instance_json)["task"]


def test_grpo_trainer_runs_the_repair_environment(tmp_path: Path) -> None:
    """A tiny model taught one tool call on these prompts drives the full tool loop: reset with
    the row, submit_solution feedback, and the environment's reward logged by the trainer."""
    data = make_dataset(["SubsetSum"], n=2, mix={"easy": 1}, environment=True)
    assert data[0]["prompt"][0]["content"] == ENVIRONMENT_INSTRUCTION
    tokenizer = _tokenizer([row["instance"] for row in data] + [TOOL_CALL] * 20)
    model = _model(tokenizer)
    probe = NPGymEnvironment()
    sequences = []
    for row in data:
        message = row["prompt"][-1]
        prompt = [{**message, "content": message["content"] + probe.reset(**row)}]
        text = tokenizer.apply_chat_template(
            prompt, tools=[probe.submit_solution], add_generation_prompt=True, tokenize=False
        )
        prefix = tokenizer(text, add_special_tokens=False)["input_ids"]
        target = tokenizer(TOOL_CALL + "<|im_end|>", add_special_tokens=False)["input_ids"]
        sequences.append((prefix, target))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(80):
        for prefix, target in sequences:
            ids = torch.tensor([prefix + target])
            labels = ids.clone()
            labels[0, : len(prefix)] = -100
            loss = model(input_ids=ids, labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    trainer = trl.GRPOTrainer(
        model=model,
        args=_config(
            tmp_path, max_completion_length=48, max_steps=1, temperature=0.3, learning_rate=1e-5
        ),
        train_dataset=data,
        processing_class=tokenizer,
        environment_factory=functools.partial(
            NPGymEnvironment, repair=RepairConfig(max_attempts=2)
        ),
    )
    trainer.train()
    entry = next(e for e in trainer.state.log_history if "rewards/NPGymEnvironment/mean" in e)
    assert entry["tools/call_frequency"] > 0
    # "[0, 1]" is a well-formed but infeasible subset: each episode's reward is -0.5 (it would
    # be -2.5 had the tool not been called).
    assert entry["rewards/NPGymEnvironment/mean"] == pytest.approx(-0.5)
