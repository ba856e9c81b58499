"""`custom_jvp`, `custom_vjp`, `named_call` and `jnp.vectorize` trace nothing themselves: the
function runs as its caller runs it, and its derivative rules run traced only where the function is called from traced
code. JAX shows both sides."""

from __future__ import annotations

from quiet_and_reported import case_tests

# Called eagerly and differentiated at the top level: every value is concrete, so Python
# branches (and host code) in the function and in its rules run.
JVP_EAGER = """
import jax

@jax.custom_jvp
def clip(x):
    if x > 0:
        return x
    return 0.0 * x

@clip.defjvp
def clip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    if x > 0:
        return clip(x), t
    return clip(x), 0.0 * t

def demo():
    return clip(2.0), jax.grad(clip)(2.0), jax.jvp(clip, (2.0,), (1.0,))
"""

# A wrapper of a host solver: only ever run eagerly, under `jax.grad`.
VJP_HOST_SOLVER = """
import jax
import numpy as np

@jax.custom_vjp
def solve(a):
    x = np.linalg.solve(np.asarray(a), np.ones(2))
    err = np.abs(np.asarray(a) @ x - 1).max()
    assert err < 1e-6
    return x.sum()

def solve_fwd(a):
    return solve(a), a

def solve_bwd(a, g):
    if g > 0:
        return (g * np.ones_like(np.asarray(a)),)
    return (np.zeros_like(np.asarray(a)),)

solve.defvjp(solve_fwd, solve_bwd)

def demo():
    return jax.grad(solve)(np.eye(2))
"""

NAMED_CALL_EAGER = """
import jax

def scale(x):
    if x > 0:
        return 2 * x
    return x

def demo():
    return jax.named_call(scale, name="scale")(3.0)
"""

JVP_UNDER_JIT = JVP_EAGER.replace(
    "return clip(2.0), jax.grad(clip)(2.0), jax.jvp(clip, (2.0,), (1.0,))",
    "return step(2.0)",
) + """
@jax.jit
def step(x):
    return clip(x)
"""

# The function has no branch of its own; its rule does, and runs traced once the function is
# differentiated inside `jit`.
JVP_RULE_UNDER_JIT = """
import jax
import jax.numpy as jnp

@jax.custom_jvp
def relu(x):
    return jnp.maximum(x, 0.0)

@relu.defjvp
def relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    if x > 0:
        return relu(x), t
    return relu(x), 0.0 * t

@jax.jit
def loss_grad(x):
    return jax.grad(lambda y: relu(y) * 3.0)(x)

def demo():
    return loss_grad(2.0)
"""

VJP_FORWARD_UNDER_JIT = """
import jax
import jax.numpy as jnp

@jax.custom_vjp
def safe_log(x):
    return jnp.log(x)

def safe_log_fwd(x):
    if x <= 0:
        return -jnp.inf, x
    return jnp.log(x), x

def safe_log_bwd(x, g):
    return (g / x,)

safe_log.defvjp(safe_log_fwd, safe_log_bwd)

@jax.jit
def step(x):
    return jax.grad(safe_log)(x)

def demo():
    return step(2.0)
"""

NAMED_CALL_UNDER_JIT = NAMED_CALL_EAGER.replace(
    'return jax.named_call(scale, name="scale")(3.0)', "return step(3.0)"
) + """
@jax.jit
def step(x):
    return jax.named_call(scale, name="scale")(x)
"""

# Under `jit`, a Python int passed through `named_call` (decorator or call) is still the int.
NAMED_CALL_STATIC_UNDER_JIT = """
import jax
import jax.numpy as jnp

@jax.named_call
def cumsum_along(x, axis: int):
    if axis < 0:
        axis = axis + x.ndim
    size = x.shape[axis]
    w = jnp.arange(size)[:, None] <= jnp.arange(size)[None, :]
    return jnp.tensordot(x, w.astype(x.dtype), axes=([axis], [0]))

def pad_to(x, n):
    return jnp.zeros(n).at[: x.shape[0]].set(x)

@jax.jit
def step(x):
    return cumsum_along(x, -1), jax.named_call(pad_to)(x[0], 5)

def demo():
    return step(jnp.ones((2, 3)))
"""

# `jnp.vectorize` called eagerly with its core shape runs the function on a concrete array: host
# NumPy works. Called from traced code, the function receives the caller's tracer.
VECTORIZE_EAGER = """
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

@partial(jnp.vectorize, signature="()->(d,d)")
def rotation2d(theta):
    c, s = np.cos(theta), jnp.sin(theta)
    return jnp.array([[c, -s], [s, c]])

def demo():
    return rotation2d(0.5)
"""

VECTORIZE_UNDER_JIT = VECTORIZE_EAGER.replace("return rotation2d(0.5)", "return step(0.5)") + """
@jax.jit
def step(theta):
    return rotation2d(theta)
"""

# A custom VJP's `nondiff_argnames` (by name, as `nondiff_argnums` by position) are passed as
# given: under a jit that makes them static, a Python test of one is fine.
VJP_NONDIFF_NAMES = """
from functools import partial

import jax
import jax.numpy as jnp

@partial(jax.custom_vjp, nondiff_argnames=("shards",))
def ring_sum(x, shards):
    if shards < 1:
        raise ValueError("no shards")
    return x.sum() * shards

def ring_fwd(x, shards):
    return ring_sum(x, shards), x.shape

def ring_bwd(shards, shape, g):
    return (jnp.full(shape, g * shards),)

ring_sum.defvjp(ring_fwd, ring_bwd)

@partial(jax.jit, static_argnums=1)
def step(x, shards):
    return jax.grad(ring_sum)(x, shards)

def demo():
    return step(jnp.ones(3), 2)
"""

VJP_DIFF_NAMES = VJP_NONDIFF_NAMES.replace('nondiff_argnames=("shards",)', "nondiff_argnames=()").replace(
    "def ring_bwd(shards, shape, g):\n    return (jnp.full(shape, g * shards),)",
    "def ring_bwd(res, g):\n    return (jnp.full(res, g), 0.0)",
).replace("@partial(jax.jit, static_argnums=1)", "@jax.jit")

QUIET = {
    "vjp-nondiff-argnames-static": VJP_NONDIFF_NAMES,
    "jvp-eager-and-top-level-grad": JVP_EAGER,
    "vjp-host-solver": VJP_HOST_SOLVER,
    "named-call-eager": NAMED_CALL_EAGER,
    "named-call-static-under-jit": NAMED_CALL_STATIC_UNDER_JIT,
    "vectorize-eager": VECTORIZE_EAGER,
}
REPORTED = {
    "jvp-function-under-jit": (JVP_UNDER_JIT, "JAX101", "TracerBoolConversionError"),
    "jvp-rule-under-jit": (JVP_RULE_UNDER_JIT, "JAX101", "TracerBoolConversionError"),
    "vjp-forward-rule-under-jit": (VJP_FORWARD_UNDER_JIT, "JAX101", "TracerBoolConversionError"),
    "named-call-under-jit": (NAMED_CALL_UNDER_JIT, "JAX101", "TracerBoolConversionError"),
    "vectorize-under-jit": (VECTORIZE_UNDER_JIT, "JAX107", "TracerArrayConversionError"),
    "vjp-differentiated-argument-under-jit": (VJP_DIFF_NAMES, "JAX101", "TracerBoolConversionError"),
}

(
    test_concrete_outside_traced_code_stays_quiet,
    test_traced_from_traced_code_is_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)
