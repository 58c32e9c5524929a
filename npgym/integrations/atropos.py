"""npgym as an Atropos environment (``atroposlib`` 0.4): ``python -m npgym.integrations.atropos``.

:class:`NPGymAtroposEnv` is an Atropos ``BaseEnv``: it owns its data (nothing to download),
asks the model for a group of completions per item and scores each with npgym's reward
(format + feasibility + optimality, :meth:`npgym.task.Task.score`, bounded in time). Atropos's
own command line runs it (``BaseEnv.cli()``; flags ``--env.<field>`` for
:class:`NPGymAtroposConfig`, ``--openai.<field>`` for the model endpoint)::

    # offline: write 100 scored groups to a JSON-lines file
    python -m npgym.integrations.atropos process --env.tasks TSP,Knapsack \\
        --env.tokenizer_name Qwen/Qwen3-1.7B --env.total_steps 100 \\
        --env.data_path_to_save_groups groups.jsonl \\
        --openai.base_url http://localhost:9001/v1 --openai.model_name Qwen/Qwen3-1.7B
    # training: serve groups to the Atropos API (run-api) that the trainer reads
    python -m npgym.integrations.atropos serve --env.tasks TSP --openai.base_url ...

Items:

- ``--env.curriculum True`` (default): drawn from npgym's :class:`~npgym.curriculum.
  AdaptiveCurriculum`, a frontier difficulty per task. Every completion of a group is reported
  to it under the item's key (a group of 8 is 8 reports), so each task's difficulty follows the
  target pass rate (``target_low``..``target_high``): it rises while the model passes more often
  than ``target_high`` and falls below ``target_low``. A completion *passes* when it is feasible
  and its optimality ratio is at least ``pass_ratio``.
- ``--env.curriculum False``: npgym's endless training stream (tasks in turn, a tier per row
  drawn by ``tier`` or the published mix, every instance new).

Either way instances never repeat and are never NP-Bench's: :meth:`NPGymAtroposEnv.evaluate`
scores one completion per instance (temperature :data:`EVAL_TEMPERATURE`) on the first
``eval_size`` NP-Bench instances of each task, a fixed list of seeds that training never sees.

One env process holds one curriculum (Atropos runs an env as one asyncio process); the
curriculum's frontier is logged to wandb as ``npgym/curriculum/<Task>/difficulty``.
References (the optimum that optimality is measured against) are computed in a worker thread
so the event loop keeps serving other groups meanwhile.

Needs ``pip install 'npgym[atropos]'``. atroposlib's ``tokenize_for_trainer`` gets a
``BatchEncoding`` from ``apply_chat_template`` under transformers 5, so tokens and masks are
built here (:func:`tokens_and_masks`).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

try:
    from atroposlib.envs.base import (
        APIServerConfig,
        BaseEnv,
        BaseEnvConfig,
        ScoredDataGroup,
    )
except ImportError as error:  # pragma: no cover - exercised without the extra
    raise ImportError(
        f"npgym.integrations.atropos needs atroposlib ({error}): pip install 'npgym[atropos]'"
    ) from error

from npgym.config import TIERS
from npgym.curriculum import AdaptiveCurriculum
from npgym.datasets import BENCH_SIZE, DEFAULT_TRAINING_MIX, DatasetSpec, make_rows
from npgym.integrations.curriculum import curriculum_record
from npgym.integrations.trl import training_spec
from npgym.records import Row, load_solved_row
from npgym.registry import get_task
from npgym.results import Score
from npgym.reward import PRESETS, resolve_reward
from npgym.trainer_rows import Message, chat

EVAL_TEMPERATURE = 0.0
"""Sampling temperature of :meth:`NPGymAtroposEnv.evaluate`'s one completion per instance."""
MASKED = -100
"""The mask value of a token the trainer does not learn from (the prompt's), as Atropos uses."""
DEFAULT_ENDPOINT = "http://localhost:9001/v1"
"""The model endpoint ``config_init`` names; override with ``--openai.base_url``."""
DEFAULT_MODEL = "NousResearch/DeepHermes-3-Llama-3-3B-Preview"
"""The model (and tokenizer) ``config_init`` names, Atropos's own default; override with
``--openai.model_name`` and ``--env.tokenizer_name``."""


