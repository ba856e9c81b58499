"""A loop's most steps given by a traced jit argument: `equinox.internal.while_loop(...,
max_steps=n)` (as Diffrax's `diffeqsolve` runs it) sizes its checkpoints by `n`, which must be a
Python int. Passed as an ordinary argument of the jitted code, `n` is a tracer; declared static
(or kept as a module's configuration), it is one. Each framework, the solver in the same module or
in another one; JAX agrees on each. Equinox's `filter_jit` keeps a Python int static: its
jitted code given `64` is the quiet look-alike."""

from __future__ import annotations

from module_matrix import Program, Twins, matrix_tests
from quiet_and_reported import case_tests

IMPORTS = "import functools\nimport jax\nimport jax.numpy as jnp\nimport equinox.internal as eqxi\n"
SOLVER = """
def solve(y0, max_steps):
    def cond(carry):
        t, _ = carry
        return t < 1.0

    def body(carry):
        t, y = carry
        return t + 0.1, y - 0.1 * y

    _, y = eqxi.while_loop(cond, body, (jnp.asarray(0.0), y0), max_steps=max_steps, kind="checkpointed")  {mark}
    return y
"""

USES = {
    "jax": (
        """
        @jax.jit
        def run(y0, n):
            return solve(y0, n)

        def demo():
            return run(jnp.ones(3), 64)
        """,
        """
        @functools.partial(jax.jit, static_argnames="n")
        def run(y0, n):
            return solve(y0, n)

        def demo():
            return run(jnp.ones(3), 64)
        """,
        "equinox",
    ),
    "linen": (
        """
        import flax.linen as nn

        class Model(nn.Module):
            @nn.compact
            def __call__(self, y0, n):
                return solve(nn.Dense(3)(y0), n)

        def demo():
            model, y0 = Model(), jnp.ones(3)
            params = model.init(jax.random.key(0), y0, 64)
            return jax.jit(model.apply)(params, y0, 64)
        """,
        """
        import flax.linen as nn

        class Model(nn.Module):
            n: int = 64

            @nn.compact
            def __call__(self, y0):
                return solve(nn.Dense(3)(y0), self.n)

        def demo():
            model, y0 = Model(), jnp.ones(3)
            return jax.jit(model.apply)(model.init(jax.random.key(0), y0), y0)
        """,
        "flax",
    ),
    "nnx": (
        """
        from flax import nnx

        @nnx.jit
        def run(model, y0, n):
            return solve(model(y0), n)

        def demo():
            return run(nnx.Linear(3, 3, rngs=nnx.Rngs(0)), jnp.ones(3), 64)
        """,
        """
        from flax import nnx

        @nnx.jit(static_argnames="n")
        def run(model, y0, n):
            return solve(model(y0), n)

        def demo():
            return run(nnx.Linear(3, 3, rngs=nnx.Rngs(0)), jnp.ones(3), 64)
        """,
        "flax",
    ),
    "haiku": (
        """
        import haiku as hk

        def forward(y0, n):
            return solve(hk.Linear(3)(y0), n)

        model = hk.without_apply_rng(hk.transform(forward))

        def demo():
            y0 = jnp.ones(3)
            return jax.jit(model.apply)(model.init(jax.random.key(0), y0, 64), y0, 64)
        """,
        """
        import haiku as hk

        def forward(y0, n):
            return solve(hk.Linear(3)(y0), n)

        model = hk.without_apply_rng(hk.transform(functools.partial(forward, n=64)))

        def demo():
            y0 = jnp.ones(3)
            return jax.jit(model.apply)(model.init(jax.random.key(0), y0), y0)
        """,
        "haiku",
    ),
}


def _twins() -> dict[str, Twins]:
    twins = {}
    for framework, (bug, clean, needs) in USES.items():
        twins[framework] = Twins(
            Program(IMPORTS, SOLVER.replace("{mark}", "# JAX108"), bug, ("solve",)),
            Program(IMPORTS, SOLVER.replace("{mark}", ""), clean, ("solve",)),
            "TracerBoolConversionError",
            needs,
        )
    return twins


(test_traced_loop_bounds_across_frameworks_and_modules, test_jax_rejects_traced_loop_bounds) = matrix_tests(_twins())


FILTER_JIT = IMPORTS + SOLVER.replace("{mark}", "") + """
import equinox as eqx


@eqx.filter_jit
def run(linear, y0, n):
    return solve(linear(y0), n)


def demo():
    return run(eqx.nn.Linear(3, 3, key=jax.random.key(0)), jnp.ones(3), 64)
"""

(test_a_python_int_under_filter_jit_stays_quiet, _, test_jax_runs_the_filter_jit_case, _) = case_tests(
    {"python-int-under-filter-jit": FILTER_JIT}, {}, needs=("jax", "equinox")
)
