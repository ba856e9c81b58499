"""Code that tests `isinstance(x, jax.core.Tracer)` (itself or through a one-line helper) says
`x` may be a tracer: where the test may have held, a Python branch on `x` is reported, though
the analysis takes the closure `x` for a constant of eager code. A value the analysis sees to
be a Python one stays one. JAX shows both sides."""

from __future__ import annotations

from module_matrix import helper_matrix, matrix_tests
from quiet_and_reported import case_tests

# The samplers are picked from a table, so the analysis sees no jit of `sample` in the module:
# what it knows of `topk` comes from the tests the code makes.
SAMPLER = """
import jax
import jax.numpy as jnp
from jax import lax

def _is_tracer(value):
    \"\"\"Whether the value is only known at run time.\"\"\"
    return isinstance(value, jax.core.Tracer)

def sample(logits, topk):
    def body(i, x):
        if TEST:
            x = BRANCH
        return x

    return lax.fori_loop(0, 3, body, logits)

SAMPLERS = {"top": sample}

def demo():
    return jax.jit(SAMPLERS["top"])(jnp.ones(3), 2)
"""

PYTHON_BRANCH = "x * 2 if topk > 0 else x"
STAGED_BRANCH = "lax.cond(topk > 0, lambda: x * 2, lambda: x)"

# The module's own jit fixes `topk` as a Python int: the tracer test fails there.
FIXED = """
import functools

import jax
import jax.numpy as jnp
from jax import lax

def sample(logits, topk):
    def body(i, x):
        if isinstance(topk, jax.core.Tracer) or topk:
            x = x * 2 if topk > 0 else x
        return x

    return lax.fori_loop(0, 3, body, logits)

def demo():
    return jax.jit(functools.partial(sample, topk=2))(jnp.ones(3))
"""

QUIET = {
    "staged-branch-under-the-test": SAMPLER.replace("TEST", "_is_tracer(topk) or topk").replace(
        "BRANCH", STAGED_BRANCH
    ),
    "python-branch-where-the-test-failed": SAMPLER.replace("TEST", "not _is_tracer(topk) and topk").replace(
        "BRANCH", PYTHON_BRANCH
    ),
    "python-value-fixed-by-partial": FIXED,
}
REPORTED = {
    "python-branch-under-a-helper-test": (
        SAMPLER.replace("TEST", "_is_tracer(topk) or topk").replace("BRANCH", PYTHON_BRANCH),
        "JAX101",
        "TracerBoolConversionError",
    ),
    "python-branch-under-isinstance": (
        SAMPLER.replace("TEST", "isinstance(topk, (int, jax.core.Tracer))").replace("BRANCH", PYTHON_BRANCH),
        "JAX101",
        "TracerBoolConversionError",
    ),
    "python-branch-where-a-negated-test-failed": (
        SAMPLER.replace("TEST", "not (not _is_tracer(topk) and topk == 0)").replace("BRANCH", PYTHON_BRANCH),
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_staged_branches_and_python_values_stay_quiet,
    test_python_branches_on_tested_tracers_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)


# A check meant for concrete calls, skipped where the value is a tracer: a JAX array computed in
# traced code is one, so the guarded `assert` never runs there. The bug tests a tuple of arrays,
# which is no tracer, so the `assert` runs on tracers.
GUARDED_CHECK = """
def checked(x):
    if not isinstance(jnp.atleast_1d(x), jax.core.Tracer):
        assert jnp.all(jnp.abs(x) <= 1), "out of range"
    return x
"""
UNGUARDED_CHECK = """
def checked(x):
    if not isinstance((x,), jax.core.Tracer):
        assert jnp.all(jnp.abs(x) <= 1), "out of range"  # JAX104
    return x
"""

(test_concrete_only_checks_across_frameworks, test_jax_skips_the_concrete_only_checks) = matrix_tests(
    helper_matrix("checked", UNGUARDED_CHECK, GUARDED_CHECK, "TracerBoolConversionError")
)


# Code written for NumPy and JAX arrays alike: under the jit, `x[0]` is a tracer, of no NumPy
# type, so the NumPy branch never runs there. Where the value tested is a NumPy array made in
# the function, the branch runs, and NumPy meets the traced operand.
EITHER_KIND = """
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

@partial(jax.jit, out_shardings=None)
def concatenate(x):
    if isinstance(x[0], np.ndarray):
        return np.concatenate(x)
    return jnp.concatenate(x)

def demo():
    return concatenate([jnp.ones(2), jnp.zeros(3)])
"""

(
    test_numpy_branches_a_tracer_never_takes_stay_quiet,
    test_numpy_branches_taken_under_the_jit_are_reported,
    test_jax_runs_the_numpy_branch_cases,
    test_jax_rejects_the_numpy_branch_variants,
) = case_tests(
    {"numpy-branch-on-a-traced-item": EITHER_KIND},
    {
        "numpy-branch-on-a-numpy-value": (
            EITHER_KIND.replace(
                "    if isinstance(x[0], np.ndarray):\n        return np.concatenate(x)",
                "    head = np.ones(1)\n    if isinstance(head, np.ndarray):\n        return np.concatenate([head, x[0]])",
            ),
            "JAX107",
            "TracerArrayConversionError",
        ),
    },
)


# The same test as an operand of `and`/`or`: Python stops at it, so what follows it never runs
# under the jit (`isinstance(shape, np.ndarray) and arr.shape[0] < shape[0]`); an operand the
# traced one decides nothing about still runs.
SHAPE_CHECK = """
import jax
import jax.numpy as jnp
import numpy as np

@jax.jit
def convert(shape, arr):
    if len(arr.shape) != 1 or (isinstance(shape, np.ndarray) and arr.shape[0] < shape[0]):
        raise ValueError("too small")
    return arr

def demo():
    return convert(jnp.array([3]), jnp.ones(2))
"""

(
    test_operands_after_a_failed_numpy_test_stay_quiet,
    test_operands_a_numpy_test_does_not_stop_are_reported,
    test_jax_runs_the_short_circuit_cases,
    test_jax_rejects_the_short_circuit_variants,
) = case_tests(
    {"and-after-a-numpy-test-of-a-tracer": SHAPE_CHECK},
    {
        "or-after-a-numpy-test-of-a-tracer": (
            SHAPE_CHECK.replace("isinstance(shape, np.ndarray) and", "isinstance(shape, np.ndarray) or"),
            "JAX101",
            "TracerBoolConversionError",
        ),
    },
)
