"""A jit of a bound method (`self._eval = jax.jit(self._eval, donate_argnums=(2,))`) holds its
instance: `donate_argnums` and `static_argnums` count from the parameter after `self`, and a call
through the attribute (`self._eval(params, state, scalars)`) binds no instance again. The
quiet program donates `scalars` and rebinds it; the reported one passes it again after donating
it (JAX304). JAX agrees on both."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source

QUIET = """
import jax
import jax.numpy as jnp


class Evaluator:
    def __init__(self):
        self._eval = jax.jit(self._eval, donate_argnums=(2,))

    def _eval(self, params, state, scalars):
        return scalars + params * state

    def evaluate(self, params, state, batches):
        scalars = jnp.zeros(3)
        for _ in range(batches):
            scalars = self._eval(params, state, scalars)
        return scalars
"""

REPORTED = QUIET.replace(
    "            scalars = self._eval(params, state, scalars)\n",
    "            total = self._eval(params, state, scalars)\n",
).replace("        return scalars\n", "        return total\n")


def _rows(source: str, code: str) -> set[int]:
    return {f.start.row for f in lint_source(textwrap.dedent(source), "case.py", {code})}


def test_parameters_count_from_after_the_bound_instance():
    assert _rows(QUIET, "JAX304") == set()
    assert _rows(REPORTED, "JAX304") == {16}


def test_jax_agrees():
    jax = pytest.importorskip("jax")
    ones = jax.numpy.ones(3)
    namespace: dict = {}
    exec(textwrap.dedent(QUIET), namespace)
    state = jax.numpy.ones(3)
    assert float(namespace["Evaluator"]().evaluate(ones, state, 2)[0]) == 2.0
    assert not state.is_deleted()  # `state`, the second parameter, is not donated
    exec(textwrap.dedent(REPORTED), namespace)
    with pytest.raises((RuntimeError, ValueError), match="deleted"):
        namespace["Evaluator"]().evaluate(ones, jax.numpy.ones(3), 2)  # `scalars`, donated, passed again
