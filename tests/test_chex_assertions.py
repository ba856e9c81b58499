"""chex builds its value assertions with `chex_assertion(assert_fn, jittable_assert_fn, ...)`: the
static version runs on concrete values, the jittable one only when the assertion's arguments hold
tracers (under `chex.chexify`), so a Python branch on an array there raises while tracing."""

from __future__ import annotations

from quiet_and_reported import case_tests

ASSERTION = """
import chex
import jax
import jax.numpy as jnp
import numpy as np
from chex._src import asserts_internal as _ai

def _all_finite_static(tree):
    if not all(np.all(np.isfinite(x)) for x in jax.tree.leaves(tree)):
        raise AssertionError("non-finite")

def _all_finite_jittable(tree):
    labeled = jax.tree.map(lambda x: jax.lax.select(jnp.isfinite(x).all(), 0.0, jnp.nan), tree)
    return jnp.all(jnp.isfinite(jnp.asarray(jax.tree.leaves(labeled))))

assert_all_finite = _ai.chex_assertion(
    assert_fn=_all_finite_static, jittable_assert_fn=_all_finite_jittable, name="assert_all_finite"
)

@jax.jit
def step(x):
    assert_all_finite(x)
    return x * 2

def demo():
    out = chex.chexify(step)(jnp.ones(3))
    chex.block_until_chexify_assertions_complete()
    return out
"""
BRANCH_IN_THE_JITTABLE_VERSION = ASSERTION.replace(
    "jax.lax.select(jnp.isfinite(x).all(), 0.0, jnp.nan)", "0.0 if jnp.isfinite(x).all() else jnp.nan"
)
# Look-alikes JAX accepts: the static version's branches run on concrete values; the jittable
# one may branch on what is static about its leaves.
STATIC_VERSION_BRANCHES = ASSERTION
SHAPE_IN_THE_JITTABLE_VERSION = ASSERTION.replace(
    "jax.lax.select(jnp.isfinite(x).all(), 0.0, jnp.nan)",
    "jax.lax.select(jnp.isfinite(x).all(), 0.0, jnp.nan) if x.ndim else jnp.float32(0.0)",
)

QUIET = {
    "static-version-branches": STATIC_VERSION_BRANCHES,
    "shape-in-the-jittable-version": SHAPE_IN_THE_JITTABLE_VERSION,
}
REPORTED = {
    "branch-in-the-jittable-version": (BRANCH_IN_THE_JITTABLE_VERSION, "JAX101", "TracerBoolConversionError"),
}

(
    test_look_alikes_stay_quiet,
    test_a_branch_in_the_jittable_version_is_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED, needs=("jax", "chex"))