class NPGymAtroposConfig(BaseEnvConfig):
    """Which npgym tasks an :class:`NPGymAtroposEnv` draws, how, and how it scores.

    On the command line every field is ``--env.<field>``; ``tasks`` is comma-separated
    (``--env.tasks TSP,Knapsack``). The curriculum options are
    :class:`~npgym.curriculum.AdaptiveCurriculum`'s.
    """

    tasks: list[str] = Field(default_factory=lambda: ["TSP"], description="npgym task names")
    curriculum: bool = Field(True, description="adaptive curriculum (else the training stream)")
    seed: int = Field(0, ge=0, description="seed of the curriculum or stream")
    target_low: float = Field(0.3, description="curriculum: lower end of the target pass rate")
    target_high: float = Field(0.7, description="curriculum: upper end of the target pass rate")
    start: float = Field(0.2, description="curriculum: starting difficulty of every task")
    step: float = Field(0.05, description="curriculum: how far a frontier moves at a time")
    window: int = Field(16, description="curriculum: reports per pass-rate decision")
    pass_ratio: float = Field(1.0, description="optimality ratio that counts as a pass")
    tier: str | None = Field(None, description="stream: one tier (default: the published mix)")
    reference: Literal["exact", "heuristic"] = Field(
        "exact", description="how references are solved (optimality is measured against them)"
    )
    reward: str = Field("np-engine", description="npgym reward preset")
    eval_size: int = Field(
        8, ge=1, le=BENCH_SIZE, description="NP-Bench instances per task that evaluate scores"
    )

    @field_validator("tasks", mode="before")
    @classmethod
    def _split_tasks(cls, value: Any) -> Any:
        """``"TSP,Knapsack"`` (how a command line gives a list) is ``["TSP", "Knapsack"]``."""
        if isinstance(value, str):
            return [name.strip() for name in value.split(",") if name.strip()]
        return value

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, tasks: list[str]) -> list[str]:
        try:
            return [get_task(name).name for name in tasks]
        except KeyError as error:
            raise ValueError(error.args[0]) from None

    @field_validator("tier")
    @classmethod
    def _known_tier(cls, tier: str | None) -> str | None:
        if tier is not None and tier not in TIERS:
            raise ValueError(f"unknown tier {tier!r}; tiers: {', '.join(TIERS)}")
        return tier

    @field_validator("reward")
    @classmethod
    def _known_reward(cls, reward: str) -> str:
        if reward not in PRESETS:
            raise ValueError(f"unknown reward preset {reward!r}; presets: {', '.join(PRESETS)}")
        return reward

    @model_validator(mode="after")
    def _check_sources(self) -> NPGymAtroposConfig:
        """Refuse curriculum or stream options that npgym refuses, before any work."""
        self.new_curriculum()
        self.stream_spec()
        return self

    def new_curriculum(self) -> AdaptiveCurriculum:
        """A fresh curriculum with this config's options."""
        return AdaptiveCurriculum(
            self.tasks,
            target=(self.target_low, self.target_high),
            seed=self.seed,
            start=self.start,
            step=self.step,
            window=self.window,
            pass_ratio=self.pass_ratio,
        )

    def stream_spec(self) -> DatasetSpec:
        """The endless training stream's spec (used when ``curriculum`` is off)."""
        mix = DEFAULT_TRAINING_MIX if self.tier is None else {self.tier: 1.0}
        return training_spec(self.tasks, None, mix=mix, seed=self.seed, reference=self.reference)

    def eval_spec(self) -> DatasetSpec:
        """The held-out evaluation set: the first ``eval_size`` NP-Bench instances per task."""
        return DatasetSpec(
            split="bench", tasks=tuple(self.tasks), count=self.eval_size, reference=self.reference
        )


@dataclass(frozen=True)
class NPGymItem:
    """One problem to roll out: its npgym row (prompt, instance, reference) and, when drawn
    from the curriculum, the key its completions are reported under."""

    row: Row
    key: str | None = None

    @property
    def messages(self) -> list[Message]:
        """The chat the model answers."""
        return chat(self.row["prompt"])


