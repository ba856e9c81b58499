"""A branch no traced call takes never runs traced (JAX205): a helper's NumPy fallback under
`if rng is None:` where every traced caller passes a key. A traced caller that leaves `rng` to
its None default takes it, and is reported. JAX agrees: the fallback never runs under jit."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source

HELPER = """
import jax
import numpy as np

calls = []

def jitter(x, rng=None):
    if rng is None:
        calls.append("numpy")
        return x + np.random.normal(size=x.shape)
    return x + jax.random.normal(rng, x.shape)
"""

WITH_KEY = HELPER + """
@jax.jit
def train_step(x, key):
    return jitter(x, rng=key)
"""

# The key is one of the rows a split unpacks: an array, so not None either.
UNPACKED_KEY = HELPER + """
@jax.jit
def train_step(x, key):
    key, sub = jax.random.split(key)
    return jitter(x, rng=sub)
"""

WITHOUT_KEY = HELPER + """
@jax.jit
def eval_step(x):
    return jitter(x)
"""


def _rows(source: str) -> set[int]:
    return {f.start.row for f in lint_source(textwrap.dedent(source), "case.py", {"JAX205"})}


def test_a_fallback_every_traced_caller_rules_out_is_quiet():
    assert _rows(WITH_KEY) == set()
    assert _rows(UNPACKED_KEY) == set()


def test_a_traced_caller_taking_the_fallback_is_reported():
    assert _rows(WITHOUT_KEY) == {10}
    assert _rows(WITH_KEY + WITHOUT_KEY.replace(HELPER, "")) == {10}


def test_jax_never_runs_the_fallback_under_jit():
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(WITH_KEY, namespace)
    x = jax.numpy.zeros(3)
    first = namespace["train_step"](x, jax.random.key(0))
    second = namespace["train_step"](x, jax.random.key(1))
    assert namespace["calls"] == [] and not (first == second).all()
    exec(UNPACKED_KEY, namespace)
    namespace["train_step"](x, jax.random.key(0))
    assert namespace["calls"] == []
