"""Progress for long commands: a tqdm bar on a terminal, periodic log lines everywhere else.

A bar redrawn with carriage returns is unreadable in a CI log or a file, and a command that
prints nothing for minutes looks hung. :class:`Progress` draws tqdm's bar when its stream is a
terminal and otherwise writes one line every ``interval`` seconds (and a last one at the end):
``eval: 40/100 done, 2 failed, 1 retrying, 3.1/s``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import IO, Any, TypeVar

T = TypeVar("T")


class Progress:
    """Counts of done, failed and retrying items, shown as a bar or as periodic lines."""

    def __init__(
        self,
        total: int,
        label: str,
        *,
        stream: IO[str] | None = None,
        interval: float = 10.0,
        enabled: bool = True,
    ) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.failed = 0
        self.retrying = 0
        self._stream = stream if stream is not None else sys.stderr
        self._interval = interval
        self._enabled = enabled and total > 0
        self._started = time.monotonic()
        self._last_line = self._started
        self._bar: Any = None
        if self._enabled and _is_terminal(self._stream):
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, file=self._stream, dynamic_ncols=True)

    def update(self, done: int = 0, failed: int = 0, retrying: int = 0) -> None:
        """Add to the counts (``retrying`` may go down again) and refresh the display."""
        self.done += done
        self.failed += failed
        self.retrying += retrying
        if not self._enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix(failed=self.failed, retrying=self.retrying, refresh=False)
            self._bar.update(done + failed)
            return
        now = time.monotonic()
        if now - self._last_line >= self._interval:
            self._last_line = now
            self._write_line()

    def track(self, items: Iterable[T]) -> Iterator[T]:
        """Yield ``items``, counting each one done after it has been used."""
        for item in items:
            yield item
            self.update(done=1)

    def summary(self) -> str:
        """``label: done/total done, F failed, R retrying, X/s``."""
        elapsed = max(time.monotonic() - self._started, 1e-9)
        rate = (self.done + self.failed) / elapsed
        return (
            f"{self.label}: {self.done + self.failed}/{self.total} finished ({self.done} done, "
            f"{self.failed} failed, {self.retrying} retrying), {rate:.1f}/s"
        )

    def _write_line(self) -> None:
        self._stream.write(self.summary() + "\n")
        self._stream.flush()

    def close(self) -> None:
        """Finish the bar, or write the last line."""
        if not self._enabled:
            return
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        else:
            self._write_line()
        self._enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
