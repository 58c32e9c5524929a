"""npgym as NeMo-Gym 0.7 resources servers, driven through NeMo-Gym's own apps.

The servers are built as NeMo-Gym's own tests build theirs (``config=...``, a ``ServerClient``
mock: these servers call no other server) and driven through the FastAPI app that
``setup_webserver`` returns, with NeMo-Gym's session middleware and routes, and its own
contract checker ``check_resources_session_contract``. The scripted learner answers optimally
with a probability that falls with difficulty; its pass rate must end in the target band with
the frontier moved, through ``/verify`` (rows drawn from a journal between rounds) and through
``/reset`` + ``/step`` (within one server).

nemo-gym 0.7 declares Python >=3.13.14; CI installs it in its own venv (``.ci/venv-nemo-gym``).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.extras import need

need("nemo_gym")

from fastapi.testclient import TestClient  # noqa: E402
from nemo_gym.base_resources_server import ResourcesSeedSessionRequest  # noqa: E402
from nemo_gym.episode_types import EpisodeId, TaskId  # noqa: E402
from nemo_gym.openai_utils import (  # noqa: E402
    NeMoGymResponse,
    NeMoGymResponseOutputMessage,
    NeMoGymResponseOutputText,
)
from nemo_gym.server_utils import ServerClient  # noqa: E402
from nemo_gym.testing.session_conformance import check_resources_session_contract  # noqa: E402

import npgym  # noqa: E402
from npgym.curriculum import AdaptiveCurriculum  # noqa: E402
from npgym.integrations import nemo_gym  # noqa: E402
from npgym.integrations.curriculum import CurriculumJournal  # noqa: E402
from npgym.integrations.nemo_gym import (  # noqa: E402
    MAX_BODY_BYTES,
    NPGymGymnasiumServer,
    NPGymGymnasiumServerConfig,
    NPGymResourcesServer,
    NPGymResourcesServerConfig,
    curriculum_rows,
    nemo_gym_rows,
)
from npgym.results import Reference  # noqa: E402

PLACE = {"host": "127.0.0.1", "port": 8080, "entrypoint": "app.py"}
EMPTY = {"responses_create_params": {"input": []}}
JSON = {"content-type": "application/json"}
TARGET = (0.3, 0.7)
CURRICULUM = {"start": 0.2, "step": 0.1, "window": 8}


def response(text: str) -> dict[str, Any]:
    """A model's Responses-API reply holding ``text``, as the agent posts it."""
    message = NeMoGymResponseOutputMessage(
        id="m1",
        role="assistant",
        type="message",
        status="completed",
        content=[NeMoGymResponseOutputText(type="output_text", text=text, annotations=[])],
    )
    reply = NeMoGymResponse(
        id="r1",
        created_at=0.0,
        model="m",
        object="response",
        parallel_tool_calls=False,
        tool_choice="none",
        tools=[],
        output=[message],
    )
    return reply.model_dump(mode="json")


def verify_server(**options: Any) -> NPGymResourcesServer:
    config = NPGymResourcesServerConfig(name="npgym", **PLACE, **options)
    return NPGymResourcesServer(config=config, server_client=MagicMock(spec=ServerClient))


def gym_server(**options: Any) -> NPGymGymnasiumServer:
    config = NPGymGymnasiumServerConfig(name="npgym_gymnasium", **PLACE, **options)
    return NPGymGymnasiumServer(config=config, server_client=MagicMock(spec=ServerClient))


def client(server: Any) -> TestClient:
    return TestClient(server.setup_webserver(), raise_server_exceptions=False)


def optimal(task_name: str, reference: str) -> str:
    solution = json.loads(reference)["solution"]
    return "Let me think.\n" + npgym.get_task(task_name).format_answer(solution)


def refused(reply: Any, status: int) -> str:
    """The one-line reason of a refusal with ``status`` (never a traceback)."""
    assert reply.status_code == status, reply.text
    detail = reply.json()["detail"]
    assert isinstance(detail, str)
    assert "\n" not in detail
    assert "Traceback" not in reply.text
    return detail


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return [*nemo_gym_rows(["TSP"], 2, tier="easy"), *nemo_gym_rows(["Knapsack"], 1)]


