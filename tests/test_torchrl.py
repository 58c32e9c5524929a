"""TorchRL: the batched structured env as an ``EnvBase`` (npgym.integrations.torchrl), checked by
TorchRL's own ``check_env_specs`` and driven by ``rollout``; partial resets, seeding against
npgym's vector env, the curriculum through a scripted learner, GymWrapper on the single env."""

from __future__ import annotations

import importlib.util
import io
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from npgym.curriculum import AdaptiveCurriculum
from npgym.registry import list_tasks
from npgym.structured import InvalidActionError
from npgym.vector import MAX_NUM_ENVS
from tests.extras import need

torch = need("torch")
need("tensordict")
need("torchrl")

from torchrl.envs.utils import check_env_specs  # noqa: E402

from npgym.integrations.torchrl import MAX_SEED, NPGymTorchRLEnv, wrap_single  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _first_legal(tensordict: Any) -> Any:
    """A deterministic policy: the lowest legal action of each env."""
    tensordict["action"] = tensordict["action_mask"].int().argmax(-1)
    return tensordict


@pytest.mark.parametrize("task", list_tasks())
def test_check_env_specs_on_every_task(task: str) -> None:
    env = NPGymTorchRLEnv(task, "easy", num_envs=3, reward_mode="objective")
    check_env_specs(env, seed=0, break_when_any_done="both")
    assert env.observation_spec["action_mask"].dtype == torch.bool
    assert env.action_spec.mask is not None  # updated at every step


@pytest.mark.parametrize("env_id", ["npgym/TSP-easy", "npgym/GraphColoring-easy"])
def test_check_env_specs_with_the_task_reward(env_id: str) -> None:
    env = NPGymTorchRLEnv(env_id, num_envs=2)
    check_env_specs(env, seed=1, break_when_any_done="both")
    rollout = env.rollout(env.limits["n"] + 2, break_when_all_done=True)
    finished = rollout["next", "done"].squeeze(-1)
    first = finished & (finished.long().cumsum(-1) == 1)
    rewards = rollout["next", "reward"].squeeze(-1)[first]
    assert rewards.shape == (2,) and bool(((rewards >= -0.5) & (rewards <= 2.0)).all())


def _episode_starts_of_the_adapter(seed: int, steps: int) -> tuple[list, list]:
    env = NPGymTorchRLEnv("TSP", "easy", num_envs=3, reward_mode="objective")
    env.set_seed(seed)
    rollout = env.rollout(steps, _first_legal, break_when_any_done=False)
    starts: list[list[np.ndarray]] = [[] for _ in range(3)]
    returns: list[list[float]] = [[] for _ in range(3)]
    for slot in range(3):
        for step in range(steps):
            if step == 0 or bool(rollout["next", "done"][slot, step - 1]):
                starts[slot].append(rollout["distances"][slot, step].numpy())
            if bool(rollout["next", "done"][slot, step]):
                returns[slot].append(float(rollout["next", "reward"][slot, step]))
    return starts, returns


def _episode_starts_of_the_vector_env(seed: int, steps: int) -> tuple[list, list]:
    envs = gym.make_vec(
        "npgym/TSP-easy",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        mode="structured",
        reward_mode="objective",
    )
    observation, _ = envs.reset(seed=seed)
    starts: list[list[np.ndarray]] = [[observation["distances"][slot]] for slot in range(3)]
    returns: list[list[float]] = [[] for _ in range(3)]
    restarting = np.zeros(3, np.bool_)
    for _ in range(2 * steps):
        observation, reward, terminated, _, _ = envs.step(observation["action_mask"].argmax(-1))
        for slot in range(3):
            if restarting[slot]:
                starts[slot].append(observation["distances"][slot])
            if terminated[slot]:
                returns[slot].append(float(reward[slot]))
        restarting = terminated
    return starts, returns


def test_partial_resets_replay_the_vector_envs_instances_and_returns() -> None:
    """Each env of the adapter plays, episode after episode, the instances and returns of the
    same env of ``gym.make_vec`` (whose finished envs restart by themselves): the ``"_reset"``
    masks restart only the finished episodes, from each env's own seeded stream."""
    ours, our_returns = _episode_starts_of_the_adapter(seed=5, steps=60)
    theirs, their_returns = _episode_starts_of_the_vector_env(seed=5, steps=60)
    for slot in range(3):
        assert len(ours[slot]) >= 3  # a few episodes of different lengths
        for mine, vector in zip(ours[slot], theirs[slot], strict=False):
            np.testing.assert_array_equal(mine, vector)
        count = len(our_returns[slot])
        assert our_returns[slot] == their_returns[slot][:count]


