"""A Haiku module called inside a raw JAX trace of its own (a `jax.lax` body, `jax.jit` of a
nested function) within `hk.transform`: Haiku makes its parameters in the transform's frame,
which that trace cannot carry, and `init` raises. Its lifted forms (`hk.scan`), a module
already called outside the body, and `jax.vmap` (which Haiku runs) stay quiet. JAX407."""

from __future__ import annotations

from quiet_and_reported import case_tests

# `demo()` runs `init` and `apply` of the transformed `forward`.
_RUN = """
def demo():
    f = hk.transform(forward)
    xs = jnp.ones((5, 3))
    params = f.init(jax.random.PRNGKey(0), xs)
    return f.apply(params, None, xs)
"""

_HEAD = """
import haiku as hk
import jax
import jax.numpy as jnp
"""

CLOSED_OVER_IN_SCAN = _HEAD + """
def forward(xs):
    cell = hk.Linear(3)

    def step(h, x):
        h = jnp.tanh(cell(x) + h)
        return h, h

    return jax.lax.scan(step, jnp.zeros(3), xs)[1]
""" + _RUN

MADE_IN_FORI_BODY = _HEAD + """
def forward(xs):
    return jax.lax.fori_loop(0, 2, lambda i, x: hk.Linear(3)(x), xs)
""" + _RUN

UNDER_RAW_JIT = _HEAD + """
def forward(xs):
    lin = hk.Linear(3)
    return jax.jit(lambda x: lin(x))(xs)
""" + _RUN

GET_PARAMETER_IN_COND = _HEAD + """
def forward(xs):
    def scaled(x):
        return x * hk.get_parameter("w", [3], init=jnp.ones)

    return jax.lax.cond(True, scaled, lambda x: x, xs)
""" + _RUN

SUBMODULE_OF_A_MODULE = _HEAD + """
class Recurrent(hk.Module):
    def __init__(self):
        super().__init__()
        self.core = hk.Linear(3)

    def __call__(self, xs):
        def step(h, x):
            return self.core(x) + h, h

        return jax.lax.scan(step, jnp.zeros(3), xs)[1]

def forward(xs):
    return Recurrent()(xs)
""" + _RUN

LIFTED_SCAN = CLOSED_OVER_IN_SCAN.replace("jax.lax.scan(step", "hk.scan(step")

# The module runs outside the body; the body only adds.
CALLED_OUTSIDE = _HEAD + """
def forward(xs):
    ys = hk.Linear(3)(xs)

    def step(h, y):
        return jnp.tanh(y + h), h

    return jax.lax.scan(step, jnp.zeros(3), ys)[1]
""" + _RUN

# Called once before the scan: its parameters exist, and the body only reads them.
CALLED_FIRST = _HEAD + """
def forward(xs):
    cell = hk.Linear(3)
    h0 = cell(xs[0])

    def step(h, x):
        return cell(x) + h, h

    return jax.lax.scan(step, h0, xs)[1]
""" + _RUN

UNDER_RAW_VMAP = _HEAD + """
def forward(xs):
    lin = hk.Linear(3)
    return jax.vmap(lambda x: lin(x))(xs)
""" + _RUN

QUIET = {
    "hk-scan": LIFTED_SCAN,
    "module-called-outside-the-body": CALLED_OUTSIDE,
    "module-called-before-the-body": CALLED_FIRST,
    "raw-vmap": UNDER_RAW_VMAP,
}
REPORTED = {
    "closed-over-module-in-scan": (CLOSED_OVER_IN_SCAN, "JAX407", "UnexpectedTracerError"),
    "module-made-in-fori-body": (MADE_IN_FORI_BODY, "JAX407", "UnexpectedTracerError"),
    "module-under-raw-jit": (UNDER_RAW_JIT, "JAX407", "UnexpectedTracerError"),
    "get-parameter-in-cond": (GET_PARAMETER_IN_COND, "JAX407", "UnexpectedTracerError"),
    "submodule-in-scan": (SUBMODULE_OF_A_MODULE, "JAX407", "UnexpectedTracerError"),
}

(
    test_lifted_or_outside_stays_quiet,
    test_module_in_raw_trace_is_reported,
    test_haiku_runs_the_quiet_cases,
    test_haiku_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED, needs=("jax", "haiku"))
