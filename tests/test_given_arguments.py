"""A parameter's None default marks "not given": a call that passes a value that cannot be None
(`maybe_none`) does not take the branch that finds it None (JAX205). `rng=rngs["mixup"]` and
`rng=state.rng` give a value; `rng=rngs.get("augment")`, or a parameter left to its own None
default, may give None, and the NumPy fallback then runs while tracing. JAX agrees: under jit the
fallback draws once, and two calls with different keys give the same result."""

from __future__ import annotations

from module_matrix import Program, Twins, matrix_tests

IMPORTS = "from typing import NamedTuple\n\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n"

MIXUP = """

class State(NamedTuple):
    rng: jax.Array


def mixup(x, rng=None):
    if rng is None:
        weight = np.random.beta(1.0, 1.0){marker}
    else:
        weight = jax.random.beta(rng, 1.0, 1.0)
    return weight * x + (1 - weight) * x[::-1]
"""

DEMO = """

def demo():
    x = jnp.arange(3.0)
    first, second = {first}, {second}
    # A draw on every call: two keys give two weights.
    assert not jnp.allclose(first, second)
"""

ITEM = """

@jax.jit
def step(x, key):
    rngs = dict(zip(("mixup", "dropout"), jax.random.split(key)))
    return mixup(x, rng=rngs{lookup})
""" + DEMO.format(first="step(x, jax.random.key(0))", second="step(x, jax.random.key(1))")

ATTRIBUTE = """

@jax.jit
def step(x, state, rng=None):
    return mixup(x, rng={passed})
""" + DEMO.format(
    first="step(x, State(jax.random.key(0)))", second="step(x, State(jax.random.key(1)))"
)


def _twins(clean_use: str, bug_use: str) -> Twins:
    names = ("State", "mixup")
    return Twins(
        Program(IMPORTS, MIXUP.format(marker="  # JAX205"), bug_use, names),
        Program(IMPORTS, MIXUP.format(marker=""), clean_use, names),
        "AssertionError",
    )


TWINS = {
    "item": _twins(ITEM.format(lookup='["mixup"]'), ITEM.format(lookup='.get("augment")')),
    "attribute": _twins(ATTRIBUTE.format(passed="state.rng"), ATTRIBUTE.format(passed="rng")),
}

test_jaxlint_reports_the_bugs_only, test_jax_agrees = matrix_tests(TWINS)
