"""The adaptive curriculum wired into trainers: TRL's iterable dataset and reporting reward (and
a short GRPOTrainer run on it), verl's dataset class through verl's own loaders with reports
from compute_score, and the journal that shares one curriculum between processes."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

import npgym
from npgym.curriculum import AdaptiveCurriculum, CurriculumError
from npgym.integrations.curriculum import (
    JOURNAL_ENV,
    JOURNAL_FIELD,
    JOURNAL_FORMAT,
    KEY_FIELD,
    CurriculumJournal,
    JournalWarning,
    curriculum_dataset,
    curriculum_reward,
    report_to_journal,
)
from npgym.integrations.ray_curriculum import BACKEND_ENV, ROW_DESTINATION_FIELDS, TIMEOUT_ENV
from npgym.integrations.verl import compute_score
from tests.extras import need

pytest.importorskip("datasets", reason="the TRL integration needs: pip install 'npgym[trl]'")

OPTIONS = {"start": 0.2, "step": 0.05, "window": 4}


@pytest.fixture(autouse=True)
def _no_curriculum_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without the reporting variables, and leaves none behind (a curriculum
    dataset sets them in its process)."""
    for name in (JOURNAL_ENV, BACKEND_ENV, TIMEOUT_ENV):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def _optimal(row: dict) -> str:
    solution = json.loads(row["reference"])["solution"]
    return "Let me think.\n" + npgym.get_task(row["task"]).format_answer(solution)


def _columns(rows: list[dict]) -> dict[str, list]:
    keys = ("task", "instance", "reference", KEY_FIELD)
    return {key: [row[key] for row in rows] for key in keys}


# --- TRL ----------------------------------------------------------------------------------------


def test_trl_reward_reports_every_sample_and_moves_the_frontier() -> None:
    curriculum = AdaptiveCurriculum(["SubsetSum", "Knapsack"], seed=1, **OPTIONS)
    reward = curriculum_reward(curriculum)
    stream = iter(curriculum_dataset(curriculum))
    logged: dict[str, float] = {}
    for _ in range(6):
        rows = [next(stream) for _ in range(4)]
        assert {KEY_FIELD, "prompt", "task", "instance", "reference"} <= rows[0].keys()
        group = [row for row in rows for _ in range(2)]  # GRPO: two samples per prompt
        rewards = reward(
            prompts=[row["prompt"] for row in group],
            completions=[_optimal(row) for row in group],
            log_metric=logged.__setitem__,
            **_columns(group),
        )
        assert rewards == [2.0] * 8
    stats = curriculum.stats()
    assert sum(stat["reports"] for stat in stats.values()) == 48
    assert all(stat["difficulty"] > 0.2 for stat in stats.values())
    assert logged["npgym/curriculum/Knapsack/difficulty"] == stats["Knapsack"]["difficulty"]
    failing = AdaptiveCurriculum(["SubsetSum"], seed=1, **OPTIONS)
    failing_reward, rows = curriculum_reward(failing), list(curriculum_dataset(failing).take(8))
    failing_reward(prompts=[None] * 8, completions=["no answer"] * 8, **_columns(rows))
    assert failing.difficulty("SubsetSum") < 0.2


def test_trl_stream_refuses_several_trainer_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match="one trainer process"):
        next(iter(curriculum_dataset(AdaptiveCurriculum(["Knapsack"]))))


def test_a_report_to_a_missing_journal_fails_loudly(tmp_path: Path) -> None:
    item = AdaptiveCurriculum(["Knapsack"]).next()
    score = npgym.get_task("Knapsack").score(item.instance, "no answer")
    with pytest.raises(CurriculumError, match="not found"):
        report_to_journal(tmp_path / "elsewhere.jsonl", item.key, score)
    assert not (tmp_path / "elsewhere.jsonl").exists()  # a reward worker never creates one


torch = need("torch")
trl = need("trl")


def test_grpo_trainer_trains_on_the_curriculum_stream(tmp_path: Path) -> None:
    from npgym.integrations.smoke import tiny_model
    from tests.test_trl import _config, _tokenizer

    curriculum = AdaptiveCurriculum(["SubsetSum"], seed=2, **OPTIONS)
    probe = AdaptiveCurriculum(["SubsetSum"], seed=3, **OPTIONS)
    texts = [npgym.get_task("SubsetSum").prompt(probe.next().instance) for _ in range(4)]
    tokenizer = _tokenizer(texts)
    trainer = trl.GRPOTrainer(
        model=tiny_model(tokenizer),
        reward_funcs=[curriculum_reward(curriculum)],
        args=_config(tmp_path, shuffle_dataset=False),
        train_dataset=curriculum_dataset(curriculum, reference="heuristic"),
        processing_class=tokenizer,
    )
    trainer.train()
    stats = curriculum.stats()["SubsetSum"]
    # two steps of four completions (two prompts of two samples each), every one reported
    assert stats["reports"] == 8
    assert stats["issued"] >= 4
    logs = [e for e in trainer.state.log_history if "npgym/curriculum/SubsetSum/difficulty" in e]
    assert len(logs) == 2


