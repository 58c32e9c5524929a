"""npgym in NeMo-Gym: write the servers' folder and training rows for ``ng_run``.

    python examples/nemo_gym_server.py --root my-gym --task TSP --task Knapsack -n 500
    cd my-gym && ng_run "+config_paths=[resources_servers/npgym/configs/npgym.yaml,\
        responses_api_models/vllm_model/configs/vllm_model.yaml]" ...

``--smoke`` (CPU, seconds, no model): writes the same files to a temporary folder, then drives
both servers through their real NeMo-Gym apps (FastAPI's TestClient) with a scripted learner:
rows through ``/verify``, and episodes through ``/reset`` + ``/step`` where the adaptive
curriculum follows the verdicts. Needs ``npgym[nemo-gym]`` (docs/nemo-gym.md, "Install").
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import numpy as np

from npgym.integrations import nemo_gym


def reply(text: str) -> dict[str, Any]:
    """A model's Responses-API output holding ``text``, as NeMo-Gym's agents post it."""
    message = {"id": "m", "role": "assistant", "type": "message", "status": "completed"}
    message["content"] = [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "id": "r",
        "created_at": 0.0,
        "model": "scripted",
        "object": "response",
        "parallel_tool_calls": False,
        "tool_choice": "none",
        "tools": [],
        "output": [message],
    }


def smoke(root: Path, tasks: list[str]) -> None:
    """Both servers, driven by a learner that is optimal with probability 1.25 - 1.5 * d."""
    from fastapi.testclient import TestClient
    from nemo_gym.server_utils import ServerClient

    import npgym

    place = {"host": "127.0.0.1", "port": 8080, "entrypoint": "app.py"}
    rows = Path(root) / "resources_servers" / "npgym" / "data" / "train.jsonl"
    nemo_gym.write_jsonl(nemo_gym.nemo_gym_rows(tasks, 2), rows)
    config = nemo_gym.NPGymResourcesServerConfig(name="npgym", **place)
    server = nemo_gym.NPGymResourcesServer(config=config, server_client=MagicMock(ServerClient))
    verify = TestClient(server.setup_webserver())
    for line in rows.read_text().splitlines():
        row = json.loads(line)
        task = npgym.get_task(row["npgym_task"])
        best = task.format_answer(json.loads(row["reference"])["solution"])
        body = verify.post("/verify", json=row | {"response": reply(best)}).json()
        print(f"/verify {row['id']}: reward {body['reward']} {body['reward_components']}")

    gym_config = nemo_gym.NPGymGymnasiumServerConfig(
        name="npgym_gymnasium", tasks=tasks, step_size=0.1, window=8, **place
    )
    gym = nemo_gym.NPGymGymnasiumServer(config=gym_config, server_client=MagicMock(ServerClient))
    env = TestClient(gym.setup_webserver())
    rng = np.random.default_rng(0)
    empty = {"responses_create_params": {"input": []}}
    for _ in range(64):
        info = env.post("/reset", json=empty).json()["info"]
        (episode,) = gym._episodes.values()  # the scripted learner peeks at the reference
        session = episode.session
        good = rng.random() < np.clip(1.25 - 1.5 * info["difficulty"], 0.0, 1.0)
        text = session.task.format_answer(session.reference.solution) if good else "no idea"
        env.post("/step", json=empty | {"response": reply(text)})
    for task_name, stats in gym.curriculum.stats().items():
        print(
            f"curriculum {task_name}: frontier {stats['difficulty']:.2f} after "
            f"{stats['reports']:.0f} episodes, pass rate {stats['pass_rate']:.2f}"
        )
    print("nemo-gym smoke run done")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="the folder ng_run runs in")
    parser.add_argument("--task", action="append", help="npgym task (repeat; default: TSP)")
    parser.add_argument("-n", type=int, default=100, help="training rows per task")
    parser.add_argument("--smoke", action="store_true", help="CPU smoke run in a temp folder")
    args = parser.parse_args()
    tasks = args.task or ["TSP"]
    if args.smoke:
        with tempfile.TemporaryDirectory() as folder:
            nemo_gym.write_server_dir(folder, tasks)
            smoke(Path(folder), tasks)
        return
    if args.root is None:
        parser.error("give --root (or --smoke)")
    for path in nemo_gym.write_server_dir(args.root, tasks):
        print(path)
    rows = args.root / "resources_servers" / "npgym" / "data" / "train.jsonl"
    count = nemo_gym.write_jsonl(nemo_gym.nemo_gym_rows(tasks, args.n), rows)
    print(f"wrote {count} rows to {rows}")


if __name__ == "__main__":
    main()
