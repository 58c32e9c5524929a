"""Plug-in tasks: the MaxCut example registers with one call and passes ``check_task``; the
contract checks catch a broken task."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numba
import numpy as np
import pydantic
import pytest

import npgym
from npgym import registry, testing
from npgym.results import Verdict

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plugin_task"


@pytest.fixture
def maxcut(monkeypatch: pytest.MonkeyPatch) -> Iterator[type]:
    """The example's task class; the registry and gymnasium's ids are restored afterwards, so
    that other tests see only the project's tasks."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    from npgym_maxcut import MaxCutTask

    tasks, ids = dict(registry.TASKS), set(gym.registry)
    yield MaxCutTask
    registry.TASKS.clear()
    registry.TASKS.update(tasks)
    registry._load.cache_clear()
    for identifier in set(gym.registry) - ids:
        del gym.registry[identifier]


def test_plugin_registers_with_one_call_and_passes_check_task(maxcut: type) -> None:
    assert npgym.register_task(maxcut) == "MaxCut"
    assert "MaxCut" in npgym.list_tasks()
    assert isinstance(npgym.get_task("maxcut"), maxcut)
    env = gym.make("npgym/MaxCut-hard")
    prompt, info = env.reset(seed=3)
    assert prompt == npgym.get_task("MaxCut").prompt(info["instance"])
    testing.check_task(maxcut)


def test_register_task_is_idempotent_and_refuses_clashes(maxcut: type) -> None:
    assert npgym.register_task("npgym_maxcut:MaxCutTask") == "MaxCut"
    assert npgym.register_task(maxcut) == "MaxCut"
    registry.TASKS["MaxCut"] = "npgym.tasks.tsp:TSPTask"
    with pytest.raises(ValueError, match=r"taken by npgym\.tasks\.tsp:TSPTask"):
        npgym.register_task(maxcut)
    with pytest.raises(TypeError, match="Task subclass"):
        npgym.register_task(dict)
    with pytest.raises(TypeError, match=r"not an npgym\.Task subclass"):
        npgym.register_task("npgym_maxcut.task:reason")

    class Local(maxcut):
        name = "LocalMaxCut"

    with pytest.raises(ValueError, match="module-level class"):
        npgym.register_task(Local)


def test_entry_point_registers_the_task(tmp_path: Path) -> None:
    """An installed package's ``npgym.tasks`` entry point (here a dist-info folder on the path,
    as pip would write it) registers the task on ``import npgym``."""
    dist_info = tmp_path / "npgym_maxcut-0.1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: npgym-maxcut\nVersion: 0.1.0\n"
    )
    (dist_info / "entry_points.txt").write_text(
        f"[{registry.ENTRY_POINT_GROUP}]\nMaxCut = npgym_maxcut:MaxCutTask\n"
    )
    script = (
        "import gymnasium as gym, npgym; "
        "assert npgym.list_tasks()[-1] == 'MaxCut', npgym.list_tasks(); "
        "_, info = gym.make('npgym/MaxCut-easy').reset(seed=0); "
        "print(type(npgym.get_task('MaxCut')).__module__, info['reference'].proven_optimal)"
    )
    path = os.pathsep.join([str(tmp_path), str(EXAMPLE), *sys.path])
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["npgym_maxcut.task", "True"]


def test_example_smoke_mode_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLE / "demo.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "-> reward 2.0" in result.stdout
    assert "meets the npgym contract" in result.stdout


def _lying_twin(maxcut: type) -> Any:
    class LyingTwin(maxcut):
        """Its twin counts one edge too many on every feasible answer."""

        def check_python(self, instance: Any, solution: np.ndarray) -> Verdict:
            verdict = super().check_python(instance, solution)
            return Verdict(True, verdict.objective + 1) if verdict.feasible else verdict

    return LyingTwin()


def test_check_task_reports_a_twin_that_disagrees(maxcut: type) -> None:
    with pytest.raises(testing.ContractError, match=r"check gives .* check_python gives"):
        testing.check_verifier_twin(_lying_twin(maxcut), "easy")
    npgym.register_task(maxcut)
    with pytest.raises(testing.ContractError) as failure:
        testing.check_task(_lying_twin(maxcut), tiers=["easy"])
    assert "1 contract check:" in str(failure.value)
    assert "check_verifier_twin[easy]" in str(failure.value)