# --- the journal --------------------------------------------------------------------------------


def _report(journal: Path, key: str, row: dict) -> None:
    """What verl's reward worker does: score a response and append the report (to the journal
    its environment names, inherited from the process that built the dataset)."""
    assert os.environ[JOURNAL_ENV] == str(journal)
    extra = {**row["extra_info"], KEY_FIELD: key}
    compute_score(row["data_source"], _optimal(row["extra_info"]), None, extra)


def test_journal_replicas_agree_and_replay_reports_from_other_processes(tmp_path: Path) -> None:
    from npgym.integrations.verl_curriculum import curriculum_draws

    path = tmp_path / "journal.jsonl"
    options = {"tasks": ["Knapsack"], "journal": str(path), "size": 10, **OPTIONS}
    first, second = curriculum_draws(options), curriculum_draws(options)
    rows = [first[0], second[1], first[2], second[3]]  # two dataloader workers, interleaved
    keys = [row["extra_info"][KEY_FIELD] for row in rows]
    assert keys == [f"Knapsack/{index}" for index in range(4)]
    assert not any(field in row["extra_info"] for row in rows for field in ROW_DESTINATION_FIELDS)
    assert os.environ[JOURNAL_ENV] == str(path)  # the dataset told its process (and children)
    context = multiprocessing.get_context("fork")
    for key, row in zip(keys, rows, strict=True):
        for _ in range(2):  # a group of two samples, scored in another process
            worker = context.Process(target=_report, args=(path, key, row))
            worker.start()
            worker.join()
            assert worker.exitcode == 0
    assert first.journal.curriculum.difficulty("Knapsack") == 0.2
    first.journal.sync()
    second.journal.sync()
    assert first.journal.curriculum.difficulty("Knapsack") == pytest.approx(0.25)
    assert first.journal.curriculum.state_dict() == second.journal.curriculum.state_dict()
    resumed = curriculum_draws(options)  # a restarted run replays the journal from the start
    assert resumed.journal.curriculum.state_dict() == first.journal.curriculum.state_dict()
    assert resumed[4]["extra_info"]["difficulty"] == pytest.approx(0.25)


def test_verl_draws_with_a_reference_pool_are_the_rows_without_it(tmp_path: Path) -> None:
    from npgym.integrations.verl_curriculum import curriculum_draws

    def rows(name: str, **pool: int) -> list[dict]:
        options = {"tasks": ["Knapsack"], "journal": str(tmp_path / name), "size": 6, **OPTIONS}
        draws = curriculum_draws({**options, **pool})
        try:
            drawn = [draws[index] for index in range(6)]
            if pool:  # the pool, not the trainer's process, computed the references
                assert draws._prefetch is not None
                assert draws._prefetch[1].pool.stats.from_pool == 6
            return drawn
        finally:
            if draws._prefetch is not None:
                draws._prefetch[1].pool.close()

    pooled = rows("pooled.jsonl", reference_workers=1, prefetch=2)
    plain = rows("plain.jsonl")
    assert pooled == plain
    with pytest.raises(ValueError, match="prefetch"):
        curriculum_draws(
            {
                "tasks": ["Knapsack"],
                "journal": str(tmp_path / "j"),
                "size": 2,
                "prefetch": 0,
                "reference_workers": 1,
            }
        )


def test_verl_draw_options_multi_turn_and_bad_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npgym.integrations.verl_curriculum import curriculum_draws

    journal = str(tmp_path / "journal.jsonl")
    draws = curriculum_draws(
        {"tasks": ["Knapsack"], "journal": journal, "reference": "heuristic", "multi_turn": True},
        max_samples=8,
    )
    row = draws[0]
    assert len(draws) == 8 and row["agent_name"] == "tool_agent"
    assert (
        row["extra_info"]["tools_kwargs"]["submit_solution"]["create_kwargs"]["task"] == "Knapsack"
    )
    assert json.loads(row["extra_info"]["reference"])["method"] == "heuristic"
    with pytest.raises(ValueError, match="tasks"):
        curriculum_draws({"journal": journal, "size": 4})
    # Without the option, the journal is the one the environment names (the dataset set it).
    assert curriculum_draws({"tasks": ["Knapsack"], "size": 4}).journal.path == Path(journal)
    monkeypatch.delenv(JOURNAL_ENV)
    with pytest.raises(ValueError, match="needs a journal"):
        curriculum_draws({"tasks": ["Knapsack"], "size": 4})
    with pytest.raises(ValueError, match="size"):
        curriculum_draws({"tasks": ["Knapsack"], "journal": journal})
    with pytest.raises(ValueError, match="reference"):
        curriculum_draws({"tasks": ["Knapsack"], "journal": journal, "size": 4, "reference": "x"})


