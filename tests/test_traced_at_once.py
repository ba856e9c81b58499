"""A lambda jitted and called at once reads each global as it is then (JAX410 stays quiet); a
jitted lambda kept and called again after the global changes keeps the old value (reported)."""

from __future__ import annotations

import pytest

from jaxlint.linter import lint_source

AT_ONCE = """
import jax
import jax.numpy as jnp

w = jnp.ones(3)
first = jax.jit(lambda: w.sum())()
w = w * 2
second = jax.jit(lambda: w.sum())()
"""

KEPT = """
import jax
import jax.numpy as jnp

w = jnp.ones(3)
total = jax.jit(lambda: w.sum())
first = total()
w = w * 2
second = total()
"""


def _rows(source: str) -> set[int]:
    return {f.start.row for f in lint_source(source, "case.py", {"JAX410"})}


def test_called_at_once_is_quiet_and_kept_is_reported():
    assert _rows(AT_ONCE) == set()
    assert _rows(KEPT) == {6}


def test_jax_agrees():
    pytest.importorskip("jax")
    at_once: dict = {}
    exec(AT_ONCE, at_once)
    assert float(at_once["first"]) == 3.0 and float(at_once["second"]) == 6.0
    kept: dict = {}
    exec(KEPT, kept)
    assert float(kept["first"]) == 3.0 and float(kept["second"]) == 3.0  # the stale value