def test_check_task_asks_for_a_missing_twin(maxcut: type) -> None:
    class NoTwin(maxcut):
        check_python = npgym.Task.check_python

    with pytest.raises(testing.ContractError, match="implement check_python"):
        testing.check_verifier_twin(NoTwin(), "easy")


def test_check_task_reports_a_kernel_parameter_that_names_nothing(maxcut: type) -> None:
    @numba.njit(cache=False)
    def check_cut(n: int, edge_list: np.ndarray, side: np.ndarray) -> tuple[int, int, int]:
        return 0, 0, 0

    class Misnamed(maxcut):
        kernel = staticmethod(check_cut)

    testing.check_kernel_parameters(maxcut())
    with pytest.raises(testing.ContractError, match="parameter 'edge_list' of check_cut names"):
        testing.check_kernel_parameters(Misnamed())


def test_check_task_reports_an_unregistered_task(maxcut: type) -> None:
    with pytest.raises(testing.ContractError, match="npgym/MaxCut-easy is not registered"):
        testing.check_registration(maxcut())


def test_golden_file_shows_a_diff_and_checks_the_pinned_answer(
    maxcut: type, tmp_path: Path
) -> None:
    task, path = maxcut(), tmp_path / "easy.txt"
    text = testing.golden_text(task, "easy")
    path.write_text(text)
    testing.check_golden(task, "easy", path)
    assert testing.golden_digest(text) == text.splitlines()[1].split()[2]
    prompt_line = "Split the vertices into two sides"
    path.write_text(text.replace(prompt_line, "Cut the graph in two", 1))
    with pytest.raises(testing.ContractError, match=r"(?s)generation changed.*\n-Cut.*\n\+Split"):
        testing.check_golden(task, "easy", path)
    answer = text.split("\nAnswer: ", 1)[1].split("\n", 1)[0]
    path.write_text(text.replace(f"\nAnswer: {answer}\n", "\nAnswer: []\n", 1))
    with pytest.raises(testing.ContractError, match="pinned answer scores"):
        testing.check_golden(task, "easy", path)
    objective = text.split("objective: ", 1)[1].split("\n", 1)[0]
    path.write_text(text.replace(f"objective: {objective}", "objective: 999", 1))
    with pytest.raises(testing.ContractError, match="pinned objective 999"):
        testing.check_golden(task, "easy", path)


def test_the_plugin_plays_structured_mode_and_draws(maxcut: type) -> None:
    """The MaxCut plug-in declares a structured episode and a drawer: it gets both modes, as the
    built-in tasks do."""
    npgym.register_task(maxcut)
    task = npgym.get_task("MaxCut")
    env = gym.make("npgym/MaxCut-easy", mode="structured")
    observation, _ = env.reset(seed=1)
    terminated, steps, info = False, 0, {}
    while not terminated:
        assert env.observation_space.contains(observation)
        action = env.unwrapped.episode.greedy_action()
        observation, _, terminated, _, info = env.step(action)
        steps += 1
    instance = env.unwrapped.episode.instance
    assert steps == instance.n and info["feasible"]
    assert info["reward"] == task.score(instance, info["answer"]).reward
    text_env = gym.make("npgym/MaxCut-easy", render_mode="rgb_array")
    text_env.reset(seed=1)
    picture = text_env.render()
    assert picture.ndim == 3 and picture.shape[2] == 3 and picture.dtype == np.uint8


def test_a_mode_the_plugin_does_not_declare_is_refused_clearly(maxcut: type) -> None:
    from npgym.capabilities import MissingCapabilityError
    from npgym.variants import variant

    npgym.register_task(maxcut)
    instance = npgym.get_task("MaxCut").generate(0, tier="easy")
    with pytest.raises(MissingCapabilityError, match=r"'MaxCut' declares no variant_maker"):
        variant(instance, 0)


