"""Values that are static at trace time although traced code computes them: the analysis stays quiet.

Each case runs under JAX too (when installed), which shows the code traces without error,
and has a variant that JAX rejects and jaxlint reports.
"""

from __future__ import annotations

from quiet_and_reported import case_tests

UNBATCHED_ARGUMENT = """
import jax

def step(k, x, n):
    return jax.random.normal(k, (n,) + x.shape)

@jax.jit
def g(ks, x):
    return jax.vmap(step, (0, 0, None))(ks, x, 4)

def demo():
    return g(jax.random.split(jax.random.key(0), 2), jax.numpy.ones((2, 3)))
"""

BATCHED_ARGUMENT = UNBATCHED_ARGUMENT.replace("(0, 0, None))(ks, x, 4)", "(0, 0, 0))(ks, x, jax.numpy.array([4, 4]))")

UNBATCHED_ARGUMENT_OF_A_STATIC_METHOD = """
import jax
import jax.numpy as jnp

class Sampler:
    @staticmethod
    def _one(key, total, n: int, logits):
        return jnp.zeros((n, logits.shape[0])) + total

    def sample(self, key, n: int):
        keys = jax.random.split(key, 4)
        fn = jax.vmap(self._one, in_axes=(0, 0, None, 0), out_axes=1)
        return fn(keys, jnp.ones(4), n, jnp.ones((4, 3)))

def demo():
    return Sampler().sample(jax.random.key(0), 2)
"""

SHAPE_ARITHMETIC = """
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

@jax.jit
def f(p, n):
    s = lax.broadcast_shapes(jnp.shape(p), jnp.shape(n))
    t = np.shape(p)[:-1] + n.shape + (1,)
    return jnp.broadcast_to(p, s).reshape(t + (-1,))

def demo():
    return f(jnp.ones((2, 3)), jnp.ones(3))
"""

PARTIAL_FIXES_THE_NONE_BRANCH = """
import jax
import jax.numpy as jnp
from functools import partial
from jax import lax

def nf(x, m=None):
    if m is None:
        m = int(jnp.sum(x > 0))
    return x[:m]

def run(pred, x):
    return lax.cond(pred, partial(nf, m=3), lambda x: x[:3], x)

def demo():
    return run(True, jnp.arange(5.0))
"""

NONE_BRANCH_TAKEN = PARTIAL_FIXES_THE_NONE_BRANCH.replace("partial(nf, m=3)", "nf")

PSUM_OF_A_CONSTANT = """
import jax
from jax import lax
import jax.numpy as jnp

def body(x):
    n = lax.psum(1, "i")
    pairs = [(i, (i + 1) % n) for i in range(n)]
    return lax.ppermute(x, "i", pairs)

def demo():
    return jax.pmap(body, axis_name="i")(jnp.ones((1, 3)))
"""

PSUM_OF_A_TRACER = PSUM_OF_A_CONSTANT.replace('lax.psum(1, "i")', 'lax.psum(x.astype(int).sum(), "i")')

SCALAR_NARROWED_BY_ISINSTANCE = """
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

def wrap(index, n):
    if isinstance(index, (int, np.integer)):
        return index + n if index < 0 else index
    return lax.select(index < 0, index + n, index)

@jax.jit
def f(x, i):
    return x[wrap(i, 3)] + x[wrap(-1, 3)]

def demo():
    return f(jnp.arange(3.0), 1)
"""

NOT_NARROWED = SCALAR_NARROWED_BY_ISINSTANCE.replace(
    "    if isinstance(index, (int, np.integer)):\n        return index + n if index < 0 else index\n", ""
).replace("return lax.select(index < 0, index + n, index)", "return index + n if index < 0 else index")

PARTIAL_FIXES_A_FLAG = """
import jax
import jax.numpy as jnp
from functools import partial

def solve(a, *, exact=False):
    rank = jnp.sum(a > 0)
    if exact and rank < 3:
        return a
    return -a

solve_jit = jax.jit(partial(solve, exact=False))

def demo():
    return solve_jit(jnp.ones(3))
"""

