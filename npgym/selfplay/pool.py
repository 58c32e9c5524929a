"""The self-play pool: instances a policy wrote, admitted only when proven, new and not trivial.

:meth:`SelfPlayPool.offer` takes a completion that writes an instance of a base task: the
answer to an Invert prompt (``npgym/Invert-<Task>-<tier>`` with the prompt's seed), or an
instance in the task's JSON form (``npgym/<Task>-<tier>``). Both are read by the Invert family's
own reader, with its caps (:mod:`npgym.families.invert`: one JSON object of at most 20,000
characters with exactly the canonical fields, at most 2,000 integers of magnitude at most
10**6...), and a size of at most the task's Invert size cap (``InverseProblem.size_cap``, the
largest size an Invert prompt states: within it every reference below settles in well under a
second). The checks run cheapest first; the first that fails is the refusal's reason
(:data:`REASONS`), counted per reason (:meth:`SelfPlayPool.counts`):

1. ``format``: no answer could be read, or it is over the caps;
2. ``invalid``: read, but not a valid instance of the base task (its validators);
3. ``duplicate``: its fingerprint (:meth:`npgym.instance.Instance.fingerprint`) is already in the
   pool;
4. ``benchmark``: it is one of NP-Bench's instances (``exclude_benchmark=True``, the default):
   its fingerprint is one of :func:`npgym.datasets.benchmark_fingerprints`, or, for the tasks
   with an NP-Bench instance small enough to be written at all (MaxClique, SubsetSum, SetCover
   and MeetingScheduling; the others' NP-Bench instances are all larger than the size cap, so
   no relabelling of them can be written either), its relabelling-invariant key
   (:func:`relabelling_key`) is one of theirs: a relabelled (or, for SubsetSum, rescaled) copy
   of an NP-Bench instance is refused too;
5. ``generated``: it is an instance of the generator's stream: ``task.generate(seed, tier=t)``
   for the ``stream_seeds`` seeds from ``stream_seed`` and every tier (fingerprints computed on
   the task's first offer and kept: 0.5 to 3.4 ms an instance on one core, so 2 s (SubsetSum)
   to 14 s (MeetingScheduling) once per task for the default :data:`DEFAULT_STREAM_SEEDS`,
   about a minute for all ten tasks), or one the attached ``curriculum`` has issued;
6. ``unproven``: its reference (:meth:`npgym.task.Task.reference`, exact, whose gate checks the
   certificate) is not proven optimal, or has no certificate where :mod:`npgym.certificates`
   has a checker for the task;
7. ``trivial``: the hardness measure says it is trivial.

Otherwise it is ``admitted``: a :class:`PoolEntry` with its proven reference and its
:class:`Provenance` (the env id, the prompt's seed, the trainer step, the model tag, and for an
Invert answer the property it was written for and whether it holds, by the Invert task's own
check: the author's reward; an instance that misses its property is still admitted, since
admission is about the instance).

The cost of an offer, once the novelty sets are built, is mostly the reference's: for Invert
witnesses on one core, a median of 29 ms for TSP (90th percentile 83 ms), 1 ms for Knapsack
(14 ms), 2 ms for hard MaxClique instances (16 ms); a refusal before the proof costs tens of
microseconds.

**Hardness** (``hardness=``): ``"greedy"`` (the default) calls an instance trivial when the
task's shipped greedy heuristic (:func:`npgym.families.invert.greedy_objective`, the one the
Invert ``greedy_gap`` prompts describe) reaches the proven optimum, or when neither has a
feasible answer; ``"none"`` calls nothing trivial; a callable ``(task, instance, reference) ->
bool`` returns True when the instance is hard enough.

**Never raises on a completion**: every failure is an :class:`Admission` with its reason. Bad
arguments (an unknown env id, a family id other than Invert, a task outside the pool's, an Invert
offer without its ``prompt_seed``, a model tag over :data:`MAX_MODEL_CHARS` characters) raise
``ValueError``. An unexpected exception while checking is a bug: it is a ``format`` refusal
whose detail names the step, logged and counted in :data:`npgym.scoring.GUARD_TRIPS` (which the
tests insist stays empty), as :func:`npgym.scoring.score` does. A callable hardness measure
runs outside that guard: its exceptions reach the caller.

**Journal** (``journal=``): the pool persists in an append-only journal
(:mod:`npgym.selfplay.journal`) with the curriculum journal's guarantees; reopening it replays
to the same pool, counts and bytes. The same stream of offers gives the same pool, counts and
journal bytes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

import npgym.certificates as certificates
from npgym.answer import AnswerFormatError, decode_completion, extract_answer
from npgym.capabilities import capability
from npgym.config import TIERS
from npgym.families.invert import InvertInstance, InvertTask, greedy_objective
from npgym.instance import Instance
from npgym.inverse import InverseProblem
from npgym.registry import ENV_NAMESPACE, get_task, list_tasks
from npgym.results import Reference
from npgym.scoring import GUARD_TRIPS
from npgym.selfplay.journal import LineTooLongError, PoolJournal, PoolJournalError, read_options
from npgym.task import Task

if TYPE_CHECKING:
    from npgym.curriculum import AdaptiveCurriculum

REASONS: tuple[str, ...] = (
    "admitted",
    "format",
    "invalid",
    "unproven",
    "duplicate",
    "generated",
    "benchmark",
    "trivial",
)
"""Every :attr:`Admission.reason`: ``admitted`` or why an offer was refused."""
MAX_MODEL_CHARS = 200
"""Longest model tag (:attr:`Provenance.model`), in characters."""
MAX_ENV_ID_CHARS = 100
"""Longest env id an offer may name, in characters."""
MAX_DETAIL_CHARS = 300
"""An admission's :attr:`Admission.detail` is cut to this many characters (one log line)."""
INVERT_CACHE_SIZE = 256
"""Invert instances (by env id and prompt seed) kept after regenerating them for an offer."""
DEFAULT_STREAM_SEEDS = 1000
"""Seeds of the generator's stream a pool refuses by default (``stream_seeds=``): each task's
4,000 fingerprints (every tier) cost 2 to 14 s once, on the task's first offer."""
INVERT_PREFIX = "Invert-"

