"""Traced-code discovery and the TRACED/STATIC/UNKNOWN value analysis, on small modules."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jaxlint.analysis.module import ModuleFacts
from jaxlint.source import Source

PRELUDE = """
import functools
from functools import partial
import jax
import jax.numpy as jnp
from jax import lax
import numpy as np
"""


def facts(body: str) -> ModuleFacts:
    return ModuleFacts(Source.parse(PRELUDE + textwrap.dedent(body)))


def value_of(module: ModuleFacts, text: str):
    """The analysed value of the (last) expression whose source is `text`."""
    found = None
    for node in ast.walk(module.tree):
        if isinstance(node, ast.expr) and ast.unparse(node) == text:
            found = node
    assert found is not None, text
    value = module.value(found)
    return None if value is None else value.trace.name


def contexts(module: ModuleFacts) -> dict[str, tuple[bool, bool]]:
    return {getattr(fn, "name", "lambda"): (ctx.abstract, ctx.staged) for fn, ctx in module.traced_functions()}


def test_decorators_wrapping_and_nesting_give_contexts():
    m = facts("""
    @jax.jit
    def a(x): return x
    def b(x): return x
    b_jit = jax.jit(b)
    def c(x): return x
    grad_c = jax.grad(c)
    def d(x): return x
    dd = jax.jit(jax.grad(d))
    @jax.vmap
    def e(x): return x
    def f(x):
        def body(carry, _):
            return carry, carry
        return lax.scan(body, x, None, length=3)
    """)
    assert contexts(m) == {
        "a": (True, True), "b": (True, True), "c": (False, False), "d": (True, True),
        "e": (True, False), "body": (True, True),
    }


def test_wrapping_through_names_bound_in_any_scope():
    m = facts("""
    def outer():
        from jax import jit as compile_
        def a(x): return x
        return compile_(a)
    def other():
        wrap = jax.vmap
        def b(x): return x
        return wrap(b)
    def jit(f): return f
    def c(x): return x
    c_plain = jit(c)
    """)
    assert contexts(m) == {"a": (True, True), "b": (True, False)}


def test_static_arguments_and_defaults():
    m = facts("""
    @partial(jax.jit, static_argnums=(1,), static_argnames=("mode",))
    def f(x, n, mode, scale=1.0, *, flag=False):
        a = x + 1
        b = n + 1
        c = mode
        d = scale
        e = flag
        return a
    """)
    assert value_of(m, "x + 1") == "TRACED"
    assert value_of(m, "n + 1") == "STATIC"
    assert value_of(m, "mode") == "STATIC"
    assert value_of(m, "scale") == "UNKNOWN"  # a default stays a Python value unless passed
    assert value_of(m, "flag") == "UNKNOWN"


def test_static_argnames_naming_a_missing_parameter_traces_nothing():
    """JAX raises `ValueError` when it wraps the function (JAX301): its parameters are not
    known to be traced, so the typo'd static parameter gets no tracer findings of its own."""
    m = facts("""
    @partial(jax.jit, static_argnames=["num_step"])
    def f(x, num_steps):
        a = num_steps + 1
        return x
    def g(x, n_iter):
        b = n_iter + 1
        return x
    g = jax.jit(g, static_argnames="n_iters")
    def h(x, n, **kw):
        c = n + 1
        return x
    h = jax.jit(h, static_argnames="extra")
    """)
    assert value_of(m, "num_steps + 1") == "UNKNOWN"
    assert value_of(m, "n_iter + 1") == "UNKNOWN"
    assert value_of(m, "n + 1") == "TRACED"  # `**kw` takes it: JAX accepts the name


def test_methods_of_a_module_level_instance_are_followed():
    m = facts("""
    class Gate:
        def __init__(self, threshold):
            self.threshold = threshold
        def apply(self, x):
            a = x.mean() > self.threshold
            return x
        def width(self, n):
            b = n * 2
            return b
    GATE = Gate(0.5)
    @jax.jit
    def forward(x):
        GATE.width(x.shape[0])
        return GATE.apply(x * 2)
    """)
    assert value_of(m, "x.mean() > self.threshold") == "TRACED"
    assert value_of(m, "n * 2") == "STATIC"


def test_metadata_is_static_and_jnp_results_are_traced():
    m = facts("""
    W = np.ones(3)
    @jax.jit
    def f(x):
        n = x.shape[0]
        k = len(x)
        t = x.dtype
        y = jnp.arange(4)
        z = W * 2
        for i in range(x.shape[0]):
            q = i + 1
        return x.sum()
    """)
    assert value_of(m, "x.shape[0]") == "STATIC"
    assert value_of(m, "len(x)") == "STATIC"
    assert value_of(m, "x.dtype") == "STATIC"
    assert value_of(m, "jnp.arange(4)") == "TRACED"  # staged even with constant inputs
    assert value_of(m, "W * 2") == "STATIC"  # module globals are constants at trace time
    assert value_of(m, "i + 1") == "STATIC"
    assert value_of(m, "x.sum()") == "TRACED"


def test_helpers_closures_and_control_flow_bodies():
    m = facts("""
    def helper(v, k):
        return v * k
    @jax.jit
    def f(x, y):
        norm = jnp.linalg.norm(x)
        scaled = jax.tree_util.tree_map(lambda g: g / norm, y)
        out = helper(x, 2)
        r = lax.cond(norm > 1, lambda u: u * norm, lambda u: u, x)
        return out
    """)
    assert value_of(m, "v * k") == "TRACED"
    assert value_of(m, "g / norm") == "TRACED"
    assert value_of(m, "u * norm") == "TRACED"


