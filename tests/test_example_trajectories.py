"""A `lax.scan` body that makes its key from a constant seed draws the same numbers on every
step (JAX204), unless the scan's results serve only as example inputs of an `init`: a dummy
trajectory that gives a replay buffer its structure, read for its shape, or handed to the `init`
through a tree map. Its numbers decide nothing there. JAX agrees: the steps repeat, and the
buffer built from the dummy trajectory is the one built from any other."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source

PROGRAM = """
import jax
import jax.numpy as jnp


class Buffer:
    def init(self, example):
        return jax.tree.map(lambda leaf: jnp.zeros((16, *leaf.shape), leaf.dtype), example)

    def add(self, state, trajectory):
        return jax.tree.map(lambda s, t: s.at[0].set(t), state, trajectory)


def sample_step(carry, unused):
    key = jax.random.PRNGKey(0)  # a dummy key
    noise = jax.random.normal(key, (3,))
    return carry, {"obs": carry + noise}


def make_buffer(obs):
    _, trajectory = jax.lax.scan(sample_step, obs, None, 4)
    example = jax.tree.map(lambda x: x[0], trajectory)
    size = trajectory["obs"].shape[-1]
    buffer = Buffer()
    return buffer, buffer.init(example), size
"""

FILLED = PROGRAM + """

def fill(obs):
    buffer, state, _ = make_buffer(obs)
    _, trajectory = jax.lax.scan(sample_step, obs, None, 4)
    return buffer.add(state, jax.tree.map(lambda x: x[0], trajectory)), trajectory
"""


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.start.row, f.code) for f in lint_source(textwrap.dedent(source), "case.py", {"JAX204"})]


def test_a_dummy_trajectory_for_an_init_is_quiet():
    assert _codes(PROGRAM) == []


def test_a_trajectory_that_is_used_is_reported():
    assert _codes(FILLED) == [(15, "JAX204")]


def test_jax_agrees():
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(textwrap.dedent(FILLED), namespace)
    obs = jax.numpy.zeros(3)
    _, trajectory = namespace["fill"](obs)
    steps = trajectory["obs"]
    assert bool((steps[0] == steps[1]).all())  # every step drew the same numbers
    _, state, _ = namespace["make_buffer"](obs)
    other = namespace["Buffer"]().init({"obs": jax.random.normal(jax.random.key(1), (3,))})
    assert jax.tree.all(jax.tree.map(lambda a, b: bool((a == b).all()), state, other))  # numbers decide nothing


# A result read only for its shape feeds no `init`: its draw still draws (JAX201), as the key
# reuse checker counts it.
SHAPE_ONLY = """
import jax
import jax.numpy as jnp


def init(rng, d_in, d_out):
    return {"w": jax.random.normal(rng, (d_in, d_out)) * 0.1}


def forward(params, x, rng):
    keep = jax.random.bernoulli(rng, 0.5, x.shape)
    return jnp.where(keep, x, 0.0) @ params["w"]


def main():
    rng = jax.random.key(0)
    params = init(rng, 6, 2)
    logits = forward(params, jnp.ones((4, 6)), rng)
    return logits.shape
"""


def test_a_result_read_only_for_its_shape_still_draws():
    assert [(f.start.row, f.code) for f in lint_source(textwrap.dedent(SHAPE_ONLY), "case.py", {"JAX201"})] == [
        (18, "JAX201")
    ]


def test_jax_checker_counts_the_shape_only_draw():
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(textwrap.dedent(SHAPE_ONLY), namespace)
    with jax.debug_key_reuse(True), pytest.raises(jax.errors.KeyReuseError):
        namespace["main"]()
