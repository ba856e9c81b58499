"""Counting XLA compilations with JAX's public monitoring events (no private APIs).

`jax.monitoring` has no public way to remove a listener, so one listener is registered for the
whole test session; `counting_compiles` collects the backend compilations made inside it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

_EVENT = "/jax/core/compile/backend_compile_duration"
_active: list[list[str]] = []
_registered = False


def _listen(event: str, duration: float, fun_name: str = "", **_) -> None:
    if event == _EVENT and _active:
        _active[-1].append(fun_name)


@contextmanager
def counting_compiles(jax) -> Iterator[list[str]]:
    """The backend compilations JAX makes inside the block: the name of the function each
    compiles (`jit(step)`)."""
    global _registered
    if not _registered:
        jax.monitoring.register_event_duration_secs_listener(_listen)
        _registered = True
    compiles: list[str] = []
    _active.append(compiles)
    try:
        yield compiles
    finally:
        _active.pop()
