"""A value JAX or a library needs as a Python value (a filter spec, `keepdims`), traced because a
jitted function's argument carries it: JAX310. Each framework's way of passing the flag through
jitted code, the helper that needs it in the same module or in another one, the bug and its
clean twin (the flag static, or the module's configuration); JAX agrees on each. Equinox's
`filter_jit` keeps Python bools static: its jitted code given `True` is a quiet look-alike."""

from __future__ import annotations

from module_matrix import Program, Twins, matrix_tests
from quiet_and_reported import case_tests

IMPORTS = "import functools\nimport jax\nimport jax.numpy as jnp\nimport equinox as eqx\n"
HELPER = """
def pool(x, keep):
    return jnp.mean(x, axis=-1, keepdims=keep)  {mark}
"""

USES = {
    "jax": (
        """
        @jax.jit
        def run(x, keep, mask):
            return pool(x, keep), eqx.partition((x, x), filter_spec=mask)[0]  # JAX310

        def demo():
            return run(jnp.ones((2, 3)), True, (True, False))
        """,
        """
        @functools.partial(jax.jit, static_argnames=("keep", "mask"))
        def run(x, keep, mask):
            return pool(x, keep), eqx.partition((x, x), filter_spec=mask)[0]

        def demo():
            return run(jnp.ones((2, 3)), True, (True, False))
        """,
        "equinox",
    ),
    "linen": (
        """
        import flax.linen as nn

        class Model(nn.Module):
            @nn.compact
            def __call__(self, x, keep):
                return pool(nn.Dense(3)(x), keep)

        def demo():
            model, x = Model(), jnp.ones((2, 3))
            return jax.jit(model.apply)(model.init(jax.random.key(0), x, True), x, True)
        """,
        """
        import flax.linen as nn

        class Model(nn.Module):
            keep: bool = True

            @nn.compact
            def __call__(self, x):
                return pool(nn.Dense(3)(x), self.keep)

        def demo():
            model, x = Model(), jnp.ones((2, 3))
            return jax.jit(model.apply)(model.init(jax.random.key(0), x), x)
        """,
        "flax",
    ),
    "nnx": (
        """
        from flax import nnx

        @nnx.jit
        def run(model, x, keep):
            return pool(model(x), keep)

        def demo():
            return run(nnx.Linear(3, 3, rngs=nnx.Rngs(0)), jnp.ones((2, 3)), True)
        """,
        """
        from flax import nnx

        @nnx.jit(static_argnames="keep")
        def run(model, x, keep):
            return pool(model(x), keep)

        def demo():
            return run(nnx.Linear(3, 3, rngs=nnx.Rngs(0)), jnp.ones((2, 3)), True)
        """,
        "flax",
    ),
    "haiku": (
        """
        import haiku as hk

        def forward(x, keep):
            return pool(hk.Linear(3)(x), keep)

        model = hk.without_apply_rng(hk.transform(forward))

        def demo():
            x = jnp.ones((2, 3))
            return jax.jit(model.apply)(model.init(jax.random.key(0), x, True), x, True)
        """,
        """
        import haiku as hk

        def forward(x, keep):
            return pool(hk.Linear(3)(x), keep)

        model = hk.without_apply_rng(hk.transform(functools.partial(forward, keep=True)))

        def demo():
            x = jnp.ones((2, 3))
            return jax.jit(model.apply)(model.init(jax.random.key(0), x), x)
        """,
        "haiku",
    ),
}


def _twins() -> dict[str, Twins]:
    return {
        framework: Twins(
            Program(IMPORTS, HELPER.replace("{mark}", "# JAX310"), bug, ("pool",)),
            Program(IMPORTS, HELPER.replace("{mark}", ""), clean, ("pool",)),
            "Exception",
            needs,
        )
        for framework, (bug, clean, needs) in USES.items()
    }


(test_traced_flags_across_frameworks_and_modules, test_jax_rejects_traced_flags) = matrix_tests(_twins())

# A mask handed to the jitted function as an ordinary argument: reported at the filter itself.
MASK_ARGUMENT = """
import jax
import equinox as eqx


@jax.jit
def partition(params, params_mask):
    return eqx.partition(params, filter_spec=params_mask)


def demo():
    return partition(((1.0, 2.0), 3.0), ((True, False), False))
"""

FILTER_JIT = IMPORTS + HELPER.replace("{mark}", "") + """

@eqx.filter_jit
def run(x, keep, mask):
    return pool(x, keep), eqx.partition((x, x), filter_spec=mask)[0]


def demo():
    return run(jnp.ones((2, 3)), True, (True, False))
"""

(
    test_python_flags_under_filter_jit_stay_quiet,
    test_a_traced_mask_is_reported,
    test_jax_runs_the_filter_jit_case,
    test_jax_rejects_the_traced_mask,
) = case_tests(
    {"python-flags-under-filter-jit": FILTER_JIT},
    {"mask-argument": (MASK_ARGUMENT, "JAX310", "ValueError")},
    needs=("jax", "equinox"),
)
