"""A nested function's unannotated parameter that every call of it passes the enclosing function's
annotated one (`@jax.vmap def op(x)` called as `op(x)` in `def project(x: Transform)`) holds an
instance of that class: an array field of it is traced where the nested function is traced."""

from __future__ import annotations

import ast
import textwrap

from quiet_and_reported import case_tests

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.tracing.forwarded_parameters import forwarded_parameter

VMAPPED_NESTED = """
import dataclasses

import jax
import jax.numpy as jnp

@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Transform:
    pos: jax.Array
    rot: jax.Array
    mode: int = dataclasses.field(default=0, metadata=dict(static=True))

def project(x: Transform, x_prev: Transform):
    @jax.vmap
    def op(x, x_prev):
        dq = x.rot - x_prev.rot
        return 1.0 if dq[0] >= 0.0 else -1.0

    return op(x, x_prev)

def demo():
    t = Transform(jnp.ones((2, 3)), jnp.ones((2, 4)))
    return project(t, t)
"""
# Not transformed itself, called from a jitted function: the same class reaches it.
NESTED_UNDER_JIT = VMAPPED_NESTED.replace(
    "def project(x: Transform, x_prev: Transform):\n    @jax.vmap\n", "@jax.jit\ndef project(x: Transform, x_prev: Transform):\n"
).replace("return op(x, x_prev)", "return op(x=x, x_prev=x_prev)").replace(
    "t = Transform(jnp.ones((2, 3)), jnp.ones((2, 4)))", "t = Transform(jnp.ones(3), jnp.ones(5))"
)
# Transformed where it is called: `jax.vmap(op)(x, x_prev)`.
MAPPED_WHERE_CALLED = VMAPPED_NESTED.replace("    @jax.vmap\n", "").replace(
    "return op(x, x_prev)", "return jax.vmap(op)(x, x_prev)"
)

# Look-alikes JAX accepts: a static field, a field's shape, the same nested function run eagerly.
STATIC_FIELD = VMAPPED_NESTED.replace(
    "dq = x.rot - x_prev.rot\n        return 1.0 if dq[0] >= 0.0 else -1.0",
    "return x.rot * 2.0 if x.mode > 0 else x.rot",
)
SHAPE_OF_A_FIELD = VMAPPED_NESTED.replace(
    "return 1.0 if dq[0] >= 0.0 else -1.0", "return 1.0 if x.rot.shape[0] > 3 else -1.0"
)
EAGER_NESTED = VMAPPED_NESTED.replace("    @jax.vmap\n", "").replace(
    "t = Transform(jnp.ones((2, 3)), jnp.ones((2, 4)))", "t = Transform(jnp.arange(3.0), jnp.arange(5.0))"
)

QUIET = {"static-field": STATIC_FIELD, "shape-of-a-field": SHAPE_OF_A_FIELD, "eager-nested": EAGER_NESTED}
REPORTED = {
    "vmapped-nested": (VMAPPED_NESTED, "JAX101", "TracerBoolConversionError"),
    "nested-under-jit": (NESTED_UNDER_JIT, "JAX101", "TracerBoolConversionError"),
    "mapped-where-called": (MAPPED_WHERE_CALLED, "JAX101", "TracerBoolConversionError"),
}

(
    test_look_alikes_stay_quiet,
    test_forwarded_fields_are_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED)


def _forwarded(text: str, inner: str = "op") -> str | None:
    tree = ast.parse(textwrap.dedent(text))
    names = Names(tree)
    fn = next(f for f in names.functions if getattr(f, "name", None) == inner)
    found = forwarded_parameter(fn, fn.args.args[0], names)
    return None if found is None else f"{found[0].name}.{found[1].arg}"


def test_the_parameter_every_call_passes():
    assert _forwarded("""
    def outer(a: int, b: int):
        def op(x):
            return x
        return op(a) + op(x=a)
    """) == "outer.a"
    assert _forwarded("""
    import jax
    def outer(a: int):
        def op(x):
            return x
        return jax.vmap(op, in_axes=0)(a) + op(a)
    """) == "outer.a"


def test_nothing_when_calls_disagree_or_the_function_escapes():
    two_arguments = """
    def outer(a: int, b: int):
        def op(x):
            return x
        return op(a) + op(b)
    """
    escapes = """
    def outer(a: int):
        def op(x):
            return x
        return op(a), op
    """
    computed = """
    def outer(a: int):
        def op(x):
            return x
        return op(a + 1)
    """
    spread = """
    def outer(a: int, rest):
        def op(x):
            return x
        return op(*rest)
    """
    decorated = """
    import functools
    def outer(a: int):
        @functools.lru_cache
        def op(x):
            return x
        return op(a)
    """
    handed_on = """
    import functools
    def outer(a: int):
        def op(x):
            return x
        return functools.lru_cache(op)(a)
    """
    for text in (two_arguments, escapes, computed, spread, decorated, handed_on):
        assert _forwarded(text) is None, text
