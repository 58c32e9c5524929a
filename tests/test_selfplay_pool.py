"""The self-play pool: every reason reached by a hand-built case, hostile completions, the
journal (torn tail, bounded lines, replay, sharing) and determinism."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npgym.config import TIERS
from npgym.curriculum import AdaptiveCurriculum
from npgym.datasets import BENCH_SIZE, DatasetSpec, drawn
from npgym.families.invert import MAX_ANSWER_CHARS, InvertTask, _fields
from npgym.journal import JournalWarning
from npgym.registry import get_task
from npgym.results import Reference
from npgym.selfplay import (
    MAX_MODEL_CHARS,
    REASONS,
    Admission,
    PoolEntry,
    Provenance,
    SelfPlayPool,
    relabelling_key,
    writable_tasks,
)
from npgym.selfplay import journal as pool_journal
from npgym.selfplay.journal import JOURNAL_FORMAT, PoolJournalError
from npgym.selfplay.pool import RELABELLING_KEYS
from npgym.variants import variant

TASKS = ["TSP", "Knapsack", "MaxClique", "SubsetSum"]
STREAM = 10
"""Seeds of the generator's stream in these tests (the default, 1,000, costs seconds)."""


def _pool(**options: Any) -> SelfPlayPool:
    return SelfPlayPool(TASKS, stream_seeds=STREAM, **options)


def _answer(fields: Any) -> str:
    return "I thought about it.\nAnswer: " + json.dumps(fields, separators=(",", ":"))


def _witness(task: str, seed: int, tier: str = "easy") -> str:
    """An Invert prompt's own witness: a correct answer with the property."""
    invert = get_task(f"Invert-{task}")
    return _answer(invert.generate(seed, tier=tier).witness)


def _admitted_invert(pool: SelfPlayPool, task: str) -> tuple[int, Admission]:
    """The first Invert-<task> easy prompt whose witness is admitted, with its admission."""
    for seed in range(30):
        admission = pool.offer(f"npgym/Invert-{task}-easy", _witness(task, seed), prompt_seed=seed)
        if admission.admitted:
            return seed, admission
    raise AssertionError(f"no {task} witness admitted in 30 prompts")


def _hard_max_clique(seed: int) -> dict[str, Any]:
    """A MaxClique instance off the stream's tiers on which the greedy misses the optimum."""
    task = get_task("MaxClique")
    from npgym.families.invert import greedy_objective

    for candidate in range(seed, seed + 50):
        instance = task.generate(candidate, difficulty=0.9)
        if greedy_objective(task, instance) != task.reference(instance).objective:
            return _fields(instance)
    raise AssertionError("no hard MaxClique instance")


# --- each reason --------------------------------------------------------------------------------


def test_a_correct_new_invert_answer_is_admitted_with_its_provenance() -> None:
    pool = _pool()
    seed, admission = _admitted_invert(pool, "TSP")
    assert admission.admitted and admission.reason == "admitted" and admission.task == "TSP"
    entry = admission.entry
    assert isinstance(entry, PoolEntry) and entry.index == 0 and len(pool) == 1
    assert entry.fingerprint == admission.fingerprint == entry.instance.fingerprint()
    assert entry.reference.proven_optimal and entry.reference.certificate is not None
    prompt = get_task("Invert-TSP").generate(seed, tier="easy")
    assert entry.provenance == Provenance(
        "npgym/Invert-TSP-easy", seed, None, None, prompt.property, True
    )
    assert pool.entries() == (entry,) and pool.entry(entry.fingerprint) == entry
    assert pool.counts()["admitted"] == 1


def test_provenance_records_step_model_and_a_property_that_fails() -> None:
    """An instance that misses its prompt's property is still admitted (admission is about the
    instance); the property's failure is recorded."""
    pool = _pool()
    fields = _hard_max_clique(20_000)
    prompt_seed = 0
    admission = pool.offer(
        "npgym/Invert-MaxClique-easy",
        _answer(fields),
        prompt_seed=prompt_seed,
        step=12,
        model="m" * MAX_MODEL_CHARS,
    )
    assert admission.admitted, admission
    assert admission.entry is not None
    provenance = admission.entry.provenance
    assert (provenance.step, provenance.model) == (12, "m" * MAX_MODEL_CHARS)
    assert provenance.property == "optimum" and provenance.property_held is False


