"""The task contract as code: :func:`check_task` runs every check a task must pass.

A task written in another package registers itself (:func:`npgym.register_task`) and calls
``check_task(MyTask())`` from its own test suite; npgym's ``tests/test_contract.py`` runs the
same checks, one test per check, over every registered task and tier. The contract itself is
described in ``docs/contract.md``. Each ``check_*`` function raises :class:`ContractError` (an
``AssertionError``) with a message that says what broke; none needs pytest or hypothesis.

Golden files (:func:`golden_text`, :func:`check_golden`) pin generation as readable text: the
instances' JSON (one field a line) and prompts for a few seeds, and the exact reference answer.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import math
import string
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, get_args

import numpy as np

from npgym.answer import AnswerFormatError, render_value
from npgym.config import TIER_DIFFICULTY, TIERS
from npgym.named_arguments import parameter_names
from npgym.registry import env_id
from npgym.results import Reference
from npgym.reward import clip_ratio
from npgym.scoring import GUARD_TRIPS
from npgym.task import Category, KernelTask, Task

GOLDEN_SEEDS = (0, 1, 2)
"""Seeds whose instances and prompts a golden file pins; the first one's reference too."""

GARBAGE_SOLUTIONS: tuple[Any, ...] = (
    None,
    "abc",
    "",
    3,
    -1,
    2.5,
    True,
    [],
    [None],
    [1.5],
    [True, False],
    ["a", "b"],
    [[[[1]]]],
    {"a": 1},
    [10**30],
    [-(10**30)],
    [0] * 1000,
    list(range(-5, 500)),
    [[0, 1], [2, 3], [4]],
    np.zeros((2, 2), dtype=np.int64),
    np.array([0.5, 1.5]),
)
"""Solutions of every wrong shape and size: ``verify`` must reject (or accept) them calmly."""

GARBAGE_COMPLETIONS: tuple[str, ...] = (
    "",
    "I don't know.",
    "Answer:",
    "Answer: ",
    "Answer: [",
    "Answer: ]",
    "Answer: [1, 2",
    "Answer: [[[[[[[[1]]]]]]]]",
    "Answer: [1,, 2]",
    "Answer: [-]",
    "Answer: [1e9]",
    "Answer: [0x10]",
    "Answer: [\u0661]",
    "Answer: " + "9" * 40,
    "Answer: [" + "1, " * 30_000 + "1]",
    "Answer: Impossible",
    "Answer: None",
    "\\boxed{",
    "\\boxed{[1, 2]",
    "Answer: [1, 2]\x00",
    "answer\u2028:\u2029[0]",
)
"""Completions no task can read as a valid answer in its shape, or whose shape is odd."""

FORMAT_FAILURE, INFEASIBLE = -2.5, -0.5
"""Rewards with the default weights for a format failure and for an infeasible answer."""


class ContractError(AssertionError):
    """A task breaks the contract; the message says which check and why."""


def _expect(condition: object, message: str) -> None:
    """Raise :class:`ContractError` unless ``condition`` holds (unlike ``assert``, never
    compiled away by ``python -O``)."""
    if not condition:
        raise ContractError(message)


# --- the checks ------------------------------------------------------------------------------


def check_registration(task: Task[Any, Any]) -> None:
    """The task's attributes, tier presets and gymnasium ids are all in place."""
    import gymnasium

    for attribute in ("name", "category", "sense", "objective_name", "instance_type", "tiers"):
        _expect(hasattr(task, attribute), f"{type(task).__name__} does not set {attribute}")
    _expect(task.sense in ("min", "max"), f"{task.name}: sense must be min or max")
    categories = get_args(Category)
    _expect(
        task.category in categories,
        f"{task.name}: category {task.category!r} is none of the NP-Bench categories {categories}",
    )
    _expect(
        set(task.tiers) == set(TIERS),
        f"{task.name}: tier presets {sorted(task.tiers)} must be exactly {list(TIERS)}",
    )
    _expect(
        task.instance_type.canonical_fields,
        f"{task.name}: {task.instance_type.__name__}.canonical_fields names no field",
    )
    for tier in TIERS:
        identifier = env_id(task.name, tier)
        _expect(
            identifier in gymnasium.registry,
            f"{identifier} is not registered: call npgym.register_task({type(task).__name__})",
        )


