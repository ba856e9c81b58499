"""JAX206: a module-level PRNG key drawn from inside a jit-compiled function."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, register
from jaxlint.rules.randomness import KeyFlowRule


@register
class GlobalKeyInJit(KeyFlowRule):
    code = "JAX206"
    name = "global-key-in-jit"
    summary = "A jit-compiled function draws from a module-level PRNG key"
    what = """
        Checks for a jit-compiled function that draws from a PRNG key bound at module level
        (`KEY = jax.random.key(0)`) instead of receiving it as an argument. The global becomes a
        constant of the compiled program, so every call draws the same numbers. Pass the key in
        and split it per call.
        """
    decisions = """
        - The key may be read directly, or through a function of the module that returns it
          (`def get_key(): return KEY`).
        - A function that advances the global with `global KEY` before returning a key is a
          different matter: it is not such a getter.
        - Outside compiled code, two draws through such a getter are two draws from one key
          (JAX201).
        """
    limits = (
        "The global key is seen read directly or through a function of the module that returns it,"
        " not through one that advances it with `global`.",
    ) + KeyFlowRule.limits
    why = """
        A global read while tracing becomes a constant of the compiled program: every call
        draws from the same key, so every call gets the same "random" numbers (the same dropout
        mask, the same noise), and rebinding the global later changes nothing until the function
        is traced again. JAX's key reuse checker raises `KeyReuseError` on the second call. Pass
        the key in as an argument and split it per call.
        """
    bad = (
        """
        import jax

        KEY = jax.random.key(0)

        @jax.jit
        def add_noise(x):
            return x + 0.1 * jax.random.normal(KEY, x.shape)  # JAX206
        """,
        """
        import jax
        import jax.numpy as jnp

        rng = jax.random.PRNGKey(42)

        def dropout(x, rate):
            keep = jax.random.bernoulli(rng, 1 - rate, x.shape)  # JAX206
            return jnp.where(keep, x / (1 - rate), 0.0)

        dropout_jit = jax.jit(dropout, static_argnums=1)
        """,
    )
    good = (
        """
        import jax

        @jax.jit
        def add_noise(x, key):
            return x + 0.1 * jax.random.normal(key, x.shape)

        def train(xs):
            key = jax.random.key(0)
            for x in xs:
                key, sub = jax.random.split(key)
                x = add_noise(x, sub)
            return x
        """,
        """
        import jax

        KEY = jax.random.key(0)

        def init(shape):
            return jax.random.normal(KEY, shape)

        @jax.jit
        def describe(x):
            return x.shape, KEY.shape
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        KEY = jax.random.key(0)

        @jax.jit
        def add_noise(x):
            return x + 0.1 * jax.random.normal(KEY, x.shape)

        def demo():
            add_noise(jnp.zeros(3))
            return add_noise(jnp.ones(3))
        """,
        "key-reuse",
    )
    references = (
        "https://docs.jax.dev/en/latest/random-numbers.html",
        "https://docs.jax.dev/en/latest/stateful-computations.html",
    )

    def check(self, module, report):
        for found in module.keys.global_keys:
            name = getattr(found.function, "name", "this function")
            report(
                found.use.node,
                f"`{name}` is jit-compiled and draws from the module-level key `{found.name}`, which is "
                "baked into the compiled program: every call draws the same numbers; pass the key in "
                "as an argument and split it per call",
            )
