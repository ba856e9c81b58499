"""JAX204: a PRNG key made from a constant seed where it is made again and again."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, register
from jaxlint.rules.randomness import KeyFlowRule


@register
class ConstantSeedInLoop(KeyFlowRule):
    code = "JAX204"
    name = "constant-seed-in-loop"
    summary = "A PRNG key is made from a constant seed where its draws are meant to differ: a loop, a step, a run"
    what = """
        Checks for `jax.random.key(0)` or `jax.random.PRNGKey(0)` (a literal seed) made and
        drawn from inside code that runs once per step of something meant to change: a training
        or sampling loop, a `lax.scan` body, a jitted step function, a model's forward pass. The
        same seed makes the same key, so every step gets the same dropout mask or noise, and no
        error says so. Make the key once, outside, and split it per step.
        """
    decisions = """
        **The key must be used for sampling:** named, or passed straight to a function of the
        project that draws from it (`sim(jax.random.key(0), p)`). A key passed straight to code
        jaxlint cannot see, whose draw may be used only for its structure, is not counted.

        **Where it is reported.** The code that makes the key runs once per step:

        - inside a Python loop that steps (`range`, `while`, a data iterator), when the draws
          feed state the loop carries into its next iteration (`x = x + noise`, `params =
          update(params, noisy)`);
        - inside a function called from such a loop in the same module, when what it returns
          feeds the carried state;
        - inside a `lax.scan`, `fori_loop`, `while_loop` or `lax.map` body, or inside a function
          of the module such a body calls, when what it returns reaches what the body returns;
        - inside a jit-compiled step function: one that returns an update of one of its own
          parameters (`w - lr * g`, `optax.apply_updates(params, updates)`,
          `state.apply_gradients(...)`), so it runs on its own output step after step;
        - inside the forward pass of a Flax, Equinox or Haiku module (`__call__`, `@nn.compact`
          methods), which runs on every training step, or inside a function of the module it
          calls (`self.mask_and_encode(x, rng)`, a helper by name; a few calls deep).

        - inside a loop whose iterations differ in nothing else: what the loop collects
          (`results.append(...)`, `yield`) is computed from the draws, while the body reads
          neither the loop's variable nor anything an earlier iteration left, and calls only what
          computes from its arguments (JAX, NumPy but `numpy.random`, functions of the project):
          every iteration collects the same values.

        **A seed that never reaches the key.** A function or class that makes its key from a seed
        parameter with a constant default (`def __init__(self, seed=0): ...
        jax.random.PRNGKey(seed)`, directly or through functions and constructors of the project
        it hands the seed to), called without that parameter (by position, by name, or in a
        `**` dict literal) by a function that reads a seed of its own under that name
        (`args.seed`, `seed`): every run draws the same numbers, whatever seed it is given.

        **Deliberate, and not reported.** Loops over a fixed set of configurations (a literal
        list, `itertools.product`, `.items()`), and loops whose draws feed only a per-iteration
        result (a fixed evaluation key each epoch): there, identical randomness on every run is
        the point. A `lax.scan` body whose every scan's results serve only as example inputs of
        an `init` (a dummy trajectory that gives a replay buffer its structure: handed to
        `buffer.init` through names, unpacking and tree maps, and otherwise read only for its
        shape): its numbers decide nothing.
        """
    limits = (
        "A key passed straight to code it cannot see is not counted: that draw may serve only for"
        " its structure.",
        "Loops over a fixed set of configurations, and draws that feed only one iteration's result,"
        " are deliberate: not reported.",
    ) + KeyFlowRule.limits
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

        def train(params, batches, update):
            for batch in batches:
                params = update(params, augment(batch))
            return params
        """,
        """
        import jax
        import jax.numpy as jnp

        def rotate(images, turns):
            return jnp.where(turns[:, None, None] == 1, jnp.swapaxes(images, 1, 2), images)

        def augment_batches(images, num_batches):
            rotations = []
            for _ in range(num_batches):
                key = jax.random.PRNGKey(0)  # JAX204
                rotations.append(rotate(images, jax.random.randint(key, (8,), 0, 2)))
            return rotations
        """,
        """
        import argparse
        import jax

        class Agent:
            def __init__(self, dim, seed=0):
                self.key = jax.random.PRNGKey(seed)
                self.dim = dim

        def main(argv):
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", default=0, type=int)
            args = parser.parse_args(argv)
            print("seed", args.seed)
            return Agent(3)  # JAX204
        """,
        """
        import jax
        import flax.linen as nn

        class NoisyDense(nn.Module):
            features: int

            @nn.compact
            def __call__(self, x):
                noise = jax.random.normal(jax.random.PRNGKey(0), x.shape)  # JAX204
                return nn.Dense(self.features)(x + 0.1 * noise)
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
        """
        import jax

        def evaluate_all(models, x):
            scores = []
            for model in models:
                key = jax.random.PRNGKey(0)  # the same noise for every model, to compare them
                scores.append(model(x + jax.random.normal(key, x.shape)))
            return scores

        class Agent:
            def __init__(self, dim, seed=0):
                self.key = jax.random.PRNGKey(seed)

        def main(seed):
            print("seed", seed)
            return Agent(3, seed=seed)
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
        for found in module.keys.defaulted_seeds:
            report(
                found.call,
                f"`{found.callee}` makes its PRNG key from `{found.param}`, left here to its default "
                f"`{ast.unparse(found.default)}` while this function reads `{ast.unparse(found.read)}` on line "
                f"{found.read.lineno}: every run draws the same numbers, whatever seed it is given; pass "
                f"`{found.param}=` on",
            )
        for seed in module.keys.constant_seeds:
            report(
                seed.call,
                f"PRNG key made from a constant seed {seed.reason} draws the same numbers; make the "
                "key once outside, pass it in, and split it per step",
            )