def test_a_plugin_without_a_batched_episode_is_refused_by_name(maxcut: type) -> None:
    """MaxCut declares a structured episode but no ``vector``: the batched env is refused,
    naming it, and gymnasium's sync vector env of its single envs still works."""
    from npgym.capabilities import MissingCapabilityError
    from npgym.vector import VectorStructuredEnv

    npgym.register_task(maxcut)
    with pytest.raises(MissingCapabilityError, match="task 'MaxCut' has no batched"):
        gym.make_vec(
            "npgym/MaxCut-easy",
            num_envs=2,
            vectorization_mode="vector_entry_point",
            mode="structured",
        )
    with pytest.raises(MissingCapabilityError, match="task 'MaxCut' declares no vector"):
        VectorStructuredEnv("MaxCut", "easy", 2)
    sync = gym.make_vec(
        "npgym/MaxCut-easy", num_envs=2, vectorization_mode="sync", mode="structured"
    )
    observation, _ = sync.reset(seed=0)
    assert observation["action_mask"].shape[0] == 2


@pytest.mark.parametrize(
    ("name", "declaration", "message"),
    [
        ("episode", "npgym_maxcut.structured:Missing", "does not resolve"),
        ("episode", "no colon", "is not 'module:attribute'"),
        ("episode", int, "Episode subclass"),
        ("drawer", 42, "must be callable"),
        ("variant_maker", "no_such_module:make", "does not resolve"),
    ],
)
def test_a_malformed_declaration_is_named(
    maxcut: type, name: str, declaration: Any, message: str
) -> None:
    """A capability declared wrongly is refused on first use, naming the task and the
    capability, and check_task reports it."""
    from npgym.capabilities import MalformedCapabilityError, capability

    broken = type("BrokenMaxCut", (maxcut,), {name: declaration})
    with pytest.raises(MalformedCapabilityError, match=message):
        capability(broken(), name)
    npgym.register_task(maxcut)
    with pytest.raises(testing.ContractError, match="check_capabilities"):
        testing.check_task(broken, tiers=("easy",))


def test_every_np_bench_task_declares_every_capability() -> None:
    from npgym.capabilities import CAPABILITIES, capability
    from npgym.datasets import BENCH_TASKS

    for name in BENCH_TASKS[max(BENCH_TASKS)]:
        for capability_name in CAPABILITIES:
            if capability_name == "vector":  # batched only where the episode allows (test_vector)
                continue
            assert capability(npgym.get_task(name), capability_name) is not None


def test_structured_mode_takes_the_reward_presets() -> None:
    """The issue's bug: mode='structured' refused reward='strict' (a validation error)."""
    env = gym.make("npgym/TSP-easy", mode="structured", reward="strict")
    env.reset(seed=0)
    assert env.unwrapped.reward_config == npgym.reward.PRESETS["strict"]
    with pytest.raises(ValueError, match="unknown reward preset"):
        gym.make("npgym/TSP-easy", mode="structured", reward="nope")


def test_a_plugin_gets_no_inverse_ids_and_no_place_in_np_bench(maxcut: type) -> None:
    """Inverse problems need property texts a plug-in does not have: no Invert-MaxCut ids (they
    used to be registered and crash on reset), and a clear KeyError by name. A default bench
    spec names its version's ten tasks, with or without the plug-in installed."""
    from npgym.capabilities import MissingCapabilityError
    from npgym.datasets import BENCH_TASKS, DatasetSpec

    before = DatasetSpec()
    npgym.register_task(maxcut)
    assert "npgym/Invert-MaxCut-easy" not in gym.registry
    assert "npgym/Aggregate-MaxCut-easy" in gym.registry
    with pytest.raises(MissingCapabilityError, match="task 'MaxCut' declares no inverse"):
        npgym.get_task("Invert-MaxCut")
    assert DatasetSpec() == before and before.tasks == BENCH_TASKS[before.bench_version]
    assert DatasetSpec(bench_version=1).tasks == BENCH_TASKS[1]


def test_the_built_in_inverse_list_is_what_the_classes_declare() -> None:
    from npgym.capabilities import has_capability
    from npgym.families import INVERTIBLE_TASKS

    built_in = [name for name, path in registry.TASKS.items() if path.startswith("npgym.tasks.")]
    declaring = {name for name in built_in if has_capability(npgym.get_task(name), "inverse")}
    assert set(INVERTIBLE_TASKS) == declaring


