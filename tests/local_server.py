"""A fake OpenAI-compatible endpoint's plumbing: an HTTP server on a free port of 127.0.0.1,
served from a daemon thread. Each test module brings its own request handler (what the fake
answers, and how it misbehaves)."""

from __future__ import annotations

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
