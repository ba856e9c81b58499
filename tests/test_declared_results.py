"""What a helper returns where its body alone does not say: the count its `*args` collects
decides `len(args)` branches, and a `-> jax.Array` declaration stands for a body that calls
code the analysis cannot see. JAX agrees on every case: the reported ones raise, the quiet
look-alikes run."""

from __future__ import annotations

import textwrap

import pytest
from marks import family_marks

from jaxlint.linter import lint_source

marked = family_marks(r"JAX101")

# One argument gives it back; more give the tuple, whose truth is its length.
FIRST_OR_ALL = """
import jax

def first_or_all(*args):
    if len(args) == 1:
        return args[0]
    return args
"""

ONE = FIRST_OR_ALL + """
@jax.jit
def one(x):
    out = first_or_all(x > 0)
    return x if out else -x  # JAX101
"""

TWO = FIRST_OR_ALL + """
@jax.jit
def two(x):
    out = first_or_all(x > 0, x < 0)
    return x if out else -x
"""

# Unpacked from a tuple: how many it holds is not known here, so neither branch is ruled out.
SPREAD = FIRST_OR_ALL + """
@jax.jit
def spread(x):
    pair = (x > 0, x < 0)
    out = first_or_all(*pair)
    return x if out else -x
"""

# The helper converts through code the analysis cannot see (here, an unknown import standing
# for JAX's internal `lax.asarray`), and declares what it returns.
DECLARED = """
import jax
import jax.numpy as jnp
from {helpers} import convert

def as_array(x) -> jax.Array:
    return convert(x)

def as_arrays(*args) -> list[jax.Array]:
    return [convert(a) for a in args]

def as_number(x) -> jax.typing.ArrayLike:
    return convert(x)

@jax.jit
def declared(x, y):
    return x if as_array(x) > 0 else y  # JAX101

@jax.jit
def declared_list(x, y):
    b, c = as_arrays(x, y)
    return b if c else y  # JAX101

# `ArrayLike` admits Python numbers: not taken for an array (a tracer here is missed).
@jax.jit
def array_like(x, y):
    return x if as_number(x) > 0 else y
"""


def _found(source: str) -> set[tuple[int, str]]:
    return {(f.start.row, f.code) for f in lint_source(textwrap.dedent(source), "case.py", {"JAX101"})}


@pytest.mark.parametrize("source", [ONE, TWO, SPREAD], ids=["one", "two", "spread"])
def test_the_count_args_collects(source):
    source = textwrap.dedent(source)
    assert _found(source) == marked(source)


def test_a_declared_jax_array_stands_for_an_unseen_body():
    source = textwrap.dedent(DECLARED.format(helpers="unseen_helpers"))
    assert _found(source) == marked(source) != set()


COUNT = """
import jax
import numpy as np

def count(x) -> jax.Array:
    return np.asarray(x.shape[0])

@jax.jit
def f(x):
    return x if count(x) > 1 else -x
"""


def test_a_body_that_shows_a_python_value_wins_over_the_declaration():
    assert _found(COUNT) == set()


def _run(source: str, name: str, *args, **namespace):
    exec(textwrap.dedent(source), namespace)
    return namespace[name](*args)


def test_jax_agrees_on_the_count():
    jax = pytest.importorskip("jax")
    x = jax.numpy.float32(2.0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        _run(ONE, "one", x)
    assert float(_run(TWO, "two", x)) == 2.0
    assert float(_run(SPREAD, "spread", x)) == 2.0


def test_jax_agrees_on_declared_arrays(tmp_path, monkeypatch):
    jax = pytest.importorskip("jax")
    (tmp_path / "jaxlint_demo_helpers.py").write_text("import jax.numpy as jnp\nconvert = jnp.asarray\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    source = DECLARED.format(helpers="jaxlint_demo_helpers")
    x, y = jax.numpy.float32(1.0), jax.numpy.float32(0.0)
    for reported in ("declared", "declared_list"):
        with pytest.raises(jax.errors.TracerBoolConversionError):
            _run(source, reported, x, y)
    # NumPy computed the count from a shape: a Python value under jit, the branch works.
    assert _run(COUNT, "f", jax.numpy.ones(3)).shape == (3,)
