"""The curriculum across machines: a local Ray cluster of two nodes on this machine, verl's
dataset rows drawn on the head node (in forked workers too) and scored with ``compute_score`` on
both, all in the one actor's state; the actor killed and restarted continues from its journal
with nothing lost. On one node: verl's dataset with DataLoader workers under Ray. Without a
cluster: the actor's body sees draws forked workers made, the timeouts' limits and the clear
errors for an unreachable actor."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import npgym
from npgym.curriculum import AdaptiveCurriculum, CurriculumError
from npgym.integrations.curriculum import JOURNAL_ENV, KEY_FIELD, CurriculumJournal
from npgym.integrations.ray_curriculum import (
    ACTOR_NAMESPACE,
    BACKEND_ENV,
    MAX_TIMEOUT_S,
    ROW_DESTINATION_FIELDS,
    TIMEOUT_ENV,
    CurriculumService,
    RayCurriculum,
    actor_name,
    configured_timeout,
    report_score,
)
from npgym.results import Score
from tests.extras import need

ray = need("ray")

# One pytest-xdist worker runs every test that starts Ray: ray.init() without an address joins
# the newest cluster that `ray start` made on this machine, such as the two-node test's.
pytestmark = pytest.mark.xdist_group("ray")

CLUSTER_START_S = 120.0
"""Seconds the two nodes may take to start and register before the test fails."""
TEST_BUDGET_S = 600
"""Seconds the whole two-node test may take (an alarm fails it past that: CI never hangs)."""
WAIT_S = 60.0
"""Seconds any one remote result is awaited."""
OPTIONS: dict[str, Any] = {"start": 0.2, "step": 0.05, "window": 4, "seed": 3}
PORTS_PER_NODE = 16
FAIL = Score(-0.5, False, False, None, None, None, 0.0, "no answer", 0.0, 0.0)
PASS = Score(2.0, True, True, 10, 10, 1.0, 1.0, "optimal", 0.5, 0.5)


REPORTING = (JOURNAL_ENV, BACKEND_ENV, TIMEOUT_ENV)
"""The variables that tell a reward process where to report."""


@pytest.fixture(autouse=True)
def _no_curriculum_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without the reporting variables, and leaves none behind (a curriculum
    dataset sets them in its process)."""
    for name in REPORTING:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def _reporting_environment() -> dict[str, str]:
    """This process's reporting variables (set by the dataset), for Ray workers' runtime_env:
    Ray workers do not see the driver's later changes to its environment."""
    return {name: os.environ[name] for name in REPORTING if name in os.environ}


# --- without a cluster --------------------------------------------------------------------------


def test_timeouts_are_checked_at_their_limit_and_past_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(TIMEOUT_ENV, repr(MAX_TIMEOUT_S))
    assert configured_timeout() == MAX_TIMEOUT_S
    for bad in (0, -1.0, MAX_TIMEOUT_S * (1 + 1e-9), float("nan"), float("inf")):
        monkeypatch.setenv(TIMEOUT_ENV, repr(bad))
        with pytest.raises(ValueError, match="must be in"):
            configured_timeout()
    for bad in (0, MAX_TIMEOUT_S * (1 + 1e-9), float("nan"), True):
        with pytest.raises(ValueError, match="timeout must be in"):
            RayCurriculum.start(AdaptiveCurriculum(["Knapsack"]), tmp_path / "j", timeout=bad)


def test_without_ray_an_actor_is_a_clear_error_and_journal_rows_use_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not ray.is_initialized()
    score = FAIL
    monkeypatch.setenv(JOURNAL_ENV, str(tmp_path / "j.jsonl"))
    monkeypatch.setenv(BACKEND_ENV, "ray")
    with pytest.raises(CurriculumError, match="not connected to Ray"):
        report_score({KEY_FIELD: "Knapsack/0"}, score)
    with pytest.raises(CurriculumError, match=r"needs ray\.init"):
        RayCurriculum.start(AdaptiveCurriculum(["Knapsack"]), tmp_path / "j.jsonl")
    assert not report_score({}, score)
    journal = CurriculumJournal(AdaptiveCurriculum(["Knapsack"], **OPTIONS), tmp_path / "j.jsonl")
    item = journal.next()
    monkeypatch.setenv(BACKEND_ENV, "journal")
    assert report_score({KEY_FIELD: item.key}, score)
    journal.sync()
    assert journal.curriculum.stats()["Knapsack"]["reports"] == 1