@pytest.fixture(scope="module")
def verify() -> TestClient:
    return client(verify_server())


# --- /verify ------------------------------------------------------------------------------------


def test_verify_gives_npgym_reward_and_its_components(
    rows: list[dict[str, Any]], verify: TestClient
) -> None:
    for row in rows:
        task = npgym.get_task(row["npgym_task"])
        instance = task.from_json(row["instance"])
        assert row["responses_create_params"]["input"][0]["content"] == task.prompt(instance)
        best = optimal(row["npgym_task"], row["reference"])
        for text in (best, "Answer: [0, 0]", "I cannot say."):
            reply = verify.post("/verify", json=row | {"response": response(text)})
            assert reply.status_code == 200, reply.text
            body = reply.json()
            score = task.score(instance, text, json.loads(row["reference"])["objective"])
            assert body["reward"] == score.reward
            assert body["reward_components"] == {
                "format": score.format_reward,
                "feasibility": float(score.feasible),
                "optimality": score.optimality,
            }
            assert (body["format_ok"], body["feasible"]) == (score.format_ok, score.feasible)
            assert body["npgym_task"] == task.name
            assert body["curriculum_reported"] is False
        assert body["reward"] == -2.5  # the last text did not parse: format failure
    best = optimal(rows[0]["npgym_task"], rows[0]["reference"])
    reply = verify.post("/verify", json=rows[0] | {"response": response(best)}).json()
    assert reply["reward"] == 2.0
    assert reply["reward_components"] == {"format": 1.0, "feasibility": 1.0, "optimality": 1.0}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=300) | st.from_regex(r"Answer: \[[0-9, ]{0,40}\]", fullmatch=True))
def test_any_response_text_gets_exactly_npgyms_score(
    rows: list[dict[str, Any]], verify: TestClient, text: str
) -> None:
    """Whatever the model writes, /verify answers 200 with exactly ``task.score``'s reward."""
    row = rows[2]
    task = npgym.get_task(row["npgym_task"])
    reference = Reference.model_validate_json(row["reference"])
    score = task.score(task.from_json(row["instance"]), text, reference)
    reply = verify.post("/verify", json=row | {"response": response(text)})
    assert reply.status_code == 200, reply.text
    assert reply.json()["reward"] == score.reward
    assert reply.json()["reward_components"]["feasibility"] == float(score.feasible)


@pytest.mark.filterwarnings("ignore:Standard error is 0:UserWarning")  # NeMo-Gym's, on 2 rows
def test_aggregate_metrics_read_the_verdict(rows: list[dict[str, Any]], verify: TestClient) -> None:
    """NeMo-Gym's /aggregate_metrics averages the verdict's top-level fields per task."""
    row = rows[2]
    texts = [optimal(row["npgym_task"], row["reference"]), "no idea"]
    replies = [verify.post("/verify", json=row | {"response": response(t)}).json() for t in texts]
    indexed = [
        reply | {"_ng_task_index": 0, "_ng_rollout_index": index}
        for index, reply in enumerate(replies)
    ]
    metrics = verify.post("/aggregate_metrics", json={"verify_responses": indexed})
    assert metrics.status_code == 200, metrics.text
    (group,) = metrics.json()["group_level_metrics"]
    assert group["mean/reward"] == (2.0 - 2.5) / 2
    assert group["mean/feasible"] == group["mean/optimality"] == group["mean/format_ok"] == 0.5


def test_seed_session_meets_nemo_gyms_contract(
    rows: list[dict[str, Any]], verify: TestClient
) -> None:
    """NeMo-Gym's own checker (typed seed, repeated seed, close, late seed), and the agent's
    legacy seed with the row as body."""
    seed = ResourcesSeedSessionRequest(
        resources_session_id="npgym-contract",
        episode_id=EpisodeId(rollout_id="r1"),
        task_id=TaskId(taskset="npgym", task_id=rows[0]["id"]),
        task_data={"npgym_task": rows[0]["npgym_task"], "instance": rows[0]["instance"]},
    )
    check_resources_session_contract(verify.app, seed, keeps_state=False)  # type: ignore[arg-type]
    assert verify.post("/seed_session", json=rows[0]).status_code == 200