def tokens_and_masks(
    tokenizer: Any, messages: list[Message], answer: str
) -> tuple[list[int], list[int]]:
    """Token ids of the chat ``messages`` + the assistant's ``answer`` under the tokenizer's chat
    template, and their masks (:data:`MASKED` over the prompt, the id over the answer).

    The prompt (with the generation prompt) and the rest are tokenized apart, so the mask's
    boundary is exact and the ids decode to the whole chat.
    """
    full = [*messages, {"role": "assistant", "content": answer}]
    prompt_text = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=False
    )
    full_text = tokenizer.apply_chat_template(full, tokenize=False)
    if not full_text.startswith(prompt_text):
        raise ValueError(
            "the tokenizer's chat template renders the answered chat without the prompt as its "
            "beginning; tokens and masks cannot be split"
        )
    prompt_ids = tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
    answer_ids = tokenizer(full_text[len(prompt_text) :], add_special_tokens=False)["input_ids"]
    return [*prompt_ids, *answer_ids], [MASKED] * len(prompt_ids) + list(answer_ids)


def passed(score: Score, pass_ratio: float) -> bool:
    """Whether ``score`` passes as the curriculum counts it (feasible, ratio >= pass_ratio)."""
    return score.feasible and score.optimality >= pass_ratio


class NPGymAtroposEnv(BaseEnv):
    """npgym's tasks as an Atropos environment (see the module docstring)."""

    name = "npgym"
    env_config_cls = NPGymAtroposConfig
    config: NPGymAtroposConfig

    def __init__(
        self,
        config: NPGymAtroposConfig,
        server_configs: Any,
        slurm: bool = False,
        testing: bool = False,
    ) -> None:
        super().__init__(config, server_configs, slurm, testing)
        self.curriculum: AdaptiveCurriculum | None = (
            config.new_curriculum() if config.curriculum else None
        )
        self._stream: Iterator[Any] | None = None
        self._stream_lock = asyncio.Lock()
        self._eval_rows: list[Row] | None = None
        self._weights = resolve_reward(config.reward)
        self._train_scores: list[Score] = []
        self.eval_metrics: dict[str, float] = {}

    @classmethod
    def config_init(cls) -> tuple[NPGymAtroposConfig, list[APIServerConfig]]:
        """Defaults for the command line: npgym's config and one OpenAI-compatible endpoint."""
        config = NPGymAtroposConfig(tokenizer_name=DEFAULT_MODEL, wandb_name=cls.name)
        server = APIServerConfig(model_name=DEFAULT_MODEL, base_url=DEFAULT_ENDPOINT, api_key="x")
        return config, [server]

    async def setup(self) -> None:
        """Nothing to load: items are generated as they are asked for."""

    # --- items ----------------------------------------------------------------------------------

    async def get_next_item(self) -> NPGymItem:
        """The next item: the curriculum's draw at its task's frontier, or the stream's next row
        (the reference is solved in a worker thread)."""
        if self.curriculum is not None:
            drawn = self.curriculum.next()
            row = await asyncio.to_thread(curriculum_record, drawn, self.config.reference)
            return NPGymItem(row, drawn.key)
        async with self._stream_lock:  # a generator is advanced by one thread at a time
            if self._stream is None:
                self._stream = make_rows(self.config.stream_spec())
            result = await asyncio.to_thread(next, self._stream)
        return NPGymItem(result.record)

    # --- rollouts and scores --------------------------------------------------------------------

    def score(self, item: NPGymItem, answer: str | None) -> Score:
        """npgym's reward for one completion of ``item`` (bounded in time, never raises)."""
        task, instance, reference = load_solved_row(item.row)
        return task.score(instance, answer if answer is not None else "", reference, self._weights)

    async def collect_trajectories(self, item: NPGymItem) -> tuple[ScoredDataGroup, list[Any]]:
        """``group_size`` completions of the item, scored by npgym, each reported to the
        curriculum; tokens and masks from the env's tokenizer."""
        messages = item.messages
        completion = await self.server.chat_completion(
            messages=messages, n=self.config.group_size, max_tokens=self.config.max_token_length
        )
        group = ScoredDataGroup(tokens=[], masks=[], scores=[], messages=[])
        for choice in completion.choices:
            answer = choice.message.content or ""
            score = self.score(item, answer)
            if self.curriculum is not None and item.key is not None:
                self.curriculum.report(item.key, score)
            self._train_scores.append(score)
            tokens, masks = tokens_and_masks(self.tokenizer, messages, answer)
            group["tokens"].append(tokens)
            group["masks"].append(masks)
            group["scores"].append(score.reward)
            group["messages"].append([*messages, {"role": "assistant", "content": answer}])
        return group, []

    # --- evaluation -----------------------------------------------------------------------------

    async def evaluate(self, *args: Any, **kwargs: Any) -> dict[str, float]:
        """Score one completion per held-out instance (the first ``eval_size`` NP-Bench
        instances of each task); returns the metrics, also logged to wandb and, with
        ``data_dir_to_save_evals``, written by Atropos's ``evaluate_log``."""
        started = time.time()
        if self._eval_rows is None:
            spec = self.config.eval_spec()
            results = await asyncio.to_thread(lambda: list(make_rows(spec, workers=1)))
            self._eval_rows = [result.record for result in results]
        items = [NPGymItem(row) for row in self._eval_rows]
        answers = await asyncio.gather(*(self._eval_answer(item) for item in items))
        scores = [self.score(item, answer) for item, answer in zip(items, answers, strict=True)]
        metrics = _metrics("eval", scores, self.config.pass_ratio)
        for name in self.config.tasks:
            mine = [s for s, i in zip(scores, items, strict=True) if i.row["task"] == name]
            metrics[f"eval/{name}/optimality"] = sum(s.optimality for s in mine) / len(mine)
        self.eval_metrics = metrics
        samples = [
            {"id": item.row["id"], "answer": answer, **score.to_dict()}
            for item, answer, score in zip(items, answers, scores, strict=True)
        ]
        await self.evaluate_log(
            metrics, samples=samples, start_time=started, end_time=time.time(), verbose=False
        )
        return metrics

    async def _eval_answer(self, item: NPGymItem) -> str:
        completion = await self.server.chat_completion(
            messages=item.messages,
            n=1,
            max_tokens=self.config.max_token_length,
            temperature=EVAL_TEMPERATURE,
            split="eval",
        )
        return completion.choices[0].message.content or ""

    # --- logging --------------------------------------------------------------------------------

    async def wandb_log(self, wandb_metrics: dict[str, Any] | None = None) -> None:
        """Atropos's metrics plus npgym's: training reward parts, pass rate, each task's
        curriculum frontier, and the latest evaluation."""
        metrics = dict(wandb_metrics or {})
        if self._train_scores:
            metrics |= _metrics("train", self._train_scores, self.config.pass_ratio)
            self._train_scores = []
        if self.curriculum is not None:
            for name in self.curriculum.tasks:
                metrics[f"npgym/curriculum/{name}/difficulty"] = self.curriculum.difficulty(name)
        metrics |= self.eval_metrics
        self.eval_metrics = {}
        await super().wandb_log(metrics)


def _metrics(split: str, scores: list[Score], pass_ratio: float) -> dict[str, float]:
    """Mean reward, feasible share, mean optimality and pass rate of ``scores``."""
    count = len(scores)
    return {
        f"{split}/npgym_reward": sum(s.reward for s in scores) / count,
        f"{split}/feasible": sum(s.feasible for s in scores) / count,
        f"{split}/optimality": sum(s.optimality for s in scores) / count,
        f"{split}/pass_rate": sum(passed(s, pass_ratio) for s in scores) / count,
    }


def main() -> None:
    """Atropos's command line for :class:`NPGymAtroposEnv`; a config npgym refuses is one
    ``Error: ...`` line and exit status 2."""
    try:
        NPGymAtroposEnv.cli()
    except ValidationError as error:
        details = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc']) or 'config'}: "
            f"{issue['msg'].removeprefix('Value error, ')}"
            for issue in error.errors()
        )
        print(f"Error: invalid {error.title}: {details}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