def test_backend_option_is_checked(tmp_path: Path) -> None:
    from npgym.integrations.verl_curriculum import curriculum_draws

    options = {"tasks": ["Knapsack"], "journal": str(tmp_path / "j.jsonl"), "size": 4}
    with pytest.raises(ValueError, match="backend must be one of"):
        curriculum_draws({**options, "backend": "nfs"})
    with pytest.raises(CurriculumError, match=r"needs ray\.init"):
        curriculum_draws({**options, "backend": "ray"})
    draws = curriculum_draws({**options, "backend": "journal"})
    assert draws.actor is None
    assert not ROW_DESTINATION_FIELDS & draws[0]["extra_info"].keys()
    assert os.environ[JOURNAL_ENV] == str(tmp_path / "j.jsonl")
    assert os.environ[BACKEND_ENV] == "journal"


def _draw(draws: Any, indexes: list[int]) -> None:
    """In a forked child (a DataLoader worker): draw rows ``indexes``."""
    for index in indexes:
        draws[index]


def test_the_actors_body_sees_draws_forked_workers_made_and_they_see_its_reports(
    tmp_path: Path,
) -> None:
    """The Ray backend's draws, without Ray: forked workers draw from this node's journal, the
    actor's body (:class:`CurriculumService`, in this process) replays them before it answers,
    and its reports reach the workers' next draws."""
    from npgym.integrations.verl_curriculum import CurriculumDraws

    path = tmp_path / "curriculum.jsonl"
    service = CurriculumService(AdaptiveCurriculum(["Knapsack"], **OPTIONS), str(path))
    replica = CurriculumJournal(AdaptiveCurriculum(["Knapsack"], **OPTIONS), path)
    actor = RayCurriculum(actor_name(path))
    draws = CurriculumDraws(replica, 16, "heuristic", actor=actor)
    fork = multiprocessing.get_context("fork")
    workers = [fork.Process(target=_draw, args=(draws, indexes)) for indexes in ([0, 1], [2, 3])]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(WAIT_S)
        assert worker.exitcode == 0
    assert service.stats()["Knapsack"]["issued"] == 4
    issued = [event["issue"] for event in _journal_events(path) if "issue" in event]
    assert sorted(issued) == [f"Knapsack/{index}" for index in range(4)]
    for key in issued:
        service.report(key, PASS.to_dict())
    assert service.stats()["Knapsack"]["difficulty"] == pytest.approx(0.25)
    row = draws[4]["extra_info"]  # this replica replays the workers' draws and the reports
    assert (row[KEY_FIELD], row["difficulty"]) == ("Knapsack/4", pytest.approx(0.25))
    assert not ROW_DESTINATION_FIELDS & row.keys()  # rows carry only their key
    assert service.state_dict() == replica.curriculum.state_dict()
    assert service.next().key == "Knapsack/5"  # the actor, too, draws after the journal's lines


# --- one local Ray node -------------------------------------------------------------------------


