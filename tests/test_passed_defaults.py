"""A parameter with a default, under `jax.jit`: the default stays a Python value only while no
call passes one. A call of the jitted function in the module that passes it (other than None,
and not named static) makes it a tracer there, as JAX shows."""

from __future__ import annotations

from quiet_and_reported import case_tests

PASSED_POSITIONALLY = """
import jax
import jax.numpy as jnp

@jax.jit
def sample(factors, n=10):
    return jnp.zeros((n,)) + factors[0]

def demo():
    return sample(jnp.ones(3), 4)
"""

PASSED_BY_KEYWORD = """
import jax
import jax.numpy as jnp

def step(x, train=True):
    if train:
        return x * 0.5
    return x

step_jit = jax.jit(step)

def demo():
    return step_jit(jnp.ones(3), train=False)
"""

NEVER_PASSED = PASSED_POSITIONALLY.replace("sample(jnp.ones(3), 4)", "sample(jnp.ones(3))")

PASSED_NONE = """
import jax
import jax.numpy as jnp

@jax.jit
def masked(x, mask=None):
    if mask is None:
        mask = jnp.ones_like(x)
    return x * mask

def demo():
    return masked(jnp.ones(3), None), masked(jnp.ones(3), jnp.zeros(3))
"""

NAMED_STATIC = PASSED_POSITIONALLY.replace("@jax.jit", "@partial(jax.jit, static_argnames='n')").replace(
    "import jax\n", "from functools import partial\n\nimport jax\n", 1
)

QUIET = {
    "default-never-passed": NEVER_PASSED,
    "none-passed-or-an-array": PASSED_NONE,
    "passed-but-static": NAMED_STATIC,
}
REPORTED = {
    "passed-positionally": (PASSED_POSITIONALLY, "JAX108", "TypeError"),
    "passed-by-keyword": (PASSED_BY_KEYWORD, "JAX101", "TracerBoolConversionError"),
}

(
    test_a_default_left_alone_stays_quiet,
    test_a_passed_default_is_traced,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)