def test_a_partial_reset_leaves_the_other_episodes_alone() -> None:
    env = NPGymTorchRLEnv("TSP", "easy", num_envs=2, reward_mode="objective")
    env.set_seed(0)
    tensordict = env.reset()
    for _ in range(3):
        tensordict = env.step(_first_legal(tensordict))["next"]
    before = tensordict.clone()
    mask = torch.tensor([[True], [False]])
    after = env.reset(tensordict.set("_reset", mask))  # TorchRL's partial reset
    assert int(after["visited"][0].sum()) == 1 and int(before["visited"][0].sum()) == 4
    assert not torch.equal(after["distances"][0], before["distances"][0])
    for key in ("distances", "visited", "tour", "current", "action_mask"):
        assert torch.equal(after[key][1], before[key][1]), key
    moved = env.step(_first_legal(after))["next"]  # episode 1 goes on where it was
    assert int(moved["visited"][1].sum()) == 5 and int(moved["visited"][0].sum()) == 2
    assert torch.equal(moved["distances"][1], before["distances"][1])


def test_a_finished_episode_stays_done_until_reset() -> None:
    env = NPGymTorchRLEnv("Knapsack", "easy", num_envs=2, reward_mode="objective")
    env.set_seed(2)
    rollout = env.rollout(100, _first_legal, break_when_all_done=True)
    last = rollout[:, -1]["next"].clone()
    assert bool(last["done"].all())
    assert last["action_mask"].tolist() == [[True, False], [True, False]]  # action 0 only
    stepped = env.step(last.set("action", torch.tensor([1, 0])))["next"]
    assert stepped["reward"].tolist() == [[0.0], [0.0]]
    assert bool(stepped["done"].all())
    assert torch.equal(stepped["taken"], last["taken"])


def test_illegal_actions_penalise_or_raise() -> None:
    env = NPGymTorchRLEnv("TSP", "easy", num_envs=2)
    tensordict = env.reset()
    tensordict["action"] = torch.tensor([0, 1])  # city 0 is the start: masked
    out = env.step(tensordict)["next"]
    assert out["reward"][0].item() == pytest.approx(-2.5)  # format_fail + infeasible
    assert out["done"].squeeze(-1).tolist() == [True, False]
    strict = NPGymTorchRLEnv("TSP", "easy", num_envs=2, reward_mode="objective")
    tensordict = strict.reset()
    with pytest.raises(InvalidActionError, match="env 0: action 0"):
        strict.step(tensordict.set("action", torch.tensor([0, 1])))
    with pytest.raises(RuntimeError, match="reset"):
        strict.step(tensordict.set("action", torch.tensor([1, 1])))
    strict.reset()


def test_seeds_replay_and_bad_options_fail_in_one_line() -> None:
    env = NPGymTorchRLEnv("npgym/SubsetSum-easy", num_envs=2, reward_mode="objective")
    runs = []
    for _ in range(2):
        env.set_seed(7)
        runs.append(env.rollout(30, break_when_any_done=False)["numbers"])
    assert torch.equal(runs[0], runs[1])
    assert env.tier == "easy"
    env.set_seed(MAX_SEED)
    env.reset()
    with pytest.raises(ValueError, match="seed must be"):
        env.set_seed(MAX_SEED + 1)
    with pytest.raises(ValueError, match="seed must be"):
        env.set_seed(-1)
    for bad in (0, MAX_NUM_ENVS + 1, True, 2.0):
        with pytest.raises(ValueError, match="num_envs"):
            NPGymTorchRLEnv("SubsetSum", "easy", num_envs=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="npgym id"):
        NPGymTorchRLEnv("npgym/SubsetSum-huge")
    curriculum = AdaptiveCurriculum(["Knapsack"])
    with pytest.raises(ValueError, match="not this env's task"):
        NPGymTorchRLEnv("SubsetSum", curriculum=curriculum)
    with pytest.raises(ValueError, match="reward_mode='task'"):
        NPGymTorchRLEnv("Knapsack", curriculum=curriculum, reward_mode="objective")
    with pytest.raises(ValueError, match="difficulty"):
        NPGymTorchRLEnv("Knapsack", curriculum=curriculum, difficulty=0.3)