@pytest.fixture
def local_ray() -> Iterator[None]:
    """A fresh one-node Ray cluster of one CPU in this process (about 15 s to start on a loaded
    machine, hence the tests using it are slow), shut down at the end."""
    ray.init(num_cpus=1, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_under_ray_verl_draws_in_dataloader_workers_and_the_actor_counts_them(
    local_ray: None, tmp_path: Path
) -> None:
    from torch.utils.data import DataLoader
    from verl.utils.dataset.rl_dataset import collate_fn

    from npgym.integrations.verl import compute_score

    journal = tmp_path / "curriculum.jsonl"
    options = {"tasks": ["Knapsack"], "journal": str(journal), "size": 8, **OPTIONS}
    options["reference"] = "heuristic"
    dataset, _ = _verl_dataset_and_reward(options, dataloader_workers=2)
    actor = dataset.dataframe.actor
    assert isinstance(actor, RayCurriculum) and actor.name == actor_name(journal)
    try:
        loader = DataLoader(
            dataset, batch_size=4, num_workers=2, collate_fn=collate_fn, timeout=WAIT_S
        )
        rows = [
            {"data_source": source, "extra_info": extra}
            for batch in loader  # drawn in two workers forked from this Ray process
            for source, extra in zip(batch["data_source"], batch["extra_info"], strict=True)
        ]
        assert sorted(row["extra_info"][KEY_FIELD] for row in rows) == [
            f"Knapsack/{index}" for index in range(8)
        ]
        assert not any(ROW_DESTINATION_FIELDS & row["extra_info"].keys() for row in rows)
        assert (os.environ[JOURNAL_ENV], os.environ[BACKEND_ENV]) == (str(journal), "ray")
        assert actor.stats()["Knapsack"]["issued"] == 8  # the actor replayed the workers' draws
        for row in rows:  # verl's reward function, in a Ray process: reports to the actor
            compute_score(row["data_source"], _answer(row, True), None, row["extra_info"])
        stats = actor.stats()["Knapsack"]
        assert (stats["reports"], stats["pass_rate"]) == (8, 1.0)
        assert stats["difficulty"] == pytest.approx(0.25)
        later = dataset[8]["extra_info"]  # the dataset replays the actor's reports
        assert (later[KEY_FIELD], later["difficulty"]) == ("Knapsack/8", pytest.approx(0.25))
        assert actor.state_dict() == dataset.dataframe.journal.curriculum.state_dict()
    finally:
        ray.kill(ray.get_actor(actor.name, namespace=ACTOR_NAMESPACE))


# --- a two-node cluster -------------------------------------------------------------------------


@dataclass
class Cluster:
    address: str
    temp_dir: Path


def _free_port_block(count: int) -> int:
    """The first of ``count`` consecutive ports that are all free now (random, so that parallel
    runs on one machine rarely meet)."""
    for _ in range(200):
        base = random.randrange(20000, 60000 - count)
        sockets = []
        try:
            for port in range(base, base + count):
                listener = socket.socket()
                sockets.append(listener)
                listener.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for listener in sockets:
                listener.close()
    raise RuntimeError(f"found no {count} consecutive free ports")


def _node_ports(base: int) -> list[str]:
    """The ``ray start`` options that put one node's every port inside ``[base, base + 16)``."""
    return [
        f"--node-manager-port={base}",
        f"--object-manager-port={base + 1}",
        f"--dashboard-agent-listen-port={base + 2}",
        f"--dashboard-agent-grpc-port={base + 3}",
        f"--metrics-export-port={base + 4}",
        f"--runtime-env-agent-port={base + 5}",
        f"--min-worker-port={base + 6}",
        f"--max-worker-port={base + PORTS_PER_NODE - 1}",
    ]


def _start_node(arguments: list[str], resource: str, ports: int, log: Path) -> subprocess.Popen:
    """``ray start --block`` in a new session (so that teardown ends it and only it)."""
    command = [
        sys.executable,
        "-m",
        "ray.scripts.scripts",
        "start",
        "--block",
        *arguments,
        "--node-ip-address=127.0.0.1",
        "--num-cpus=1",
        "--num-gpus=0",
        f"--resources={json.dumps({resource: 1})}",
        "--object-store-memory=100000000",
        "--disable-usage-stats",
        *_node_ports(ports),
    ]
    environment = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    with log.open("wb") as output:
        return subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,
        )


