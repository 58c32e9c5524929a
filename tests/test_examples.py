"""Every example script runs in its ``--smoke`` mode (tiny local model, one step, CPU), so an
example cannot rot unnoticed: CI runs these with the default suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.extras import need

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _run(command: list[str], timeout: float = 900) -> str:
    """Run a command from the repository root with this interpreter's scripts on PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_every_example_script_has_a_smoke_mode() -> None:
    scripts = sorted(EXAMPLES.rglob("*.py")) + sorted(EXAMPLES.rglob("*.sh"))
    runnable = [
        path
        for path in scripts
        if path.suffix == ".sh" or "__main__" in path.read_text() or path.parent == EXAMPLES
    ]
    assert runnable
    for path in runnable:
        if path.name == "smoke.py":
            continue  # the verl smoke check itself
        assert "--smoke" in path.read_text(), f"{path.relative_to(ROOT)} has no --smoke mode"


def test_quickstart_smoke() -> None:
    out = _run([sys.executable, "examples/quickstart.py", "--smoke"])
    assert "reference answer -> reward 2.0" in out
    assert "identity tour under strict    -> reward -0.500" in out


def test_trl_grpo_smoke(tmp_path: Path) -> None:
    need("trl")
    need("torch")
    out = _run([sys.executable, "examples/trl/grpo.py", "--smoke", "--output-dir", str(tmp_path)])
    assert "smoke run done: 1 step(s)" in out


def test_verl_scripts_smoke(tmp_path: Path) -> None:
    need("verl")
    _run(["bash", "examples/verl/prepare_data.sh", "--smoke", str(tmp_path)])
    out = _run(["bash", "examples/verl/run_grpo.sh", "--smoke", str(tmp_path)])
    assert "verl smoke check passed: 2 rows" in out
    assert "'reference': 2.0, 'baseline': -0.5" in out  # strict reaches the reward function


def test_openenv_grpo_smoke(tmp_path: Path) -> None:
    need("openenv")
    need("trl")
    command = [sys.executable, "examples/openenv/grpo_server.py", "--smoke"]
    out = _run([*command, "--output-dir", str(tmp_path)])
    assert "smoke run done: 1 step(s) against http://127.0.0.1:" in out


def test_atropos_process_smoke() -> None:
    need("atroposlib")
    out = _run([sys.executable, "examples/atropos_process.py", "--smoke"])
    assert "2 groups, mean reward -1.500, 2 with differing scores" in out
    assert "smoke run done: 2 group(s) of 2" in out


def test_skyrl_dataset_smoke(tmp_path: Path) -> None:
    need("skyrl_gym")
    command = [sys.executable, "examples/skyrl_dataset.py", "--smoke"]
    out = _run([*command, "--output-dir", str(tmp_path)])
    assert f"wrote 4 rows to {tmp_path / 'train.parquet'}" in out
    assert "episodes 16, mean reward 2.000" in out  # the second attempt is the reference
    assert "smoke run done: 1 step of 4 rows x 4 samples" in out


def test_gem_rollout_smoke() -> None:
    need("gem")
    out = _run([sys.executable, "examples/gem_rollout.py", "--smoke"])
    assert "episodes 6, mean return 2.000" in out
    assert "smoke run done: 6 episodes in 6 steps of 2 envs" in out
