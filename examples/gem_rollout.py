"""Multi-turn npgym episodes through GEM: ``gem.make_vec`` over the adaptive curriculum, with a
GEM observation wrapper, driven by a model behind an OpenAI-compatible endpoint.

    python examples/gem_rollout.py --base-url http://localhost:8000/v1 --model Qwen/Qwen3-4B
    python examples/gem_rollout.py --smoke      # CPU, seconds: a scripted policy, no model

Needs ``pip install 'npgym[gem]'`` (Python <=3.12.0; its own venv beside verl: docs/gem.md)
and, for a model, ``npgym[openai]`` (httpx). Each env of the vector plays its own episodes;
``concat_with_action`` (a wrapper name of GEM's trainer configs) shows the policy the whole
episode so far: the prompt, its earlier answers and the verifier's feedback. Finished envs
start their next episode in the same step (GEM's autoreset), drawn at the curriculum's
frontier, which moves with the reported results.
"""

from __future__ import annotations

import argparse
from typing import Any

import gem
from gem.wrappers.wrapper_factory import get_wrapper_fns

import npgym.integrations.gem  # noqa: F401  (registers the npgym ids with GEM)

TASKS = ["Knapsack", "SubsetSum"]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. .../v1")
    parser.add_argument("--model", default="default", help="the endpoint's model name")
    parser.add_argument("--envs", type=int, default=8, help="episodes played at once")
    parser.add_argument("--steps", type=int, default=40, help="vector steps to play")
    parser.add_argument("--max-attempts", type=int, default=3, help="answers per episode")
    parser.add_argument("--smoke", action="store_true", help="scripted policy, 2 envs, 6 steps")
    return parser.parse_args()


def scripted(vec: Any, observations: list[str]) -> list[str]:
    """The smoke policy: a first answer of nothing, then the reference answer."""
    answers = []
    for env, observation in zip(vec.envs, observations, strict=True):
        session = env.unwrapped.env.session
        best = session.task.format_answer(session.reference.solution)
        answers.append(best if "Answer: []" in observation else "Answer: []")
    return answers


def model_policy(base_url: str, model: str) -> Any:
    import httpx

    client = httpx.Client(base_url=base_url, timeout=600.0)

    def answer(_: Any, observations: list[str]) -> list[str]:
        replies = []
        for text in observations:
            body = {"model": model, "messages": [{"role": "user", "content": text}]}
            response = client.post("/chat/completions", json=body)
            response.raise_for_status()
            replies.append(response.json()["choices"][0]["message"]["content"] or "")
        return replies

    return answer


def main() -> None:
    args = parse_args()
    if not args.smoke and not args.base_url:
        raise SystemExit("Error: give --base-url (an OpenAI-compatible endpoint) or --smoke")
    envs, steps = (2, 6) if args.smoke else (args.envs, args.steps)
    vec = gem.make_vec(
        ["npgym/Curriculum"] * envs,
        wrappers=get_wrapper_fns("concat_with_action"),
        tasks=TASKS,
        curriculum_options={"window": 4},
        max_attempts=args.max_attempts,
    )
    policy = scripted if args.smoke else model_policy(args.base_url, args.model)
    observations, _ = vec.reset()
    returns, episodes = [0.0] * envs, []
    for _ in range(steps):
        observations, rewards, terminated, truncated, _ = vec.step(policy(vec, observations))
        for index in range(envs):
            returns[index] += float(rewards[index])
            if terminated[index] or truncated[index]:
                episodes.append(returns[index])
                returns[index] = 0.0
    curriculum = vec.envs[0].unwrapped.curriculum
    print(f"episodes {len(episodes)}, mean return {sum(episodes) / max(len(episodes), 1):.3f}")
    print("frontier:", {name: round(curriculum.difficulty(name), 3) for name in TASKS})
    if args.smoke:
        print(f"smoke run done: {len(episodes)} episodes in {steps} steps of {envs} envs")


if __name__ == "__main__":
    main()
