"""verl integration, through verl's own code on CPU: its dataset class reads our parquet, its
custom-reward loader loads our reward file, its naive reward manager scores a batch, and its
tool registry loads our repair tool from the example config."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

import npgym
from npgym.integrations import verl as npgym_verl
from npgym.npbench.build import BuildSpec, build, read_dataset
from npgym.npbench.export import export_rows
from tests.extras import need
from tests.tiny import tiny_tokenizer

verl = need("verl")
torch = need("torch")

from omegaconf import OmegaConf  # noqa: E402  (after the skip)
from tensordict import TensorDict  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn, load_reward_manager  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REWARD_CONFIG = {
    "reward": {
        "custom_reward_function": {
            "path": npgym_verl.__file__,
            "name": "compute_score",
            "reward_kwargs": {},
        },
        "reward_manager": {"source": "register", "name": "naive"},
    }
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("verl")
    spec = BuildSpec(tasks=("SubsetSum", "TSP"), n=2, mix={"easy": 1})
    build(spec, folder / "bench", workers=1, progress=False)
    rows = list(read_dataset(folder / "bench"))
    paths = {"single": folder / "single.parquet", "multi": folder / "multi.parquet"}
    export_rows(rows, "verl", paths["single"])
    export_rows(rows, "verl", paths["multi"], multi_turn=True)
    return paths


@pytest.fixture(scope="module")
def tokenizer(exported: dict[str, Path]):
    rows = list(read_dataset(exported["single"].parent / "bench"))
    return tiny_tokenizer([row["prompt"] for row in rows], vocab_size=500)


def _dataset(path: Path, tokenizer, cache: Path) -> RLHFDataset:
    config = OmegaConf.create(
        {"max_prompt_length": 100_000, "filter_overlong_prompts": False, "cache_dir": str(cache)}
    )
    return RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config)


def _answers(item: dict) -> dict[str, str]:
    task = npgym.get_task(item["extra_info"]["task"])
    solution = json.loads(item["extra_info"]["reference"])["solution"]
    return {
        "optimal": "Let me think.\n" + task.format_answer(solution),
        "infeasible": "Answer: [0, 0]",
        "garbage": "I do not know.",
    }


EXPECTED = {"optimal": 2.0, "infeasible": -0.5, "garbage": -2.5}


def test_custom_reward_loader_scores_rows_from_verls_dataset(exported, tokenizer, tmp_path) -> None:
    dataset = _dataset(exported["single"], tokenizer, tmp_path)
    assert len(dataset) == 4
    compute_score = get_custom_reward_fn(OmegaConf.create(REWARD_CONFIG))
    keys = None
    for index in range(len(dataset)):
        item = dataset[index]
        assert item["data_source"] == f"npgym/{item['extra_info']['task']}-easy"
        assert item["raw_prompt"][0]["role"] == "user"
        for kind, text in _answers(item).items():
            result = compute_score(
                data_source=item["data_source"],
                solution_str=text,
                ground_truth=item["reward_model"]["ground_truth"],
                extra_info=item["extra_info"],
            )
            assert result["score"] == EXPECTED[kind]
            keys = keys or set(result)
            assert set(result) == keys  # the same keys for every sample


def test_naive_reward_manager_scores_a_batch(exported, tokenizer, tmp_path) -> None:
    dataset = _dataset(exported["single"], tokenizer, tmp_path)
    manager = load_reward_manager(OmegaConf.create(REWARD_CONFIG), tokenizer)
    for index in range(len(dataset)):
        item = dataset[index]
        for kind, text in _answers(item).items():
            prompt = tokenizer.apply_chat_template(
                item["raw_prompt"], add_generation_prompt=True, tokenize=True, return_dict=False
            )
            response = tokenizer(text, add_special_tokens=False)["input_ids"]
            batch = TensorDict(
                {
                    "prompts": torch.tensor([prompt]),
                    "responses": torch.tensor([response]),
                    "attention_mask": torch.ones(1, len(prompt) + len(response), dtype=torch.long),
                },
                batch_size=1,
            )
            non_tensor = {
                key: np.array([item[key]], dtype=object)
                for key in ("data_source", "reward_model", "extra_info")
            }
            data = DataProto(batch=batch, non_tensor_batch=non_tensor)
            result = manager.loop.run_until_complete(manager.run_single(data))
            assert result["reward_score"] == EXPECTED[kind]
            assert result["reward_extra_info"]["feasible"] == float(kind == "optimal")


def test_repair_tool_through_verls_registry(exported, tokenizer, tmp_path) -> None:
    from verl.experimental.agent_loop.tool_agent_loop import AgentData
    from verl.tools.tool_registry import initialize_tools_from_config

    dataset = _dataset(exported["multi"], tokenizer, tmp_path)
    item = dataset[0]
    assert item["agent_name"] == "tool_agent"
    [tool] = initialize_tools_from_config(str(ROOT / "examples" / "verl" / "tool_config.yaml"))
    assert tool.name == "submit_solution"
    agent = AgentData(
        messages=[],
        image_data=None,
        video_data=None,
        audio_data=None,
        mm_processor_kwargs=None,
        metrics={},
        request_id="test",
        tools_kwargs=item["tools_kwargs"],
    )
    create = item["tools_kwargs"]["submit_solution"]["create_kwargs"]
    solution = json.loads(item["extra_info"]["reference"])["solution"]

    async def submit(answer: str) -> str:
        instance_id, _ = await tool.create(create_kwargs=create)
        response, reward, _ = await tool.execute(instance_id, {"answer": answer}, agent_data=agent)
        await tool.release(instance_id)
        assert reward == 0.0
        return response.text

    first = asyncio.run(submit("[0, 0]"))
    assert first.startswith("Infeasible") and "2 more attempts" in first
    assert asyncio.run(submit(json.dumps(solution))).startswith("Feasible and optimal")
    assert asyncio.run(submit("[1]")) == "No attempts left."
    compute_score = get_custom_reward_fn(OmegaConf.create(REWARD_CONFIG))
    extra = {**item["extra_info"], **agent.extra_fields}
    # The best attempt counts (policy "best"), even if the final text gives no answer.
    assert compute_score(item["data_source"], "Done.", None, extra)["score"] == 2.0
    worse = {**extra, "npgym_attempts": extra["npgym_attempts"][:1]}
    assert compute_score(item["data_source"], "Done.", None, worse)["score"] == -0.5
    assert (
        compute_score(item["data_source"], _answers(item)["optimal"], None, worse)["score"] == 2.0
    )


def test_compute_score_without_verl_needs_the_instance() -> None:
    with pytest.raises(ValueError, match="extra_info"):
        npgym_verl.compute_score("npgym/TSP-easy", "Answer: [0]", 10, {})


def _launch_overrides() -> list[str]:
    """The hydra overrides of examples/verl/run_grpo.sh, multi-turn ones included, with the
    shell variables filled in."""
    script = (ROOT / "examples" / "verl" / "run_grpo.sh").read_text()
    values = {
        '"$data/train.parquet"': "/data/train.parquet",
        '"$data/test.parquet"': "/data/test.parquet",
        '"$model"': "Qwen/Qwen2.5-3B-Instruct",
        '"$reward_file"': npgym_verl.__file__,
        '"$gpus"': "1",
        '"$here/tool_config.yaml"': str(ROOT / "examples" / "verl" / "tool_config.yaml"),
        '"grpo-$(basename "$model")"': "grpo-test",
    }
    overrides = []
    for line in script.splitlines():
        item = line.strip().removesuffix("\\").strip()
        if "=" not in item or item.startswith(("#", "multi_turn=", "python3", '"$')) or " " in item:
            continue
        if item.split("=")[0].isidentifier() and "." not in item.split("=")[0]:
            continue  # a shell variable, not an override
        key, value = item.split("=", 1)
        overrides.append(f"{key}={values.get(value, value)}")
    return overrides


def test_launch_script_overrides_match_verls_config() -> None:
    from hydra import compose, initialize_config_dir

    overrides = _launch_overrides()
    assert "reward.custom_reward_function.name=compute_score" in overrides
    assert any(
        o.startswith("actor_rollout_ref.rollout.multi_turn.tool_config_path") for o in overrides
    )
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        config = compose(config_name="ppo_trainer", overrides=overrides)
    assert config.algorithm.adv_estimator == "grpo"
    assert config.reward.custom_reward_function.path == npgym_verl.__file__
    assert config.actor_rollout_ref.rollout.multi_turn.enable is True