def test_a_bad_row_is_refused_in_one_line(rows: list[dict[str, Any]], verify: TestClient) -> None:
    sent = rows[0] | {"response": response("Answer: [0]")}
    assert "bad task or instance" in refused(
        verify.post("/verify", json=sent | {"instance": '{"n": '}), 400
    )
    assert "unknown task" in refused(verify.post("/verify", json=sent | {"npgym_task": "X"}), 400)
    assert "curriculum key" in refused(
        verify.post("/verify", json=sent | {"curriculum_key": "a b\n"}), 400
    )
    assert verify.post("/verify", json={"npgym_task": "TSP"}).status_code == 422


def test_body_limit_at_and_past_it(rows: list[dict[str, Any]], verify: TestClient) -> None:
    """A body of MAX_BODY_BYTES is read and answered; one byte more is refused unread (413),
    by its Content-Length or, sent in chunks, once the limit is crossed."""
    body = json.dumps(rows[2] | {"response": response("Answer: [0]")}).encode()
    at_limit = body + b" " * (MAX_BODY_BYTES - len(body))
    reply = verify.post("/verify", content=at_limit, headers=JSON)
    assert reply.status_code == 200, reply.text[:300]
    reply = verify.post("/verify", content=at_limit + b" ", headers=JSON)
    assert "over the limit" in refused(reply, 413)

    small = client(verify_server(max_body_bytes=len(body)))
    assert small.post("/verify", content=body, headers=JSON).status_code == 200
    chunks = iter([body[:100], body[100:], b" "])  # no Content-Length: chunked
    assert "over the limit" in refused(small.post("/verify", content=chunks, headers=JSON), 413)


# --- the server folder and the rows command -----------------------------------------------------


def _global_config(root: Path) -> Any:
    """The global config ``ng_run`` would pass its servers, parsed and validated by NeMo-Gym
    from the configs that ``init`` wrote (ports: free ones, chosen by NeMo-Gym)."""
    from nemo_gym.global_config import GlobalConfigDictParser, GlobalConfigDictParserConfig
    from omegaconf import OmegaConf

    paths = [
        str(root / "resources_servers" / name / "configs" / f"{name}.yaml")
        for name in ("npgym", "npgym_gymnasium")
    ]
    initial = {"config_paths": paths, **GlobalConfigDictParserConfig.NO_MODEL_GLOBAL_CONFIG_DICT}
    parser = GlobalConfigDictParserConfig(
        initial_global_config_dict=OmegaConf.create(initial),
        skip_load_from_cli=True,
        skip_load_from_dotenv=True,
    )
    return GlobalConfigDictParser().parse(parser)