def _stop(process: subprocess.Popen) -> None:
    """End one node: its ``ray start`` session's processes (started by this test), by group id."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            time.sleep(1)
        except subprocess.TimeoutExpired:
            continue


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise TimeoutError(f"the two-node Ray test took more than {TEST_BUDGET_S} s")


AUTH_VARIABLES = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


@contextmanager
def _private_auth_token() -> Iterator[None]:
    """Token authentication with a token of this test's own, for the nodes and this driver
    (Ray otherwise reads ``~/.ray/auth_token``, which other Ray sessions of the user rewrite);
    the process's variables and Ray's token cache are restored afterwards."""
    from ray._private.authentication_test_utils import reset_auth_token_state

    saved = {name: os.environ.pop(name, None) for name in AUTH_VARIABLES}
    os.environ |= {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    reset_auth_token_state()
    try:
        yield
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value
        reset_auth_token_state()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A head node (resource ``node_a``) and a worker node (``node_b``), each with one CPU, on
    free ports, a private temp dir and a private auth token; always stopped at the end (an
    alarm bounds it all). A cluster that cannot start fails the test with the nodes' logs."""
    with ExitStack() as cleanup:  # undone last to first
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        cleanup.callback(signal.signal, signal.SIGALRM, previous)
        cleanup.callback(signal.alarm, 0)
        signal.alarm(TEST_BUDGET_S)
        cleanup.enter_context(_private_auth_token())
        temp_dir = Path(tempfile.mkdtemp(prefix="npgym-ray-", dir="/tmp"))
        cleanup.callback(shutil.rmtree, temp_dir, ignore_errors=True)
        nodes: list[subprocess.Popen] = []
        cleanup.callback(lambda: [_stop(node) for node in reversed(nodes)])
        cleanup.callback(ray.shutdown)
        base = _free_port_block(2 + 2 * PORTS_PER_NODE)
        address = f"127.0.0.1:{base}"
        head = [
            "--head",
            f"--port={base}",
            f"--ray-client-server-port={base + 1}",
            "--include-dashboard=false",
            f"--temp-dir={temp_dir}",
        ]
        deadline = time.monotonic() + CLUSTER_START_S
        nodes.append(_start_node(head, "node_a", base + 2, temp_dir / "head.log"))
        worker = [f"--address={address}"]
        ports = base + 2 + PORTS_PER_NODE
        nodes.append(_start_node(worker, "node_b", ports, temp_dir / "worker.log"))
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        while len([node for node in ray.nodes() if node["Alive"]]) < 2:
            exited = [node.args for node in nodes if node.poll() is not None]
            if exited or time.monotonic() > deadline:
                logs = "\n".join(
                    path.read_text(errors="replace")[-3000:] for path in temp_dir.glob("*.log")
                )
                pytest.fail(f"the 2-node Ray cluster did not start (exited: {exited}):\n{logs}")
            time.sleep(0.5)
        yield Cluster(address, temp_dir)


def _answer(row: dict[str, Any], right: bool) -> str:
    """The reference solution (a pass) or no answer (a fail) for a verl row."""
    if not right:
        return "I give up."
    info = row["extra_info"]
    solution = json.loads(info["reference"])["solution"]
    return "Let me think.\n" + npgym.get_task(info["task"]).format_answer(solution)


def _draw_and_report(draws: Any, indexes: list[int], rows: list[dict], right: list[bool]) -> Any:
    """On one node: score the ``rows`` with verl's ``compute_score`` (one report each), then
    draw rows ``indexes`` from the dataset (on the node that built it: it reads the journal
    there); returns this node's id and the rows it drew."""
    from npgym.integrations.verl import compute_score

    for row, passing in zip(rows, right, strict=True):
        compute_score(row["data_source"], _answer(row, passing), None, row["extra_info"])
    drawn = [draws[index] for index in indexes]
    return ray.get_runtime_context().get_node_id(), drawn


def _on(node: str, *args: Any) -> Any:
    """Run :func:`_draw_and_report` in a task placed on ``node`` (its custom resource), in a
    fresh worker process each time, as a new run's workers are."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers lack tests/
    task = ray.remote(num_cpus=0, resources={node: 0.01}, max_calls=1)(_draw_and_report)
    environment = {"env_vars": _reporting_environment()}
    return ray.get(task.options(runtime_env=environment).remote(*args), timeout=WAIT_S)


def _journal_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _until_it_fails(source: RayCurriculum) -> None:
    """Query ``source`` until it fails (``ray.kill`` takes effect asynchronously)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        source.stats()
        time.sleep(0.1)


def _actor_info(actor: Any) -> dict[str, Any]:
    """The cluster's record of ``actor`` (its state and restarts), from Ray's global state
    (Ray's public state API needs the dashboard, which this cluster runs without)."""
    info: dict[str, Any] = ray._private.state.actors(actor._actor_id.hex())
    return info


def _send_result(function: Callable[[], Any], answer: Connection) -> None:
    try:
        answer.send(function())
    except Exception as error:
        answer.send(repr(error))


def _in_fork(function: Callable[[], Any]) -> Any:
    """What ``function`` returns (or its error's ``repr``) when called in a child forked from
    this process, as a DataLoader worker is; waits at most :data:`WAIT_S`."""
    fork = multiprocessing.get_context("fork")
    answer, sender = fork.Pipe(duplex=False)
    child = fork.Process(target=_send_result, args=(function, sender))
    child.start()
    try:
        assert answer.poll(WAIT_S), "the forked call neither returned nor raised"
        return answer.recv()
    finally:
        child.join(WAIT_S)
        if child.is_alive():
            child.kill()


