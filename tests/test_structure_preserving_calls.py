"""Library functions that return a pytree shaped like their first argument, each leaf computed
with JAX operations (optax's projections): in traced code a traced array in gives a traced array
out, whose truth JAX cannot take; a tree in gives a tree of the same kind, whose truth is its size."""

from __future__ import annotations

from quiet_and_reported import case_tests

# A per-example loss under `vmap`: the projection of a traced score vector is a traced array
# (JAX refuses the truth of one with more than one element before it looks for a tracer).
PROJECTED_ARRAY = """
import jax
import jax.numpy as jnp
from optax import projections

def per_example(scores, label):
    scores = jnp.asarray(scores)
    proba = projections.projection_simplex(scores)
    return jnp.dot(proba, scores if proba else 0.0)

def loss(scores, labels):
    return jax.vmap(per_example)(scores, labels)

def demo():
    return loss(jnp.ones((2, 3)), jnp.zeros(2, dtype=jnp.int32))
"""
PROJECTED_UNDER_JIT = """
import jax
import jax.numpy as jnp
import optax

@jax.jit
def clip(w):
    w = optax.projections.projection_l2_ball(w, 1.0)
    if w.sum() > 0.5:
        w = w * 0.5
    return w

def demo():
    return clip(jnp.ones(3))
"""

# Look-alikes JAX accepts: the truth of a projected dict (its size), a projection's shape, and a
# Python branch on a projection computed in eager code.
PROJECTED_TREE = """
import jax
import jax.numpy as jnp
from optax import projections

@jax.jit
def project(w, b):
    tree = projections.projection_simplex({"w": w, "b": b})
    return tree["w"] if tree else w

def demo():
    return project(jnp.ones(2), jnp.float32(0.5))
"""
SHAPE_OF_A_PROJECTION = PROJECTED_ARRAY.replace(
    "scores if proba else 0.0", "scores if proba.shape[0] > 1 else 0.0"
)
PROJECTED_EAGERLY = """
import jax.numpy as jnp
from optax import projections

def demo():
    proba = projections.projection_simplex(jnp.array([0.2, 0.9]))
    if proba[0] > 0.1:
        return proba
    return proba * 0
"""

QUIET = {
    "projected-tree": PROJECTED_TREE,
    "shape-of-a-projection": SHAPE_OF_A_PROJECTION,
    "projected-eagerly": PROJECTED_EAGERLY,
}
REPORTED = {
    "projected-array": (PROJECTED_ARRAY, "JAX101", "ValueError"),
    "projected-under-jit": (PROJECTED_UNDER_JIT, "JAX101", "TracerBoolConversionError"),
}

(
    test_look_alikes_stay_quiet,
    test_a_projected_tracer_is_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED, needs=("jax", "optax"))
