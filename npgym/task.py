"""The task contract: what a task is and supplies (generation, prompt, answer shape, verifier,
reference, optional capabilities).

A task subclass supplies the problem-specific parts: ``build`` (the generator), ``prompt``,
``to_solution`` (answer shape), ``check`` (the numba-backed verifier) and ``solve`` (reference
solvers), plus its instance and config types and tier presets. Seeding, tiers, difficulty and
memoised references live here once; scoring a completion is :mod:`npgym.scoring`'s job and the
reward formula :mod:`npgym.reward`'s.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, ClassVar, Generic, Literal, TypeVar

import numpy as np
from pydantic import BaseModel

import npgym.scoring as scoring
from npgym.answer import (
    AnswerFormatError,
    as_int_array,
    extract_answer,
    parse_value_fast,
    render_value,
)
from npgym.config import TIER_DIFFICULTY, GeneratorConfig, overrides_or_config, resolve_config
from npgym.instance import Instance
from npgym.named_arguments import kernel_values, named_values, parameter_names
from npgym.results import (
    DEFAULT_REFERENCE_KEY,
    DEFAULT_TIME_LIMIT,
    Objective,
    Reference,
    Score,
    Verdict,
    certified,
    reference_key,
)
from npgym.reward import Sense, optimality_ratio

Category = Literal[
    "graph clustering",
    "resource scheduling",
    "graph partitioning",
    "subset selection",
    "path planning",
    "composition",
]
"""The NP-Bench categories, in report order (``composition`` for the composed family tasks): a
closed set, checked when a task registers."""

InstanceT = TypeVar("InstanceT", bound=Instance)
ConfigT = TypeVar("ConfigT", bound=GeneratorConfig)


def generation_stream(seed: int, difficulty: float | None) -> int | list[int]:
    """The random stream of ``generate(seed, ...)`` at ``difficulty``.

    The benchmark tier (and a complete config passed in, ``difficulty=None``) draws from the seed
    alone, so NP-Bench's bytes never change. Every other difficulty keys the stream by the seed
    and the difficulty (in millionths), so one seed gives unrelated instances in different tiers:
    seed 5 is not the same kind of instance (the same planted structure, the same draws) at
    easy, hard and benchmark.
    """
    if difficulty is None or difficulty == TIER_DIFFICULTY["benchmark"]:
        return seed
    return [seed, round(difficulty * 1_000_000)]


class Task(ABC, Generic[InstanceT, ConfigT]):
    """One NP-hard task. Subclasses set the class attributes and implement the abstract methods."""

    name: ClassVar[str]
    category: ClassVar[Category]
    """NP-Bench category, one of :data:`Category`."""
    sense: ClassVar[Sense]
    objective_name: ClassVar[str]
    """What the objective measures, for feedback text ("tour length", "clique size")."""
    instance_type: ClassVar[type[Instance]]
    tiers: ClassVar[Mapping[str, GeneratorConfig]]

    # --- optional capabilities (npgym.capabilities): the object, or "module:attribute" -------
    episode: ClassVar[type | str | None] = None
    """Its structured-mode :class:`npgym.structured.Episode` subclass (``mode="structured"``)."""
    vector: ClassVar[type | str | None] = None
    """Its :class:`npgym.vector.BatchedEpisode` subclass: batched structured episodes
    (``gym.make_vec(..., mode="structured", vectorization_mode="vector_entry_point")``)."""
    drawer: ClassVar[Callable[..., Any] | str | None] = None
    """``draw(fig, instance, solution, partial)``: its picture (``rgb_array``, ``npgym show``)."""
    variant_maker: ClassVar[Callable[..., Any] | str | None] = None
    """``(instance, rng) -> Variant``: a variant with the same optima (``npgym.variants``)."""
    inverse: ClassVar[Any] = None
    """An :class:`npgym.inverse.InverseProblem`: its inverse problems (``Invert-<Task>``)."""

    fused_kernel: ClassVar[Callable[..., tuple[int, ...]] | None] = None
    """``score()``'s fast path (:meth:`check_answer`): a numba function that reads the answer
    bytes and checks them in one call (``staticmethod``). Its result's first item is the
    verifier's code, or :data:`npgym.results.NOT_SCANNED` when the scanner did not read the
    answer (any shape but the task's, every malformed answer: :meth:`score` then parses it with
    the full parser); the result carries everything :meth:`verdict` needs, so that equal results
    mean equal verdicts."""

    # --- generation --------------------------------------------------------------------------

    def config(
        self,
        tier: str | None = None,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | BaseModel | None = None,
    ) -> ConfigT:
        """The generator config for a tier (default ``medium``) or a difficulty in [0, 2].

        ``overrides`` lays field values over it (``{"n_min": 60, "n_max": 80}``) or replaces it
        with a complete config; bad values raise a ``pydantic.ValidationError`` naming the field.
        """
        return resolve_config(self.tiers, tier, difficulty, overrides)  # type: ignore[return-value]

    def generate(
        self,
        seed: int,
        tier: str | None = None,
        difficulty: float | None = None,
        overrides: Mapping[str, Any] | BaseModel | None = None,
        *,
        config: Mapping[str, Any] | BaseModel | None = None,
    ) -> InstanceT:
        """A fresh instance; the same arguments give the same instance on every machine.

        ``overrides`` lays generator field values over the tier or replaces its config, as in
        :meth:`config`; ``config=`` is its deprecated old name.
        """
        overrides = overrides_or_config(overrides, config, "Task.generate")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        resolved = self.config(tier, difficulty, overrides)
        if isinstance(overrides, BaseModel):
            tier, difficulty = None, None
        elif difficulty is None:
            tier = tier or "medium"
            difficulty = TIER_DIFFICULTY[tier]
        rng = np.random.default_rng(generation_stream(int(seed), difficulty))
        fields = self.build(rng, resolved)
        return self.instance_type(  # type: ignore[return-value]
            task=self.name,
            tier=tier,
            seed=int(seed),
            difficulty=difficulty,
            config=resolved.model_dump(mode="json"),
            **fields,
        )

    @abstractmethod
    def build(self, rng: np.random.Generator, config: ConfigT) -> dict[str, Any]:
        """Draw the instance's data fields from ``rng``.

        Only integer draws, ``rng.random()``, permutations and choices: they give the same values
        on every platform, whereas normal or exponential draws go through libm and may not.
        """

    def from_json(self, text: str | bytes) -> InstanceT:
        """Read an instance back from :meth:`Instance.to_json` output (validated)."""
        return self.instance_type.model_validate_json(text)  # type: ignore[return-value]

    # --- prompt -------------------------------------------------------------------------------

    @abstractmethod
    def prompt(self, instance: InstanceT) -> str:
        """The problem statement: data, objective, exact answer format, and the instruction to
        think step by step and finish with ``Answer: <answer>``. Plain ASCII."""

    # --- answers ------------------------------------------------------------------------------

    @abstractmethod
    def to_solution(self, value: Any) -> Any:
        """Coerce a parsed answer value (or a solution a user passes) into the task's solution
        shape, raising :class:`AnswerFormatError` when it does not have that shape."""

    @abstractmethod
    def check(self, instance: InstanceT, solution: Any) -> Verdict:
        """Feasibility and objective of a solution already in the task's shape."""

    def check_answer(self, instance: InstanceT, answer: bytes) -> tuple[int, ...] | None:
        """The fast path of :meth:`score`: read and check the answer text in one numba call,
        ``fused_kernel(answer, ...)``, or ``None`` for a task without a fused kernel.

        ``answer`` is the UTF-8 answer text (at most :data:`MAX_ANSWER_CHARS` characters). The
        kernel's other parameters are filled by name from the instance's attributes, else the
        task's (:mod:`npgym.named_arguments`), looked up once per instance: this generic call
        costs what a hand-written one did.
        """
        fused = self.fused_kernel
        if fused is None:
            return None
        cache = instance.__pydantic_private__["_cache"]  # type: ignore[index]  # Instance.cached's
        key = self._fused_arguments_key
        arguments = cache.get(key)
        if arguments is None:
            arguments = cache[key] = kernel_values(fused, 1, 0, instance, self)
        result: tuple[int, ...] = fused(answer, *arguments)
        return result

    @cached_property
    def _fused_arguments_key(self) -> str:
        """This task object's key for its fused-kernel arguments in an instance's cache: another
        task object, whose kernel or attributes may differ, keeps its own (an id, not the task:
        the cache travels with a pickled instance)."""
        return f"fused_arguments {id(self)}"

    def verdict(self, instance: InstanceT, result: tuple[int, ...]) -> Verdict:
        """The verdict of a raw result of :meth:`check_answer` (tasks with a fused kernel)."""
        raise NotImplementedError(f"{self.name} has no fused verifier kernel")

    def check_python(self, instance: InstanceT, solution: Any) -> Verdict:
        """The verdict of the verifier's pure-Python twin, which must equal :meth:`check`'s.

        :func:`npgym.testing.check_task` compares the two on random solutions; a task whose
        verifier has no twin leaves this unimplemented, and the check says so.
        """
        raise NotImplementedError(f"{self.name} has no pure-Python twin of its verifier")

    def parse(self, completion: str) -> Any:
        """The solution in a model's completion; raises :class:`AnswerFormatError`."""
        return self.to_solution(parse_value_fast(extract_answer(completion)))

    def verify(self, instance: InstanceT, solution: Any) -> Verdict:
        """Verdict on an already-parsed solution (a list, nested lists, an array...)."""
        try:
            shaped = self.to_solution(solution)
        except AnswerFormatError as error:
            return Verdict(False, None, str(error))
        return self.check(instance, shaped)

    def format_answer(self, solution: Any) -> str:
        """The ``Answer: ...`` text that :meth:`score` accepts for ``solution``.

        ``solution`` must already be in the task's solution shape (:meth:`to_solution`): anything
        else (a string where integers belong, a list passed as text) raises
        :class:`AnswerFormatError` rather than being rendered into text that would then parse.
        """
        return "Answer: " + render_value(self.to_solution(solution))

    # --- baselines ----------------------------------------------------------------------------

    @abstractmethod
    def random_solution(self, instance: InstanceT, rng: np.random.Generator) -> Any:
        """A random answer in the task's shape: the floor that any model should beat."""

    @abstractmethod
    def greedy_solution(self, instance: InstanceT) -> Any:
        """The task's simple constructive heuristic, without local search or proof."""

    @abstractmethod
    def baseline_solution(self, instance: InstanceT) -> Any | None:
        """The feasible answer that takes no thought, or ``None`` where no such answer exists.

        For minimisation the trivially feasible answer (every vertex its own colour, all
        subsets, the identity tour, the first balanced split); for maximisation the smallest
        non-empty one (one vertex, one item, one meeting), because an empty answer is not a
        solution. The ``"strict"`` reward measures progress from it; feasible on every instance.
        """

    def baseline(self, instance: InstanceT) -> Objective | None:
        """The objective of :meth:`baseline_solution` (``None`` without one), memoised."""
        return instance.cached("baseline", self._baseline_objective, instance)

    def _baseline_objective(self, instance: InstanceT) -> Objective | None:
        solution = self.baseline_solution(instance)
        if solution is None:
            return None
        verdict = self.verify(instance, solution)
        if not verdict.feasible:
            raise RuntimeError(f"{self.name} baseline_solution is infeasible: {verdict.reason}")
        return verdict.objective

    # --- reference ----------------------------------------------------------------------------

    def reference(
        self, instance: InstanceT, *, exact: bool = True, time_limit: float | None = None
    ) -> Reference:
        """The best known solution: heuristic, then (``exact=True``) a proof of optimality.

        ``time_limit`` (default :data:`DEFAULT_TIME_LIMIT`) is the work budget in nominal
        seconds: the same instance and limit give the same reference on every machine. Never
        raises on a valid instance; an unproven reference is ``method="heuristic"`` with a bound
        and gap. Memoised per instance, so scoring many completions of one instance solves it
        once.
        """
        if exact is True and time_limit is None:  # score()'s call: a constant key
            key, limit = DEFAULT_REFERENCE_KEY, DEFAULT_TIME_LIMIT
        else:
            limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
            if not limit >= 0:  # also refuses NaN, which would otherwise mean "no budget"
                raise ValueError(f"time_limit must be a non-negative number, got {time_limit!r}")
            key = reference_key(exact, limit)
        return instance.cached(key, self._solve, instance, exact, limit)

    def _solve(self, instance: InstanceT, exact: bool, time_limit: float) -> Reference:
        reference = self.solve(instance, exact=exact, time_limit=time_limit)
        return certified(self.name, instance.to_json(), reference)

    @abstractmethod
    def solve(self, instance: InstanceT, *, exact: bool, time_limit: float) -> Reference:
        """Compute a reference: the fast heuristic, then the exact method when ``exact``, every
        phase within a deterministic work budget of ``time_limit`` nominal seconds. Deterministic
        unless the wall-clock safety net fires, which the reference's ``solver`` then says."""

    # --- scoring ------------------------------------------------------------------------------

    def ratio(self, objective: Objective, reference_objective: Objective | None) -> float:
        """Unclipped optimality ratio of a feasible answer (docs/contract.md, "Reward")."""
        if reference_objective is None:
            raise ValueError(f"{self.name} reference has no objective")
        return optimality_ratio(objective, reference_objective, self.sense)

    score = scoring.score
    score_many = scoring.score_many
    _score_answer = scoring.score_answer
    """The steps after extraction (``npgym.scoring.score_answer``); a family overrides them."""
    _guard = scoring.guard

    def feedback(self, score: Score) -> str:
        """One line a model can act on: why the answer failed, or how good it was."""
        if not score.format_ok:
            return f"Format error: {score.reason}. Finish with 'Answer: <answer>' as instructed."
        if not score.feasible:
            return f"Infeasible: {score.reason}."
        if score.optimality >= 1.0:
            return f"Feasible and optimal: {self.objective_name} {score.objective}."
        better = "lower" if self.sense == "min" else "higher"
        return f"Feasible, {self.objective_name} {score.objective}; the best known is {better}."