FLAG_SET = PARTIAL_FIXES_A_FLAG.replace("exact=False))", "exact=True))")

VARARGS_TUPLE_TRUTH = """
import jax
import jax.numpy as jnp

def shift(key, *args):
    if not args:
        return key
    return key + sum(args)

@jax.jit
def f(k, a):
    return shift(k, a) + shift(k)

def demo():
    return f(jnp.ones(2), jnp.ones(2))
"""

DTYPE_QUERIES = """
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

@jax.jit
def f(x):
    scale = 2.0 if np.iscomplexobj(x) else 1.0
    if lax.dtype(x) == np.float32:
        scale = scale * 3.0
    return x * scale

def demo():
    return f(jnp.ones(3))
"""

PYTREE_COMPARED_WITH_A_TUPLE = """
import jax.numpy as jnp
from jax import lax

def body(carry, xs):
    x, parts = xs
    assert parts == ()
    return carry + x, x

def demo():
    return lax.scan(body, 0.0, (jnp.ones(3), ()))
"""

FLAG_TRACED_ON_A_LATER_PATH = """
import jax
import jax.numpy as jnp

@jax.jit
def f(x):
    done = False
    for _ in range(3):
        if done:
            break
        done = x.sum() > 0
    return x

def demo():
    return f(jnp.ones(3))
"""

CARRY_LEAF_TESTED = """
import jax
import jax.numpy as jnp
from jax import lax

@jax.jit
def run(x):
    def body(carry):
        done, total = carry
        total = total + 1 if done else total
        return done, total
    return lax.while_loop(lambda c: c[1] < 3, body, (x.sum() > 0, 0))

def demo():
    return run(jnp.ones(3))
"""

SCANNED_LEAF_TESTED = """
import jax
import jax.numpy as jnp
from jax import lax

@jax.jit
def run(a, b):
    def body(c, x):
        row, flag = x
        c = c + 1 if flag else c
        return c, row
    return lax.scan(body, 0.0, (a, b > 0))

def demo():
    return run(jnp.ones(3), jnp.ones(3))
"""

# A jitted function's unannotated parameter is taken for an array, but one sent a method
# arrays lack (`rotation.batch_axes()`) is some other object: what the method returns is unknown.
METHOD_ARRAYS_LACK = """
import dataclasses
import jax
import jax.numpy as jnp

@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Rotation:
    wxyz: jax.Array

    def batch_axes(self):
        return self.wxyz.shape[:-1]

@jax.jit
def jacobian(rotation):
    return jnp.zeros((*rotation.batch_axes(), 4, 3))

def demo():
    return jacobian(Rotation(jnp.ones((2, 4))))
"""

ARRAY_METHOD_RESULT_AS_SHAPE = METHOD_ARRAYS_LACK.replace(
    "jnp.zeros((*rotation.batch_axes(), 4, 3))", "jnp.zeros((rotation.sum().astype(int), 4, 3))"
).replace("jacobian(Rotation(jnp.ones((2, 4))))", "jacobian(jnp.ones((2, 4)))")

# A function Equinox's `filter_jit` or `filter_vmap` transforms, called from traced code, traces
# only the arrays it is given: a Python value passes static.
FILTERED_CALL_FROM_TRACED_CODE = """
import equinox as eqx
import jax
import jax.numpy as jnp

@eqx.filter_jit
def spline(x, bc):
    periodic = isinstance(bc[0], str) and bc[0] == "periodic"
    return x[:-1] if periodic else x

@eqx.filter_jit
def fit(x: jax.Array, bc_type):
    return spline(x * 2, (bc_type, bc_type))

def demo():
    return fit(jnp.ones(3), "periodic")
"""

ARRAY_GIVEN_TO_A_FILTERED_CALL = FILTERED_CALL_FROM_TRACED_CODE.replace(
    'periodic = isinstance(bc[0], str) and bc[0] == "periodic"', "periodic = x.sum() > 0"
)