def test_unknown_calls_stay_unknown_and_unpacking_keeps_traces():
    m = facts("""
    @jax.jit
    def f(params, x):
        h = model.apply(params, x)
        loss, g = jax.value_and_grad(lambda w: (w ** 2).sum())(x)
        n, d = x.shape
        return h
    """)
    assert value_of(m, "model.apply(params, x)") == "UNKNOWN"
    assert value_of(m, "loss") == "TRACED"
    assert value_of(m, "n") == "STATIC"


def test_branches_merge_and_loops_reach_a_fixed_point():
    m = facts("""
    @jax.jit
    def f(x, flag: bool = False):
        total = 0.0
        for row in x:
            total = total + row
        after = total
        return after
    """)
    assert value_of(m, "after") == "TRACED"


def test_eager_code_has_no_values():
    m = facts("""
    def f(x):
        return jnp.sum(x)
    """)
    assert value_of(m, "jnp.sum(x)") is None


@pytest.mark.parametrize("annotation", ["jax.Array", "jnp.ndarray"])
def test_framework_methods_trace_only_array_arguments(annotation):
    m = facts(f"""
    import flax.linen as nn
    class Block(nn.Module):
        features: int
        @nn.compact
        def __call__(self, x: {annotation}, train: bool = False, mask=None):
            a = x.sum()
            b = self.features + 1
            c = train
            d = mask
            return a
    """)
    assert value_of(m, "x.sum()") == "TRACED"
    assert value_of(m, "self.features + 1") in ("STATIC", "UNKNOWN")
    assert value_of(m, "train") == "STATIC"
    assert value_of(m, "mask") == "UNKNOWN"


def test_pallas_kernel_parameters_are_references_and_their_loads_traced():
    m = facts("""
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref, *, scale):
        x = x_ref[...]
        row = x_ref[pl.program_id(0)]
        view = o_ref.at[0]
        o_ref[...] = x * scale
        named = x_ref["weights"]

    def run(x):
        k = partial(kernel, scale=2.0)
        return pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    """)
    assert value_of(m, "x_ref") == "UNKNOWN"  # a reference is no tracer
    assert value_of(m, "x_ref[...]") == "TRACED"
    assert value_of(m, "x_ref[pl.program_id(0)]") == "TRACED"
    assert value_of(m, "o_ref.at[0]") == "UNKNOWN"  # a narrower reference, not a load
    assert value_of(m, "x_ref['weights']") == "UNKNOWN"  # one reference of a dict of them
    assert value_of(m, "scale") == "STATIC"
    assert contexts(m)["kernel"] == (True, True)


def test_pallas_scoped_bodies_receive_pytrees_of_references():
    m = facts("""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def kernel(x_ref, o_ref):
        def body(scratch):
            acc_ref, sem = scratch
            first = scratch[0]
            acc_ref[...] = x_ref[...]
            total = acc_ref[...]
        pl.run_scoped(body, (pltpu.VMEM((8,), jnp.float32), pltpu.SemaphoreType.DMA))

    def run(x):
        return pl.pallas_call(kernel, out_shape=x)(x)
    """)
    assert value_of(m, "scratch[0]") == "UNKNOWN"  # one reference out of several
    assert value_of(m, "acc_ref[...]") == "TRACED"


def test_pallas_index_maps_and_when_bodies_are_traced():
    m = facts("""
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        @pl.when(pl.program_id(0) == 0)
        def _():
            first = x_ref[0]

    def run(x):
        spec = pl.BlockSpec((8,), lambda i: (i + 1,))
        return pl.pallas_call(kernel, out_shape=x, grid=(2,), in_specs=[spec], out_specs=spec)(x)
    """)
    assert value_of(m, "i + 1") == "TRACED"
    assert value_of(m, "x_ref[0]") == "TRACED"
    assert contexts(m)["_"] == (True, True)


def test_pallas_descriptors_are_not_arrays():
    m = facts("""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def kernel(x_ref, o_ref, sem):
        copy = pltpu.make_async_copy(x_ref, o_ref, sem)
        ids = pl.program_id(0)

    def run(x):
        return pl.pallas_call(kernel, out_shape=x)(x)
    """)
    assert value_of(m, "pltpu.make_async_copy(x_ref, o_ref, sem)") == "UNKNOWN"
    assert value_of(m, "pl.program_id(0)") == "TRACED"


def test_reduce_returns_what_its_function_returns():
    m = facts("""
    import operator

    @jax.jit
    def f(x, masks):
        both = functools.reduce(jnp.logical_and, masks)
        size = functools.reduce(operator.mul, x.shape, 1)
        total = functools.reduce(operator.add, [x, x])
        return both, size, total
    """)
    assert value_of(m, "functools.reduce(jnp.logical_and, masks)") == "TRACED"
    assert value_of(m, "functools.reduce(operator.mul, x.shape, 1)") == "STATIC"
    assert value_of(m, "functools.reduce(operator.add, [x, x])") == "TRACED"


def test_haiku_state_and_parameters_are_traced_in_a_module():
    m = facts("""
    import haiku as hk

    class Counter(hk.Module):
        def __call__(self, x):
            count = hk.get_state("count", (), jnp.int32, init=jnp.zeros)
            w = hk.get_parameter("w", x.shape[-1:], init=jnp.ones)
            return count, w
    """)
    assert value_of(m, "hk.get_state('count', (), jnp.int32, init=jnp.zeros)") == "TRACED"
    assert value_of(m, "hk.get_parameter('w', x.shape[-1:], init=jnp.ones)") == "TRACED"