KERNEL_OK = 0
"""The code with which a :class:`KernelTask`'s kernel accepts a solution."""


class KernelTask(Task[InstanceT, ConfigT]):
    """A task whose verifier follows npgym's kernel convention, declared as data.

    ``kernel(..., solution)`` is a numba function that returns ``(code, *details, objective)``,
    with ``code`` :data:`KERNEL_OK` for a feasible solution; ``twin`` is its pure-Python twin,
    called the same way on plain lists; ``reason(*details, ...)`` words a failing result. Each
    of them names its other parameters after the instance's attributes, or the task's
    (MaxClique's ``adjacent``), which fill them (:mod:`npgym.named_arguments`): the kernel's
    are those before its last :attr:`solution_part_count`, the reason's those after the
    details. An answer is a flat list of integers named ``answer_name`` in error messages (a
    task whose answer has several parts overrides ``to_solution`` and :meth:`solution_parts`).
    From these, ``to_solution``, ``check``, ``verdict``, ``explain`` and ``check_python`` are
    the same for every such task.
    """

    kernel: ClassVar[Callable[..., tuple[int, ...]]]
    """The numba verifier (wrap it in ``staticmethod``: a numba dispatcher binds like a method)."""
    twin: ClassVar[Callable[..., tuple[int, ...]]]
    """Its pure-Python twin, on lists (``staticmethod`` too)."""
    reason: ClassVar[Callable[..., str]]
    """Why the kernel refused a solution, from the result's details (``staticmethod`` too)."""
    answer_name: ClassVar[str]
    """What the answer list is, for format errors ("tour", "colouring")."""
    solution_part_count: ClassVar[int] = 1
    """How many solution arguments end the kernel's parameters (:meth:`solution_parts`)."""

    def kernel_arguments(self, instance: InstanceT) -> tuple[Any, ...]:
        """The kernel's arguments before the solution, by name (once per instance and task)."""
        trailing = self.solution_part_count
        key = self._kernel_arguments_key
        return instance.cached(key, kernel_values, self.kernel, 0, trailing, instance, self)

    @cached_property
    def _kernel_arguments_key(self) -> str:
        """As :meth:`Task._fused_arguments_key`, for the verifier kernel's arguments."""
        return f"kernel_arguments {id(self)}"

    def twin_arguments(self, instance: InstanceT) -> tuple[Any, ...]:
        """The twin's arguments: the kernel's, each array as a nested list."""
        return as_lists(self.kernel_arguments(instance))

    def explain(self, instance: InstanceT, result: tuple[int, ...]) -> str:
        """Why the kernel refused a solution, in words a person can act on: :attr:`reason` on
        the result's details (all but its objective), then its other parameters by name."""
        details = result[:-1]
        names = parameter_names(self.reason)[len(details) :]
        return self.reason(*details, *named_values(names, instance, self))

    def to_solution(self, value: Any) -> Any:
        return as_int_array(value, self.answer_name)

    def solution_parts(self, solution: Any) -> tuple[Any, ...]:
        """The kernel's solution arguments: the solution array itself, unless the answer has
        several parts (MinBisection's two sides, SetCover's list or claim), each then an
        argument of its own."""
        return (solution,)

    def check(self, instance: InstanceT, solution: Any) -> Verdict:
        parts = self.solution_parts(solution)
        return self.verdict(instance, self.kernel(*self.kernel_arguments(instance), *parts))

    def verdict(self, instance: InstanceT, result: tuple[int, ...]) -> Verdict:
        if result[0] != KERNEL_OK:
            return Verdict(False, None, self.explain(instance, result))
        return Verdict(True, int(result[-1]))

    def check_python(self, instance: InstanceT, solution: Any) -> Verdict:
        parts = as_lists(self.solution_parts(solution))
        result = self.twin(*self.twin_arguments(instance), *parts)
        return self.verdict(instance, result)


def as_lists(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """``values`` with each array as a nested list (what a pure-Python twin takes)."""
    return tuple(value.tolist() if isinstance(value, np.ndarray) else value for value in values)
