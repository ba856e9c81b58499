"""JAX204: a PRNG key made from a constant seed where it is made again and again."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register


@register
class ConstantSeedInLoop(Rule):
    code = "JAX204"
    name = "constant-seed-in-loop"
    summary = "A PRNG key is made from a constant seed inside a loop, a loop body, or a step function"
    what = """
        Checks for `jax.random.key(0)` / `jax.random.PRNGKey(0)` (a literal seed) whose key is then
        used for sampling, when the code that makes it runs again and again: inside a Python loop
        that steps (`range`, `while`, a data iterator), inside a `lax.scan`/`fori_loop`/`while_loop`
        body, inside a function called from such a loop in the same module, or inside a jitted
        step function (`train_step`).

        Loops over a fixed set of configurations (a literal list, `itertools.product`, `.items()`),
        test functions, and keys or functions named for evaluation, validation, tests or
        benchmarks (`eval_key`, `evaluate`) are not reported: there, identical randomness on
        every run is the point.
        """
    why = """
        The same seed makes the same key, so every step draws exactly the same numbers: the same
        dropout mask on every training step, the same noise on every sampling step. No error is
        raised (each call makes a fresh key, so JAX's key reuse checker has nothing to flag);
        the randomness just stops being random across steps. Make the key once, outside, pass it
        in, and split it per step.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(w, x):
            key = jax.random.key(0)  # JAX204
            mask = jax.random.bernoulli(key, 0.9, x.shape)
            return w - 0.1 * jnp.mean(jnp.where(mask, x, 0.0) @ w)
        """,
        """
        import jax

        def sample_chain(x, n_steps):
            for _ in range(n_steps):
                noise = jax.random.normal(jax.random.PRNGKey(42), x.shape)  # JAX204
                x = 0.9 * x + 0.1 * noise
            return x
        """,
        """
        import jax

        def augment(x):
            key = jax.random.PRNGKey(0)  # JAX204
            return x + 0.01 * jax.random.normal(key, x.shape)

        def fit(batches):
            return [augment(b) for b in batches] + [augment(b) for b in batches[:1]]

        def train(batches):
            for batch in batches:
                batch = augment(batch)
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(w, x, key):
            mask = jax.random.bernoulli(key, 0.9, x.shape)
            return w - 0.1 * jnp.mean(jnp.where(mask, x, 0.0) @ w)

        def train(w, xs):
            key = jax.random.key(0)
            for x in xs:
                key, sub = jax.random.split(key)
                w = train_step(w, x, sub)
            return w
        """,
        """
        import itertools
        import jax

        def benchmark(run):
            for batch, width in itertools.product((1, 8), (128, 256)):
                k1, k2 = jax.random.split(jax.random.key(42))
                run(jax.random.normal(k1, (batch, width)), jax.random.normal(k2, (width, width)))

        def init_params(shapes):
            key = jax.random.key(0)
            return [jax.random.normal(k, s) for k, s in zip(jax.random.split(key, len(shapes)), shapes)]
        """,
        """
        import jax

        def test_normal_shapes():
            for shape in [(2,), (3, 4)]:
                key = jax.random.PRNGKey(0)
                assert jax.random.normal(key, shape).shape == shape

        def make_key():
            return jax.random.key(0)

        def evaluate(params, x):
            key = jax.random.key(0)
            return params * jax.random.bernoulli(key, 0.5, x.shape)

        def train(params, xs, update):
            for x in xs:
                params = update(params, x)
                eval_key = jax.random.PRNGKey(42)
                score = evaluate(params, x) + jax.random.normal(eval_key)
            return params, score
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(w, x):
            key = jax.random.key(0)
            mask = jax.random.bernoulli(key, 0.5, x.shape)
            return w - 0.1 * jnp.mean(jnp.where(mask, x, 0.0)), mask

        def demo():
            x = jnp.ones(64)
            w, first = train_step(jnp.float32(1.0), x)
            w, second = train_step(w, x)
            # JAX draws the identical mask on both steps: the randomness is frozen.
            assert not bool(jnp.all(first == second)), "the same dropout mask on every step"
        """,
        "raises:AssertionError",
    )
    references = ("https://docs.jax.dev/en/latest/random-numbers.html",)

    def check(self, module, report):
        for seed in module.keys.constant_seeds:
            report(
                seed.call,
                f"PRNG key made from a constant seed {seed.reason} draws the same numbers; make the "
                "key once outside, pass it in, and split it per step",
            )
