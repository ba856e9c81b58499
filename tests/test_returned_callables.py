"""A call of what a factory of the project returned runs the function the factory returns
(`returned_callables`): a key passed to it is consumed where that function draws from it, on
some path (which path runs turns on what the factory closed over, which the call does not
show), and not where it never draws from it (`del key`). JAX's key reuse checker agrees."""

from __future__ import annotations

from module_matrix import Program, Twins, matrix_tests

IMPORTS = "import jax\nimport jax.numpy as jnp\n"

FACTORIES = """

def ignore_key(x, key):
    del key
    return x * 2


def add_noise(x, key):
    return x + jax.random.normal(key, x.shape)


def get_fn(name):
    if name == "ignore":
        return {returned}
    raise NotImplementedError(name)


def make_policy(scale):
    def policy(x, key):
        if scale != 0:
            x = x + scale * jax.random.normal(key, x.shape)
        return x
    return {policy}
"""

DEMO = """

def demo():
    with jax.debug_key_reuse(True):
        return run(jnp.ones(3), jax.random.key(0))
"""

REGISTRY = """

def run(x, key):
    y = jax.random.normal(key, x.shape)
    fn = get_fn("ignore")
    return fn(x, key) + y{marker}
""" + DEMO

FACTORY = """

def run(x, key):
    first, second = {keys}
    y = jax.random.normal(first, x.shape)
    return make_policy(0.1)(x, second) + y{marker}
""" + DEMO


def _twins(definitions: tuple[str, str], use: tuple[str, str], names: tuple[str, ...]) -> Twins:
    return Twins(
        Program(IMPORTS, definitions[0], use[0], names), Program(IMPORTS, definitions[1], use[1], names),
        "KeyReuseError",
    )


TWINS = {
    "registry": _twins(
        (FACTORIES.format(returned="add_noise", policy="policy"), FACTORIES.format(returned="ignore_key", policy="policy")),
        (REGISTRY.format(marker="  # JAX201"), REGISTRY.format(marker="")),
        ("get_fn",),
    ),
    # The nested function draws only where the scale it closed over is not 0: on some path.
    "closure": _twins(
        (FACTORIES.format(returned="add_noise", policy="policy"),) * 2,
        (FACTORY.format(keys="key, key", marker="  # JAX201"), FACTORY.format(keys="jax.random.split(key)", marker="")),
        ("make_policy",),
    ),
    "lambda": _twins(
        (FACTORIES.format(returned="lambda x, key: add_noise(x, key)", policy="policy"),
         FACTORIES.format(returned="lambda x, key: x * 2", policy="policy")),
        (REGISTRY.format(marker="  # JAX201"), REGISTRY.format(marker="")),
        ("get_fn",),
    ),
}

test_jaxlint_reports_the_bugs_only, test_jax_agrees = matrix_tests(TWINS)