def test_a_free_form_instance_is_admitted_without_a_property() -> None:
    pool = _pool()
    admission = pool.offer("npgym/MaxClique-hard", _answer(_hard_max_clique(20_000)), step=3)
    assert admission.admitted and admission.entry is not None
    assert admission.entry.provenance == Provenance("npgym/MaxClique-hard", None, 3)


@pytest.mark.parametrize(
    ("completion", "why"),
    [
        ("no answer here", "no 'Answer:' marker"),
        ("Answer: [1, 2, 3]", "JSON object"),
        ('Answer: {"weights":[1],"values":[1]}', "exactly the fields"),
        ('Answer: {"weights":[1],"values":[1],"capacity":1.5}', "only integers"),
        ('Answer: {"weights":[1],"values":[1],"capacity":10000000}', "exceeds the cap"),
        ('Answer: {"weights":[1],"values":[1],"capacity":' + "1" * 30_000 + "}", "JSON"),
        ("Answer: " + "{" * 200, "deep"),
    ],
)
def test_unreadable_or_over_the_caps_is_format(completion: str, why: str) -> None:
    admission = _pool().offer("npgym/Knapsack-easy", completion)
    assert (admission.reason, admission.admitted, admission.fingerprint) == ("format", False, None)
    assert why in admission.detail


def test_a_size_past_the_invert_size_cap_is_format_and_at_it_is_read() -> None:
    """The size cap of the task's Invert prompts (Knapsack: 40 items) is a cap of the pool."""
    cap = get_task("Invert-Knapsack").problem.size_cap
    pool = _pool(hardness="none")

    def items(count: int) -> str:
        weights = list(range(1, count + 1))
        return _answer({"weights": weights, "values": weights[::-1], "capacity": count * 3})

    past = pool.offer("npgym/Knapsack-easy", items(cap + 1))
    assert past.reason == "format" and f"over the cap of {cap} items" in past.detail
    at = pool.offer("npgym/Knapsack-easy", items(cap))
    assert at.reason == "admitted", at


@pytest.mark.parametrize(
    ("env_id", "fields", "why"),
    [
        ("npgym/Knapsack-easy", {"weights": [1, 2], "values": [1], "capacity": 3}, "values"),
        ("npgym/Knapsack-easy", {"weights": [-1, 2], "values": [1, 4], "capacity": 3}, "weighs"),
        ("npgym/TSP-easy", {"distances": [[0, 1], [1, 0]]}, "3 to"),
        ("npgym/TSP-easy", {"distances": [[1, 1, 2], [1, 0, 3], [2, 3, 0]]}, "itself"),
    ],
)
def test_an_instance_its_validators_refuse_is_invalid(
    env_id: str, fields: dict[str, Any], why: str
) -> None:
    admission = _pool().offer(env_id, _answer(fields))
    assert admission.reason == "invalid" and why in admission.detail


def test_the_same_instance_twice_is_a_duplicate_however_it_is_offered() -> None:
    pool = _pool()
    seed, first = _admitted_invert(pool, "Knapsack")
    again = pool.offer("npgym/Invert-Knapsack-easy", _witness("Knapsack", seed), prompt_seed=seed)
    free_form = pool.offer("npgym/Knapsack-hard", _witness("Knapsack", seed))
    assert again.reason == free_form.reason == "duplicate"
    assert again.fingerprint == first.fingerprint and "pool entry 0" in again.detail
    assert pool.counts() == {**dict.fromkeys(REASONS, 0), "admitted": 1, "duplicate": 2}


def _bench(task: str) -> list[Any]:
    spec = DatasetSpec(tasks=(task,), count=BENCH_SIZE, seed=0, reference="none")
    return [instance for _, instance in drawn(spec, {})]


def _writable(invert: InvertTask, instance: Any) -> bool:
    from npgym.answer import AnswerFormatError

    try:
        invert.to_solution(_fields(instance))
    except AnswerFormatError:
        return False
    return invert.problem.size(instance) <= invert.problem.size_cap


