"""Play one TSP episode with the reference answer and one with a broken answer.

python examples/quickstart.py            # a hard instance
python examples/quickstart.py --smoke    # an easy one (CI runs this)
"""

import argparse

import gymnasium as gym

import npgym  # noqa: F401  (registers the npgym/* environments)

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--smoke", action="store_true", help="an easy instance, for a quick check")
args = parser.parse_args()
env = gym.make("npgym/TSP-easy" if args.smoke else "npgym/TSP-hard")

prompt, info = env.reset(seed=7)
print(prompt[:300], "...\n")
reference = info["reference"]
print(f"reference: length {reference.objective}, proven optimal: {reference.proven_optimal}\n")

task = env.unwrapped.task
good = "I tried a few tours; this one is shortest.\n" + task.format_answer(reference.solution)
feedback, reward, terminated, truncated, verdict = env.step(good)
print(f"reference answer -> reward {reward}: {feedback}")

env.reset(seed=7)
broken = "Answer: [0, 3, 1, 3, 0]"
feedback, reward, terminated, truncated, verdict = env.step(broken)
print(f"broken answer    -> reward {reward}: {feedback}")
print({key: verdict[key] for key in ("format_ok", "feasible", "objective", "ratio", "reason")})

_, info = env.reset(seed=7)
identity = task.format_answer(task.baseline_solution(info["instance"]))
for preset in ("np-engine", "strict"):
    lazy = task.score(info["instance"], identity, reference, reward=preset)
    print(f"identity tour under {preset:9} -> reward {lazy.reward:.3f}")
