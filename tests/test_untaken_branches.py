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

# The key goes through a function the module does not see and comes back under its own name:
# the key it goes on drawing from, not None.
REBOUND_KEY = HELPER + """
from placement import bind_to_device

@jax.jit
def train_step(x, key):
    key, subkey = jax.random.split(key)
    subkey = bind_to_device(subkey, axis_name="batch")
    return jitter(x, rng=subkey)
"""

# What such a function gives back when it is handed no key may well be None.
LOOKED_UP = HELPER + """
from placement import lookup

@jax.jit
def eval_step(x, table):
    rng = lookup(table, "rng")
    return jitter(x, rng=rng)
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
    assert _rows(REBOUND_KEY) == set()


def test_a_value_code_not_seen_gives_back_unasked_may_take_the_fallback():
    assert _rows(LOOKED_UP) == {10}


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
    # Where the function rebinding the key gives back a key (a `fold_in` by device, as such
    # helpers do), as the key's name says.
    rebound = {"bind_to_device": lambda key, axis_name: jax.random.fold_in(key, 0)}
    exec(REBOUND_KEY.replace("from placement import bind_to_device", ""), rebound)
    rebound["train_step"](x, jax.random.key(0))
    assert rebound["calls"] == []