@pytest.mark.parametrize("task", ["MaxClique", "SubsetSum"])
def test_an_np_bench_instance_and_a_relabelled_copy_are_benchmark(task: str) -> None:
    invert = get_task(f"Invert-{task}")
    assert isinstance(invert, InvertTask)
    bench = next(instance for instance in _bench(task) if _writable(invert, instance))
    pool = _pool(hardness="none")
    copied = pool.offer(f"npgym/{task}-easy", _answer(_fields(bench)))
    assert copied.reason == "benchmark" and "NP-Bench" in copied.detail
    relabelled = variant(bench, 7).instance
    assert relabelled.fingerprint() != bench.fingerprint()
    assert relabelling_key(relabelled) == relabelling_key(bench)
    disguised = pool.offer(f"npgym/{task}-easy", _answer(_fields(relabelled)))
    assert disguised.reason == "benchmark" and "relabelled" in disguised.detail
    kept = _pool(hardness="none", exclude_benchmark=False)
    assert kept.offer(f"npgym/{task}-easy", _answer(_fields(bench))).reason == "admitted"


@pytest.mark.parametrize("task", writable_tasks())
def test_np_bench_is_writable_exactly_for_the_tasks_with_a_relabelling_key(task: str) -> None:
    """A task without a relabelling key has no NP-Bench instance within the Invert caps (so no
    relabelled copy of one can be written either: relabelling keeps the size); each task with
    one has some, so its key is needed."""
    invert = get_task(f"Invert-{task}")
    assert isinstance(invert, InvertTask)
    writable = sum(_writable(invert, instance) for instance in _bench(task))
    assert (writable > 0) == (task in RELABELLING_KEYS), writable


def test_an_instance_of_the_generators_stream_is_generated() -> None:
    pool = _pool(hardness="none")
    knapsack = get_task("Knapsack")
    for tier in TIERS:
        streamed = knapsack.generate(STREAM - 1, tier=tier)
        if get_task("Invert-Knapsack").problem.size(streamed) <= 40:
            admission = pool.offer("npgym/Knapsack-easy", _answer(_fields(streamed)))
            assert admission.reason == "generated" and "stream" in admission.detail
    beyond = knapsack.generate(STREAM, tier="easy")
    assert pool.offer("npgym/Knapsack-easy", _answer(_fields(beyond))).reason == "admitted"
    assert len(pool.stream_fingerprints("Knapsack")) == STREAM * len(TIERS)


def test_an_instance_the_attached_curriculum_issued_is_generated() -> None:
    curriculum = AdaptiveCurriculum(["Knapsack"], seed=0)
    item = curriculum.next()
    assert curriculum.issued(item.instance.fingerprint())
    pool = SelfPlayPool(["Knapsack"], stream_seeds=0, hardness="none", curriculum=curriculum)
    admission = pool.offer("npgym/Knapsack-easy", _answer(_fields(item.instance)))
    assert admission.reason == "generated" and "curriculum" in admission.detail
    alone = SelfPlayPool(["Knapsack"], stream_seeds=0, hardness="none")
    assert alone.offer("npgym/Knapsack-easy", _answer(_fields(item.instance))).admitted


def test_an_instance_on_which_the_greedy_is_optimal_is_trivial() -> None:
    one_item = _answer({"weights": [1], "values": [1], "capacity": 1})
    admission = _pool().offer("npgym/Knapsack-easy", one_item)
    assert admission.reason == "trivial" and "greedy" in admission.detail
    assert _pool(hardness="none").offer("npgym/Knapsack-easy", one_item).admitted


def test_a_callable_hardness_decides() -> None:
    calls: list[tuple[str, int | None]] = []

    def hard_enough(task: Any, instance: Any, reference: Reference) -> bool:
        calls.append((task.name, reference.objective))
        return reference.objective is not None and reference.objective > 5

    pool = _pool(hardness=hard_enough)
    easy = _answer({"weights": [1, 2], "values": [1, 2], "capacity": 3})
    rich = _answer({"weights": [1, 2], "values": [3, 4], "capacity": 3})
    assert pool.offer("npgym/Knapsack-easy", easy).reason == "trivial"
    assert pool.offer("npgym/Knapsack-easy", rich).admitted
    assert calls == [("Knapsack", 3), ("Knapsack", 7)]


