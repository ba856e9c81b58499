"""A name bound once to `pytest.importorskip("jax")` or `importlib.import_module("jax")` is the
`jax` module, as an import is: `isinstance(x, jax.Array)` narrows (JAX401), `jax.jit` traces
(JAX101). A name bound to another call, or bound twice, stays unknown. JAX agrees."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source

IMPORTED = """
import importlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = importlib.import_module("jax.numpy")


def fill(x):
    if isinstance(x, jax.Array):
        return x.at[0].set(1)
    x[0] = 1
    return x


def fill_all(x):
    x[0] = 1
    return x.at[1].set(2)


@jax.jit
def sign(x):
    return 1 if jnp.sum(x) > 0 else -1
"""

# Not the module: a name bound to a call that returns something else, or bound twice.
NOT_IMPORTED = """
import pytest

jax = pytest.importorskip("jax")
jax = object()
tools = pytest.fixture("jax")


@jax.jit
def sign(x):
    return 1 if x.sum() > 0 else -1


@tools.jit
def flip(x):
    return -1 if x.sum() > 0 else 1
"""


def _rows(source: str, codes: set[str]) -> set[tuple[int, str]]:
    return {(f.start.row, f.code) for f in lint_source(textwrap.dedent(source), "case.py", codes)}


def test_a_module_bound_by_a_call_is_the_module():
    # `fill` narrows past the isinstance test; `fill_all` updates an array; `sign` is jitted.
    assert _rows(IMPORTED, {"JAX401", "JAX101"}) == {(19, "JAX401"), (25, "JAX101")}


def test_a_name_bound_to_something_else_stays_unknown():
    assert _rows(NOT_IMPORTED, {"JAX401", "JAX101"}) == set()


def test_jax_agrees():
    jax = pytest.importorskip("jax")
    import importlib

    import numpy as np

    assert pytest.importorskip("jax") is jax and importlib.import_module("jax.numpy") is jax.numpy
    namespace: dict = {}
    exec(textwrap.dedent(IMPORTED), namespace)
    assert namespace["fill"](np.zeros(3))[0] == 1 and namespace["fill"](jax.numpy.zeros(3))[0] == 1
    with pytest.raises(TypeError):
        namespace["fill_all"](jax.numpy.zeros(3))  # JAX arrays are immutable
    with pytest.raises(jax.errors.TracerBoolConversionError):
        namespace["sign"](jax.numpy.ones(2))
