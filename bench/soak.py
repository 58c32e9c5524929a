"""Soak: a million hostile completions through every entry point, on every registered env id.

    python -m bench.soak                                  # the full run: 10^6 completions
    python -m bench.soak --short                          # CI's short mode (about a minute)
    python -m bench.soak --completions 200000 --json soak.json

Every env id registered under ``npgym/`` (the ten tasks at every tier and every family), with
random reward configs (a fresh ``RewardConfig`` object on a fifth of the calls, so the kept
scores see an endless stream of them) and random references, through ``Task.score``,
``Task.score_many``, the gymnasium env's ``step`` and ``npgym serve`` (OpenEnv servers in
subprocesses, reached over loopback, when the ``openenv`` extra is installed). It reports, per
entry point and per kind of env id:

- exceptions: anything raised out of an entry point, and every trip of ``score()``'s
  last-resort guard (a bug hidden as a format failure);
- non-finite rewards;
- the worst CPU seconds of one call, against the documented bounds (docs/contract.md, "Limits":
  :data:`CPU_BOUND_S`);
- the growth of this process's RSS from the end of the warm-up (every entry point and every
  valid answer shape on every id) to the end of the scoring calls, of the curriculum env's over
  its episodes after the first tenth, and of each server's after its first tenth of steps.

A bad reference (NaN, infinite, not a number) must be refused with ``ValueError``: that counts as
"refused"; anything else it does is a failure. The goals: no exception, no non-finite reward,
every call within its bound, RSS growth at most :data:`RSS_GROWTH_MB`. The exit status is 1 when
one is missed, so CI fails on it.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import npgym
from npgym.env import MAX_TEXT_CHARS
from npgym.instance import Instance
from npgym.results import Reference
from npgym.reward import RewardConfig
from npgym.scoring import GUARD_TRIPS
from npgym.task import Task

CPU_BOUND_S = {"Invert": 1.0, "other": 0.25}
"""Documented CPU bound of one scored completion: 1 s for an inverse problem (its exact check),
0.25 s for every other env id (docs/contract.md, "Limits")."""
SERVER_STEP_BOUND_S = 5.0
"""Wall-clock bound of one server step as a client sees it (scoring plus the round trip)."""
RSS_GROWTH_MB = 50.0
"""Largest RSS growth allowed over the run, after the warm-up."""
CURRICULUM_ID = "npgym/Curriculum"
SERVER_IDS = ("npgym/Knapsack-easy", "npgym/Invert-SubsetSum-easy", "npgym/Compose-Mixed2-easy")
"""One base, one inverse and one composed env id served during the soak."""
SHARES = {"score": 0.86, "score_many": 0.10, "step": 0.04}
"""How the completions are split between the in-process entry points."""
BAD_REFERENCES: tuple[Any, ...] = (math.nan, math.inf, -math.inf, "abc", True, [1], {"x": 1})
"""References that every scoring entry point must refuse with ValueError."""
HUGE_EVERY = 5_000
"""One completion in this many is a huge one (1 to 3 MiB), past every text bound."""
INVERT_INSTANCE_SHARE = 0.03
"""Share of an inverse id's completions that are well-formed instances (checked exactly)."""


@dataclass
class Tally:
    """What one entry point did on one kind of env id."""

    calls: int = 0
    exceptions: int = 0
    non_finite: int = 0
    refused: int = 0
    over_bound: int = 0
    worst_cpu_s: float = 0.0
    worst_case: str = ""
    examples: list[str] = field(default_factory=list)

    def record(self, cpu_s: float, bound_s: float, case: str) -> None:
        """Count one call of ``cpu_s`` seconds against ``bound_s``."""
        self.calls += 1
        if cpu_s > self.worst_cpu_s:
            self.worst_cpu_s, self.worst_case = cpu_s, case
        if cpu_s > bound_s:
            self.over_bound += 1
            self.note(f"{cpu_s:.3f} s over the {bound_s} s bound: {case}")

    def note(self, example: str) -> None:
        """Keep the first few failures, to print them."""
        if len(self.examples) < 5:
            self.examples.append(example[:300])


@dataclass
class Target:
    """One env id: its task, a few instances with their references, and its env."""

    env_id: str
    kind: str
    task: Task
    instances: list[Instance]
    references: list[Reference]
    shapes: list[str]
    env: gym.Env | None = None


def kind_of(env_id: str) -> str:
    """``base``, ``Compose``, ``Aggregate``, ``Invert`` or ``Curriculum``."""
    name = env_id.removeprefix("npgym/")
    return name.split("-")[0] if name.count("-") >= 2 or name == "Curriculum" else "base"


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc")