def test_a_bug_is_a_counted_format_refusal_and_a_callables_error_propagates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from npgym.scoring import GUARD_TRIPS
    from npgym.selfplay import pool as pool_module

    def broken(task: Any, instance: Any) -> int:
        raise IndexError("a bug")

    monkeypatch.setattr(pool_module, "greedy_objective", broken)
    rich = _answer({"weights": [1, 2], "values": [3, 4], "capacity": 3})
    before = GUARD_TRIPS.copy()
    admission = _pool().offer("npgym/Knapsack-easy", rich)
    assert (
        admission.reason == "format" and "internal error in the hardness step" in admission.detail
    )
    assert GUARD_TRIPS - before == {("Knapsack", "selfplay hardness"): 1}
    GUARD_TRIPS.subtract(GUARD_TRIPS - before)  # the trip was this test's doing

    def raising(task: Any, instance: Any, reference: Reference) -> bool:
        raise IndexError("the caller's bug")

    with pytest.raises(IndexError, match="caller's bug"):
        _pool(hardness=raising).offer("npgym/Knapsack-easy", rich)


@pytest.mark.parametrize("flaw", ["not proven", "no certificate"])
def test_an_unproven_reference_is_unproven(flaw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    knapsack = get_task("Knapsack")
    solve = type(knapsack).solve

    def weaker(self: Any, instance: Any, *, exact: bool, time_limit: float) -> Reference:
        proven = solve(self, instance, exact=exact, time_limit=time_limit)
        if flaw == "not proven":
            return Reference(
                objective=proven.objective,
                solution=proven.solution,
                proven_optimal=False,
                method="heuristic",
            )
        return proven.model_copy(update={"certificate": None})

    monkeypatch.setattr(type(knapsack), "solve", weaker)
    rich = _answer({"weights": [1, 2], "values": [3, 4], "capacity": 3})
    admission = _pool(hardness="none").offer("npgym/Knapsack-easy", rich)
    assert admission.reason == "unproven" and "proven" in admission.detail
    monkeypatch.undo()
    assert _pool(hardness="none").offer("npgym/Knapsack-easy", rich).admitted


def test_cheap_checks_come_first() -> None:
    """Unreadable and invalid answers are refused before the novelty sets are built (and so
    before any solving): the order of the design note."""
    pool = _pool()
    assert pool.offer("npgym/Knapsack-easy", "Answer: {}").reason == "format"
    invalid = _answer({"weights": [1, 2], "values": [1], "capacity": 3})
    assert pool.offer("npgym/Knapsack-easy", invalid).reason == "invalid"
    assert pool._streams == {} and pool._benchmark == {}
    streamed = _answer(_fields(get_task("Knapsack").generate(0, tier="easy")))
    assert pool.offer("npgym/Knapsack-easy", streamed).reason == "generated"
    assert pool._streams.keys() == pool._benchmark.keys() == {"Knapsack"}


@pytest.mark.parametrize(
    ("env_id", "options", "why"),
    [
        ("npgym/Compose-TSP+Knapsack-easy", {}, "does not name"),
        ("npgym/Aggregate-TSP-easy", {}, "does not name"),
        ("npgym/GraphColoring-easy", {}, "does not name"),
        ("npgym/TSP-extreme", {}, "is not npgym/"),
        ("TSP-easy", {}, "is not npgym/"),
        ("npgym/Invert-TSP-easy", {}, "prompt's seed"),
        ("npgym/Invert-TSP-easy", {"prompt_seed": -1}, "prompt_seed"),
        ("npgym/TSP-easy", {"step": True}, "step"),
        ("npgym/TSP-easy", {"model": "m" * (MAX_MODEL_CHARS + 1)}, "model"),
        ("npgym/TSP-easy", {"model": 3}, "model"),
        ("npgym/" + "T" * 200 + "-easy", {}, "at most"),
    ],
)
def test_bad_arguments_raise(env_id: str, options: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        _pool().offer(env_id, "Answer: {}", **options)


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"tasks": []}, "distinct tasks"),
        ({"tasks": ["TSP", "tsp"]}, "distinct tasks"),
        ({"hardness": "fast"}, "hardness"),
        ({"stream_seeds": -1}, "stream_seeds"),
    ],
)
def test_bad_options_raise(options: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        SelfPlayPool(**options)


# --- hostile completions ------------------------------------------------------------------------

_HOSTILE = _pool()


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(max_size=300),
        st.text(alphabet='{}[]",:0123456789-naswer A', max_size=300).map(lambda t: "Answer: " + t),
        st.binary(max_size=200),
    ),
    env=st.sampled_from(["npgym/Knapsack-easy", "npgym/Invert-TSP-easy", "npgym/MaxClique-hard"]),
)
def test_hostile_text_never_raises(text: Any, env: str) -> None:
    admission = _HOSTILE.offer(env, text, prompt_seed=1)
    assert admission.reason in REASONS and admission.admitted == (admission.reason == "admitted")
    assert "\n" not in admission.detail


