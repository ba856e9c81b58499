"""A key handed to code that evaluates shapes only draws nothing: Equinox's `filter_eval_shape`
(as `jax.eval_shape`) and a Flax module's `tabulate` (which runs the module inside
`jax.eval_shape`) consume no key, so the same key used for real afterwards is no reuse. Each case
runs under JAX's key-reuse checker, which agrees."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source
from marks import family_marks

marked = family_marks(r"JAX2\d\d")
CODES = {"JAX201", "JAX202", "JAX203"}

EQUINOX_SHAPES = """
    import equinox as eqx
    import jax

    def build(n, *, key):
        return eqx.nn.Linear(n, n, key=key)

    def run():
        key = jax.random.key(0)
        shapes = eqx.filter_eval_shape(build, 3, key=key)
        return shapes, build(3, key=key)
    """

FLAX_TABULATE = """
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(4)(x)

    def run(verbose=True):
        rng, x, net = jax.random.key(0), jnp.ones((2, 3)), Net()
        if verbose:
            print(net.tabulate(rng, x))
            print(nn.tabulate(net, rng)(x))

        @jax.jit
        def init(rng):
            return net.init(rng, x)

        return init(rng)
    """

# The same key built from for real twice: the second build draws the first's numbers.
EQUINOX_TWICE = EQUINOX_SHAPES.replace(
    "shapes = eqx.filter_eval_shape(build, 3, key=key)", "shapes = build(3, key=key)"
).replace("return shapes, build(3, key=key)", "return shapes, build(3, key=key)  # JAX201")

CASES = {
    "equinox-shapes-then-build": (EQUINOX_SHAPES, "equinox", False),
    "flax-tabulate-then-init": (FLAX_TABULATE, "flax", False),
    "equinox-built-twice": (EQUINOX_TWICE, "equinox", True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_linter(name):
    source = textwrap.dedent(CASES[name][0])
    found = {(f.start.row, f.code) for f in lint_source(source, "case.py", CODES)}
    assert found == marked(source)


@pytest.mark.parametrize("name", sorted(CASES))
def test_checker_agrees(name, capsys):
    source, package, raises = CASES[name]
    jax = pytest.importorskip("jax")
    pytest.importorskip(package)
    from jax.errors import KeyReuseError

    namespace: dict = {"__name__": "jaxlint_shape_case"}
    exec(compile(textwrap.dedent(source), "<case>", "exec"), namespace)
    with jax.debug_key_reuse(True):
        if raises:
            with pytest.raises(KeyReuseError):
                namespace["run"]()
        else:
            namespace["run"]()