_log = logging.getLogger("npgym")

Hardness = Callable[[Task[Any, Any], Instance, Reference], bool]
"""A hardness measure: ``(task, instance, proven reference) -> True`` when hard enough."""
HARDNESS_NAMES = ("greedy", "none")
"""The named hardness measures (see the module docstring)."""


@dataclass(frozen=True)
class Provenance:
    """Where an admitted instance comes from."""

    env_id: str
    """The env id it was offered under (``npgym/Invert-TSP-easy``, ``npgym/TSP-hard``)."""
    prompt_seed: int | None
    """The Invert prompt's seed (which prompt); ``None`` for a free-form instance."""
    step: int | None = None
    """The trainer step."""
    model: str | None = None
    """The model tag, at most :data:`MAX_MODEL_CHARS` characters."""
    property: str | None = None
    """The Invert property it was written for (``optimum``, ``unique``, ``greedy_gap``)."""
    property_held: bool | None = None
    """Whether the Invert check passed (the author's score); ``None`` for a free-form one."""


@dataclass(frozen=True)
class PoolEntry:
    """An admitted instance: its base task, the instance, its proven reference, provenance."""

    index: int
    """Admission order: 0, 1, 2, ..."""
    task: str
    instance: Instance
    reference: Reference
    """Proven optimal, with a certificate where :mod:`npgym.certificates` has a checker."""
    fingerprint: str
    provenance: Provenance


@dataclass(frozen=True)
class Admission:
    """The result of :meth:`SelfPlayPool.offer`."""

    admitted: bool
    reason: str
    """One of :data:`REASONS`."""
    detail: str
    """One line for logs (at most :data:`MAX_DETAIL_CHARS` characters)."""
    task: str | None
    """The base task's name, once known."""
    fingerprint: str | None
    """The written instance's fingerprint, once it was read."""
    entry: PoolEntry | None
    """The admitted entry (``None`` for a refusal)."""


@dataclass(frozen=True)
class _Target:
    """What an env id names: the base task, its Invert family task, the tier, and whether the
    offer answers an Invert prompt."""

    base: Task[Any, Any]
    invert: InvertTask
    tier: str
    is_invert: bool


