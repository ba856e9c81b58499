"""In staged code JAX stages every `jax.numpy` operation, on constants too: `jnp.unique` of a
NumPy array closed over or fixed by `functools.partial` has a data-dependent size there (JAX111),
while under `vmap` alone, or inside `jax.ensure_compile_time_eval()`, it is computed at once."""

from __future__ import annotations

from quiet_and_reported import case_tests

FIXED_BY_PARTIAL = """
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

def counts(a, x):
    return jnp.unique(a).shape[0] * x

def demo():
    return jax.jit(partial(counts, np.array([1, 2, 2, 3])))(2.0)
"""

CLOSED_OVER = """
import jax
import jax.numpy as jnp
import numpy as np

LABELS = np.array([0, 1, 1, 4])

@jax.jit
def present(x):
    (idx,) = jnp.nonzero(LABELS)
    return x[idx]

def demo():
    return present(jnp.arange(4.0))
"""

UNDER_VMAP = FIXED_BY_PARTIAL.replace("jax.jit(partial(counts, np.array([1, 2, 2, 3])))(2.0)",
                                      "jax.vmap(partial(counts, np.array([1, 2, 2, 3])))(jnp.ones(2))")

AT_COMPILE_TIME = CLOSED_OVER.replace(
    "    (idx,) = jnp.nonzero(LABELS)\n",
    "    with jax.ensure_compile_time_eval():\n        (idx,) = jnp.nonzero(LABELS)\n",
)

QUIET = {"constant-under-vmap": UNDER_VMAP, "constant-at-compile-time": AT_COMPILE_TIME}
REPORTED = {
    "constant-fixed-by-partial-under-jit": (FIXED_BY_PARTIAL, "JAX111", "ConcretizationTypeError"),
    "constant-closed-over-under-jit": (CLOSED_OVER, "JAX111", "ConcretizationTypeError"),
}

(
    test_constants_computed_at_once_stay_quiet,
    test_constants_in_staged_code_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)
