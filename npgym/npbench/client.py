"""Sample completions from any OpenAI-compatible chat endpoint (vLLM, SGLang, OpenAI...).

The sampler trusts nothing the server says:

- :func:`check_endpoint` runs first and fails fast, before any work is written, on a refused
  connection, a DNS failure, HTTP 401/403/404, a body that is not an OpenAI model list, or a
  model the server does not serve;
- every request has a deadline for the whole request (``timeout`` seconds from sending it to
  the last byte of the reply: a server that drips its reply is cut there), and every reply is
  read up to a size cap (:data:`MAX_COMPLETION_BYTES` per requested completion, plus
  :data:`REPLY_ENVELOPE_BYTES`); a larger one is refused without being read further, and a
  completion longer than :data:`MAX_COMPLETION_CHARS` is refused too;
- every retry loop is bounded: a transport error, a missed deadline, HTTP 429 or 5xx, an
  oversized reply, or a malformed 200 (an HTML or plain-text body, bytes that are not UTF-8,
  JSON nested deeper than :data:`npgym.answer.MAX_JSON_DEPTH`, JSON without ``choices``, an
  empty ``choices`` list, a choice without a message, or whose content is ``null``, as in a
  reply of tool calls only, or holds a lone surrogate, which is no Unicode text) is retried
  with exponential backoff, at most ``max_retries`` times per instance; then the instance is
  recorded as *missing* (its id and the last error in the report), never as an (empty) answer,
  and the other instances go on. Other 4xx answers (a prompt too long, say) are not retried;
- answers go to an append-only journal (``<output>.journal``) as they arrive, flushed and
  fsynced, so a crash or ``kill -9`` loses nothing; the run ends by merging the journal into
  ``output`` (one row per id, written atomically). A rerun merges any journal left behind, skips
  ids that have their samples and tops up ids that have fewer (a larger ``--samples``): it never
  writes a second row for an id. An instance whose completions would make a row longer than
  :data:`npgym.records.MAX_LINE_BYTES` is recorded as missing instead, so that every file the
  sampler writes can be read back. The journal and the temporary file are never opened through
  a link, so a link planted in the output folder cannot redirect a write;
- a corrupted line names its file and line number; every line read is bounded
  (:func:`npgym.records.read_lines`).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Coroutine, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from npgym.answer import loads_json
from npgym.env import MAX_TEXT_CHARS
from npgym.outputs import OutputError, open_regular
from npgym.progress import Progress
from npgym.records import MAX_LINE_BYTES, RecordError, complete_lines, json_row

if TYPE_CHECKING:
    import httpx

JOURNAL_SUFFIX = ".journal"
BACKOFF_CAP_SECONDS = 30.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
MAX_COMPLETION_CHARS = MAX_TEXT_CHARS
"""Longest completion accepted from an endpoint: the 1 MiB of text an env step accepts."""
MAX_COMPLETION_BYTES = 4 * MAX_COMPLETION_CHARS
"""Reply bytes allowed per requested completion: its longest text in UTF-8 (4 MiB)."""
REPLY_ENVELOPE_BYTES = 64 * 1024
"""Reply bytes allowed on top of the completions' (ids, usage, logprobs' absence...)."""
MAX_MODELS_REPLY_BYTES = 4 * 1024 * 1024
"""Largest ``/models`` reply :func:`check_endpoint` reads."""

T = TypeVar("T")


class EndpointError(RuntimeError):
    """The endpoint cannot serve this run (said before any request for an answer)."""


class CompletionsFileError(ValueError):
    """A completions file or journal that cannot be read back (names the file and line)."""


class _RetryableError(Exception):
    """A failed request that another try may fix."""


class _FatalError(Exception):
    """A failed request that retrying will not fix (a 4xx other than 408/409/425/429)."""


@dataclass(frozen=True)
class SamplingOptions:
    """What to ask the model, and how hard to try."""

    model: str
    samples: int = 1
    system_prompt: str | None = None
    temperature: float | None = 0.6
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    extra_body: Mapping[str, Any] | None = None
    """Extra request fields (vLLM / SGLang sampling options such as ``top_k``)."""
    concurrency: int = 8
    timeout: float = 600.0
    max_retries: int = 4
    backoff: float = 1.0
    """Seconds before the first retry; doubled each time, capped at 30 s."""

    def payload(self, prompt: str, count: int) -> dict[str, Any]:
        """The chat-completions request body for ``count`` samples of ``prompt``."""
        messages = [{"role": "user", "content": prompt}]
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        body: dict[str, Any] = {"model": self.model, "messages": messages, "n": count}
        for name in ("temperature", "top_p", "max_tokens", "seed"):
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        body.update(self.extra_body or {})
        return body


@dataclass
class SamplingReport:
    """How a sampling run went: ``failed`` maps each missing id to its last error."""

    requested: int
    skipped: int
    written: int
    topped_up: int
    failed: dict[str, str] = field(default_factory=dict)
    requests: int = 0
    retries: int = 0


def _headers(api_key: str | None) -> dict[str, str]:
    key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
    return {"Authorization": f"Bearer {key}"}


def check_endpoint(
    endpoint: str, model: str, api_key: str | None = None, timeout: float = 15.0
) -> None:
    """Raise :class:`EndpointError` unless ``endpoint`` answers ``/models`` and serves ``model``.

    ``timeout`` is a deadline for the whole request, reading the reply included.
    """
    _run_in_thread(_check_endpoint(endpoint, model, api_key, timeout))


async def _check_endpoint(endpoint: str, model: str, api_key: str | None, timeout: float) -> None:
    import httpx

    url = endpoint.rstrip("/") + "/models"
    try:
        async with httpx.AsyncClient(headers=_headers(api_key), timeout=timeout) as client:
            status, kind, body = await asyncio.wait_for(
                _get_reply(client, "GET", url, MAX_MODELS_REPLY_BYTES), timeout
            )
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        raise EndpointError(f"cannot reach {endpoint}: {type(error).__name__}: {error}") from error
    except asyncio.TimeoutError as error:
        raise EndpointError(f"{url} did not answer within {timeout:g} s") from error
    except _RetryableError as error:
        raise EndpointError(f"{url}: {error}") from error
    if status in (401, 403):
        raise EndpointError(f"{endpoint} refused the API key (HTTP {status}): set OPENAI_API_KEY")
    if status == 404:
        raise EndpointError(
            f"{url} was not found (HTTP 404): the base URL of an OpenAI-compatible server "
            "usually ends in /v1"
        )
    if status != 200:
        raise EndpointError(f"{url} answered HTTP {status}")
    try:
        served = [str(entry["id"]) for entry in loads_json(body)["data"]]
    except (ValueError, KeyError, TypeError) as error:
        raise EndpointError(f"{url} did not answer an OpenAI model list ({kind})") from error
    if model not in served:
        listed = ", ".join(served[:10]) or "none"
        raise EndpointError(f"model {model!r} is not served at {endpoint} (it serves: {listed})")


def _run_in_thread(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end on a fresh event loop in a worker thread, so that a sync
    caller inside a running loop (a notebook) can call it too."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _get_reply(
    client: httpx.AsyncClient, method: str, url: str, cap: int, **request: Any
) -> tuple[int, str, bytes]:
    """Status, content type and body of a request, reading at most ``cap`` bytes of body: a
    larger reply (declared or sent) raises :class:`_RetryableError` without being read on."""
    async with client.stream(method, url, **request) as response:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise _RetryableError(f"reply of {int(declared):,} bytes is over the {cap:,}-byte cap")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > cap:
                raise _RetryableError(f"reply is over the {cap:,}-byte cap; not read further")
        return response.status_code, response.headers.get("content-type", "unknown"), bytes(body)


def _texts(status: int, kind: str, body: bytes) -> list[str]:
    """The completion texts of a chat-completions reply; raises on any malformed answer.

    A choice whose content is not a string (``null`` in a reply of tool calls only) or is longer
    than :data:`MAX_COMPLETION_CHARS` holds no answer: when no choice does, the reply is refused
    (and retried); otherwise the others are kept and the rest asked for again.
    """
    if status in RETRYABLE_STATUS or status >= 500:
        raise _RetryableError(f"HTTP {status}")
    if status != 200:
        raise _FatalError(f"HTTP {status}: {body[:200].decode('utf-8', errors='replace')}")
    try:
        reply = loads_json(body)
    except ValueError as error:  # not UTF-8, too deep, not JSON, an integer too long
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise _RetryableError(f"reply is not valid JSON text ({kind}): {reason[:200]}") from None
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list) or not choices:
        raise _RetryableError("answer has no choices")
    texts = []
    problem = ""
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise _RetryableError("a choice has no message")
        content = message.get("content")
        if not isinstance(content, str):
            problem = "a choice's message has no text content (tool calls only?)"
        elif len(content) > MAX_COMPLETION_CHARS:
            problem = f"a completion is longer than {MAX_COMPLETION_CHARS:,} characters"
        else:
            texts.append(content)
    if not texts:
        raise _RetryableError(problem)
    return texts


def reply_cap(count: int) -> int:
    """Most bytes read of a reply that holds ``count`` completions."""
    return count * MAX_COMPLETION_BYTES + REPLY_ENVELOPE_BYTES


def read_completion_rows(path: Path) -> dict[str, list[str]]:
    """``id -> completions`` of a completions file or journal (rows of one id are joined).

    A last line cut short by a crash is dropped; any other unreadable line is an error that
    names the file and the line. The sampler writes these files itself, so anything but a
    regular file (a link, a FIFO, a device planted in the output folder) is refused unread.
    """
    merged: dict[str, list[str]] = {}
    if not (path.exists() or path.is_symlink()):
        return merged
    if path.is_symlink() or not path.is_file():
        raise CompletionsFileError(f"{path}: not a regular file (a link, FIFO or device); refused")
    try:
        lines = complete_lines(path)
    except RecordError as error:
        raise CompletionsFileError(f"{error}; fix or delete that line") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json_row(line, f"{path}:{number}")  # bounded nesting, Unicode text
            identifier = str(row["id"])
            texts = row["completions"] if "completions" in row else [row["completion"]]
        except RecordError as error:
            raise CompletionsFileError(f"{error}; fix or delete that line") from None
        except (KeyError, TypeError) as error:
            raise CompletionsFileError(
                f"{path}:{number}: not a completions row ({type(error).__name__}: {error}); "
                "fix or delete that line"
            ) from error
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise CompletionsFileError(f"{path}:{number}: completions must be a list of strings")
        merged.setdefault(identifier, []).extend(texts)
    return merged


def _compact(output: Path, journal: Path, order: list[str]) -> dict[str, list[str]]:
    """Merge the journal into ``output`` (one row per id, atomically) and remove the journal."""
    merged = read_completion_rows(output)
    for identifier, texts in read_completion_rows(journal).items():
        merged.setdefault(identifier, []).extend(texts)
    if journal.exists() or not output.exists():
        ranked = {identifier: index for index, identifier in enumerate(order)}
        ids = sorted(merged, key=lambda key: (ranked.get(key, len(ranked)), key))
        descriptor, temporary = tempfile.mkstemp(
            dir=output.parent, prefix=output.name + ".", suffix=".tmp"
        )  # a fresh file (O_EXCL): never one that a link planted in the folder points to
        try:
            os.fchmod(descriptor, 0o644)  # as readable as the output it becomes
            with open(descriptor, "w", encoding="utf-8") as handle:
                for identifier in ids:
                    row = {"id": identifier, "completions": merged[identifier]}
                    handle.write(_row_line(row))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, output)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        journal.unlink(missing_ok=True)
    return merged


def _row_line(row: Mapping[str, Any]) -> str:
    """A completions row as one line of JSON (``ensure_ascii=False``: text stays readable)."""
    return json.dumps(row, ensure_ascii=False) + "\n"


def _open_journal(journal: Path) -> IO[str]:
    """The journal, opened to append: created if absent, never through a link, and only a
    regular file (a link or a FIFO planted in the output folder is refused)."""
    try:
        return open_regular(journal, "a")
    except OutputError as error:
        raise CompletionsFileError(f"cannot open the journal: {error}") from None


def sample_endpoint(
    rows: Iterable[Mapping[str, Any]],
    output: str | Path,
    *,
    endpoint: str,
    options: SamplingOptions,
    api_key: str | None = None,
    progress: bool = True,
) -> SamplingReport:
    """Ask the model for ``options.samples`` completions of every row's ``prompt``.

    Call :func:`check_endpoint` first to fail fast. Ids that already have their samples in
    ``output`` are skipped; ids with fewer get the rest.
    """
    import httpx

    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    journal = path.with_name(path.name + JOURNAL_SUFFIX)
    rows = list(rows)
    order = [str(row["id"]) for row in rows]
    existing = _compact(path, journal, order)
    row_bytes = {  # bytes of each id's row so far, so that no row outgrows MAX_LINE_BYTES
        identifier: len(_row_line({"id": identifier, "completions": texts}).encode())
        for identifier, texts in existing.items()
    }
    needs = {
        str(row["id"]): options.samples - len(existing.get(str(row["id"]), []))
        for row in rows
        if len(existing.get(str(row["id"]), [])) < options.samples
    }
    todo = [row for row in rows if str(row["id"]) in needs]
    report = SamplingReport(
        requested=len(rows),
        skipped=len(rows) - len(todo),
        written=0,
        topped_up=sum(1 for row in todo if str(row["id"]) in existing),
    )
    url = endpoint.rstrip("/") + "/chat/completions"

    async def ask(
        client: httpx.AsyncClient, row: Mapping[str, Any], count: int, meter: Progress
    ) -> list[str]:
        texts: list[str] = []
        failures = 0
        while len(texts) < count:
            report.requests += 1
            asked = count - len(texts)
            payload = options.payload(str(row["prompt"]), asked)
            try:
                reply = await asyncio.wait_for(
                    _get_reply(client, "POST", url, reply_cap(asked), json=payload),
                    options.timeout,
                )
                texts += _texts(*reply)[:asked]
                continue
            except asyncio.TimeoutError:
                problem = f"no complete reply within the {options.timeout:g} s deadline"
            except (httpx.TimeoutException, httpx.TransportError, _RetryableError) as error:
                problem = f"{type(error).__name__}: {error}"
            failures += 1
            if failures > options.max_retries:
                raise _FatalError(problem[:300])
            report.retries += 1
            meter.update(retrying=1)
            await asyncio.sleep(min(options.backoff * 2 ** (failures - 1), BACKOFF_CAP_SECONDS))
            meter.update(retrying=-1)
        return texts

    async def run() -> None:
        gate = asyncio.Semaphore(options.concurrency)
        timeout = httpx.Timeout(options.timeout, connect=min(options.timeout, 30.0))  # per read:
        # each request's deadline (asyncio.wait_for in ask) bounds the whole of it
        limits = httpx.Limits(max_connections=options.concurrency)
        with (
            Progress(len(todo), "sampling", enabled=progress) as meter,
            _open_journal(journal) as handle,
        ):
            async with httpx.AsyncClient(
                headers=_headers(api_key), timeout=timeout, limits=limits
            ) as client:

                async def one(row: Mapping[str, Any]) -> None:
                    identifier = str(row["id"])
                    async with gate:
                        try:
                            texts = await ask(client, row, needs[identifier], meter)
                        except _FatalError as error:
                            report.failed[identifier] = str(error)
                            meter.update(failed=1)
                            return
                    line = _row_line({"id": identifier, "completions": texts})
                    size = row_bytes.get(identifier, 0) + len(line.encode())
                    if size > MAX_LINE_BYTES:  # the merged row could not be read back
                        report.failed[identifier] = (
                            f"its completions would make a row of {size:,} bytes, over the "
                            f"{MAX_LINE_BYTES:,}-byte line cap of a completions file"
                        )
                        meter.update(failed=1)
                        return
                    handle.write(line)
                    handle.flush()
                    os.fsync(handle.fileno())
                    report.written += 1
                    meter.update(done=1)

                await asyncio.gather(*(one(row) for row in todo))

    if todo:
        asyncio.run(run())
    _compact(path, journal, order)
    return report