# A tree map gives back what its function returns for each leaf: dtype and size queries of
# traced leaves are Python values.
TREE_OF_QUERIES = """
import jax
import jax.numpy as jnp

@jax.jit
def scale(pars):
    complex_leaves = any(jax.tree_util.tree_leaves(jax.tree_util.tree_map(jnp.iscomplexobj, pars)))
    big_leaves = any(jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda x: x.size > 2, pars)))
    return jax.tree_util.tree_map(lambda x: x * (2 if complex_leaves or big_leaves else 1), pars)

def demo():
    return scale({"w": jnp.ones(3), "b": jnp.zeros(1)})
"""

TREE_OF_TRACED_TESTS = TREE_OF_QUERIES.replace("tree_map(jnp.iscomplexobj, pars)", "tree_map(jnp.isnan, pars)")

# A function decorated with `vmap` receives its `in_axes=None` arguments as the caller passes
# them: here a static argument of the outer jit, forwarded to a static argument of an inner one.
DECORATED_VMAP_UNBATCHED = """
from functools import partial
import jax
import jax.numpy as jnp

@partial(jax.jit, static_argnums=2)
def scaled(x, w, unroll=1):
    return x * w * unroll

@partial(jax.vmap, in_axes=(None, 0, None))
def batched(x, w, unroll):
    return scaled(x, w, unroll=unroll)

@partial(jax.jit, static_argnums=2)
def apply(x, w, unroll=1):
    return batched(x, w, unroll)

def demo():
    return apply(jnp.ones(2), jnp.ones(3), 2)
"""

DECORATED_VMAP_BATCHED = DECORATED_VMAP_UNBATCHED.replace("in_axes=(None, 0, None)", "in_axes=(None, 0, 0)").replace(
    "return batched(x, w, unroll)", "return batched(x, w, jnp.array([unroll] * w.shape[0]))"
)

# Under `jax.ensure_compile_time_eval()`, operations on concrete inputs run eagerly while tracing.
COMPILE_TIME_EVALUATION = """
import jax
import jax.numpy as jnp
import numpy as np

@jax.jit
def all_states(x):
    with jax.ensure_compile_time_eval():
        c = jnp.repeat(jnp.eye(3), np.array((2, 2, 2)) - 1, axis=0)
        states = jnp.unique(c, axis=0)
        n = int(states.sum())
    return x * n

def demo():
    return all_states(jnp.ones(2))
"""

COMPILE_TIME_EVALUATION_OF_A_TRACER = COMPILE_TIME_EVALUATION.replace(
    "states = jnp.unique(c, axis=0)", "states = jnp.unique(c * x[0], axis=0)"
)

# A custom_vjp's backward rule receives its forward rule's residuals as they were built: a
# shape stays a tuple of Python ints, a callable a callable; only arrays are traced.
SHAPE_IN_RESIDUALS = """
import jax
import jax.numpy as jnp

@jax.custom_vjp
def lookup(w, idx):
    return w[idx]

def lookup_fwd(w, idx):
    y, vjp_fun = jax.vjp(lambda w: w[idx], w)
    return y, (vjp_fun, idx, w.shape)

def lookup_bwd(res, g):
    vjp_fun, idx, shape = res
    grad = jnp.zeros((shape[0], shape[1]))
    if shape[0] > 2:
        grad = grad + 1
    return (vjp_fun(g)[0] + grad, None)

lookup.defvjp(lookup_fwd, lookup_bwd)

def demo():
    return jax.jit(jax.grad(lambda w: lookup(w, jnp.array([0, 1])).sum()))(jnp.ones((3, 2)))
"""

ARRAY_IN_RESIDUALS_TESTED = SHAPE_IN_RESIDUALS.replace("if shape[0] > 2:", "if idx.sum() > 2:")

