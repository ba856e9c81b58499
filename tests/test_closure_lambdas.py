"""A lambda that a function binds once, called in a function nested in it that JAX traces (a loop
body handed to `lax.while_loop` from eager code): the call runs the lambda's body on the traced
arguments, whatever the analysis knows of the function around.

Each quiet program runs under JAX (when installed) without error; each reported one is what
jaxlint reports and JAX rejects.
"""

from __future__ import annotations

from quiet_and_reported import case_tests

REFINE = """
import jax
import jax.numpy as jnp
import numpy as np

def refine(points, thresh):
    score = lambda h: jnp.sum(jnp.abs(points @ h) < thresh)
    size = lambda: points.shape[0]

    def body(carry):
        it, best, h = carry
        h = h + 0.1
        count = jnp.array(score(h), jnp.int32)
        if size() > 2:
            count = count + 1
        return it + 1, jnp.maximum(best, count), h

    def cond(carry):
        return carry[0] < 3

    return jax.lax.while_loop(cond, body, (0, 0, jnp.eye(2)))

def demo():
    return refine(jnp.ones((4, 2)), 1.0)
"""

QUIET = {"a lambda's traced result and a shape it reads": REFINE}

REPORTED = {
    "NumPy on what the lambda returns": (
        REFINE.replace("count = jnp.array(score(h), jnp.int32)", "count = np.array(score(h), np.int32)"),
        "JAX107",
        "TracerArrayConversionError",
    ),
    "a Python test of what the lambda returns": (
        REFINE.replace("if size() > 2:", "if score(h) > 2:"),
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_quiet_programs_stay_quiet,
    test_reported_programs_are_reported,
    test_jax_traces_the_quiet_programs,
    test_jax_rejects_the_reported_programs,
) = case_tests(QUIET, REPORTED)
