"""Serving the self-play pool: the band reward's formula and limits, the mix of generated and
pool items (ratio, order, reports, determinism, resuming), the SvS author reward, the TRL
dataset and reward (and a short GRPOTrainer run), the verl service with its journal backend and
a local Ray actor, and the simulation's own checks."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym.curriculum import AdaptiveCurriculum, CurriculumError
from npgym.integrations.curriculum import JOURNAL_ENV, KEY_FIELD
from npgym.integrations.ray_curriculum import BACKEND_ENV, TIMEOUT_ENV
from npgym.selfplay import SelfPlayPool
from npgym.selfplay.serving import (
    KEY_PREFIX,
    MAX_SOLVER_SAMPLES,
    POOL_DIFFICULTY,
    SelfPlayCurriculum,
    author_reward,
    band_reward,
)

TASK = "Knapsack"
TRL_TASK = "SubsetSum"
"""The TRL tests' task: its Invert prompts are quick to make (Knapsack's take 0.2 s each)."""
OPTIONS: dict[str, Any] = {"start": 0.2, "step": 0.05, "window": 4, "seed": 3}
BAND = (0.3, 0.7)


@pytest.fixture(autouse=True)
def _no_reporting_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without the reporting variables and leaves none behind."""
    from npgym.selfplay.verl import MODEL_ENV, POOL_JOURNAL_ENV

    for name in (JOURNAL_ENV, BACKEND_ENV, TIMEOUT_ENV, POOL_JOURNAL_ENV, MODEL_ENV):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def _knapsack(seed: int, n: int = 12) -> str:
    """A valid Knapsack instance written as an answer (random: maybe trivial)."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(5, 100, n).tolist()
    values = rng.integers(5, 100, n).tolist()
    fields = {"weights": weights, "values": values, "capacity": sum(weights) // 2}
    return "Answer: " + json.dumps(fields)


def _pool(entries: int, **options: Any) -> SelfPlayPool:
    """A pool (nothing trivial, a short stream) holding ``entries`` written Knapsacks."""
    pool = SelfPlayPool([TASK], hardness="none", stream_seeds=4, **options)
    for seed in range(entries):
        assert pool.offer(f"npgym/{TASK}-easy", _knapsack(seed)).admitted
    return pool


def _optimal(task: str, instance: Any, reference: Any) -> str:
    return "Sure.\n" + npgym.get_task(task).format_answer(reference.solution)


# --- the band reward ----------------------------------------------------------------------------


def test_band_reward_is_one_in_the_band_and_zero_at_both_ends() -> None:
    assert band_reward(0.3, BAND) == band_reward(0.5, BAND) == band_reward(0.7, BAND) == 1.0
    assert band_reward(0.0, BAND) == band_reward(1.0, BAND) == 0.0
    assert band_reward(0.15, BAND) == pytest.approx(0.5)
    assert band_reward(0.85, BAND) == pytest.approx(0.5)
    assert band_reward(0.0, (0.0, 0.5)) == 1.0 and band_reward(1.0, (0.5, 1.0)) == 1.0
    for bad_rate in (-1e-9, 1 + 1e-9, math.nan):
        with pytest.raises(ValueError, match="pass rate"):
            band_reward(bad_rate, BAND)
    for bad_band in ((0.5, 0.5), (-0.1, 0.5), (0.2, 1.1), (0.7, 0.3), "ab", (0.1,)):
        with pytest.raises(ValueError, match="band"):
            band_reward(0.5, bad_band)  # type: ignore[arg-type]


@given(
    rate=st.floats(0.0, 1.0),
    low=st.floats(0.0, 0.99),
    width=st.floats(0.01, 1.0),
)
def test_band_reward_lies_in_unit_interval_and_is_one_exactly_in_the_band(
    rate: float, low: float, width: float
) -> None:
    high = min(low + width, 1.0)
    reward = band_reward(rate, (low, high))
    assert 0.0 <= reward <= 1.0
    assert (reward == 1.0) == (low <= rate <= high)


# --- the mix ------------------------------------------------------------------------------------


def test_an_empty_pool_serves_the_curriculum_alone() -> None:
    serving = SelfPlayCurriculum(AdaptiveCurriculum([TASK], **OPTIONS), _pool(0), pool_ratio=1.0)
    keys = [serving.next().key for _ in range(3)]
    assert keys == [f"{TASK}/0", f"{TASK}/1", f"{TASK}/2"]


def test_pool_items_come_at_the_ratio_least_served_first_and_deterministically() -> None:
    pool = _pool(3)

    def draws(ratio: float) -> list[str]:
        serving = SelfPlayCurriculum(
            AdaptiveCurriculum([TASK], **OPTIONS), pool, pool_ratio=ratio, seed=7
        )
        return [serving.next().key for _ in range(200)]

    keys = draws(0.25)
    served = [key for key in keys if key.startswith(KEY_PREFIX)]
    assert 0.2 <= len(served) / len(keys) <= 0.3
    assert served[:6] == ["selfplay/0", "selfplay/1", "selfplay/2"] * 2  # least served, by index
    assert keys == draws(0.25)  # the same calls give the same draws
    assert not any(key.startswith(KEY_PREFIX) for key in draws(0.0))
    assert all(key.startswith(KEY_PREFIX) for key in draws(1.0))
    for bad in (-1e-9, 1 + 1e-9, True):
        with pytest.raises(ValueError, match="pool_ratio"):
            SelfPlayCurriculum(AdaptiveCurriculum([TASK]), pool, pool_ratio=bad)


def test_pool_reports_count_for_their_entry_and_move_no_frontier() -> None:
    curriculum = AdaptiveCurriculum([TASK], **OPTIONS)
    serving = SelfPlayCurriculum(curriculum, _pool(1), pool_ratio=1.0, min_attempts=4)
    item = serving.next()
    assert (item.key, item.difficulty, item.task) == ("selfplay/0", POOL_DIFFICULTY, TASK)
    entry = serving.entry(item)
    assert entry is not None and entry.instance == item.instance
    row = serving.record(item)
    assert json.loads(row["reference"])["objective"] == entry.reference.objective
    answer = _optimal(TASK, item.instance, entry.reference)
    score = npgym.get_task(TASK).score(item.instance, answer, entry.reference)
    for passed in (True, True, False):
        assert serving.report(item, score if passed else -0.5) is passed
    assert serving.pass_rate(0) is None and serving.author_reward(0) is None  # 3 < min_attempts
    serving.report("selfplay/0", score)
    assert serving.pass_rate(0) == 0.75 and serving.author_reward(0) == pytest.approx(0.25 / 0.3)
    assert curriculum.stats()[TASK]["reports"] == 0 and curriculum.difficulty(TASK) == 0.2
    block = serving.stats()["selfplay"]
    assert (block["entries"], block["served"], block["reports"], block["rated"]) == (1, 1, 4, 1)
    assert block["in_band"] == 0.0
    for key in ("selfplay/1", "selfplay/01", "selfplay/x", "selfplay/"):
        assert not serving.accepts(key)
        with pytest.raises(CurriculumError):
            serving.report(key, 2.0)
    with pytest.raises(CurriculumError, match="not issued"):
        serving.report(f"{TASK}/0", 2.0)


def test_state_dict_resumes_exactly() -> None:
    pool = _pool(2)
    serving = SelfPlayCurriculum(AdaptiveCurriculum([TASK], **OPTIONS), pool, pool_ratio=0.5)
    for _ in range(5):
        serving.report(serving.next(), 2.0)
    state = json.loads(json.dumps(serving.state_dict()))
    resumed = SelfPlayCurriculum.from_state(state, pool)
    assert [serving.next().key for _ in range(8)] == [resumed.next().key for _ in range(8)]
    with pytest.raises(CurriculumError, match="pool entries"):
        SelfPlayCurriculum.from_state(state, _pool(1))
    with pytest.raises(CurriculumError, match="version"):
        SelfPlayCurriculum.from_state({**state, "version": 0}, pool)


# --- the SvS author reward ----------------------------------------------------------------------


def test_author_reward_samples_the_solver_now_and_rewards_the_band() -> None:
    pool = _pool(0)
    admission = pool.offer(f"npgym/{TASK}-easy", _knapsack(11))
    assert admission.admitted and admission.entry is not None
    entry = admission.entry
    optimal = _optimal(TASK, entry.instance, entry.reference)
    prompts: list[list[str]] = []

    def half(batch: list[str]) -> list[str]:
        prompts.append(batch)
        return [optimal if i % 2 else "no answer" for i in range(len(batch))]

    result = author_reward(pool, admission, half, band=BAND, k=4)
    assert (result.reward, result.pass_rate, len(result.scores)) == (1.0, 0.5, 4)
    assert prompts == [[npgym.get_task(TASK).prompt(entry.instance)] * 4]
    always = author_reward(pool, admission, lambda batch: [optimal] * len(batch), band=BAND, k=2)
    assert (always.reward, always.pass_rate) == (0.0, 1.0)
    refused = pool.offer(f"npgym/{TASK}-easy", "no instance here")
    assert author_reward(pool, refused, half, band=BAND) == type(result)(0.0, None)
    assert len(prompts) == 1  # a refusal calls no solver
    with pytest.raises(ValueError, match="completions"):
        author_reward(pool, admission, lambda batch: ["x"], k=2)
    cheap = author_reward(pool, admission, lambda b: ["x"] * len(b), k=MAX_SOLVER_SAMPLES)
    assert cheap.pass_rate == 0.0
    for bad in (0, MAX_SOLVER_SAMPLES + 1, True):
        with pytest.raises(ValueError, match="k must be"):
            author_reward(pool, admission, half, k=bad)


# --- TRL ----------------------------------------------------------------------------------------


def _trl_columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    from npgym.selfplay.trl import ROLE_FIELD

    keys = ("task", "instance", "reference", KEY_FIELD, ROLE_FIELD)
    return {key: [row[key] for row in rows] for key in keys}


def _invert_answer(row: dict[str, Any]) -> str:
    """The witness of an author row's Invert prompt: an instance with the property."""
    solution = json.loads(row["reference"])["solution"]
    return npgym.get_task(row["task"]).format_answer(solution)