class _RefusedError(Exception):
    """A refusal on the way through :meth:`SelfPlayPool.offer`'s checks."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def writable_tasks() -> list[str]:
    """The registered tasks an instance can be written for (those with an Invert family)."""
    return [name for name in list_tasks() if _inverse(get_task(name)) is not None]


def _inverse(task: Task[Any, Any]) -> InverseProblem | None:
    try:
        problem: InverseProblem = capability(task, "inverse")
    except (LookupError, ValueError, TypeError):
        return None
    return problem


class SelfPlayPool:
    """Instances written by a policy, each admitted only when proven, new and not trivial (see
    the module docstring for the checks, the hardness measures and the journal).

    >>> pool = SelfPlayPool(["TSP", "Knapsack"])
    >>> admission = pool.offer("npgym/Invert-TSP-easy", completion, prompt_seed=3, step=10)
    >>> admission.admitted, admission.reason
    """

    def __init__(
        self,
        tasks: Sequence[str] | None = None,
        *,
        journal: str | Path | None = None,
        hardness: str | Hardness = "greedy",
        stream_seed: int = 0,
        stream_seeds: int = DEFAULT_STREAM_SEEDS,
        curriculum: AdaptiveCurriculum | None = None,
        exclude_benchmark: bool = True,
    ) -> None:
        names = writable_tasks() if tasks is None else [get_task(name).name for name in tasks]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"give one or more distinct tasks, got {tasks!r}")
        for name in names:
            if _inverse(get_task(name)) is None:
                raise ValueError(f"{name} has no Invert family: no instance of it can be written")
        if isinstance(hardness, str) and hardness not in HARDNESS_NAMES:
            raise ValueError(f"hardness must be one of {HARDNESS_NAMES} or a callable")
        if not isinstance(hardness, str) and not callable(hardness):
            raise ValueError(f"hardness must be one of {HARDNESS_NAMES} or a callable")
        for label, value in (("stream_seed", stream_seed), ("stream_seeds", stream_seeds)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{label} must be a non-negative integer, got {value!r}")
        self.tasks: tuple[str, ...] = tuple(names)
        self.hardness = hardness
        self.stream_seed = stream_seed
        self.stream_seeds = stream_seeds
        self.curriculum = curriculum
        self.exclude_benchmark = bool(exclude_benchmark)
        self._entries: list[PoolEntry] = []
        self._by_fingerprint: dict[str, PoolEntry] = {}
        self._counts: Counter[str] = Counter()
        self._streams: dict[str, frozenset[str]] = {}
        self._benchmark: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._prompts: OrderedDict[tuple[str, int], InvertInstance] = OrderedDict()
        self._journal: PoolJournal | None = None
        if journal is not None:
            self._journal = PoolJournal(journal, self.options(), self._apply)

    @classmethod
    def open(
        cls,
        journal: str | Path,
        *,
        curriculum: AdaptiveCurriculum | None = None,
        hardness: Hardness | None = None,
    ) -> SelfPlayPool:
        """The pool of an existing journal, with the options its header names (what a process
        that knows only the journal's path, such as a reward worker, opens). ``curriculum`` is
        needed when the header says one was attached, ``hardness`` when it names a callable
        (whose name must match); :class:`~npgym.selfplay.journal.PoolJournalError` otherwise."""
        options = dict(read_options(journal))
        named = options.get("hardness")
        if isinstance(named, str) and named.startswith("callable:"):
            if hardness is None or _callable_name(hardness) != named:
                raise PoolJournalError(
                    f"self-play pool journal {journal}: its pool used the hardness measure "
                    f"{named.removeprefix('callable:')!r}: pass it as hardness="
                )
            options["hardness"] = hardness
        if options.pop("curriculum", False) is not (curriculum is not None):
            raise PoolJournalError(
                f"self-play pool journal {journal}: its pool had "
                f"{'a' if curriculum is None else 'no'} curriculum attached: pass the same"
            )
        try:
            return cls(journal=journal, curriculum=curriculum, **options)
        except TypeError as error:
            raise PoolJournalError(f"self-play pool journal {journal}: {error}") from error

    # --- reading --------------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """The options that decide admissions (a journal's header names them)."""
        hardness = self.hardness
        return {
            "tasks": list(self.tasks),
            "hardness": hardness if isinstance(hardness, str) else _callable_name(hardness),
            "stream_seed": self.stream_seed,
            "stream_seeds": self.stream_seeds,
            "curriculum": self.curriculum is not None,
            "exclude_benchmark": self.exclude_benchmark,
        }

    def sync(self) -> None:
        """Catch up with the journal (other processes' offers); nothing without a journal.
        Every reader below and :meth:`offer` call it."""
        if self._journal is not None:
            self._journal.sync()

    def __len__(self) -> int:
        self.sync()
        return len(self._entries)

    def entries(self) -> Sequence[PoolEntry]:
        """The admitted entries, in admission order."""
        self.sync()
        return tuple(self._entries)

    def entry(self, fingerprint: str) -> PoolEntry:
        """The entry with this fingerprint (``KeyError`` when there is none)."""
        self.sync()
        return self._by_fingerprint[fingerprint]

    def counts(self) -> dict[str, int]:
        """How many offers ended with each reason (every reason of :data:`REASONS`)."""
        self.sync()
        return {reason: self._counts[reason] for reason in REASONS}

    # --- offering -------------------------------------------------------------------------------

    def offer(
        self,
        env_id: str,
        completion: str,
        *,
        prompt_seed: int | None = None,
        step: int | None = None,
        model: str | None = None,
    ) -> Admission:
        """Check the instance ``completion`` writes and admit it or say why not (see the module
        docstring). Never raises on the completion; bad arguments raise ``ValueError``."""
        target = self._target(env_id)
        prompt = self._check_arguments(target, env_id, prompt_seed, step, model)
        task = target.base.name
        fingerprint: str | None = None
        self.sync()
        step_name = "read"
        try:
            try:
                written, fields = self._read(target, completion)
                fingerprint = written.fingerprint()
                step_name = "novelty"
                self._check_new(task, written, fingerprint)
                step_name = "proof"
                reference = self._check_proven(target.base, written)
                step_name = "hardness"
                if isinstance(self.hardness, str):
                    self._check_hard(target.base, written, reference)
                step_name = "property"
                provenance = Provenance(env_id, prompt_seed, step, model)
                if prompt is not None:
                    verdict = target.invert.check(prompt, fields)
                    held = verdict.feasible and verdict.objective == 1
                    provenance = Provenance(env_id, prompt_seed, step, model, prompt.property, held)
            except (AnswerFormatError, RecursionError) as error:
                raise _RefusedError("format", str(error)) from None
        except _RefusedError as refusal:
            return self._refuse(refusal.reason, refusal.detail, task, fingerprint)
        except Exception as error:  # the last-resort guard: a bug, never the author's fault
            GUARD_TRIPS[(task, f"selfplay {step_name}")] += 1
            _log.exception("npgym %s: unexpected error in the self-play %s step", task, step_name)
            detail = (
                f"internal error in the {step_name} step ({type(error).__name__}); please report"
            )
            return self._refuse("format", detail, task, fingerprint)
        if not isinstance(self.hardness, str) and not self.hardness(
            target.base, written, reference
        ):
            return self._refuse(
                "trivial", "the hardness measure calls it trivial", task, fingerprint
            )
        return self._admit(task, written, reference, fingerprint, provenance)

    def _target(self, env_id: object) -> _Target:
        """What ``env_id`` names; ``ValueError`` for anything but an Invert or base task id of
        one of the pool's tasks."""
        if not isinstance(env_id, str) or len(env_id) > MAX_ENV_ID_CHARS:
            raise ValueError(f"env_id must be a string of at most {MAX_ENV_ID_CHARS} characters")
        namespace, _, rest = env_id.partition("/")
        name, _, tier = rest.rpartition("-")
        if namespace != ENV_NAMESPACE or tier not in TIERS or not name:
            raise ValueError(
                f"env_id {env_id!r} is not {ENV_NAMESPACE}/<Task>-<tier> or "
                f"{ENV_NAMESPACE}/Invert-<Task>-<tier> (tiers: {', '.join(TIERS)})"
            )
        is_invert = name.startswith(INVERT_PREFIX)
        base_name = name.removeprefix(INVERT_PREFIX)
        if base_name not in self.tasks:
            raise ValueError(
                f"env_id {env_id!r} does not name an Invert or base task of this pool "
                f"({', '.join(self.tasks)})"
            )
        invert = get_task(INVERT_PREFIX + base_name)
        assert isinstance(invert, InvertTask)
        return _Target(get_task(base_name), invert, tier, is_invert)

    def _check_arguments(
        self,
        target: _Target,
        env_id: str,
        prompt_seed: int | None,
        step: int | None,
        model: str | None,
    ) -> InvertInstance | None:
        """Check the offer's arguments; the Invert prompt's instance for an Invert offer."""
        for label, value in (("prompt_seed", prompt_seed), ("step", step)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ValueError(f"{label} must be a non-negative integer or None, got {value!r}")
        if model is not None and (not isinstance(model, str) or len(model) > MAX_MODEL_CHARS):
            raise ValueError(f"model must be a string of at most {MAX_MODEL_CHARS} characters")
        if not target.is_invert:
            return None
        if prompt_seed is None:
            raise ValueError(f"an offer for {env_id} needs the prompt's seed (prompt_seed=)")
        key = (env_id, prompt_seed)
        prompt = self._prompts.get(key)
        if prompt is None:
            prompt = target.invert.generate(prompt_seed, tier=target.tier)
            self._prompts[key] = prompt
            while len(self._prompts) > INVERT_CACHE_SIZE:
                self._prompts.popitem(last=False)
        else:
            self._prompts.move_to_end(key)
        return prompt

    def _read(self, target: _Target, completion: object) -> tuple[Instance, dict[str, Any]]:
        """The written instance and its fields, read as an Invert answer of the task is, with
        the size cap of its Invert prompts (``format`` and ``invalid`` refusals)."""
        if isinstance(completion, bytes):
            completion = decode_completion(completion)
        if not isinstance(completion, str):
            raise _RefusedError(
                "format", f"the completion is not text ({type(completion).__name__})"
            )
        invert = target.invert
        fields = invert.to_solution(invert.parse_segment(extract_answer(completion)))
        try:
            written = target.base.instance_type.model_validate(fields)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            problem = f"{where}: {first['msg']}" if where else first["msg"]
            raise _RefusedError(
                "invalid", f"not a valid {target.base.name} instance: {problem}"
            ) from None
        size, cap = invert.problem.size(written), invert.problem.size_cap
        if size > cap:
            unit = invert.problem.unit
            raise _RefusedError("format", f"{size} {unit}, over the cap of {cap} {unit}")
        return written, fields

    def _check_new(self, task: str, written: Instance, fingerprint: str) -> None:
        """Refuse a duplicate, an NP-Bench instance and one of the generator's stream."""
        if fingerprint in self._by_fingerprint:
            index = self._by_fingerprint[fingerprint].index
            raise _RefusedError("duplicate", f"the same instance as pool entry {index}")
        if self.exclude_benchmark:
            exact, relabelled = self._benchmark_keys(task)
            if fingerprint in exact:
                raise _RefusedError("benchmark", "one of NP-Bench's instances")
            if relabelled and relabelling_key(written) in relabelled:
                raise _RefusedError("benchmark", "a relabelled copy of one of NP-Bench's instances")
        if fingerprint in self.stream_fingerprints(task):
            raise _RefusedError(
                "generated",
                f"an instance of the generator's stream (seeds {self.stream_seed} to "
                f"{self.stream_seed + self.stream_seeds - 1}, every tier)",
            )
        if self.curriculum is not None and self.curriculum.issued(fingerprint):
            raise _RefusedError("generated", "an instance the curriculum has issued")

    def _check_proven(self, base: Task[Any, Any], written: Instance) -> Reference:
        """The written instance's reference, refused unless proven (with a certificate where
        the task has a checker)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reference = base.reference(written)
        if not reference.proven_optimal:
            why = f" ({caught[0].message})" if caught else ""
            raise _RefusedError("unproven", f"its reference is not proven optimal{why}")
        if certificates.has_checker(base.name) and reference.certificate is None:
            raise _RefusedError("unproven", "its proven reference has no certificate")
        return reference

    def _check_hard(self, base: Task[Any, Any], written: Instance, reference: Reference) -> None:
        """Refuse an instance a named hardness measure calls trivial (a callable one runs
        outside the guard of :meth:`offer`: its exceptions are the caller's)."""
        if self.hardness == "greedy":
            greedy = greedy_objective(base, written)
            optimum = reference.objective
            if greedy is None and optimum is None:
                raise _RefusedError("trivial", "it has no feasible answer, nor has the greedy")
            if greedy is not None and optimum is not None and base.ratio(greedy, optimum) >= 1.0:
                raise _RefusedError(
                    "trivial", f"the greedy heuristic reaches the optimum {optimum}"
                )

    # --- novelty sets ---------------------------------------------------------------------------

    def stream_fingerprints(self, task: str) -> frozenset[str]:
        """Fingerprints of the generator's stream for ``task``: ``generate(seed, tier=t)`` for
        the pool's seeds and every tier, computed on first use and kept."""
        name = get_task(task).name
        kept = self._streams.get(name)
        if kept is None:
            base = get_task(name)
            seeds = range(self.stream_seed, self.stream_seed + self.stream_seeds)
            kept = frozenset(
                base.generate(seed, tier=tier).fingerprint() for seed in seeds for tier in TIERS
            )
            self._streams[name] = kept
        return kept

    def _benchmark_keys(self, task: str) -> tuple[frozenset[str], frozenset[str]]:
        """NP-Bench's fingerprints for ``task`` and, where the task has a relabelling key and
        one of its NP-Bench instances is within the caps, their relabelling keys."""
        kept = self._benchmark.get(task)
        if kept is None:
            from npgym.datasets import BENCH_SIZE, DatasetSpec, benchmark_fingerprints, drawn

            exact = benchmark_fingerprints([task])
            relabelled: frozenset[str] = frozenset()
            if task in RELABELLING_KEYS:
                spec = DatasetSpec(tasks=(task,), count=BENCH_SIZE, seed=0, reference="none")
                relabelled = frozenset(relabelling_key(i) for _, i in drawn(spec, {}))
            kept = self._benchmark[task] = (exact, relabelled)
        return kept

    # --- results --------------------------------------------------------------------------------

    def _refuse(self, reason: str, detail: str, task: str, fingerprint: str | None) -> Admission:
        if self._journal is not None:
            self._journal.write(lambda: {"refuse": reason})
        else:
            self._counts[reason] += 1
        return Admission(False, reason, _one_line(detail), task, fingerprint, None)

    def _admit(
        self,
        task: str,
        written: Instance,
        reference: Reference,
        fingerprint: str,
        provenance: Provenance,
    ) -> Admission:
        """Admit ``written`` (an entry built from its journal event, as a replay builds it),
        or refuse it as a duplicate when another process sharing the journal admitted it
        first, or as over the caps when its journal line would be."""
        event = _admission_event(task, written, reference, fingerprint, provenance)
        if self._journal is None:
            self._apply(event)
        else:
            chosen: list[dict[str, Any]] = []

            def admission_or_duplicate() -> dict[str, Any]:
                """The admission, unless another process admitted the instance meanwhile."""
                taken = fingerprint in self._by_fingerprint
                chosen.append({"refuse": "duplicate"} if taken else event)
                return chosen[-1]

            try:
                self._journal.write(admission_or_duplicate)
            except LineTooLongError as error:
                return self._refuse("format", str(error), task, fingerprint)
            if chosen[-1] is not event:
                index = self._by_fingerprint[fingerprint].index
                detail = f"the same instance as pool entry {index}, admitted by another process"
                return Admission(False, "duplicate", detail, task, fingerprint, None)
        entry = self._by_fingerprint[fingerprint]
        return Admission(True, "admitted", f"pool entry {entry.index}", task, fingerprint, entry)

    def _apply(self, event: Any) -> None:
        """Apply one journal event (an offer's, or a journal line's on replay)."""
        if isinstance(event, dict) and event.keys() == {"refuse"}:
            reason = event["refuse"]
            if reason not in REASONS or reason == "admitted":
                raise PoolJournalError(f"unknown refusal reason {reason!r:.100}")
            self._counts[reason] += 1
            return
        if not isinstance(event, dict) or event.keys() != {"admit"}:
            raise PoolJournalError(f"not a self-play pool journal line: {event!r:.200}")
        admit = event["admit"]
        if not isinstance(admit, dict) or admit.keys() != set(_ADMISSION_FIELDS):
            raise PoolJournalError(f"malformed admission: {admit!r:.200}")
        task = admit["task"]
        if task not in self.tasks:
            raise PoolJournalError(f"an admission of {task!r:.100}, not one of the pool's tasks")
        instance = get_task(task).instance_type.model_validate(admit["instance"])
        fingerprint = instance.fingerprint()
        if fingerprint != admit["fingerprint"]:
            raise PoolJournalError("the instance's fingerprint is not the one written with it")
        if fingerprint in self._by_fingerprint:
            raise PoolJournalError("an instance admitted twice")
        reference = Reference.model_validate(admit["reference"])
        provenance = Provenance(**admit["provenance"])
        entry = PoolEntry(len(self._entries), task, instance, reference, fingerprint, provenance)
        self._entries.append(entry)
        self._by_fingerprint[fingerprint] = entry
        self._counts["admitted"] += 1


_ADMISSION_FIELDS = ("task", "fingerprint", "instance", "reference", "provenance")


def _admission_event(
    task: str, written: Instance, reference: Reference, fingerprint: str, provenance: Provenance
) -> dict[str, Any]:
    """An admission as its journal line holds it (plain JSON values)."""
    fields = written.model_dump_json(include=set(written.canonical_fields))
    values = (
        task,
        fingerprint,
        json.loads(fields),
        json.loads(reference.model_dump_json()),
        dataclasses.asdict(provenance),
    )
    return {"admit": dict(zip(_ADMISSION_FIELDS, values, strict=True))}


def _callable_name(function: Hardness) -> str:
    """How a journal header names a callable hardness measure."""
    module = getattr(function, "__module__", "?")
    return f"callable:{module}.{getattr(function, '__qualname__', '?')}"


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_DETAIL_CHARS else line[: MAX_DETAIL_CHARS - 3] + "..."


# --- relabelling keys ---------------------------------------------------------------------------


def _graph_key(n: int, edges: Sequence[Sequence[int]], labels: Sequence[str] | None = None) -> str:
    """A key equal for isomorphic graphs (vertex ``labels`` kept): the Weisfeiler-Lehman hash
    with the sorted degree sequence. Non-isomorphic graphs may share it (rarely), which only
    refuses more."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((int(u), int(v)) for u, v in edges)
    nx.set_node_attributes(graph, dict(enumerate(labels or ["v"] * n)), "label")
    degrees = sorted(degree for _, degree in graph.degree())
    wl = nx.weisfeiler_lehman_graph_hash(graph, node_attr="label")
    return json.dumps([n, degrees, wl])


def _max_clique_key(instance: Any) -> str:
    return _graph_key(instance.n, instance.edges)


def _subset_sum_key(instance: Any) -> str:
    """Sorted numbers and target, divided by their common divisor (relabelling and scaling)."""
    numbers = [int(x) for x in instance.numbers]
    divisor = math.gcd(*numbers, int(instance.target)) or 1
    return json.dumps([sorted(x // divisor for x in numbers), int(instance.target) // divisor])


def _set_cover_key(instance: Any) -> str:
    """The element-subset incidence graph, elements and subsets told apart."""
    universe = int(instance.universe_size)
    subsets = list(instance.subsets)
    labels = ["e"] * universe + ["s"] * len(subsets)
    edges = [(element, universe + i) for i, subset in enumerate(subsets) for element in subset]
    return _graph_key(universe + len(subsets), edges, labels)


def _meeting_scheduling_key(instance: Any) -> str:
    """The meeting-attendee graph (meetings labelled by duration, attendees by availability),
    with the sorted rooms and the slot."""
    meetings, availability = list(instance.meetings), list(instance.availability)
    labels = [f"m{meeting.duration}" for meeting in meetings]
    labels += [f"a{json.dumps([list(w) for w in windows])}" for windows in availability]
    edges = [
        (i, len(meetings) + attendee)
        for i, meeting in enumerate(meetings)
        for attendee in meeting.attendees
    ]
    graph = _graph_key(len(labels), edges, labels)
    return json.dumps([graph, sorted(int(r) for r in instance.rooms), int(instance.slot)])


RELABELLING_KEYS: dict[str, Callable[[Any], str]] = {
    "MaxClique": _max_clique_key,
    "SubsetSum": _subset_sum_key,
    "SetCover": _set_cover_key,
    "MeetingScheduling": _meeting_scheduling_key,
}
"""Relabelling-invariant keys of the tasks with NP-Bench instances within the Invert caps (the
others have none: a test checks it)."""


def relabelling_key(instance: Instance) -> str:
    """A key equal for an instance and its relabellings (:mod:`npgym.variants`' relabelling;
    SubsetSum's rescaling too), prefixed with the task; the fingerprint for other tasks."""
    key = RELABELLING_KEYS.get(instance.task)
    return f"{instance.task}:{key(instance) if key is not None else instance.fingerprint()}"
