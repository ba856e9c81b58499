"""Where a run's time goes (`jaxlint check --timings`): seconds per phase of linting a file
(reading, parsing, each fact of the analysis, each rule's own work).

Phases nest (a rule asks for a fact, which parses another module): the time goes to the
innermost phase running, so the phases add up to the time measured and none is counted twice.
Nothing is measured unless a run records (`recording`): a timed function then costs one test.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from functools import wraps
from typing import Any, Callable, Iterator, TypeVar

OTHER = "other"  # time in no named phase (the runner's own work between them)

F = TypeVar("F", bound=Callable[..., Any])


class _Clock:
    """Seconds per phase in one process: the time since the last switch goes to the phase running."""

    def __init__(self, now: Callable[[], float]) -> None:
        self.now = now
        self.seconds: dict[str, float] = {}
        self.running = OTHER
        self.since = now()

    def switch(self, phase: str) -> str:
        now = self.now()
        self.seconds[self.running] = self.seconds.get(self.running, 0.0) + now - self.since
        previous, self.running, self.since = self.running, phase, now
        return previous


_clock: _Clock | None = None


@contextmanager
def recording() -> Iterator[dict[str, float]]:
    """Record the phases run inside, in seconds of this process's CPU time (a shared machine's other
    work does not count); the dict yielded holds them once the block ends."""
    global _clock
    outer, clock = _clock, _Clock(time.process_time)
    _clock = clock
    try:
        yield clock.seconds
    finally:
        clock.switch(OTHER)
        _clock = outer


def start() -> None:
    """Record from now on, in wall seconds, until `stop` (a command's whole run, its worker
    processes included)."""
    global _clock
    _clock = _Clock(time.perf_counter)


def stop() -> dict[str, float]:
    """Stop recording: the seconds per phase since `start`."""
    global _clock
    clock, _clock = _clock, None
    if clock is None:
        return {}
    clock.switch(OTHER)
    return clock.seconds


def run(phase: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)`, its time counted for `phase` while recording."""
    clock = _clock
    if clock is None:
        return function(*args, **kwargs)
    previous = clock.switch(phase)
    try:
        return function(*args, **kwargs)
    finally:
        clock.switch(previous)


def timed(phase: str) -> Callable[[F], F]:
    """A function's time, counted for `phase` while recording."""

    def decorate(function: F) -> F:
        @wraps(function)
        def timed_function(*args: Any, **kwargs: Any) -> Any:
            return run(phase, function, *args, **kwargs)

        return timed_function  # type: ignore[return-value]

    return decorate


def add(total: dict[str, float], seconds: dict[str, float]) -> None:
    """Add one record's seconds per phase into `total`."""
    for phase, spent in seconds.items():
        total[phase] = total.get(phase, 0.0) + spent
