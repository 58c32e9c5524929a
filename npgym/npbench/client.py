"""Sample completions from any OpenAI-compatible chat endpoint (vLLM, SGLang, OpenAI...).

Requests run with bounded concurrency; each one has a timeout and is retried with exponential
backoff on connection errors, timeouts, 429 and 5xx answers (the ``openai`` client does this).
Every finished instance is appended to the output file at once and flushed to disk, so a crash
loses nothing, and a rerun skips the ids already there.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npgym.records import complete_lines


@dataclass
class SamplingReport:
    """How a sampling run went."""

    requested: int
    skipped: int
    written: int
    failed: dict[str, str]


def _done_ids(path: Path, samples: int) -> set[str]:
    """Ids already holding ``samples`` completions in ``path`` (a cut last line is ignored)."""
    done: set[str] = set()
    if not path.exists():
        return done
    for line in complete_lines(path):
        row = json.loads(line)
        if len(row.get("completions", [])) >= samples:
            done.add(str(row["id"]))
    return done


def sample_endpoint(
    rows: Iterable[Mapping[str, Any]],
    output: str | Path,
    *,
    endpoint: str,
    model: str,
    samples: int = 1,
    concurrency: int = 8,
    timeout: float = 600.0,
    max_retries: int = 4,
    temperature: float = 0.6,
    max_tokens: int | None = None,
    api_key: str | None = None,
) -> SamplingReport:
    """Ask ``model`` at ``endpoint`` (``http://host:port/v1``) for every row's prompt."""
    try:
        import openai
    except ImportError as error:
        raise RuntimeError(
            'sampling from an endpoint needs: pip install "npgym[openai]"'
        ) from error
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    done = _done_ids(path, samples)
    todo = [row for row in rows if str(row["id"]) not in done]
    client = openai.AsyncOpenAI(
        base_url=endpoint,
        api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
        timeout=timeout,
        max_retries=max_retries,
    )
    failed: dict[str, str] = {}

    async def ask(row: Mapping[str, Any], gate: asyncio.Semaphore, handle: Any) -> None:
        texts: list[str] = []
        async with gate:
            try:
                while len(texts) < samples:
                    response = await client.chat.completions.create(
                        model=model,
                        messages=[{"role": "user", "content": row["prompt"]}],
                        n=samples - len(texts),
                        temperature=temperature,
                        max_tokens=max_tokens,
                    )
                    texts += [choice.message.content or "" for choice in response.choices]
            except openai.OpenAIError as error:
                failed[str(row["id"])] = f"{type(error).__name__}: {error}"[:300]
                return
        handle.write(json.dumps({"id": row["id"], "completions": texts[:samples]}) + "\n")
        handle.flush()
        os.fsync(handle.fileno())

    async def run() -> None:
        gate = asyncio.Semaphore(concurrency)
        with open(path, "a", encoding="utf-8") as handle:
            await asyncio.gather(*(ask(row, gate, handle) for row in todo))
        await client.close()

    asyncio.run(run())
    return SamplingReport(len(rows), len(rows) - len(todo), len(todo) - len(failed), failed)
