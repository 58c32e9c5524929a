"""Register the MaxCut plug-in, play one episode and run npgym's contract checks on it.

python examples/plugin_task/demo.py            # every tier
python examples/plugin_task/demo.py --smoke    # the easy tier only (CPU, seconds)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent))  # not needed once pip-installed

from npgym_maxcut import MaxCutTask

import npgym
from npgym.testing import check_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="check the easy tier only")
    args = parser.parse_args()
    name = npgym.register_task(MaxCutTask)
    env = gym.make(npgym.env_id(name, "easy"))
    prompt, info = env.reset(seed=0)
    print(prompt, "\n")
    answer = npgym.get_task(name).format_answer(info["reference"].solution)
    _, reward, *_ = env.step(answer)
    print(f"{answer} -> reward {reward}")
    check_task(MaxCutTask, tiers=["easy"] if args.smoke else npgym.TIERS)
    print("check_task: the MaxCut plug-in meets the npgym contract")


if __name__ == "__main__":
    main()