class ScriptedLearner:
    """Plays each Knapsack episode optimally (the reference's items) with a probability that
    falls with the episode's difficulty, else random legal moves: its pass rate falls as the
    frontier rises, so the curriculum should settle where it is in the band."""

    def __init__(self, env: NPGymTorchRLEnv, seed: int) -> None:
        self.env = env
        self.rng = np.random.default_rng(seed)
        self.optimal: dict[str, bool] = {}

    def __call__(self, tensordict: Any) -> Any:
        actions = []
        for slot, item in enumerate(self.env.items):
            legal = np.flatnonzero(tensordict["action_mask"][slot].numpy())
            if item is None:  # finished: the action is ignored
                actions.append(0)
                continue
            if item.key not in self.optimal:
                chance = np.clip(1.2 - 1.5 * item.difficulty, 0.05, 0.95)
                self.optimal[item.key] = bool(self.rng.random() < chance)
            if self.optimal[item.key]:
                taken = set(self.env.references[slot].solution)
                actions.append(int(int(tensordict["item"][slot, 0]) in taken))
            else:
                actions.append(int(self.rng.choice(legal)))
        tensordict["action"] = torch.tensor(actions)
        return tensordict


def test_the_curriculum_holds_a_scripted_learner_in_the_band_through_rollout() -> None:
    curriculum = AdaptiveCurriculum(
        ["Knapsack"], target=(0.3, 0.7), seed=0, start=0.2, step=0.05, window=8, max_difficulty=0.8
    )
    env = NPGymTorchRLEnv("Knapsack", num_envs=16, curriculum=curriculum)
    rollout = env.rollout(400, ScriptedLearner(env, seed=0), break_when_any_done=False)
    finished = rollout["next", "done"].squeeze(-1)
    rewards = rollout["next", "reward"].squeeze(-1)
    # every finished episode was reported once, and the rollout's rewards are the reports
    assert int(finished.sum()) == curriculum.stats()["Knapsack"]["reports"] >= 150
    passes = (rewards[finished] >= 2.0).float().mean().item()
    assert passes == pytest.approx(curriculum.stats()["Knapsack"]["pass_rate"])
    recent = [passed for _, _, passed in list(curriculum.history)[-48:]]
    assert 0.3 <= np.mean(recent) <= 0.7
    assert curriculum.difficulty("Knapsack") >= 0.4  # the frontier moved up from 0.2


def test_gym_wrapper_on_the_single_structured_env_passes_check_env_specs() -> None:
    single = gym.make("npgym/TSP-easy", mode="structured", reward_mode="objective")
    env = wrap_single(single)
    check_env_specs(env, seed=0)
    rollout = env.rollout(25)  # random legal moves: one whole tour
    assert bool(rollout["next", "done"][-1]) and float(rollout["next", "reward"][-1]) < 0


def _example() -> Any:
    """examples/torchrl_reinforce.py as a module."""
    path = ROOT / "examples" / "torchrl_reinforce.py"
    spec = importlib.util.spec_from_file_location("torchrl_reinforce", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def test_reinforce_example_runs_the_attention_policy_through_rollout() -> None:
    example = _example()
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert example.main(["--smoke"]) == 0
    assert "smoke run done: 2 iterations" in printed.getvalue()
    assert "held-out mean tour length: greedy policy" in printed.getvalue()


@pytest.mark.slow
def test_reinforce_example_learns_through_rollout() -> None:
    """The full example (about 30 CPU-seconds): the trained greedy policy's mean tour on
    held-out instances is at most ``MAX_RATIO`` of random legal moves' (measured: 426 vs 790)."""
    example = _example()
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert example.main([]) == 0, printed.getvalue()[-2000:]
    assert ": learning" in printed.getvalue()


def test_the_docs_pages_snippets_run() -> None:
    page = ROOT / "docs" / "torchrl.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), re.S)
    assert len(blocks) == 3
    for index, code in enumerate(blocks):
        printed = io.StringIO()
        with redirect_stdout(printed):
            exec(compile(code, f"docs/torchrl.md#{index}", "exec"), {"__name__": "__main__"})
