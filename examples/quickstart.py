"""Play one TSP episode with the reference answer and one with a broken answer."""

import gymnasium as gym

import npgym  # noqa: F401  (registers the npgym/* environments)

env = gym.make("npgym/TSP-hard")

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
