"""The time a table's maintenance and commits go by: the system clock, or one a test injects.

Java reads ``System.currentTimeMillis()`` and ``LocalDateTime.now()`` where a commit stamps its
snapshot and a data file its creation time, and where maintenance decides what is old enough to
go: snapshots and tags by retention, partitions by their values or update time, automatic tags
by the period they close. Every one of those reads :func:`now_millis` or :func:`now_local`
here, so a simulated month of daily commits (``injected``) runs in seconds, with no sleep,
exactly as it would over thirty days. File modification times stay the store's own: consumer
expiry compares them with the real clock; orphan cleaning's default cutoff (one day before
:func:`now_millis`) follows an injected clock, so a clock one day ahead shortens its safety age
(the soak's orphan pass, tests/soak/soak_run.py).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator

_lock = threading.Lock()
_source: Callable[[], int] | None = None


def now_millis() -> int:
    """Epoch milliseconds: the injected clock's, else the system's."""
    source = _source
    return source() if source is not None else int(time.time() * 1000)


def now_local() -> dt.datetime:
    """The local date and time of :func:`now_millis` (Java's ``LocalDateTime.now()``)."""
    return dt.datetime.fromtimestamp(now_millis() / 1000)


@contextlib.contextmanager
def injected(source: Callable[[], int]) -> Iterator[None]:
    """Run the block with ``source`` (epoch milliseconds) as the clock of this process."""
    global _source
    with _lock:
        previous, _source = _source, source
    try:
        yield
    finally:
        with _lock:
            _source = previous


class ManualClock:
    """A clock that moves only when told: ``with injected(clock):`` then ``clock.advance``."""

    def __init__(self, start_millis: int) -> None:
        self.millis = start_millis

    def __call__(self) -> int:
        return self.millis

    def advance(self, *, days: float = 0, hours: float = 0, millis: int = 0) -> None:
        self.millis += int(days * 86_400_000 + hours * 3_600_000) + millis


__all__ = ["ManualClock", "injected", "now_local", "now_millis"]