def test_trl_dataset_alternates_and_the_reward_offers_and_reports() -> None:
    pytest.importorskip("datasets", reason="the TRL integration needs: pip install 'npgym[trl]'")
    from npgym.selfplay.trl import AUTHOR, ROLE_FIELD, SOLVER, selfplay_dataset, selfplay_reward

    curriculum = AdaptiveCurriculum([TRL_TASK], **OPTIONS)
    pool = SelfPlayPool([TRL_TASK], hardness="none", stream_seeds=4, curriculum=curriculum)
    serving = SelfPlayCurriculum(curriculum, pool, pool_ratio=1.0)
    rows = list(selfplay_dataset(serving, reference="heuristic").take(4))
    assert [row[ROLE_FIELD] for row in rows] == [AUTHOR, SOLVER, AUTHOR, SOLVER]
    assert [row["task"] for row in rows] == [f"Invert-{TRL_TASK}", TRL_TASK] * 2
    assert rows[1][KEY_FIELD] == f"{TRL_TASK}/0" and rows[0][KEY_FIELD] == ""
    logged: dict[str, float] = {}
    reward = selfplay_reward(serving, model="tiny")

    class State:
        global_step = 5

    group = [row for row in rows for _ in range(2)]  # GRPO: two samples per prompt
    completions = []
    for row in group:
        if row[ROLE_FIELD] == AUTHOR:
            completions.append(_invert_answer(row))
        else:
            completions.append("no answer")
    rewards = reward(
        prompts=[row["prompt"] for row in group],
        completions=completions,
        log_metric=logged.__setitem__,
        trainer_state=State(),
        **_trl_columns(group),
    )
    unanswered = -2.5  # the format failure's -1 and the infeasible answer's -1.5
    assert rewards[:4] == [2.0, 2.0, unanswered, unanswered]  # the witness has the property
    counts = pool.counts()
    assert counts["admitted"] >= 1 and sum(counts.values()) == 4  # every author sample offered
    assert counts["duplicate"] >= 1  # the group's second sample wrote the same instance
    entry = pool.entries()[0]
    assert (entry.provenance.step, entry.provenance.model) == (5, "tiny")
    assert entry.provenance.env_id == f"npgym/Invert-{TRL_TASK}-easy"
    assert curriculum.stats()[TRL_TASK]["reports"] == 4  # every forward sample reported
    assert logged["npgym/selfplay/pool_size"] == len(pool)
    assert logged["npgym/selfplay/offers/admitted"] == counts["admitted"] / 4
    after = list(selfplay_dataset(serving, reference="heuristic").take(2))[1]  # served back
    assert after[KEY_FIELD] == "selfplay/0"
    with pytest.raises(ValueError, match="solve="):
        selfplay_reward(serving, band_weight=1.0)
    with pytest.raises(ValueError, match="the pool takes no instances of TSP"):
        selfplay_dataset(serving, ["TSP"])