# Conditions made of several operands: Python takes the truth of each one `and`/`or` evaluates
# and of the operand of `not`, and `lo <= n < hi` is `(lo <= n) and (n < hi)`.
STATIC_OPERANDS = """
import jax
import jax.numpy as jnp

@jax.jit
def clipped(x, scale=None):
    n = x.shape[0]
    if scale is not None and n > 1:
        x = x * scale
    while n > 4 and not n % 2:
        n = n // 2
    assert 0 < n <= 8 or x.ndim == 0
    inside = 0 <= n < 8
    return x[:n] if inside else x

def demo():
    return clipped(jnp.ones(6), 2.0)
"""
TRACED_OPERAND_OF_AND = STATIC_OPERANDS.replace("if scale is not None and n > 1:", "if scale is not None and x.sum() > 1:")
TRACED_CHAINED_COMPARISON = STATIC_OPERANDS.replace("inside = 0 <= n < 8", "inside = 0 <= x.sum() < 8")

QUIET = {
    "static-operands": STATIC_OPERANDS,
    "pytree-compared-with-tuple": PYTREE_COMPARED_WITH_A_TUPLE,
    "isinstance-narrows": SCALAR_NARROWED_BY_ISINSTANCE,
    "partial-fixes-a-flag": PARTIAL_FIXES_A_FLAG,
    "varargs-tuple-truth": VARARGS_TUPLE_TRUTH,
    "dtype-queries": DTYPE_QUERIES,
    "vmap-in-axes-none": UNBATCHED_ARGUMENT,
    "vmap-in-axes-none-static-method": UNBATCHED_ARGUMENT_OF_A_STATIC_METHOD,
    "shape-arithmetic": SHAPE_ARITHMETIC,
    "partial-fixes-none": PARTIAL_FIXES_THE_NONE_BRANCH,
    "psum-of-constant": PSUM_OF_A_CONSTANT,
    "method-arrays-lack": METHOD_ARRAYS_LACK,
    "filtered-call-from-traced-code": FILTERED_CALL_FROM_TRACED_CODE,
    "tree-of-queries": TREE_OF_QUERIES,
    "decorated-vmap-in-axes-none": DECORATED_VMAP_UNBATCHED,
    "compile-time-evaluation": COMPILE_TIME_EVALUATION,
    "shape-in-residuals": SHAPE_IN_RESIDUALS,
}
REPORTED = {
    "traced-operand-of-and": (TRACED_OPERAND_OF_AND, "JAX101", "TracerBoolConversionError"),
    "traced-chained-comparison": (TRACED_CHAINED_COMPARISON, "JAX103", "TracerBoolConversionError"),
    "scanned-leaf-tested": (SCANNED_LEAF_TESTED, "JAX101", "TracerBoolConversionError"),
    "carry-leaf-tested": (CARRY_LEAF_TESTED, "JAX101", "TracerBoolConversionError"),
    "flag-traced-on-a-later-path": (FLAG_TRACED_ON_A_LATER_PATH, "JAX101", "TracerBoolConversionError"),
    "not-narrowed": (NOT_NARROWED, "JAX101", "TracerBoolConversionError"),
    "flag-set": (FLAG_SET, "JAX101", "TracerBoolConversionError"),
    "vmap-in-axes-zero": (BATCHED_ARGUMENT, "JAX108", "TypeError"),
    "none-branch-taken": (NONE_BRANCH_TAKEN, "JAX105", "ConcretizationTypeError"),
    "psum-of-tracer": (PSUM_OF_A_TRACER, "JAX109", "TracerIntegerConversionError"),
    "array-method-result-as-shape": (ARRAY_METHOD_RESULT_AS_SHAPE, "JAX108", "TypeError"),
    "array-given-to-a-filtered-call": (ARRAY_GIVEN_TO_A_FILTERED_CALL, "JAX101", "TracerBoolConversionError"),
    "tree-of-traced-tests": (TREE_OF_TRACED_TESTS, "JAX113", "TracerBoolConversionError"),
    "decorated-vmap-in-axes-zero": (DECORATED_VMAP_BATCHED, "JAX302", "ValueError"),
    "compile-time-evaluation-of-a-tracer": (COMPILE_TIME_EVALUATION_OF_A_TRACER, "JAX111", "ConcretizationTypeError"),
    "array-in-residuals-tested": (ARRAY_IN_RESIDUALS_TESTED, "JAX101", "TracerBoolConversionError"),
}


(
    test_static_at_trace_time_stays_quiet,
    test_the_traced_variant_is_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)