def env_ids() -> list[str]:
    """Every env id registered under ``npgym/``."""
    npgym.list_tasks()  # registers the ids
    return sorted(name for name in gym.registry if name.startswith("npgym/"))


def build_target(env_id: str, rng: np.random.Generator) -> Target:
    """Two instances of ``env_id`` (seeds 0 and 1) with their references and answer shapes."""
    env = gym.make(env_id)
    task: Task = env.unwrapped.task
    instances, references, shapes = [], [], []
    for seed in (0, 1):
        _, info = env.reset(seed=seed)
        instance, reference = info["instance"], info["reference"]
        instances.append(instance)
        references.append(reference)
        shapes.append(task.format_answer(reference.solution))
        shapes.append(task.format_answer(task.greedy_solution(instance)))
        shapes.append(task.format_answer(task.random_solution(instance, rng)))
    return Target(env_id, kind_of(env_id), task, instances, references, shapes, env)


class Hostile:
    """Seeded hostile completions: mangled answers, garbage, deep nesting, huge numbers, many
    markers, long reasoning, huge texts, bytes (some not UTF-8) and non-text objects."""

    HOSTILE_CHARS = (
        "\x00\x1c\x1d\x1e\x1f\x85\xa0\u2028\u2029\u3000\ufeff\u200b\ud800\U0001d7d1\u0663"
        "\t\n\r\x0b\x0c ,[](){}\\$*_`#>:;-+0123456789eE.'\"abcxyzAnswer"
    )
    MARKERS = ("Answer:", "answer :", "**Answer:**", "__ANSWER__:", "\\boxed{", "Answer:\\boxed{")

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        codes = self.rng.integers(len(self.HOSTILE_CHARS), size=1 << 16)
        self.char_pool = "".join(self.HOSTILE_CHARS[int(code)] for code in codes)
        self.number_pool = [self.number() for _ in range(1 << 14)]
        self.huge = [
            "Answer: [" + "1," * (MAX_TEXT_CHARS // 2) + "]",
            "x" * (3 * MAX_TEXT_CHARS) + " Answer: [0, 1]",
            "Answer: " + "[" * (MAX_TEXT_CHARS + 5),
        ]

    def pick(self, items: Any) -> Any:
        return items[int(self.rng.integers(len(items)))]

    def chars(self, count: int) -> str:
        start = int(self.rng.integers(len(self.char_pool) - count))
        return self.char_pool[start : start + count]

    def number(self) -> str:
        """An integer's digits: small, negative, at the 18-digit limit, or past it."""
        digits = str(int(self.rng.integers(10 ** int(self.rng.integers(1, 19)))))
        if self.rng.random() < 0.1:
            digits += "9" * int(self.rng.integers(1, 30))
        return ("-" if self.rng.random() < 0.2 else "") + digits

    def mangled(self, shape: str) -> str:
        text = list(shape)
        for _ in range(int(self.rng.integers(1, 7))):
            position = int(self.rng.integers(len(text) + 1))
            roll = self.rng.random()
            if roll < 0.4:
                text.insert(position, self.chars(1))
            elif roll < 0.6 and text:
                del text[min(position, len(text) - 1)]
            elif roll < 0.8:
                text.insert(position, self.number())
            else:
                start = int(self.rng.integers(len(text) + 1))
                text[position:position] = text[start : start + int(self.rng.integers(1, 50))]
        return "".join(text)

    def completion(self, target: Target) -> Any:
        """One hostile completion for ``target`` (text, bytes, or not text at all)."""
        roll = self.rng.random()
        if target.kind == "Invert" and roll < INVERT_INSTANCE_SHARE:
            return invert_answer(target, self.rng)
        if self.rng.integers(HUGE_EVERY) == 0:
            return self.pick(self.huge)
        if roll < 0.40:
            text = self.mangled(self.pick(target.shapes))
        elif roll < 0.50:
            count = int(self.rng.integers(0, 2_000))
            start = int(self.rng.integers(len(self.number_pool) - count))
            text = "Answer: [" + ",".join(self.number_pool[start : start + count]) + "]"
        elif roll < 0.55:
            depth = int(self.rng.integers(1, 300))
            text = "Answer: " + "[" * depth + "1" + "]" * int(self.rng.integers(depth + 1))
        elif roll < 0.70:
            text = self.chars(int(self.rng.integers(0, 3_000)))
        elif roll < 0.80:
            parts = [
                self.pick(self.MARKERS) + self.chars(int(self.rng.integers(0, 40)))
                for _ in range(int(self.rng.integers(1, 40)))
            ]
            text = "".join(parts) + self.pick(target.shapes)
        elif roll < 0.90:
            reasoning = "Let me think step by step. " * int(self.rng.integers(1, 3_000))
            text = reasoning + self.pick(target.shapes)
        else:
            text = self.pick(target.shapes)
        roll = self.rng.random()
        if roll < 0.05:
            data = text.encode("utf-8", "surrogatepass")
            cut = int(self.rng.integers(len(data) + 1))
            return (
                data[:cut] + bytes(self.rng.integers(128, 256, size=3, dtype=np.uint8)) + data[cut:]
            )
        if roll < 0.07:
            return self.pick((None, 7, 1.5, [text], {"content": text}, object()))
        return text

    def reward(self) -> Any:
        """None, a preset name, a shared RewardConfig, or a fresh one (a new object)."""
        roll = self.rng.random()
        if roll < 0.4:
            return None
        if roll < 0.6:
            return self.pick(("np-engine", "strict"))
        format_ok = float(self.rng.uniform(0.1, 5))
        format_fail = float(self.rng.uniform(-5, 0))
        infeasible = float(self.rng.uniform(-5, 0))
        weights = {
            "format_ok": format_ok,
            "format_fail": format_fail,
            "infeasible": infeasible,
            "optimality_weight": float(self.rng.uniform(0, 5)),
            "optimality": self.pick(("ratio", "gap")),
        }
        if self.rng.random() < 0.5:
            share = (format_ok - format_fail) / 4
            weights.update(marker_credit=share, value_credit=share, shape_credit=share)
        try:
            return RewardConfig(**weights)
        except ValueError:
            return None

    def reference(self, target: Target, index: int) -> tuple[Any, bool]:
        """A reference to score against, and whether the API must refuse it."""
        reference = target.references[index]
        roll = self.rng.random()
        if roll < 0.4:
            return None, False
        if roll < 0.6:
            return reference, False
        if roll < 0.75 or reference.objective is None:
            return reference.objective, False
        if roll < 0.95:
            return reference.objective + int(self.rng.integers(-3, 4)) * (roll < 0.9), False
        return self.pick(BAD_REFERENCES), True


def invert_answer(target: Target, rng: np.random.Generator) -> str:
    """A well-formed instance of the inverse task's base task: its witness mutated, or a
    random instance of the stated size."""
    instance = target.instances[int(rng.integers(len(target.instances)))]
    fields = json.loads(json.dumps(instance.witness))  # type: ignore[attr-defined]
    numbers = [key for key, value in fields.items() if isinstance(value, int)]
    if numbers and rng.random() < 0.5:
        key = numbers[int(rng.integers(len(numbers)))]
        fields[key] = max(1, fields[key] + int(rng.integers(-2, 3)))
    return "Answer: " + json.dumps(fields, separators=(",", ":"))


def bound_of(target: Target) -> float:
    """The documented CPU bound of one scored completion on ``target``."""
    return CPU_BOUND_S["Invert" if target.kind == "Invert" else "other"]


def finite(value: Any) -> bool:
    """Whether ``value`` is a finite number."""
    return isinstance(value, (int, float)) and math.isfinite(value)


def cpu_call(action: Callable[[], Any]) -> tuple[Any, float, BaseException | None]:
    """Run ``action``; its result, the CPU seconds it took, and what it raised."""
    started = time.process_time()
    try:
        result, error = action(), None
    except Exception as raised:
        result, error = None, raised
    return result, time.process_time() - started, error


def one_call(target: Target, entry: str, hostile: Hostile, tally: Tally) -> None:
    """One hostile call of ``entry`` on ``target``, counted in ``tally``."""
    index = int(hostile.rng.integers(len(target.instances)))
    instance = target.instances[index]
    reward = hostile.reward()
    reference, must_refuse = hostile.reference(target, index)
    if entry == "score_many":
        group = [hostile.completion(target) for _ in range(int(hostile.rng.integers(2, 9)))]
        group *= int(hostile.rng.integers(1, 3))  # GRPO groups repeat answers
        action = lambda: target.task.score_many(instance, group, reference, reward)  # noqa: E731
        bound, case = bound_of(target) * len(group), repr(group)
    elif entry == "step":
        text = hostile.completion(target)
        reference, must_refuse = None, False  # an env scores against its own reference
        env = target.env
        assert env is not None

        def action() -> list[Any]:
            env.reset(options={"instance": instance})
            return [env.step(text)[1]]

        bound, case = bound_of(target), repr(text)
    else:
        text = hostile.completion(target)
        action = lambda: [target.task.score(instance, text, reference, reward)]  # noqa: E731
        bound, case = bound_of(target), repr(text)
    guard_before = sum(GUARD_TRIPS.values())
    result, cpu_s, error = cpu_call(action)
    case = f"{target.env_id} {entry} reference={reference!r:.40} {case[:200]}"
    tally.record(cpu_s, bound, case)
    if must_refuse:
        if isinstance(error, ValueError):
            tally.refused += 1
        else:
            tally.exceptions += 1
            tally.note(f"bad reference not refused ({error!r}): {case}")
        return
    if error is not None:
        tally.exceptions += 1
        tally.note(f"{type(error).__name__}: {error} in {case}")
        return
    if sum(GUARD_TRIPS.values()) != guard_before:
        tally.exceptions += 1
        tally.note(f"the last-resort guard tripped: {case}")
    rewards = [item if isinstance(item, float | int) else item.reward for item in result]
    if not all(finite(value) for value in rewards):
        tally.non_finite += 1
        tally.note(f"non-finite reward {rewards}: {case}")


def curriculum_episodes(count: int, hostile: Hostile, tally: Tally) -> float:
    """``count`` episodes of ``npgym/Curriculum`` (each reset draws and solves an instance);
    returns the RSS growth in MB after the first tenth (a warm-up: its first draws of each task
    compile their solvers)."""
    env = gym.make(CURRICULUM_ID)
    env.reset(seed=0)
    warm_up = max(1, count // 10)
    start_mb = rss_mb()
    for episode in range(count):
        if episode == warm_up:
            start_mb = rss_mb()
        env.reset(seed=episode)
        text = hostile.chars(int(hostile.rng.integers(0, 200))) + " Answer: [0, 1]"
        result, cpu_s, error = cpu_call(lambda: env.step(text)[1])  # noqa: B023
        tally.record(cpu_s, CPU_BOUND_S["other"], f"npgym/Curriculum step {text[:100]!r}")
        if error is not None:
            tally.exceptions += 1
            tally.note(f"{type(error).__name__}: {error}")
        elif not finite(result):
            tally.non_finite += 1
    return rss_mb() - start_mb


def server_soak(
    env_id: str, steps: int, hostile: Hostile, tally: Tally, growth: dict[str, float]
) -> None:
    """``steps`` hostile steps through an OpenEnv client against ``npgym serve env_id``."""
    from npgym.integrations.openenv import (
        MAX_ACTION_CHARS,
        NPGymAction,
        NPGymClient,
        local_server,
    )

    task = npgym.get_task(env_id.removeprefix("npgym/").rsplit("-", 1)[0])
    with (
        tempfile.TemporaryDirectory() as folder,
        local_server(env_id, log=Path(folder) / "log", startup_timeout_s=120) as (url, server),
    ):
        pid = server.pid
        target = Target(env_id, kind_of(env_id), task, [], [], [])
        with NPGymClient(base_url=url, message_timeout_s=60).sync() as client:
            warm_up = max(1, steps // 10)
            start_mb = 0.0
            for step in range(steps):
                if step == warm_up:
                    start_mb = rss_mb(pid)
                seed = int(hostile.rng.integers(50))
                result = client.reset(seed=seed)
                if not target.shapes:
                    instance = task.generate(seed, tier=env_id.rsplit("-", 1)[1])
                    target.instances.append(instance)
                    reference = task.reference(instance)
                    target.references.append(reference)
                    target.shapes.append(task.format_answer(reference.solution))
                text = hostile.completion(target)
                if not isinstance(text, str):
                    text = repr(text)
                started = time.perf_counter()
                try:
                    result = client.step(NPGymAction(text=text))
                    error = None
                except Exception as raised:
                    error = raised
                seconds = time.perf_counter() - started
                case = f"{env_id} server step {text[:200]!r}"
                tally.record(seconds, SERVER_STEP_BOUND_S, case)
                if len(text) > MAX_ACTION_CHARS:
                    if error is None:
                        tally.exceptions += 1
                        tally.note(f"an over-long action was accepted: {case}")
                    else:
                        tally.refused += 1
                        client.disconnect()
                        client.connect()
                elif error is not None:
                    tally.exceptions += 1
                    tally.note(f"{type(error).__name__}: {error} in {case}")
                    client.disconnect()
                    client.connect()
                elif not finite(result.reward):
                    tally.non_finite += 1
                    tally.note(f"non-finite reward {result.reward}: {case}")
            growth[env_id] = rss_mb(pid) - start_mb


def run(
    completions: int,
    server_steps: int,
    seed: int,
    curriculum: int,
    ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The soak over ``ids`` (every registered env id by default); returns its figures."""
    hostile = Hostile(seed)
    chosen = env_ids() if ids is None else list(ids)
    targets = [build_target(env_id, hostile.rng) for env_id in chosen if env_id != CURRICULUM_ID]
    tallies: dict[tuple[str, str], Tally] = {}
    for target in targets:  # warm-up: every entry point on every id, not counted
        for entry in SHARES:
            for _ in range(3):
                one_call(target, entry, hostile, Tally())
        for instance in target.instances:  # and every valid answer shape (their kernels compile)
            target.task.score_many(instance, target.shapes)
    entries = list(SHARES)
    choices = hostile.rng.choice(len(entries), size=completions, p=list(SHARES.values())).tolist()
    picks = hostile.rng.integers(len(targets), size=completions).tolist()
    start_mb = rss_mb()  # after the call plan: its lists are 16 MB at 10^6 calls, not growth
    started = time.perf_counter()
    for choice, pick in zip(choices, picks, strict=True):
        target, entry = targets[pick], entries[choice]
        one_call(target, entry, hostile, tallies.setdefault((entry, target.kind), Tally()))
    growth = {"in-process": rss_mb() - start_mb}
    if curriculum:
        tally = tallies.setdefault(("step", "Curriculum"), Tally())
        growth[CURRICULUM_ID] = curriculum_episodes(curriculum, hostile, tally)
    server_ids = SERVER_IDS if server_steps else ()
    try:
        import npgym.integrations.openenv  # noqa: F401
    except ImportError:
        print("note: the openenv extra is not installed, so the server is not soaked")
        server_ids = ()
    for env_id in server_ids:
        tally = tallies.setdefault(("server", kind_of(env_id)), Tally())
        server_soak(env_id, server_steps // len(server_ids), hostile, tally, growth)
    return {
        "seconds": time.perf_counter() - started,
        "env_ids": len(targets) + (curriculum > 0),
        "tallies": {f"{entry}/{kind}": tally for (entry, kind), tally in sorted(tallies.items())},
        "rss_growth_mb": growth,
    }


def verdict(figures: dict[str, Any]) -> list[str]:
    """The goals that were missed (none: the soak passed)."""
    missed = []
    for name, tally in figures["tallies"].items():
        for count, what in (
            (tally.exceptions, "exceptions"),
            (tally.non_finite, "non-finite rewards"),
            (tally.over_bound, "calls over the bound"),
        ):
            if count:
                missed.append(f"{name}: {count} {what}; e.g. {tally.examples[:2]}")
    for where, growth in figures["rss_growth_mb"].items():
        if growth > RSS_GROWTH_MB:
            missed.append(f"{where}: RSS grew {growth:.1f} MB (> {RSS_GROWTH_MB} MB)")
    return missed


def table(figures: dict[str, Any]) -> str:
    """The figures as a markdown table."""
    rows = [
        "| entry / ids | calls | exceptions | non-finite | refused | over bound | worst CPU s |",
        "|---|---|---|---|---|---|---|",
    ]
    total = Tally()
    for name, tally in figures["tallies"].items():
        rows.append(
            f"| {name} | {tally.calls:,} | {tally.exceptions} | {tally.non_finite} | "
            f"{tally.refused} | {tally.over_bound} | {tally.worst_cpu_s:.4f} |"
        )
        total.calls += tally.calls
    growth = ", ".join(f"{k} {v:+.1f} MB" for k, v in figures["rss_growth_mb"].items())
    rows.append("")
    seconds = figures["seconds"]
    rows.append(
        f"{total.calls:,} calls, {figures['env_ids']} env ids, {seconds:.0f} s; RSS: {growth}"
    )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--completions", type=int, default=1_000_000, help="in-process calls")
    parser.add_argument("--server-steps", type=int, default=30_000, help="steps over all servers")
    parser.add_argument("--curriculum", type=int, default=200, help="npgym/Curriculum episodes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--short", action="store_true", help="CI's short mode")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()
    if options.short:
        options.completions, options.server_steps, options.curriculum = 20_000, 600, 20
    figures = run(options.completions, options.server_steps, options.seed, options.curriculum)
    print(table(figures))
    if options.json:
        serialisable = {**figures, "tallies": {k: vars(v) for k, v in figures["tallies"].items()}}
        options.json.write_text(json.dumps(serialisable, indent=2))
    missed = verdict(figures)
    for line in missed:
        print("MISSED:", line)
    print("soak: FAILED" if missed else "soak: all goals met")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
