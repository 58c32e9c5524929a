"""A fake OpenAI-compatible endpoint's plumbing: an HTTP server on a free port of 127.0.0.1,
served from a daemon thread. Each test module brings its own request handler (what the fake
answers, and how it misbehaves); :data:`HOSTILE_REPLIES` is a corpus of malformed replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

ServerT = TypeVar("ServerT", bound=ThreadingHTTPServer)


class LocalServer(ThreadingHTTPServer):
    """A threading HTTP server on a port of 127.0.0.1 the system picks."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes (``.../v1``)."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def serving(server: ServerT) -> Iterator[ServerT]:
    """``server`` answering from a daemon thread inside the block, shut down and closed after."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _reply(content: object = "Answer: [0]", **changes: object) -> bytes:
    """A chat-completions reply body with one choice holding ``content``, fields changed."""
    choice = {"index": 0, "message": {"role": "assistant", "content": content}}
    reply = {"id": "x", "object": "chat.completion", "choices": [choice], **changes}
    return json.dumps(reply).encode()


DEEP = 200_000
"""Nesting of the deep hostile replies: far past any recursion limit."""

HOSTILE_REPLIES: dict[str, bytes] = {
    "deep array": b'{"choices": ' + b"[" * DEEP + b"]" * DEEP + b"}",
    "deep object": b'{"a": ' * DEEP + b"1" + b"}" * DEEP,
    "deep unclosed": b'{"choices": ' + b"[" * DEEP,
    "deep usage": _reply()[:-1] + b', "usage": ' + b"[" * DEEP + b"]" * DEEP + b"}",
    "lone high surrogate": _reply().replace(b"Answer", b"\\ud800 Answer"),
    "lone low surrogate": _reply().replace(b"Answer", b"\\udc00Answer"),
    "reversed pair": _reply().replace(b"Answer", b"\\ude00\\ud83dAnswer"),
    "surrogate in id": _reply().replace(b'"id": "x"', b'"id": "\\ud800"'),
    "invalid utf-8": _reply().replace(b"Answer", b"\xff\xfeAnswer"),
    "surrogate bytes": _reply().replace(b"Answer", b"\xed\xa0\x80Answer"),
    "nul byte": _reply().replace(b"Answer", b"\x00Answer"),
    "not json": b"<html><body>502 Bad Gateway</body></html>",
    "empty body": b"",
    "truncated": _reply()[:-7],
    "json null": b"null",
    "json number": b"1e999",
    "json string": b'"Answer: [0]"',
    "json list": b"[" + _reply() + b"]",
    "huge integer": _reply()[:-1] + b', "created": 1' + b"0" * 5000 + b"}",
    "choices null": _reply(choices=None),
    "choices object": _reply(choices={"0": {"message": {"content": "Answer: [0]"}}}),
    "choices string": _reply(choices="Answer: [0]"),
    "choice null": _reply(choices=[None]),
    "choice list": _reply(choices=[["Answer: [0]"]]),
    "message string": _reply(choices=[{"message": "Answer: [0]"}]),
    "message list": _reply(choices=[{"message": ["Answer: [0]"]}]),
    "content number": _reply(content=0),
    "content list": _reply(content=[{"type": "text", "text": "Answer: [0]"}]),
    "content object": _reply(content={"text": "Answer: [0]"}),
    "content true": _reply(content=True),
}
"""Malformed chat-completions replies, each of which the sampler must retry and then count as
missing (never an answer, never an abort of the run)."""
