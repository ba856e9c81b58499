"""`jax.pmap` hashes its `static_broadcasted_argnums` and caches compilations by them, and donates
`donate_argnums`, as `jax.jit` does: the same rules hold (JAX302, JAX303, JAX304), and JAX shows
each on one CPU device."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source
from marks import family_marks

marked = family_marks(r"JAX3\d\d")

SOURCE = textwrap.dedent(
    """
    from functools import partial

    import jax
    import jax.numpy as jnp

    TRACES = []

    @partial(jax.pmap, axis_name="batch", static_broadcasted_argnums=(1,))  # JAX302
    def scaled(x, step):
        TRACES.append(step)
        return x * step

    @partial(jax.pmap, donate_argnums=(0,))
    def doubled(x):
        return x * 2

    def train(x, steps):
        for step in range(steps):
            x = scaled(x, step)  # JAX303
        for _ in range(steps):
            x = scaled(x, 7)  # one value: one compilation
        return x

    def sizes(x):
        return scaled(x, [1, 2])  # a list: reported where the argument is made static

    def reuse(y):
        z = doubled(y)
        return z + y  # JAX304

    def fine(y):
        y = doubled(y)
        return y + 1
    """
)


def test_pmap_static_and_donated_arguments_are_checked_like_jit():
    found = {(f.start.row, f.code) for f in lint_source(SOURCE, "m.py") if f.code.startswith("JAX3")}
    assert found == marked(SOURCE)


def test_jax_recompiles_hashes_and_donates_under_pmap():
    pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(SOURCE, "m.py", "exec"), namespace)
    jnp = namespace["jnp"]
    x = jnp.ones((1, 3))
    namespace["train"](x, 3)
    assert namespace["TRACES"] == [0, 1, 2, 7]  # one compilation per value of `step`
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        namespace["sizes"](x)
    with pytest.raises(RuntimeError):
        namespace["reuse"](jnp.ones((1, 3)))
    assert namespace["fine"](jnp.ones((1, 3))).tolist() == [[3.0, 3.0, 3.0]]