def check_kernel_parameters(task: Task[Any, Any]) -> None:
    """Every parameter of a declared verifier kernel that npgym fills by name (the fused
    kernel's after ``answer``, a :class:`KernelTask` kernel's before the solution) names an
    attribute of the instance type or of the task (:mod:`npgym.named_arguments`)."""
    instance_type = task.instance_type
    declared: list[tuple[Callable[..., Any] | None, int, int]] = [(task.fused_kernel, 1, 0)]
    if isinstance(task, KernelTask):
        declared.append((task.kernel, 0, task.solution_part_count))
    for kernel, leading, trailing in declared:
        if kernel is None:
            continue
        names = parameter_names(kernel)
        for name in names[leading : len(names) - trailing]:
            _expect(
                name in instance_type.model_fields
                or hasattr(instance_type, name)
                or hasattr(task, name),
                f"{task.name}: parameter {name!r} of {getattr(kernel, '__name__', kernel)} names "
                f"no attribute of {instance_type.__name__} or {type(task).__name__}",
            )


def check_env_passes(task: Task[Any, Any], tier: str) -> None:
    """gymnasium's ``check_env`` passes on the task's env, with every warning an error."""
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(env_id(task.name, tier), exact_reference=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    finally:
        env.close()


def check_determinism(task: Task[Any, Any], tier: str) -> None:
    """The same seed gives the same instance, JSON and prompt; another seed another instance."""
    first, second = task.generate(11, tier=tier), task.generate(11, tier=tier)
    _expect(first == second, f"{task.name}/{tier}: seed 11 gave two different instances")
    _expect(first.to_json() == second.to_json(), f"{task.name}/{tier}: JSON differs per call")
    _expect(task.prompt(first) == task.prompt(second), f"{task.name}/{tier}: prompt differs")
    _expect(
        task.generate(12, tier=tier).to_json() != first.to_json(),
        f"{task.name}/{tier}: seeds 11 and 12 gave the same instance",
    )


def check_json_round_trip(task: Task[Any, Any], tier: str) -> None:
    """``from_json(to_json())`` restores the instance exactly, with its canonical fields at the
    top level and its provenance recorded; the fingerprint ignores the metadata."""
    instance = task.generate(3, tier=tier)
    restored = task.from_json(instance.to_json())
    where = f"{task.name}/{tier}"
    _expect(restored == instance, f"{where}: the JSON round trip changed the instance")
    _expect(restored.to_json() == instance.to_json(), f"{where}: the JSON is not canonical")
    _expect(task.prompt(restored) == task.prompt(instance), f"{where}: prompt changed in trip")
    data = json.loads(instance.to_json())
    canonical = set(type(instance).canonical_fields)
    _expect(canonical <= data.keys(), f"{where}: canonical fields {canonical} not all in JSON")
    _expect(
        (data["task"], data["tier"], data["seed"]) == (task.name, tier, 3),
        f"{where}: JSON records task/tier/seed {data['task'], data['tier'], data['seed']}",
    )
    bare = instance.model_copy(update=dict.fromkeys(type(instance).meta_fields))
    _expect(bare.fingerprint() == instance.fingerprint(), f"{where}: fingerprint reads metadata")


def check_reference(task: Task[Any, Any], tier: str, seed: int = GOLDEN_SEEDS[0]) -> None:
    """The exact reference is feasible, labelled honestly and scores 2.0; the heuristic one is
    feasible and never better than the exact one."""
    instance = task.generate(seed, tier=tier)
    where = f"{task.name}/{tier} seed {seed}"
    reference = task.reference(instance)
    verdict = task.verify(instance, reference.solution)
    _expect(verdict.feasible, f"{where}: the reference is infeasible: {verdict.reason}")
    _expect(
        verdict.objective == reference.objective,
        f"{where}: reference claims {reference.objective}, verifier says {verdict.objective}",
    )
    if reference.proven_optimal:
        _expect(reference.method in ("exact", "planted"), f"{where}: proven but {reference.method}")
    else:
        _expect(reference.method == "heuristic", f"{where}: unproven but {reference.method}")
        _expect(
            reference.bound is not None and reference.gap is not None,
            f"{where}: an unproven reference must give its bound and gap",
        )
    score = task.score(instance, "Let me think.\n" + task.format_answer(reference.solution))
    _expect(
        (score.reward, score.ratio, score.optimality) == (2.0, 1.0, 1.0),
        f"{where}: the reference's own answer scores {score.reward} ({score.reason})",
    )
    heuristic = task.reference(instance, exact=False)
    _expect(task.verify(instance, heuristic.solution).feasible, f"{where}: heuristic infeasible")
    sign = 1 if task.sense == "min" else -1
    _expect(
        reference.objective is None
        or heuristic.objective is None
        or sign * heuristic.objective >= sign * reference.objective,
        f"{where}: heuristic {heuristic.objective} beats exact {reference.objective}",
    )


def check_env_reset_matches_generate(task: Task[Any, Any], tier: str) -> None:
    """``reset(seed=s)`` shows the prompt of ``generate(s)``; the reference answer scores 2.0."""
    import gymnasium

    env = gymnasium.make(env_id(task.name, tier), exact_reference=False)
    try:
        prompt, info = env.reset(seed=5)
        where = f"{env_id(task.name, tier)}"
        _expect(info["instance"] == task.generate(5, tier=tier), f"{where}: reset != generate")
        _expect(prompt == task.prompt(info["instance"]), f"{where}: reset shows another prompt")
        answer = task.format_answer(info["reference"].solution)
        feedback, reward, terminated, truncated, step_info = env.step(answer)
        _expect(
            (reward, terminated, truncated) == (2.0, True, False),
            f"{where}: the reference answer gets {(reward, terminated, truncated)}",
        )
        _expect(step_info["feasible"] and step_info["format_ok"], f"{where}: reference rejected")
        _expect(
            step_info["reference_objective"] == info["reference"].objective,
            f"{where}: step reports another reference objective",
        )
        _expect(set(feedback) <= set(string.printable), f"{where}: feedback is not ASCII")
    finally:
        env.close()


def check_prompt(task: Task[Any, Any]) -> None:
    """Prompts are printable ASCII, ask for step-by-step thinking and end with ``Answer:``."""
    for tier in TIERS:
        prompt = task.prompt(task.generate(0, tier=tier))
        where = f"{task.name}/{tier}"
        _expect(set(prompt) <= set(string.printable), f"{where}: the prompt is not plain ASCII")
        _expect("step by step" in prompt, f"{where}: the prompt does not say 'step by step'")
        last_line = prompt.rstrip().splitlines()[-1]
        _expect("Answer:" in last_line, f"{where}: the last line does not ask for 'Answer:'")


def check_difficulty_knob(task: Task[Any, Any]) -> None:
    """Every difficulty in [0, 1] generates and round-trips; the tiers are its anchors."""
    for difficulty in np.linspace(0.0, 1.0, 11):
        instance = task.generate(1, difficulty=float(difficulty))
        where = f"{task.name} difficulty {difficulty:.1f}"
        _expect(math.isclose(instance.difficulty, difficulty), f"{where}: not recorded")
        _expect(instance.tier is None, f"{where}: records a tier")
        _expect(task.from_json(instance.to_json()) == instance, f"{where}: JSON round trip")
    for tier, anchor in TIER_DIFFICULTY.items():
        _expect(
            task.config(difficulty=anchor) == task.config(tier=tier),
            f"{task.name}: difficulty {anchor} does not give the {tier} preset",
        )


def check_bad_config(task: Task[Any, Any]) -> None:
    """A bad config field, difficulty or tier is a ``ValueError`` that names it."""
    attempts: list[tuple[str, Callable[[], object]]] = [
        ("no_such_field", lambda: task.config("easy", overrides={"no_such_field": 1})),
        ("difficulty", lambda: task.config(difficulty=2.5)),
        ("tier", lambda: task.config("impossible")),
    ]
    for word, attempt in attempts:
        try:
            attempt()
        except ValueError as error:
            _expect(word in str(error), f"{task.name}: the error {error} does not name {word}")
        else:
            raise ContractError(f"{task.name}: a bad {word} raised no ValueError")


def check_garbage(task: Task[Any, Any]) -> None:
    """Garbage never raises: ``verify`` gives a reason for every rejection, ``score`` turns
    unreadable text into a format failure with a reason, and the score guard never trips."""
    instance = task.generate(0, tier="easy")
    reference = task.reference(instance, exact=False)
    trips = GUARD_TRIPS.copy()
    for garbage in GARBAGE_SOLUTIONS:
        try:
            verdict = task.verify(instance, garbage)
        except Exception as error:
            raise ContractError(f"{task.name}: verify({garbage!r:.60}) raised {error!r}") from error
        _expect(isinstance(verdict.reason, str), f"{task.name}: reason is not text")
        _expect(verdict.feasible or verdict.reason, f"{task.name}: {garbage!r:.60} no reason")
    for completion in GARBAGE_COMPLETIONS:
        score = task.score(instance, completion, reference)
        where = f"{task.name}: completion {completion!r:.60}"
        if not score.format_ok:
            _expect(score.reward == FORMAT_FAILURE and score.reason, f"{where}: {score}")
        elif not score.feasible:
            _expect(score.reward == INFEASIBLE and score.reason, f"{where}: {score}")
        else:
            _expect(math.isclose(score.reward, 1.0 + score.optimality), f"{where}: {score}")
        try:
            task.parse(completion)
        except AnswerFormatError:
            pass
        except Exception as error:
            raise ContractError(f"{where}: parse raised {error!r}") from error
    tripped = GUARD_TRIPS - trips
    _expect(not tripped, f"{task.name}: score()'s last-resort guard caught bugs: {dict(tripped)}")


def check_baselines(task: Task[Any, Any]) -> None:
    """The greedy answer is feasible and random answers have the task's answer shape."""
    rng = np.random.default_rng(0)
    for tier in TIERS:
        instance = task.generate(2, tier=tier)
        reference = task.reference(instance, exact=False)
        greedy = task.score(instance, task.format_answer(task.greedy_solution(instance)), reference)
        where = f"{task.name}/{tier}"
        _expect(greedy.format_ok and greedy.feasible, f"{where}: greedy fails: {greedy.reason}")
        for _ in range(5):
            answer = task.format_answer(task.random_solution(instance, rng))
            score = task.score(instance, answer, reference)
            _expect(score.format_ok, f"{where}: random answer {answer:.60} unreadable")


def check_verifier_twin(task: Task[Any, Any], tier: str, samples: int = 60, seed: int = 0) -> None:
    """The numba verifier and its pure-Python twin (:meth:`Task.check_python`) give the same
    verdict (feasibility, objective and reason) on random, greedy and reference solutions and
    on random small edits of them (an item changed, repeated or dropped)."""
    instance, candidates = _candidates(task, tier, samples, seed)
    for candidate in candidates:
        try:
            shaped = task.to_solution(candidate)
        except AnswerFormatError:
            continue
        try:
            twin = task.check_python(instance, shaped)
        except NotImplementedError as error:
            raise ContractError(
                f"{task.name}: implement check_python(instance, solution) with the verifier's "
                f"pure-Python twin so that it can be compared with check ({error})"
            ) from error
        kernel = task.check(instance, shaped)
        _expect(
            kernel == twin,
            f"{task.name}/{tier}: on {_short(candidate)} check gives {kernel}, "
            f"check_python gives {twin}",
        )


def check_fused_kernel(task: Task[Any, Any], tier: str, samples: int = 60, seed: int = 1) -> None:
    """The fused kernel (:meth:`Task.check_answer`) and the parser's path give the same score.

    On the twin check's solutions written as answer text, and on that text with its brackets
    changed, nested, cut short or spaced out, ``score`` with the fused kernel must equal
    ``score`` without it (every field, the reason included). A task without a fused kernel
    passes trivially.
    """
    instance, candidates = _candidates(task, tier, samples, seed)
    if task.check_answer(instance, b"[]") is None:
        return
    slow = parser_path(task)
    reference = task.reference(instance, exact=False)
    for candidate in candidates:
        try:
            text = render_value(candidate)
        except TypeError:
            continue
        for answer in (text, *_respellings(text)):
            completion = "Answer: " + answer
            fused = task.score(instance.model_copy(), completion, reference)
            parsed = slow.score(instance.model_copy(), completion, reference)
            _expect(
                fused == parsed,
                f"{task.name}/{tier}: on {answer[:120]!r} the fused kernel scores {fused}, "
                f"the parser's path {parsed}",
            )


def parser_path(task: Task[Any, Any]) -> Task[Any, Any]:
    """A copy of ``task`` that scores through the parser alone: its fused kernel switched off,
    for comparing the two paths."""
    slow = copy.copy(task)
    slow.check_answer = lambda *_: None  # type: ignore[method-assign]
    return slow


def _respellings(text: str) -> tuple[str, ...]:
    """``text`` (a rendered answer) spelt the ways a model might, right or wrong."""
    return (
        text.replace("[", "(").replace("]", ")"),
        text.replace(", ", ",\n "),
        "[" + text + "]",
        text[: len(text) // 2],
        text.replace(", ", ",, ", 1),
        text[:-1] + ",]",
    )


def _candidates(task: Task[Any, Any], tier: str, samples: int, seed: int) -> tuple[Any, list[Any]]:
    """An instance and solutions to check on it: greedy, reference, random and edits of them."""
    rng = np.random.default_rng(seed)
    instance = task.generate(seed, tier=tier)
    candidates = [task.greedy_solution(instance), task.reference(instance, exact=False).solution]
    candidates += [task.random_solution(instance, rng) for _ in range(samples)]
    candidates += [_mutate(candidates[rng.integers(len(candidates))], rng) for _ in range(samples)]
    return instance, candidates


def _mutate(solution: Any, rng: np.random.Generator) -> Any:
    """A copy of a (nested list) solution with one item changed, repeated or dropped; a change
    inside a nested list edits that list in turn."""
    if isinstance(solution, np.ndarray):
        solution = solution.tolist()
    if not isinstance(solution, (list, tuple)):
        return solution
    items = list(solution)
    if not items:
        return [int(rng.integers(-1, 3))]
    position, edit = int(rng.integers(len(items))), int(rng.integers(3))
    if edit == 0:
        item = items[position]
        nested = isinstance(item, (list, tuple, np.ndarray))
        items[position] = (
            _mutate(item, rng) if nested else int(rng.integers(-1, 2 * len(items) + 2))
        )
    elif edit == 1:
        items.append(items[position])
    else:
        del items[position]
    return items


def tasks_declaring(capability_name: str) -> list[str]:
    """The registered tasks that declare ``capability_name``, in registry order: what a test of
    one mode runs over, so a task without the mode (a new task, a plug-in) is not asked for it."""
    from npgym.capabilities import has_capability
    from npgym.registry import get_task, list_tasks

    return [name for name in list_tasks() if has_capability(get_task(name), capability_name)]


def check_capabilities(task: Task[Any, Any], tier: str) -> None:
    """Every optional capability the task declares resolves and does its job (see
    :mod:`npgym.capabilities`): a structured episode played greedily to its end gives a feasible
    answer scored as the text env scores it, with observations inside their spaces; the drawer
    returns an ``(H, W, 3)`` uint8 picture for the reference and for no answer; a variant's
    reference maps back to a feasible answer of the original with the matching objective; an
    inverse problem's witness scores 2.0."""
    from npgym.capabilities import capability, has_capability

    instance = task.generate(GOLDEN_SEEDS[0], tier=tier)
    reference = task.reference(instance)
    if has_capability(task, "episode"):
        _check_episode(task, tier)
    if has_capability(task, "drawer"):
        from npgym.render import draw

        for solution in (reference.solution, None):
            picture = draw(task, instance, solution)
            _expect(
                picture.ndim == 3 and picture.shape[2] == 3 and picture.dtype == np.uint8,
                f"the drawer gave a {picture.dtype} array of shape {picture.shape}",
            )
    if has_capability(task, "variant_maker"):
        capability(task, "variant_maker")
        from npgym.variants import variant

        made = variant(instance, 0)
        solved = task.reference(made.instance)
        verdict = task.verify(instance, made.to_original(solved.solution))
        _expect(verdict.feasible, f"a variant's reference maps back infeasible: {verdict.reason}")
        _expect(
            verdict.objective == made.objective_to_original(solved.objective),
            f"a variant's reference maps back to objective {verdict.objective}, not "
            f"{made.objective_to_original(solved.objective)}",
        )
    if has_capability(task, "inverse") and tier == "easy":
        _check_inverse(task)


def _check_inverse(task: Task[Any, Any]) -> None:
    """An ``Invert-<Task>`` instance generates, and its reference (the proven witness) scores
    2.0 (see :func:`check_capabilities`; at the easy tier only, to keep the check cheap)."""
    from npgym.capabilities import capability
    from npgym.registry import get_task

    capability(task, "inverse")
    inverse = get_task(f"Invert-{task.name}")
    instance = inverse.generate(GOLDEN_SEEDS[0], tier="easy")
    answer = inverse.format_answer(inverse.reference(instance).solution)
    score = inverse.score(instance, answer)
    _expect(score.reward == 2.0, f"the Invert-{task.name} witness scores {score.reward}")


def _check_episode(task: Task[Any, Any], tier: str) -> None:
    """A greedy structured episode to its end (see :func:`check_capabilities`)."""
    from npgym.structured import StructuredEnv

    env = StructuredEnv(task, tier)
    observation, _ = env.reset(seed=GOLDEN_SEEDS[0])
    info: dict[str, Any] = {}
    for _ in range(100_000):
        _expect(env.observation_space.contains(observation), "an observation is outside its space")
        assert env.episode is not None
        observation, _, terminated, _, info = env.step(env.episode.greedy_action())
        if terminated:
            break
    _expect(bool(info.get("feasible")), f"the greedy episode ends infeasible: {info.get('reason')}")
    expected = task.score(env.episode.instance, info["answer"], env.reference)  # type: ignore[union-attr]
    _expect(info["reward"] == expected.reward, "the episode's score is not the text env's")


def _short(value: Any) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 120 else text[:117] + "..."


TIER_CHECKS: tuple[Callable[[Task[Any, Any], str], None], ...] = (
    check_env_passes,
    check_determinism,
    check_json_round_trip,
    check_reference,
    check_env_reset_matches_generate,
    check_verifier_twin,
    check_fused_kernel,
    check_capabilities,
)
"""Checks run once per tier."""
TASK_CHECKS: tuple[Callable[[Task[Any, Any]], None], ...] = (
    check_registration,
    check_kernel_parameters,
    check_prompt,
    check_difficulty_knob,
    check_bad_config,
    check_garbage,
    check_baselines,
)
"""Checks run once per task."""


def check_task(task: Task[Any, Any] | type[Task[Any, Any]], tiers: Iterable[str] = TIERS) -> None:
    """Run the whole contract on a registered task (an instance or its class).

    Every check runs, even after one fails; then a :class:`ContractError` lists each failure.
    ``tiers`` narrows the per-tier checks (the exact references of large tiers take a while).
    """
    if isinstance(task, type):
        task = task()
    failures: list[str] = []

    def attempt(check: Callable[..., None], *args: Any) -> None:
        try:
            check(task, *args)
        except Exception as error:
            label = check.__name__ + "".join(f"[{arg}]" for arg in args)
            failures.append(f"{label}: {type(error).__name__}: {error}")

    for task_check in TASK_CHECKS:
        attempt(task_check)
    for tier in tiers:
        for tier_check in TIER_CHECKS:
            attempt(tier_check, tier)
    if failures:
        count = f"{len(failures)} contract check{'s' if len(failures) > 1 else ''}"
        raise ContractError(f"{task.name} fails {count}:\n- " + "\n- ".join(failures))


# --- golden files ----------------------------------------------------------------------------

_REFERENCE_HEADER = "=== reference (seed {seed}, exact)"


def greedy_ratio(task: Task[Any, Any], instance: Any, reference: Reference) -> float:
    """The shipped greedy's clipped optimality ratio against ``reference``: 0 when its answer is
    infeasible; on an instance without a solution (SetCover), 1 when the greedy says so. Tier
    statistics (``tests/test_tiers.py``, ``bench/tier_difficulty.py``) count a ratio of 1 as
    "the greedy is optimal"."""
    verdict = task.verify(instance, task.greedy_solution(instance))
    if reference.objective is None:
        return 1.0 if verdict.feasible else 0.0
    if not verdict.feasible:
        return 0.0
    return clip_ratio(task.ratio(verdict.objective, reference.objective))  # type: ignore[arg-type]


def golden_text(task: Task[Any, Any], tier: str, seeds: Sequence[int] = GOLDEN_SEEDS) -> str:
    """The readable golden file of a task and tier: a header with the SHA-256 of the pinned
    bytes, the exact reference of the first seed, then each seed's instance JSON (one
    top-level field a line) and prompt."""
    instances = [task.generate(seed, tier=tier) for seed in seeds]
    reference = task.reference(instances[0])
    lines = [
        f"# npgym golden file: {task.name}, tier {tier}, seeds {' '.join(map(str, seeds))}.",
        f"# sha256 {_digest(task, instances)} (each instance's JSON and prompt, newline-ended)",
        _REFERENCE_HEADER.format(seed=seeds[0]),
        f"objective: {json.dumps(reference.objective)}",
        task.format_answer(reference.solution),
    ]
    for seed, instance in zip(seeds, instances, strict=True):
        lines += [f"=== seed {seed}: instance", *_json_lines(instance)]
        lines += [f"=== seed {seed}: prompt", task.prompt(instance)]
    return "\n".join(lines) + "\n"


def check_golden(task: Task[Any, Any], tier: str, path: Path) -> None:
    """Generation matches the golden file at ``path`` (a diff otherwise), the pinned reference
    objective is still the exact optimum, and the pinned reference answer still scores 2.0."""
    _expect(path.exists(), f"no golden file {path}: write it with golden_text (tests/golden.py)")
    pinned = path.read_text()
    seeds = _seeds_of(pinned)
    fresh = golden_text(task, tier, seeds)
    pinned_data, fresh_data = _without_reference(pinned), _without_reference(fresh)
    if pinned_data != fresh_data:
        diff = difflib.unified_diff(
            pinned_data.splitlines(), fresh_data.splitlines(), str(path), "generated", lineterm=""
        )
        raise ContractError("generation changed:\n" + "\n".join(list(diff)[:200]))
    objective_line, answer = _reference_lines(pinned)
    instance = task.generate(seeds[0], tier=tier)
    objective = json.loads(objective_line.removeprefix("objective: "))
    exact = task.reference(instance).objective
    _expect(exact == objective, f"{path}: pinned objective {objective}, exact reference {exact}")
    score = task.score(instance, answer)
    _expect(score.reward == 2.0, f"{path}: the pinned answer scores {score.reward}: {score.reason}")


def golden_digest(text: str) -> str:
    """The SHA-256 a golden file's header claims, recomputed from the file's own sections."""
    hasher = hashlib.sha256()
    sections = text.removesuffix("\n").split("\n=== seed ")[1:]
    for instance_section, prompt_section in zip(sections[::2], sections[1::2], strict=True):
        fields = instance_section.split("\n", 1)[1].split("\n")
        hasher.update(("{" + ",".join(fields) + "}\n").encode())
        hasher.update((prompt_section.split("\n", 1)[1] + "\n").encode())
    return hasher.hexdigest()


def _digest(task: Task[Any, Any], instances: Sequence[Any]) -> str:
    hasher = hashlib.sha256()
    for instance in instances:
        hasher.update(instance.to_json().encode() + b"\n")
        hasher.update(task.prompt(instance).encode() + b"\n")
    return hasher.hexdigest()


def _json_lines(instance: Any) -> list[str]:
    """The instance's JSON split at its top-level fields; joined with commas inside braces it
    is exactly ``to_json()``."""
    fields = list(json.loads(instance.to_json()))
    lines = [instance.model_dump_json(include={field})[1:-1] for field in fields]
    if "{" + ",".join(lines) + "}" != instance.to_json():
        raise ContractError(f"{instance.task}: to_json() is not the model's JSON dump")
    return lines


def _seeds_of(text: str) -> tuple[int, ...]:
    first = text.split("\n", 1)[0]
    return tuple(int(seed) for seed in first.split("seeds ", 1)[1].rstrip(".").split())


def _reference_lines(text: str) -> tuple[str, str]:
    block = text.split("\n=== reference", 1)[1].split("\n=== seed ", 1)[0]
    _, objective_line, answer = block.split("\n", 2)
    return objective_line, answer.rstrip("\n")


def _without_reference(text: str) -> str:
    head, rest = text.split("\n=== reference", 1)
    return head + "\n=== seed " + rest.split("\n=== seed ", 1)[1]