def test_a_plugin_that_declares_inverse_gets_invert_ids(
    maxcut: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plug-in's inverse problems are first class: declared on its class, they give it
    Invert ids and an Invert task whose reference scores 2."""
    import npgym_maxcut

    from npgym.inverse import InverseProblem

    inverse = InverseProblem(
        unit="vertices",
        size_cap=12,
        fields='"n": vertices, "edges": [u, v, w] triples',
        optimum="the largest total weight of edges cut by a split of the vertices",
    )
    instance_type = pydantic.create_model(
        "InvCutInstance", __base__=maxcut.instance_type, task=(Literal["InvCut"], "InvCut")
    )
    monkeypatch.setattr(npgym_maxcut, "Inverting", None, raising=False)
    inverting = _plugin_class(
        maxcut,
        npgym_maxcut,
        "Inverting",
        name="InvCut",
        inverse=inverse,
        instance_type=instance_type,
    )
    npgym.register_task(inverting)
    assert "npgym/Invert-InvCut-easy" in gym.registry
    task = npgym.get_task("Invert-InvCut")
    instance = task.generate(0, tier="easy")
    assert task.score(instance, task.format_answer(task.reference(instance).solution)).reward == 2.0


def _plugin_class(maxcut: type, module: Any, class_name: str, **attributes: Any) -> type:
    """A module-level subclass of the example's task (``register_task`` insists on that)."""
    subclass = type(class_name, (maxcut,), {"__module__": module.__name__, **attributes})
    setattr(module, class_name, subclass)
    return subclass


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("TSP", r"taken by npgym\.tasks\.tsp"),
        ("tsp", r"taken by npgym\.tasks\.tsp"),  # get_task looks names up without case
        ("Invert-Cut", "family prefix"),
        ("compose-Cut", "family prefix"),
        ("Aggregate-X", "family prefix"),
        ("Max-Cut", "letter followed by"),
        ("Max/Cut", "letter followed by"),
        ("9Cut", "letter followed by"),
        ("", "sets no task name"),
        ("C" * 65, "longer than 64"),
    ],
)
def test_a_plugin_name_that_clashes_is_refused_naming_its_package(
    maxcut: type, monkeypatch: pytest.MonkeyPatch, name: str, message: str
) -> None:
    """A clash with a built-in task (in any case), a family prefix, a malformed or overlong
    name is refused at registration, naming the plug-in's package; nothing else changes."""
    import npgym_maxcut

    monkeypatch.setattr(npgym_maxcut, "Clash", None, raising=False)
    clash = _plugin_class(maxcut, npgym_maxcut, "Clash", name=name)
    before = dict(registry.TASKS)
    with pytest.raises(ValueError, match=rf"plug-in package 'npgym_maxcut': .*{message}"):
        npgym.register_task(clash)
    assert before == registry.TASKS
    assert npgym.get_task("TSP").name == "TSP"
    assert npgym.register_task(maxcut) == "MaxCut"  # another plug-in is unaffected


def test_a_plugin_name_at_the_length_limit_registers(
    maxcut: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    import npgym_maxcut

    monkeypatch.setattr(npgym_maxcut, "Long", None, raising=False)
    name = "C" * registry.MAX_TASK_NAME_CHARS
    assert npgym.register_task(_plugin_class(maxcut, npgym_maxcut, "Long", name=name)) == name


def test_a_plugin_with_a_malformed_capability_is_refused_at_registration(
    maxcut: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    import npgym_maxcut

    from npgym.capabilities import MalformedCapabilityError

    monkeypatch.setattr(npgym_maxcut, "Broken", None, raising=False)
    broken = _plugin_class(
        maxcut, npgym_maxcut, "Broken", name="BrokenCut", drawer="no_such_module:draw"
    )
    with pytest.raises(MalformedCapabilityError, match=r"plug-in package 'npgym_maxcut'.*drawer"):
        npgym.register_task(broken)
    assert "BrokenCut" not in registry.TASKS


def test_an_entry_point_that_clashes_is_skipped_with_a_warning(
    maxcut: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed package whose entry point takes a built-in name is ignored with a warning
    naming the package; the built-in task keeps its name."""
    from importlib.metadata import EntryPoint

    clash = EntryPoint(
        name="tsp", value="npgym_maxcut:MaxCutTask", group=registry.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(registry, "entry_points", lambda group: [clash])
    with pytest.warns(UserWarning, match=r"entry point of package 'npgym_maxcut' ignored.*taken"):
        registry._register_entry_points()
    assert "tsp" not in registry.TASKS
    assert npgym.get_task("tsp").name == "TSP"