def test_journal_refuses_other_options_and_skips_unknown_reports(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    CurriculumJournal(AdaptiveCurriculum(["Knapsack"], seed=0), path).next()
    with pytest.raises(CurriculumError, match="other options"):
        CurriculumJournal(AdaptiveCurriculum(["Knapsack"], seed=1), path)
    used = AdaptiveCurriculum(["Knapsack"])
    used.next()
    with pytest.raises(CurriculumError, match="fresh curriculum"):
        CurriculumJournal(used, tmp_path / "other.jsonl")
    score = npgym.get_task("Knapsack").score(used.next().instance, "no answer").to_dict()
    with path.open("a") as handle:
        handle.write(json.dumps({"report": "Knapsack/99", "score": score}) + "\n")
    assert json.loads(path.read_text().splitlines()[0])["format"] == JOURNAL_FORMAT
    with pytest.warns(JournalWarning, match="never issued"):  # counted, not raised
        replica = CurriculumJournal(AdaptiveCurriculum(["Knapsack"], seed=0), path)
    assert replica.unknown_reports == 1
    broken = tmp_path / "broken.jsonl"
    CurriculumJournal(AdaptiveCurriculum(["Knapsack"], seed=0), broken)
    with broken.open("a") as handle:
        handle.write('{"report": "Knapsack/0", "score": {}}\n')
    with pytest.raises(CurriculumError, match="malformed"):
        CurriculumJournal(AdaptiveCurriculum(["Knapsack"], seed=0), broken)


# --- verl, through its own loaders --------------------------------------------------------------

verl = need("verl")


def test_verl_loads_the_curriculum_dataset_and_compute_score_reports(tmp_path: Path) -> None:
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.trainer.ppo.utils import create_rl_dataset
    from verl.utils.dataset.rl_dataset import get_dataset_class

    from npgym.integrations import verl as npgym_verl
    from npgym.integrations.verl_curriculum import CURRICULUM_FILES
    from tests.tiny import tiny_tokenizer

    journal = tmp_path / "curriculum.jsonl"
    data = OmegaConf.create(
        {
            "max_prompt_length": 100_000,
            "filter_overlong_prompts": False,
            "cache_dir": str(tmp_path),
            "custom_cls": {
                "path": "pkg://npgym.integrations.verl_curriculum",
                "name": "CurriculumRLHFDataset",
            },
            "npgym_curriculum": {
                "tasks": ["SubsetSum", "Knapsack"],
                "journal": str(journal),
                "size": 64,
                "target": [0.3, 0.7],
                "seed": 4,
                **OPTIONS,
            },
        }
    )
    assert get_dataset_class(data).__name__ == "CurriculumRLHFDataset"
    probe = AdaptiveCurriculum(["SubsetSum", "Knapsack"], seed=5)
    texts = [
        npgym.get_task(item.task).prompt(item.instance)
        for item in map(probe.next_for, ["SubsetSum", "Knapsack"])
    ]
    tokenizer = tiny_tokenizer(texts, vocab_size=400)
    dataset = create_rl_dataset([CURRICULUM_FILES], data, tokenizer, None)
    assert len(dataset) == 64
    reward = get_custom_reward_fn(
        OmegaConf.create(
            {
                "reward": {
                    "custom_reward_function": {
                        "path": npgym_verl.__file__,
                        "name": "compute_score",
                        "reward_kwargs": {},
                    }
                }
            }
        )
    )
    for index in range(16):
        item = dataset[index]
        assert item["raw_prompt"][0]["role"] == "user"
        extra = item["extra_info"]
        assert JOURNAL_FIELD not in extra and extra[KEY_FIELD].startswith(extra["task"])
        for _ in range(2):
            result = reward(
                item["data_source"], _optimal(extra), item["reward_model"]["ground_truth"], extra
            )
            assert result["score"] == 2.0
    curriculum = dataset.dataframe.journal.curriculum
    # Each draw first replays the reports appended since the last: all but the last item's.
    assert sum(stat["reports"] for stat in curriculum.stats().values()) == 30
    assert max(stat["difficulty"] for stat in curriculum.stats().values()) > 0.2
    later = dataset[16]["extra_info"]
    assert sum(stat["reports"] for stat in curriculum.stats().values()) == 32
    assert later["difficulty"] == curriculum.difficulty(later["task"])
    fixed = tmp_path / "fixed.jsonl"
    fixed.write_text(
        json.dumps(
            {"prompt": [{"role": "user", "content": texts[0]}], "data_source": "npgym/SubsetSum"}
        )
        + "\n"
    )
    validation = create_rl_dataset([str(fixed)], data, tokenizer, None)
    assert len(validation) == 1  # real files are read as files, not drawn