_VALID = [
    ("npgym/Invert-TSP-easy", _witness("TSP", 0)),
    ("npgym/Invert-Knapsack-easy", _witness("Knapsack", 1)),
    ("npgym/MaxClique-easy", _answer(_hard_max_clique(20_000))),
    ("npgym/Invert-SubsetSum-easy", _witness("SubsetSum", 2)),
]


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(_VALID),
    edits=st.lists(
        st.tuples(st.integers(0, 10**6), st.sampled_from(["drop", "digit", "sign", "dup", "char"])),
        min_size=1,
        max_size=4,
    ),
    char=st.characters(),
)
def test_mutated_valid_answers_never_raise(
    case: tuple[str, str], edits: list[tuple[int, str]], char: str
) -> None:
    env_id, text = case
    for position, edit in edits:
        at = position % len(text)
        if edit == "drop":
            text = text[:at] + text[at + 1 :]
        elif edit == "digit":
            text = text[:at] + str(position % 10) + text[at:]
        elif edit == "sign":
            text = text[:at] + "-" + text[at:]
        elif edit == "dup":
            text = text[:at] + text[at : at + 40] + text[at:]
        else:
            text = text[:at] + char + text[at + 1 :]
    admission = _HOSTILE.offer(env_id, text, prompt_seed=0)
    assert admission.reason in REASONS
    if admission.admitted:
        assert admission.entry is not None and admission.entry.reference.proven_optimal


# --- journal ------------------------------------------------------------------------------------

GOLDEN = "208e2ef315c1834b1a8776535f9498b7b772f957c89aae096e56772cc3eb957b"
"""SHA-256 of the journal of :func:`_script` (an npgym change that moves it must say why)."""


def _script(pool: SelfPlayPool) -> list[str]:
    """A fixed stream of offers: admissions, and a refusal of every kind but benchmark."""
    offers = [
        ("npgym/Invert-TSP-easy", _witness("TSP", 0), 0),
        ("npgym/Invert-Knapsack-easy", _witness("Knapsack", 1), 1),
        ("npgym/Invert-Knapsack-easy", _witness("Knapsack", 1), 1),
        ("npgym/Knapsack-easy", "no answer", None),
        ("npgym/Knapsack-easy", _answer({"weights": [1, 2], "values": [1], "capacity": 3}), None),
        ("npgym/Knapsack-easy", _answer({"weights": [1], "values": [1], "capacity": 1}), None),
        ("npgym/Knapsack-easy", _answer(_fields(get_task("Knapsack").generate(2, "easy"))), None),
        ("npgym/MaxClique-easy", _answer(_hard_max_clique(20_000)), None),
    ]
    return [
        pool.offer(env_id, text, prompt_seed=seed, step=index, model="tag").reason
        for index, (env_id, text, seed) in enumerate(offers)
    ]


def test_the_same_offers_give_the_same_pool_and_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    reasons = _script(_pool(journal=first))
    assert reasons == _script(_pool(journal=second))
    assert set(reasons) == set(REASONS) - {"benchmark", "unproven"}
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert len(data.splitlines()) == 1 + len(reasons)
    assert hashlib.sha256(data).hexdigest() == GOLDEN


def test_reopening_replays_to_the_same_pool_counts_and_bytes(tmp_path: Path) -> None:
    path, whole = tmp_path / "pool.jsonl", tmp_path / "whole.jsonl"
    live = _pool(journal=path)
    _script(live)
    reopened = _pool(journal=path)
    assert reopened.entries() == live.entries() and reopened.counts() == live.counts()
    assert [entry.provenance for entry in reopened.entries()] == [
        entry.provenance for entry in live.entries()
    ]
    # Going on after a reopen writes what one uninterrupted pool writes.
    more = ("npgym/Invert-TSP-easy", _witness("TSP", 3), 3)
    reopened.offer(more[0], more[1], prompt_seed=more[2])
    uninterrupted = _pool(journal=whole)
    _script(uninterrupted)
    uninterrupted.offer(more[0], more[1], prompt_seed=more[2])
    assert path.read_bytes() == whole.read_bytes()