@pytest.mark.slow
def test_two_nodes_draw_and_report_to_one_actor_that_survives_a_kill(
    cluster: Cluster, tmp_path: Path
) -> None:
    from npgym.integrations.verl_curriculum import curriculum_draws

    started = time.monotonic()
    journal = tmp_path / "curriculum.jsonl"
    options = {"tasks": ["Knapsack"], "journal": str(journal), "size": 100, **OPTIONS}
    options["reference"] = "heuristic"
    draws = curriculum_draws(options)
    source = draws.actor
    assert isinstance(source, RayCurriculum)
    assert (source.name, source.namespace) == (actor_name(journal), ACTOR_NAMESPACE)
    assert source.node_id() == ray.get_runtime_context().get_node_id()  # pinned where started

    # Node A (the dataset's) draws four rows, node B scores them (all pass: the frontier moves
    # up one step), node A draws four more, which node B scores (all fail: the window is of the
    # new frontier and falls short of the band, so the frontier moves back down).
    node_a, rows_a = _on("node_a", draws, [0, 1, 2, 3], [], [])
    node_b, _ = _on("node_b", None, [], rows_a, [True] * 4)
    assert node_a != node_b
    node_a_again, rows_b = _on("node_a", draws, [4, 5, 6, 7], [], [])
    assert node_a_again == node_a
    node_b_again, _ = _on("node_b", None, [], rows_b, [False] * 4)
    assert node_b_again == node_b
    keys = [row["extra_info"][KEY_FIELD] for row in rows_a + rows_b]
    assert keys == [f"Knapsack/{index}" for index in range(8)]
    assert [row["extra_info"]["difficulty"] for row in rows_b] == [0.25] * 4

    stats = source.stats()["Knapsack"]
    assert (stats["issued"], stats["reports"], stats["pass_rate"]) == (8, 8, 0.5)
    assert stats["difficulty"] == pytest.approx(0.2)
    before = source.state_dict()
    events = _journal_events(journal)  # the actor's node wrote every draw and report, in order
    order = [event.get("issue") or event.get("report") for event in events[1:]]
    assert order == keys[:4] * 2 + keys[4:] * 2
    # The same sequence of calls on one machine gives the same draws and the same state.
    alone = AdaptiveCurriculum(["Knapsack"], **OPTIONS)
    for row in rows_a:
        assert alone.next().instance.to_json() == row["extra_info"]["instance"]
    for row in rows_a:
        alone.report(row["extra_info"][KEY_FIELD], Score(**events[5]["score"]))
    for row in rows_b:
        assert alone.next().instance.to_json() == row["extra_info"]["instance"]
    for row in rows_b:
        alone.report(row["extra_info"][KEY_FIELD], Score(**events[13]["score"]))
    assert alone.state_dict() == before

    # A call past its timeout (the actor waits for the journal's lock, held here) is a clear
    # error, not a wait.
    with journal.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(CurriculumError, match=r"did not answer stats within 0\.5 s"):
            RayCurriculum(source.name, timeout=0.5).stats()

    # A child forked from this Ray process (a DataLoader worker) draws from the journal, with
    # no Ray call, and the actor sees the draw; a Ray call there is refused instead of hanging.
    forked = _in_fork(lambda: draws[0]["extra_info"])
    assert isinstance(forked, dict), forked
    assert forked[KEY_FIELD] == "Knapsack/8" and not ROW_DESTINATION_FIELDS & forked.keys()
    assert forked["instance"] == alone.next().instance.to_json()
    assert source.stats()["Knapsack"]["issued"] == 9
    assert source.state_dict() == alone.state_dict()
    before = source.state_dict()
    assert "forked from a Ray process" in _in_fork(source.stats)

    # Killed, the actor is a clear error; started again (a restarted run), it replays its
    # journal: every report before the kill counted, in order, and the draws go on.
    ray.kill(ray.get_actor(source.name, namespace=ACTOR_NAMESPACE))
    with pytest.raises(CurriculumError, match="died during stats"):
        _until_it_fails(source)
    with pytest.raises(CurriculumError, match="no curriculum actor"):
        source.stats()
    restarted = curriculum_draws(options)
    assert restarted.actor.state_dict() == before
    _, rows_c = _on("node_a", restarted, [9], [], [])
    assert rows_c[0]["extra_info"][KEY_FIELD] == "Knapsack/9"
    assert rows_c[0]["extra_info"]["instance"] == alone.next().instance.to_json()

    # Crashed (killed with restart allowed), Ray restarts it on its node from the journal.
    crashed = ray.get_actor(source.name, namespace=ACTOR_NAMESPACE)
    ray.kill(crashed, no_restart=False)
    deadline = time.monotonic() + WAIT_S  # the kill and the restart are asynchronous
    while (info := _actor_info(crashed))["NumRestarts"] < 1 or info["State"] != "ALIVE":
        assert time.monotonic() < deadline, f"the crashed actor was not restarted: {info}"
        time.sleep(0.5)
    assert restarted.actor.state_dict() == alone.state_dict()

    # verl's own loaders (with dataloader workers, verl's default): the dataset class finds
    # the actor, its rows name it, and verl's custom reward function reports from the other node.
    dataset, reward = _verl_dataset_and_reward(options, dataloader_workers=8)
    row = dataset[0]
    assert row["extra_info"][KEY_FIELD] == "Knapsack/10"
    report = ray.remote(num_cpus=0, resources={"node_b": 0.01}, max_calls=1)(_verl_report)
    # A reward worker started without the reporting environment refuses the row loudly.
    refused = ray.get(report.remote(reward, row), timeout=WAIT_S)
    assert f"{JOURNAL_ENV} is not set" in refused
    report = report.options(runtime_env={"env_vars": _reporting_environment()})
    assert ray.get(report.remote(reward, row), timeout=WAIT_S) == 2.0
    assert source.stats()["Knapsack"]["reports"] == 9
    # The dataset built on another node is refused: the actor's journal is not that node's file.
    elsewhere = ray.remote(num_cpus=0, resources={"node_b": 0.01}, max_calls=1)(_start)
    refusal = ray.get(elsewhere.remote(journal), timeout=WAIT_S)
    assert f"lives on Ray node {node_a}, not on this one ({node_b})" in refusal
    ray.kill(ray.get_actor(source.name, namespace=ACTOR_NAMESPACE))
    print(f"two-node curriculum test body: {time.monotonic() - started:.1f} s")