def test_init_writes_configs_that_nemo_gym_loads(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """NeMo-Gym's own config parser takes both configs (server references, dataset licences,
    environment servers) without a warning; each server block makes the server's config."""
    from omegaconf import OmegaConf

    assert nemo_gym.main(["init", str(tmp_path), "--task", "Knapsack", "--max-attempts", "3"]) == 0
    servers = tmp_path / "resources_servers"
    for name, config_class in (
        ("npgym", NPGymResourcesServerConfig),
        ("npgym_gymnasium", NPGymGymnasiumServerConfig),
    ):
        folder = servers / name
        config = OmegaConf.to_container(OmegaConf.load(folder / "configs" / f"{name}.yaml"))
        assert isinstance(config, dict)
        block = config[name]["resources_servers"][name]
        # as NeMo-Gym's BaseServer.load_config_from_global_config builds it
        loaded = config_class.model_validate({**PLACE, **block, "name": name})
        assert loaded.entrypoint == "app.py"
        compile((folder / "app.py").read_text(), str(folder / "app.py"), "exec")
        assert (folder / "requirements.txt").read_text().startswith("npgym[nemo-gym]==")
    gymnasium = NPGymGymnasiumServerConfig.model_validate(
        {**PLACE, "name": "g", **config["npgym_gymnasium"]["resources_servers"]["npgym_gymnasium"]}
    )
    assert (gymnasium.tasks, gymnasium.max_attempts) == (["Knapsack"], 3)
    agent = config["npgym_gymnasium_agent"]["responses_api_agents"]["gymnasium_agent"]
    assert agent["max_steps"] == 3
    with caplog.at_level("WARNING"):
        parsed = _global_config(tmp_path)
    assert not [record for record in caplog.records if record.levelname != "INFO"]
    for name in ("npgym", "npgym_gymnasium"):
        assert parsed[name]["resources_servers"][name]["port"] > 0
        assert f"{name}_environment_server" in parsed


def test_rows_command_writes_rows_and_refuses_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verify: TestClient
) -> None:
    out = tmp_path / "train.jsonl"
    assert nemo_gym.main(["rows", "-o", str(out), "--task", "SubsetSum", "-n", "2"]) == 0
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == 2
    best = optimal("SubsetSum", written[0]["reference"])
    assert verify.post("/verify", json=written[0] | {"response": response(best)}).json()[
        "reward"
    ] == pytest.approx(2.0)
    capsys.readouterr()
    assert nemo_gym.main(["rows", "-o", str(out), "--task", "Nope"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("Error: unknown task 'Nope'")
    assert error.count("\n") == 1
    assert nemo_gym.main(["rows", "-o", str(out), "-n", "0"]) == 1
    assert capsys.readouterr().err.startswith("Error: -n must be from 1 to")


# --- /reset and /step ---------------------------------------------------------------------------


def _oracle(server: NPGymGymnasiumServer) -> str:
    """The optimal answer to the one open episode (the test reads the server's own reference)."""
    (episode,) = server._episodes.values()
    session = episode.session
    return session.task.format_answer(session.reference.solution)


def test_reset_draws_a_prompt_and_step_scores_it() -> None:
    server = gym_server(tasks=["Knapsack"])
    env = client(server)
    reset = env.post("/reset", json=EMPTY).json()
    info = reset["info"]
    assert info["task"] == "Knapsack"
    assert info["difficulty"] == 0.2
    assert info["supports_explicit_close"] is True
    assert "Answer:" in reset["observation"]
    step = env.post("/step", json=EMPTY | {"response": response(_oracle(server))}).json()
    assert (step["reward"], step["terminated"], step["truncated"]) == (2.0, True, False)
    assert step["info"]["passed"] is True
    assert step["info"]["reward_components"]["optimality"] == 1.0
    assert server.curriculum.stats()["Knapsack"]["reports"] == 1
    assert server.open_episodes == 0  # NeMo-Gym closed the finished episode
    assert "POST /reset first" in refused(
        env.post("/step", json=EMPTY | {"response": response("Answer: [0]")}), 400
    )


def test_multi_turn_feedback_then_the_episode_reward() -> None:
    server = gym_server(tasks=["Knapsack"], max_attempts=3)
    env = client(server)
    env.post("/reset", json=EMPTY)
    first = env.post("/step", json=EMPTY | {"response": response("no idea")}).json()
    assert (first["reward"], first["terminated"]) == (0.0, False)
    assert "2 more attempts" in first["observation"]
    assert first["info"]["format_ok"] is False
    last = env.post("/step", json=EMPTY | {"response": response(_oracle(server))}).json()
    assert (last["reward"], last["terminated"], last["info"]["attempt"]) == (2.0, True, 2)
    assert server.curriculum.stats()["Knapsack"]["reports"] == 1  # one report per episode


def test_close_and_the_session_limit() -> None:
    server = gym_server(tasks=["SubsetSum"], max_sessions=2)
    app = server.setup_webserver()
    agents = [TestClient(app, raise_server_exceptions=False) for _ in range(3)]
    for agent in agents[:2]:
        agent.post("/reset", json=EMPTY)
    assert server.open_episodes == 2  # at the limit: both kept
    agents[2].post("/reset", json=EMPTY)
    assert server.open_episodes == 2  # past it: the least recently used one went
    assert refused(agents[0].post("/step", json=EMPTY | {"response": response("x")}), 400)
    assert agents[1].post("/close", json={}).json() == {"closed": True}
    assert agents[1].post("/close", json={}).json() == {"closed": False}
    assert server.open_episodes == 1
    assert server.curriculum.stats()["SubsetSum"]["reports"] == 0  # closed: not reported


def test_workers_share_one_curriculum_through_a_journal(tmp_path: Path) -> None:
    """Two servers (as ``num_workers: 2`` starts them) with one ``curriculum_journal``: draws
    never collide and each sees the other's reports."""
    journal = str(tmp_path / "curriculum.jsonl")
    servers = [gym_server(tasks=["SubsetSum"], curriculum_journal=journal) for _ in range(2)]
    first, second = (client(server) for server in servers)
    key = first.post("/reset", json=EMPTY).json()["info"]["curriculum_key"]
    first.post("/step", json=EMPTY | {"response": response(_oracle(servers[0]))})
    assert second.post("/reset", json=EMPTY).json()["info"]["curriculum_key"] != key
    assert servers[1].curriculum.stats()["SubsetSum"]["reports"] == 1
    second.post("/step", json=EMPTY | {"response": response("no idea")})
    first.post("/reset", json=EMPTY)
    assert servers[0].curriculum.stats()["SubsetSum"]["reports"] == 2


def test_bad_settings_fail_at_start() -> None:
    with pytest.raises(KeyError, match="unknown task"):
        gym_server(tasks=["Nope"]).setup_webserver()
    with pytest.raises(ValueError, match="unknown reward preset"):
        verify_server(reward="nope").setup_webserver()
    with pytest.raises(ValueError, match="max_sessions"):
        gym_server(max_sessions=0)


# --- the adaptive curriculum through the endpoints ----------------------------------------------


def learner_passes(rng: np.random.Generator, difficulty: float) -> bool:
    """The scripted learner: optimal with probability 1.25 - 1.5 * difficulty (0.95 at the
    start, 0.5 at 0.5), else no answer. The band (0.3, 0.7) holds between 0.37 and 0.63."""
    return bool(rng.random() < np.clip(1.25 - 1.5 * difficulty, 0.0, 1.0))


def in_band(results: list[bool]) -> bool:
    return TARGET[0] <= sum(results) / len(results) <= TARGET[1]


def test_curriculum_through_verify_moves_between_rounds(tmp_path: Path) -> None:
    """Rows drawn from the journal, verified by a server that reports to it: each round's rows
    come from where the last round's verdicts moved the frontier."""
    journal = tmp_path / "curriculum.jsonl"
    verify = client(verify_server(curriculum_journal=str(journal)))
    rng = np.random.default_rng(0)
    passes: list[bool] = []
    for _ in range(14):
        fresh = AdaptiveCurriculum(["SubsetSum"], target=TARGET, seed=0, **CURRICULUM)
        for row in curriculum_rows(fresh, journal, 8):
            difficulty = json.loads(row["instance"])["difficulty"]
            passed = learner_passes(rng, difficulty)
            text = optimal("SubsetSum", row["reference"]) if passed else "no answer"
            reply = verify.post("/verify", json=row | {"response": response(text)}).json()
            assert reply["curriculum_reported"] is True
            assert reply["feasible"] is passed
            passes.append(passed)
    replica = CurriculumJournal(
        AdaptiveCurriculum(["SubsetSum"], target=TARGET, seed=0, **CURRICULUM), journal
    )
    stats = replica.curriculum.stats()["SubsetSum"]
    assert stats["reports"] == len(passes) == 112
    assert stats["difficulty"] >= 0.4  # the frontier moved up from 0.2
    assert sum(passes[:8]) >= 7  # too easy at the start...
    assert in_band(passes[-48:])  # ...in the band at the end


def test_curriculum_through_reset_and_step_holds_the_band() -> None:
    server = gym_server(tasks=["SubsetSum"], target=TARGET, step_size=0.1, window=8)
    env = client(server)
    rng = np.random.default_rng(0)
    passes: list[bool] = []
    for _ in range(112):
        info = env.post("/reset", json=EMPTY).json()["info"]
        passed = learner_passes(rng, info["difficulty"])
        text = _oracle(server) if passed else "no answer"
        step = env.post("/step", json=EMPTY | {"response": response(text)}).json()
        assert step["info"]["passed"] is passed
        passes.append(passed)
    stats = server.curriculum.stats()["SubsetSum"]
    assert stats["reports"] == 112
    assert stats["difficulty"] >= 0.4
    assert sum(passes[:8]) >= 7
    assert in_band(passes[-48:])


# --- the real entry point: app.py under NeMo-Gym's run_webserver (uvicorn on loopback) ----------


def _raw_post(port: int, head: str) -> bytes:
    """The first bytes of the answer to a request of which only ``head`` is sent."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(head.encode())
        return connection.recv(4096)


@pytest.mark.slow
def test_app_py_serves_under_nemo_gyms_run_webserver(tmp_path: Path) -> None:
    """``python app.py`` as ``ng_run`` starts it (the config in NEMO_GYM_CONFIG_DICT), both
    servers on loopback: verify, refusals, the body limit, and an episode over HTTP."""
    import os
    import subprocess
    import sys
    import time

    import httpx
    from omegaconf import OmegaConf

    assert nemo_gym.main(["init", str(tmp_path), "--task", "Knapsack", "--max-attempts", "2"]) == 0
    config = _global_config(tmp_path)
    text = OmegaConf.to_yaml(config)
    servers, ports = {}, {}
    try:
        for name in ("npgym", "npgym_gymnasium"):
            ports[name] = config[name]["resources_servers"][name]["port"]
            env = os.environ | {"NEMO_GYM_CONFIG_DICT": text, "NEMO_GYM_CONFIG_PATH": name}
            servers[name] = subprocess.Popen(
                [sys.executable, "app.py"],
                cwd=tmp_path / "resources_servers" / name,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 180
        for name, port in ports.items():
            while True:
                assert servers[name].poll() is None, f"{name} exited"
                assert time.monotonic() < deadline, f"{name} did not start"
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                        break
                time.sleep(0.2)
        verify = httpx.Client(base_url=f"http://127.0.0.1:{ports['npgym']}", timeout=120)
        row = next(nemo_gym_rows(["Knapsack"], 1))
        best = optimal("Knapsack", row["reference"])
        reply = verify.post("/verify", json=row | {"response": response(best)})
        assert reply.json()["reward_components"] == {
            "format": 1.0,
            "feasibility": 1.0,
            "optimality": 1.0,
        }
        bad = row | {"instance": "{", "response": response(best)}
        assert "bad task or instance" in refused(verify.post("/verify", json=bad), 400)
        head = (
            "POST /verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n"
        )
        assert _raw_post(ports["npgym"], head).startswith(b"HTTP/1.1 413")
        verify.close()
        gymnasium = f"http://127.0.0.1:{ports['npgym_gymnasium']}"
        with httpx.Client(base_url=gymnasium, timeout=120) as env:
            info = env.post("/reset", json=EMPTY).json()["info"]
            assert (info["task"], info["max_attempts"]) == ("Knapsack", 2)
            first = env.post("/step", json=EMPTY | {"response": response("no idea")}).json()
            assert (first["terminated"], first["reward"]) == (False, 0.0)
            last = env.post("/step", json=EMPTY | {"response": response("still no")}).json()
            assert (last["terminated"], last["reward"]) == (True, -2.5)
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(30)


@pytest.mark.slow
def test_example_smoke() -> None:
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[1] / "examples" / "nemo_gym_server.py"
    done = subprocess.run(
        [sys.executable, str(example), "--smoke", "--task", "Knapsack"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reward 2.0 {'format': 1.0, 'feasibility': 1.0, 'optimality': 1.0}" in done.stdout
    assert "curriculum Knapsack: frontier 0.60 after 64 episodes" in done.stdout
    assert "nemo-gym smoke run done" in done.stdout


def test_without_nemo_gym_the_import_says_what_to_install() -> None:
    import subprocess
    import sys

    code = "import sys; sys.modules['nemo_gym'] = None; import npgym.integrations.nemo_gym"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: npgym.integrations.nemo_gym needs nemo-gym 0.7")
    assert "Python >=3.13.14" in last
    assert "pip install 'npgym[nemo-gym]'" in last