def test_a_torn_tail_is_dropped_and_the_whole_lines_kept(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    live = _pool(journal=path)
    _script(live)
    whole = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b'{"admit":{"task":"TSP","finger')
    with pytest.warns(JournalWarning, match="dropped a torn last line of 30 bytes"):
        reopened = _pool(journal=path)
    assert path.read_bytes() == whole
    assert reopened.entries() == live.entries() and reopened.counts() == live.counts()


def _admission_line(tmp_path: Path) -> tuple[str, int]:
    """A free-form admission's completion and its journal line's length in bytes."""
    completion = _answer(_hard_max_clique(20_000))
    path = tmp_path / "measure.jsonl"
    _pool(journal=path).offer("npgym/MaxClique-easy", completion)
    return completion, len(path.read_bytes().splitlines(keepends=True)[-1])


def test_an_admission_line_at_the_cap_is_written_and_one_past_is_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    completion, length = _admission_line(tmp_path)
    monkeypatch.setattr(pool_journal, "MAX_LINE_BYTES", length)
    at = _pool(journal=tmp_path / "at.jsonl")
    assert at.offer("npgym/MaxClique-easy", completion).admitted
    monkeypatch.setattr(pool_journal, "MAX_LINE_BYTES", length - 1)
    past_path = tmp_path / "past.jsonl"
    past = _pool(journal=past_path)
    admission = past.offer("npgym/MaxClique-easy", completion)
    assert admission.reason == "format" and f"longer than {length - 1}" in admission.detail
    assert len(past) == 0
    assert past_path.read_bytes().splitlines()[1:] == [b'{"refuse":"format"}']


def test_a_line_longer_than_the_cap_is_corruption_and_read_no_further(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    _pool(journal=path)
    with path.open("ab") as handle:
        handle.write(b'{"refuse":"' + b"x" * pool_journal.MAX_LINE_BYTES + b'"}\n')
    with pytest.raises(PoolJournalError, match="longer than 262144 bytes"):
        _pool(journal=path)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b'{"refuse":"admitted"}\n', "unknown refusal reason"),
        (b'{"refuse":"sneaky"}\n', "unknown refusal reason"),
        (b'{"issue":"TSP/1"}\n', "not a self-play pool journal line"),
        (b'{"admit":{"task":"TSP"}}\n', "malformed admission"),
        (b"[1, 2]\n", "not a self-play pool journal line"),
        (b"{\n", "malformed journal line"),
    ],
)
def test_a_malformed_line_is_corruption(tmp_path: Path, line: bytes, why: str) -> None:
    path = tmp_path / "pool.jsonl"
    _pool(journal=path)
    with path.open("ab") as handle:
        handle.write(line)
    with pytest.raises(PoolJournalError, match=why):
        _pool(journal=path)


def test_a_foreign_file_a_link_or_another_pools_journal_is_refused(tmp_path: Path) -> None:
    bashrc = tmp_path / "bashrc"
    bashrc.write_bytes(b"export PATH=$HOME/bin:$PATH\n")
    with pytest.raises(PoolJournalError, match=f"not a {JOURNAL_FORMAT} header"):
        _pool(journal=bashrc)
    assert bashrc.read_bytes() == b"export PATH=$HOME/bin:$PATH\n"
    link = tmp_path / "link.jsonl"
    link.symlink_to(bashrc)
    with pytest.raises(PoolJournalError, match="symbolic link"):
        _pool(journal=link)
    path = tmp_path / "pool.jsonl"
    _pool(journal=path)
    with pytest.raises(PoolJournalError, match="other options"):
        _pool(journal=path, hardness="none")
    assert len(path.read_bytes().splitlines()) == 1


def test_pools_sharing_a_journal_admit_an_instance_once(tmp_path: Path) -> None:
    """Two pools on one journal (two processes' view): each replays the other's lines; an
    instance both admit at the same time is admitted once, the second a duplicate."""
    path = tmp_path / "pool.jsonl"
    first, second = _pool(journal=path), _pool(journal=path)
    seed, _ = _admitted_invert(first, "TSP")
    again = second.offer("npgym/TSP-easy", _witness("TSP", seed))
    assert again.reason == "duplicate" and len(second) == 1
    # A race: the first pool admits the instance while the second is proving it.
    completion = _answer(_hard_max_clique(20_000))
    prove = second._check_proven

    def racing(base: Any, written: Any) -> Reference:
        assert first.offer("npgym/MaxClique-easy", completion).admitted
        return prove(base, written)

    second._check_proven = racing  # type: ignore[method-assign]
    raced = second.offer("npgym/MaxClique-easy", completion)
    assert raced.reason == "duplicate" and "another process" in raced.detail
    assert first.counts() == second.counts()
    assert first.entries() == second.entries()
    assert (first.counts()["admitted"], first.counts()["duplicate"]) == (2, 2)