def _start(journal: Path) -> str:
    """Try to start (find) the actor keeping ``journal`` here; the error."""
    try:
        RayCurriculum.start(AdaptiveCurriculum(["Knapsack"], **OPTIONS), journal)
    except CurriculumError as error:
        return str(error)
    return "started"


def _verl_dataset_and_reward(options: dict[str, Any], dataloader_workers: int = 0) -> Any:
    """verl's ``create_rl_dataset`` and custom reward loader, configured for the curriculum."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.trainer.ppo.utils import create_rl_dataset

    from npgym.integrations import verl as npgym_verl
    from npgym.integrations.verl_curriculum import CURRICULUM_FILES
    from tests.tiny import tiny_tokenizer

    data = OmegaConf.create(
        {
            "max_prompt_length": 100_000,
            "filter_overlong_prompts": False,
            "dataloader_num_workers": dataloader_workers,
            "custom_cls": {
                "path": "pkg://npgym.integrations.verl_curriculum",
                "name": "CurriculumRLHFDataset",
            },
            "npgym_curriculum": options,
        }
    )
    probe = AdaptiveCurriculum(["Knapsack"], seed=5)
    tokenizer = tiny_tokenizer([npgym.get_task("Knapsack").prompt(probe.next().instance)], 400)
    dataset = create_rl_dataset([CURRICULUM_FILES], data, tokenizer, None)
    custom = {"path": npgym_verl.__file__, "name": "compute_score", "reward_kwargs": {}}
    reward = get_custom_reward_fn(OmegaConf.create({"reward": {"custom_reward_function": custom}}))
    return dataset, reward


def _verl_report(reward: Any, row: dict[str, Any]) -> float | str:
    """Score a verl dataset item with verl's loaded reward function (it reports to the actor);
    the error, when it raises one."""
    extra = row["extra_info"]
    try:
        result = reward(row["data_source"], _answer(row, True), None, extra)
    except CurriculumError as error:
        return str(error)
    return float(result["score"])