def test_trl_reward_adds_the_band_reward_when_asked() -> None:
    pytest.importorskip("datasets", reason="the TRL integration needs: pip install 'npgym[trl]'")
    from npgym.selfplay.trl import invert_row, selfplay_reward

    pool = SelfPlayPool([TRL_TASK], hardness="none", stream_seeds=4)
    serving = SelfPlayCurriculum(AdaptiveCurriculum([TRL_TASK], **OPTIONS), pool)
    row = invert_row(TRL_TASK, 0)
    calls: list[int] = []

    def solve(prompts: list[str]) -> list[str]:  # passes one in two: in the band
        calls.append(len(prompts))
        entry = pool.entries()[-1]
        return [_optimal(TRL_TASK, entry.instance, entry.reference), "no"] * (len(prompts) // 2)

    reward = selfplay_reward(serving, band_weight=0.5, solve=solve, k=4)
    rewards = reward(
        prompts=[row["prompt"]], completions=[_invert_answer(row)], **_trl_columns([row])
    )
    assert calls == [4] and rewards == [2.0 + 0.5 * 1.0]


# --- the simulation's own checks ----------------------------------------------------------------


def test_the_simulation_flags_a_wrongly_admitted_instance() -> None:
    """The sim's independent check must fail on a pool that admits what it should refuse (a
    pool with hardness "none" admits a trivial Knapsack)."""
    import bench.selfplay_sim as sim

    curriculum = AdaptiveCurriculum([TASK], **OPTIONS)
    pool = SelfPlayPool([TASK], hardness="none", stream_seeds=4)
    fields = json.loads(_knapsack(0).removeprefix("Answer: "))
    fields["capacity"] = sum(fields["weights"])  # greedy takes everything: optimal
    admission = pool.offer(f"npgym/{TASK}-easy", "Answer: " + json.dumps(fields))
    assert admission.entry is not None
    known = sim.Known({TASK: []}, range(pool.stream_seed, pool.stream_seed + pool.stream_seeds))
    problems = sim._check_admitted(admission.entry, "trivial", pool, curriculum, known)
    assert any("a trivial instance was admitted" in p for p in problems)
    assert any("the greedy is optimal" in p for p in problems)


# --- verl ---------------------------------------------------------------------------------------


def _verl_answer(row: dict[str, Any]) -> str:
    """An optimal answer to a verl row (for an author row: the Invert prompt's witness)."""
    info = row["extra_info"]
    solution = json.loads(info["reference"])["solution"]
    return "Done.\n" + npgym.get_task(info["task"]).format_answer(solution)


def test_verl_service_alternates_offers_and_counts_pool_reports(tmp_path: Path) -> None:
    """The actor's body without Ray: author and forward draws alternate, an offer admits, the
    entry is served next with its proven reference, and its reports count for it."""
    from npgym.selfplay.trl import AUTHOR, SOLVER
    from npgym.selfplay.verl import SelfPlayService

    service = SelfPlayService(
        AdaptiveCurriculum([TRL_TASK], **OPTIONS),
        str(tmp_path / "curriculum.jsonl"),
        str(tmp_path / "pool.jsonl"),
        {"hardness": "none", "stream_seeds": 4},
        {"pool_ratio": 1.0},
    )
    assert service.draw() == (AUTHOR, TRL_TASK, 0)
    role, item, reference = service.draw()
    assert (role, item.key, reference) == (SOLVER, f"{TRL_TASK}/0", None)  # the pool is empty
    offered = service.offer(f"npgym/{TRL_TASK}-easy", "Answer: " + json.dumps(_subset_sum()), None)
    assert offered == {"admitted": True, "reason": "admitted", "detail": "pool entry 0", "index": 0}
    assert service.draw()[0] == AUTHOR
    role, item, reference = service.draw()
    assert (role, item.key) == (SOLVER, "selfplay/0") and reference.proven_optimal
    service.report("selfplay/0", PASS.to_dict())
    service.report(f"{TRL_TASK}/0", PASS.to_dict())
    stats = service.selfplay_stats()
    assert stats["stats"]["selfplay"]["reports"] == 1 and stats["stats"][TRL_TASK]["reports"] == 1
    assert stats["counts"]["admitted"] == 1


def _subset_sum() -> dict[str, Any]:
    return {"numbers": [3, 34, 4, 12, 5, 2, 27, 41], "target": 50}


PASS = npgym.Score(2.0, True, True, 10, 10, 1.0, 1.0, "optimal", 1.0, 1.0)


def test_verl_journal_backend_offers_author_rows_from_reward_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without Ray: the dataset's draws alternate, compute_score on an author row offers to
    the pool journal that NPGYM_SELFPLAY_JOURNAL names (through its own replica), and on a
    forward row reports to the curriculum journal."""
    pytest.importorskip("omegaconf", reason="verl's config needs: pip install 'npgym[verl]'")
    import npgym.selfplay.verl as selfplay_verl
    from npgym.integrations.curriculum import CurriculumJournal
    from npgym.selfplay.trl import AUTHOR, ROLE_FIELD, SOLVER

    curriculum = {"tasks": [TRL_TASK], "journal": str(tmp_path / "c.jsonl"), "size": 8}
    curriculum |= {**OPTIONS, "reference": "heuristic", "backend": "journal"}
    pool_options = {"journal": str(tmp_path / "p.jsonl"), "hardness": "none", "stream_seeds": 4}
    draws = selfplay_verl.selfplay_draws(curriculum, {**pool_options, "pool_ratio": 1.0})
    rows = [draws[index] for index in range(4)]
    assert [row["extra_info"][ROLE_FIELD] for row in rows] == [AUTHOR, SOLVER] * 2
    assert rows[0]["data_source"] == f"npgym/Invert-{TRL_TASK}-easy"
    monkeypatch.setattr(selfplay_verl, "_local", {})  # a reward process: nothing opened yet
    monkeypatch.setenv(selfplay_verl.MODEL_ENV, "tiny")
    scores = [
        selfplay_verl.compute_score(row["data_source"], _verl_answer(row), None, row["extra_info"])
        for row in rows
    ]
    assert [s["selfplay_author"] for s in scores] == [1.0, 0.0, 1.0, 0.0]
    assert scores[0]["selfplay_admitted"] == 1.0 and scores[1]["selfplay_admitted"] == 0.0
    assert all(s.keys() == scores[0].keys() for s in scores)  # verl needs the same keys
    reopened = SelfPlayPool(
        [TRL_TASK],
        hardness="none",
        stream_seeds=4,
        curriculum=AdaptiveCurriculum([TRL_TASK]),
        journal=tmp_path / "p.jsonl",
    )
    assert len(reopened) >= 1 and reopened.entries()[0].provenance.model == "tiny"
    replica = CurriculumJournal(AdaptiveCurriculum([TRL_TASK], **OPTIONS), tmp_path / "c.jsonl")
    assert replica.curriculum.stats()[TRL_TASK]["reports"] == 2
    monkeypatch.setenv(selfplay_verl.POOL_JOURNAL_ENV, str(tmp_path / "other.jsonl"))
    with pytest.raises(ValueError, match="reward processes would offer elsewhere"):
        selfplay_verl.selfplay_draws(curriculum, pool_options)
    with pytest.raises(ValueError, match=r"unknown data\.npgym_selfplay options: colour"):
        selfplay_verl.selfplay_draws(curriculum, {**pool_options, "colour": "red"})


def test_verl_reward_process_without_journals_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import npgym.selfplay.verl as selfplay_verl
    from npgym.selfplay.trl import invert_record

    record = invert_record(TRL_TASK, 0)
    info = {"task": record["task"], "instance": record["instance"], "selfplay_role": "author"}
    info["reference"] = record["reference"]
    source = f"npgym/Invert-{TRL_TASK}-easy"
    with pytest.raises(CurriculumError, match="NPGYM_CURRICULUM_JOURNAL is not set"):
        selfplay_verl.compute_score(source, "x", None, info)
    monkeypatch.setenv(JOURNAL_ENV, str(tmp_path / "c.jsonl"))
    monkeypatch.setenv(BACKEND_ENV, "journal")
    with pytest.raises(CurriculumError, match="NPGYM_SELFPLAY_JOURNAL is not set"):
        selfplay_verl.compute_score(source, "x", None, info)
    monkeypatch.setenv(selfplay_verl.POOL_JOURNAL_ENV, "relative/p.jsonl")
    with pytest.raises(CurriculumError, match="absolute path"):
        selfplay_verl.compute_score(source, "x", None, info)
    monkeypatch.setenv(selfplay_verl.POOL_JOURNAL_ENV, str(tmp_path / "p.jsonl"))
    with pytest.raises(CurriculumError, match="not found"):  # a reward process makes no journal
        selfplay_verl.compute_score(source, "x", None, info)
    assert not (tmp_path / "c.jsonl").exists() and not (tmp_path / "p.jsonl").exists()


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_under_ray_every_processs_offers_reach_the_actors_pool(tmp_path: Path) -> None:
    """A local Ray node: the dataset starts the curriculum actor with its pool; author rows
    scored in other Ray worker processes offer to it, forward rows report to it, and the pool
    entry is served back through the actor's draws."""
    ray = pytest.importorskip("ray", reason="the Ray backend needs: pip install 'npgym[ray]'")
    pytest.importorskip("omegaconf", reason="verl's config needs: pip install 'npgym[verl]'")
    import os

    import npgym.selfplay.verl as selfplay_verl
    from npgym.integrations.ray_curriculum import ACTOR_NAMESPACE
    from npgym.selfplay.trl import ROLE_FIELD

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        curriculum = {"tasks": [TRL_TASK], "journal": str(tmp_path / "c.jsonl"), "size": 8}
        curriculum |= {**OPTIONS, "reference": "heuristic", "backend": "ray"}
        options = {"journal": str(tmp_path / "p.jsonl"), "hardness": "none", "stream_seeds": 4}
        draws = selfplay_verl.selfplay_draws(curriculum, {**options, "pool_ratio": 1.0})
        actor = draws.source
        assert isinstance(actor, selfplay_verl.RaySelfPlay)
        rows = [draws[index] for index in range(4)]
        names = (JOURNAL_ENV, BACKEND_ENV, TIMEOUT_ENV, selfplay_verl.POOL_JOURNAL_ENV)
        environment = {name: os.environ[name] for name in names}

        @ray.remote(runtime_env={"env_vars": environment})
        def score(row: dict[str, Any], answer: str) -> dict[str, float]:
            info = row["extra_info"]
            return selfplay_verl.compute_score(row["data_source"], answer, None, info)

        scores = ray.get([score.remote(row, _verl_answer(row)) for row in rows], timeout=120)
        assert [s["selfplay_admitted"] for s in scores][::2] == [1.0, 1.0]
        stats = actor.selfplay_stats()
        assert stats["counts"]["admitted"] == 2 and stats["stats"][TRL_TASK]["reports"] == 2
        assert draws[4]["extra_info"][ROLE_FIELD] == "author"
        row = draws[5]
        served = row["extra_info"]
        assert (served[ROLE_FIELD], served[KEY_FIELD]) == ("solver", "selfplay/0")
        ray.get(score.remote(row, _verl_answer(row)), timeout=120)
        assert actor.selfplay_stats()["stats"]["selfplay"]["reports"] == 1
        with pytest.raises(CurriculumError, match="a curriculum with other options"):
            selfplay_verl.selfplay_draws(
                {**curriculum, "window": 5}, {**options, "pool_ratio": 1.0}
            )
        with pytest.raises(CurriculumError, match="a pool or serving with other options"):
            selfplay_verl.selfplay_draws(curriculum, {**options, "pool_ratio": 0.5})
        ray.kill(ray.get_actor(actor.name, namespace=ACTOR_NAMESPACE))
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_grpo_trainer_trains_on_the_selfplay_stream(tmp_path: Path) -> None:
    """Two GRPO steps of a tiny model on alternating author and forward rows: every author
    sample is offered to the pool, every forward sample reported."""
    from tests.extras import need

    trl = need("trl")
    need("torch")
    from npgym.integrations.smoke import tiny_model
    from npgym.selfplay.trl import invert_row, selfplay_dataset, selfplay_reward
    from tests.test_trl import _config, _tokenizer

    curriculum = AdaptiveCurriculum([TRL_TASK], **OPTIONS)
    pool = SelfPlayPool([TRL_TASK], stream_seeds=4, curriculum=curriculum)
    serving = SelfPlayCurriculum(curriculum, pool)
    probe = AdaptiveCurriculum([TRL_TASK], seed=9)
    texts = [npgym.get_task(TRL_TASK).prompt(probe.next().instance) for _ in range(2)]
    texts += [invert_row(TRL_TASK, j)["prompt"][0]["content"] for j in range(2)]
    tokenizer = _tokenizer(texts)
    trainer = trl.GRPOTrainer(
        model=tiny_model(tokenizer),
        reward_funcs=[selfplay_reward(serving, model="tiny")],
        args=_config(tmp_path, shuffle_dataset=False),
        train_dataset=selfplay_dataset(serving, reference="heuristic"),
        processing_class=tokenizer,
    )
    trainer.train()
    # two steps of four completions: one author and one forward prompt, two samples each
    assert sum(pool.counts().values()) == 4
    assert curriculum.stats()[TRL_TASK]["reports"] == 4
    logged = trainer.state.log_history[0]
    assert "npgym/selfplay/pool_size" in logged and "npgym/selfplay/offers/format" in logged


@pytest.mark.slow
def test_the_simulation_holds_the_band_and_fails_when_it_cannot() -> None:
    """CI's short run: no failure, the final window's pass rate in the band, two runs alike; a
    solver too strong for any instance the author may write (the size cap) fails the band."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    command = [sys.executable, str(root / "bench" / "selfplay_sim.py"), "--short"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=root)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    summary = json.loads(run.stdout)
    assert summary["band_held"] and summary["deterministic"] and not summary["failures"]
    assert BAND[0] <= summary["final_window_pass_rate"] <= BAND[1]
    assert summary["pool_counts"]["admitted"] == summary["pool_size"] > 0
    assert all(
        key.startswith("correct")
        for key in summary["offers_by_kind_and_reason"]
        if key.endswith("-> admitted")
    )
    strong = subprocess.run(
        [*command, "--skill", "70"], capture_output=True, text=True, timeout=600, cwd=root
    )
    assert strong.returncode == 1
    assert "outside the band" in " ".join(json.loads(strong.stdout)["failures"])


@pytest.mark.slow
def test_verl_loads_the_dataset_class_and_reward_by_package_path(tmp_path: Path) -> None:
    """verl's own loaders: create_rl_dataset finds SelfPlayRLHFDataset (made on first access,
    so importing the module needs no verl) and get_custom_reward_fn the reward, both by
    ``pkg://npgym.selfplay.verl``."""
    from tests.extras import need

    need("verl")
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.trainer.ppo.utils import create_rl_dataset

    from npgym.selfplay.trl import ROLE_FIELD
    from tests.tiny import tiny_tokenizer

    path = "pkg://npgym.selfplay.verl"
    curriculum = {"tasks": [TRL_TASK], "journal": str(tmp_path / "c.jsonl"), "size": 8}
    curriculum |= {"backend": "journal", "reference": "heuristic"}
    data = OmegaConf.create(
        {
            "max_prompt_length": 100_000,
            "filter_overlong_prompts": False,
            "dataloader_num_workers": 0,
            "custom_cls": {"path": path, "name": "SelfPlayRLHFDataset"},
            "npgym_curriculum": curriculum,
            "npgym_selfplay": {"journal": str(tmp_path / "p.jsonl"), "hardness": "none"},
        }
    )
    probe = AdaptiveCurriculum([TRL_TASK], seed=5).next().instance
    tokenizer = tiny_tokenizer([npgym.get_task(TRL_TASK).prompt(probe)], vocab_size=400)
    dataset = create_rl_dataset(["npgym-curriculum"], data, tokenizer, None)
    assert type(dataset).__name__ == "SelfPlayRLHFDataset" and len(dataset) == 8
    rows = [dataset[index] for index in range(2)]
    assert [row["extra_info"][ROLE_FIELD] for row in rows] == ["author", "solver"]
    custom = {"path": path, "name": "compute_score", "reward_kwargs": {}}
    reward = get_custom_reward_fn(OmegaConf.create({"reward": {"custom_reward_function": custom}}))
    assert reward is not None
    author = rows[0]
    result = reward(
        data_source=author["data_source"],
        solution_str=_verl_answer(author),
        ground_truth=None,
        extra_info=author["extra_info"],
    )
    assert (result["score"], result["selfplay_author"], result["selfplay_admitted"]) == (2, 1, 1)