def test_a_journal_replaced_after_opening_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    pool = _pool(journal=path)
    os.rename(path, tmp_path / "old.jsonl")
    _pool(journal=path)
    with pytest.raises(PoolJournalError, match="replaced"):
        pool.offer("npgym/Knapsack-easy", "no answer")


def test_the_invert_answer_cap_bounds_an_admission_line() -> None:
    """The line cap leaves room for an answer at the Invert cap plus its reference."""
    assert pool_journal.MAX_LINE_BYTES >= 4 * MAX_ANSWER_CHARS


def _hard_enough(task: Any, instance: Any, reference: Reference) -> bool:
    return True


def test_open_builds_the_pool_its_journal_header_names(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    live = SelfPlayPool(["Knapsack"], stream_seed=5, stream_seeds=3, journal=path)
    _admitted_invert(live, "Knapsack")
    opened = SelfPlayPool.open(path)
    assert opened.options() == live.options() and opened.entries() == live.entries()
    custom = tmp_path / "custom.jsonl"
    SelfPlayPool(["Knapsack"], stream_seeds=3, hardness=_hard_enough, journal=custom)
    with pytest.raises(PoolJournalError, match="_hard_enough"):
        SelfPlayPool.open(custom)
    assert SelfPlayPool.open(custom, hardness=_hard_enough).hardness is _hard_enough
    curriculum = AdaptiveCurriculum(["Knapsack"], seed=0)
    attached = tmp_path / "attached.jsonl"
    SelfPlayPool(["Knapsack"], stream_seeds=3, curriculum=curriculum, journal=attached)
    with pytest.raises(PoolJournalError, match="curriculum"):
        SelfPlayPool.open(attached)
    assert SelfPlayPool.open(attached, curriculum=curriculum).curriculum is curriculum
    with pytest.raises(PoolJournalError, match="not found"):
        SelfPlayPool.open(tmp_path / "missing.jsonl")


_MIXED = [
    ("npgym/Invert-TSP-easy", _witness("TSP", 0), 0),
    ("npgym/Invert-TSP-easy", _witness("TSP", 1), 1),
    ("npgym/Invert-Knapsack-easy", _witness("Knapsack", 1), 1),
    ("npgym/Knapsack-easy", _witness("Knapsack", 2), None),
    ("npgym/Knapsack-easy", "Answer: {", None),
    ("npgym/Knapsack-easy", _answer({"weights": [1], "values": [1], "capacity": 1}), None),
    ("npgym/Knapsack-easy", _answer({"weights": [1, 2], "values": [3, 4], "capacity": 3}), None),
]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(order=st.lists(st.integers(0, len(_MIXED) - 1), max_size=10), cut=st.integers(0, 10))
def test_any_stream_of_offers_replays_and_repeats_byte_for_byte(
    order: list[int], cut: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Any stream, interrupted anywhere by a reopen, writes what an uninterrupted run writes."""
    folder = tmp_path_factory.mktemp("stream")
    whole, split = folder / "whole.jsonl", folder / "split.jsonl"

    def pool(path: Path) -> SelfPlayPool:
        return SelfPlayPool(["TSP", "Knapsack"], stream_seeds=2, journal=path)

    def offer(target: SelfPlayPool, indices: list[int]) -> list[str]:
        return [
            target.offer(_MIXED[i][0], _MIXED[i][1], prompt_seed=_MIXED[i][2], step=n).reason
            for n, i in enumerate(indices)
        ]

    uninterrupted = pool(whole)
    reasons = offer(uninterrupted, order)
    first = pool(split)
    reasons_split = offer(first, order[:cut])
    reopened = pool(split)
    assert reopened.entries() == first.entries() and reopened.counts() == first.counts()
    reasons_split += [
        reopened.offer(_MIXED[i][0], _MIXED[i][1], prompt_seed=_MIXED[i][2], step=n).reason
        for n, i in list(enumerate(order))[cut:]
    ]
    assert reasons_split == reasons
    assert split.read_bytes() == whole.read_bytes()
    assert reopened.counts() == {r: reasons.count(r) for r in REASONS}
