"""JAX203: a PRNG key consumed on every iteration of a loop that never rebinds it."""

from __future__ import annotations

import ast

from jaxlint.analysis.knowledge.random_api import BATCHING, TREE_MAPS, short
from jaxlint.rule import JaxDemo, register
from jaxlint.rules.randomness import KeyFlowRule, split_text


@register
class KeyReuseInLoop(KeyFlowRule):
    code = "JAX203"
    name = "key-reuse-in-loop"
    summary = "A PRNG key is consumed on every iteration of a loop, or every call of a method, without being split"
    what = """
        Checks for a key consumed on every iteration of a loop that never rebinds it, or on
        every call of a method that leaves the key it drew from on `self`: each iteration or
        call draws exactly the same numbers. Loops include Python `for`/`while` loops,
        comprehensions, `lax.scan`, `fori_loop`, `while_loop` and `lax.map` bodies, and
        functions mapped over a pytree. Split the key per iteration, or iterate over
        `jax.random.split(key, n)`.
        """
    decisions = """
        **Loops.**

        - A Python `for` or `while` loop, or a comprehension, whose body consumes a key it does
          not rebind, on every iteration or under a test of the loop variable that holds on
          more than one (`if step >= warmup:`, `if i % 10 == 0:`; not `if i == 0:`). An
          iteration that skips the rest of the body with a `continue` is the other arm of that
          test: `if k[-1] != "codebook": continue` before the draws is `if k[-1] ==
          "codebook":` around them, and `if i != 0: continue` lets one iteration draw.
        - A `lax.scan`, `lax.fori_loop`, `lax.while_loop` or `lax.map` body that closes over a
          key from outside and consumes it; Haiku's (`hk.scan`, `hk.fori_loop`,
          `hk.while_loop`, `hk.map`) and Flax NNX's (`nnx.fori_loop`, `nnx.while_loop`) take
          the same arguments and run their bodies alike.
        - A function mapped over a pytree (`jax.tree.map(lambda g: g + jax.random.normal(key,
          g.shape), grads)`: every leaf gets the same noise).
        - A function `jax.vmap` (or `eqx.filter_vmap`, `nnx.vmap`) maps over a batch that draws
          from a key it closes over, or that it is given with `in_axes=None`
          (`jax.vmap(add_noise, in_axes=(0, None))(xs, key)`): every element of the batch draws
          the same numbers. JAX's checker counts one use there; the numbers are the same.
        - A `scan`, `fori_loop` or `while_loop` body that consumes a key and hands the same key
          back in its carry: the next iteration consumes it again.

        **Methods.** The same holds across calls of a method. A class that advances a key it
        keeps on `self` where it draws from it (`key, self.rng = jax.random.split(self.rng)`, or
        `self.rng = jax.random.fold_in(self.rng, t)`) treats that attribute as a stream. A
        method of the class that splits or samples from `self.rng` after its last store into it
        (or with none) leaves the consumed key in place, and its next call, or the next draw
        from the stream, consumes it again. Not counted:

        - the constructor and `setup`, which run once;
        - a class that never advances the key (the same key on every call may be meant: fixed
          noise, fixed random features);
        - a method that calls a method of `self`, or hands `self` to a call: it may store a
          fresh key (`self.reseed()`).

        **Objects handed in.** A function given such an object (a parameter annotated with its
        class, of this module or another of the project) that consumes its stream
        (`q.random_action(schedule.key)`, after `schedule.explore()` advanced it) and neither
        stores into the attribute after that nor hands the object on or calls a method of it
        leaves the consumed key in place: the class's next advance splits it again, and what it
        splits off repeats what was drawn (a `randint` draws from the very children a split of
        its key makes). A call that draws nothing from the key (a method that never reads the
        parameter, a Flax run) does not consume it.

        **Fine, and not reported.**

        - `key, sub = jax.random.split(key)` in the loop, iterating over `jax.random.split(key,
          n)`, indexing `keys[i]` with the loop index, and `fold_in(key, i)`.
        - A scan that carries the key in its state, or receives per-step keys as `xs`.
        - One permutation (or `choice`) applied with one key to each array a loop goes through
          (`[jax.random.permutation(key, a) for a in (x, y)]`, or one for every leaf of a tree,
          or every element of a batch, directly or by a function of the module whose only use of
          the key is to reorder: `tree_map(lambda x: shuffle(x, rng), batch)`), or a function of
          the module that draws only positions (a permutation, a `randint` crop offset) handed
          each array with one key: the same order or crop keeps the arrays aligned. The array
          is the argument the positions are drawn in (`choice(rng, jnp.arange(board.shape[0]))`
          draws in `board`): a loop that hands each pass the same board and a new size draws
          the same spot again, and is reported. Reordering the same data on every pass (`x =
          x[permutation(key, n)]`) is reported.

        **Which values are keys** is decided as for JAX201: a key-named value shown to be data,
        or an object that keeps a generator's state (`rng._state = s`, `rng.normal(size=3)`:
        each draw advances it), is not one.
        """
    limits = (
        "One permutation applied with one key to each array a loop goes through keeps them aligned:"
        " not reported.",
        "A class that never advances the key it keeps on `self` may mean the same key on every call:"
        " not reported.",
        "A method that calls a method of `self`, or hands `self` on, may store a fresh key: not"
        " counted.",
    ) + KeyFlowRule.limits
    why = """
        Every iteration draws from the same key, so every iteration gets the same numbers: the
        Langevin noise, the dropout mask, the random walk step repeat exactly. Eagerly, JAX's key
        reuse checker raises `KeyReuseError` on the second iteration; a `lax.scan` or
        `fori_loop` body that consumes a closed-over key raises `KeyReuseError` ("key constants
        are repeatedly consumed") when traced with the checker on.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        def langevin(rng, x, score, step_size=0.01, n_steps=50):
            for _ in range(n_steps):
                noise = jax.random.normal(rng, x.shape)  # JAX203
                x = x + step_size * score(x) + jnp.sqrt(2 * step_size) * noise
            return x
        """,
        """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def random_walk(prng_key, n_steps, dim=2):
            def step(pos, _):
                delta = jax.random.normal(prng_key, (dim,)) * 0.1  # JAX203
                return pos + delta, pos
            _, path = lax.scan(step, jnp.zeros(dim), None, length=n_steps)
            return path
        """,
        """
        import jax

        def init_layers(key, sizes):
            return [jax.random.normal(key, (n, n)) for n in sizes]  # JAX203
        """,
        """
        import jax
        from jax import lax

        def noisy_sum(key, x, n):
            return lax.fori_loop(0, n, lambda i, acc: acc + jax.random.normal(key, x.shape), x)  # JAX203
        """,        """
        import jax

        def noisy_grads(grads, key, scale):
            return jax.tree.map(lambda g: g + scale * jax.random.normal(key, g.shape), grads)  # JAX203
        """,
        """
        import jax
        from jax import lax

        def diffuse(x, key, n):
            def step(carry, _):
                x, key = carry
                x = x + 0.1 * jax.random.normal(key, x.shape)
                return (x, key), x  # JAX203
            return lax.scan(step, (x, key), None, length=n)
        """,
        """
        import jax

        class VectorEnv:
            def __init__(self, seed, num_envs):
                self.rng = jax.random.key(seed)
                self.num_envs = num_envs

            def reset(self):
                rng, self.rng = jax.random.split(self.rng)
                return jax.random.normal(rng, (self.num_envs,))

            def step(self, state):
                rngs = jax.random.split(self.rng, self.num_envs)  # JAX203
                return state + jax.vmap(jax.random.normal)(rngs)
        """,
        """
        import jax

        class Schedule:
            def __init__(self, key):
                self.key = key

            def explore(self):
                self.key, key = jax.random.split(self.key)
                return jax.random.uniform(key) < 0.1

        def act(schedule: Schedule, n_actions):
            if schedule.explore():
                return jax.random.randint(schedule.key, (), 0, n_actions)  # JAX203
            return 0
        """,
        """
        import jax

        def add_noise(x, key):
            return x + 0.1 * jax.random.normal(key, x.shape)

        def augment(batch, key):
            return jax.vmap(add_noise, in_axes=(0, None))(batch, key)  # JAX203
        """,
        """
        import jax

        def rollout(policy, state, key, n_steps):
            for _ in range(n_steps):
                act_key, noise_key = jax.random.split(key)  # JAX203
                state = policy(state, jax.random.normal(act_key, state.shape))
                state = state + 0.01 * jax.random.normal(noise_key, state.shape)
            return state
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        def langevin(rng, x, score, step_size=0.01, n_steps=50):
            for _ in range(n_steps):
                rng, sub = jax.random.split(rng)
                noise = jax.random.normal(sub, x.shape)
                x = x + step_size * score(x) + jnp.sqrt(2 * step_size) * noise
            return x
        """,
        """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def simulate(key, n_steps):
            def step(carry, _):
                x, key = carry
                key, sub = jax.random.split(key)
                x = x + jax.random.normal(sub)
                return (x, key), x
            _, xs = lax.scan(step, (jnp.array(0.0), key), None, length=n_steps)
            return xs

        def simulate_xs(key, n_steps):
            def step(x, k):
                x = x + jax.random.normal(k)
                return x, x
            return lax.scan(step, jnp.array(0.0), jax.random.split(key, n_steps))
        """,
        """
        import jax

        def per_layer(key, sizes):
            keys = jax.random.split(key, len(sizes))
            out = []
            for i, n in enumerate(sizes):
                out.append(jax.random.normal(keys[i], (n,)))
            return out

        def per_sample(key, n):
            return [jax.random.uniform(k) for k in jax.random.split(key, n)]

        def per_step(key, n):
            return [jax.random.normal(jax.random.fold_in(key, i)) for i in range(n)]
        """,
        """
        import jax

        def noisy_grads(grads, key, scale):
            leaves, treedef = jax.tree.flatten(grads)
            keys = jax.random.split(key, len(leaves))
            noisy = [g + scale * jax.random.normal(k, g.shape) for g, k in zip(leaves, keys)]
            return jax.tree.unflatten(treedef, noisy)
        """,
        """
        import jax

        def first_success(key, tries):
            for t in range(tries):
                key, sub = jax.random.split(key)
                sample = jax.random.uniform(sub)
                if sample > 0.5:
                    return sample
            return None

        def once(key, xs):
            for x in xs:
                return x + jax.random.normal(key)
        """,
        """
        import jax

        class VectorEnv:
            def __init__(self, seed, num_envs):
                self.rng = jax.random.key(seed)
                self.num_envs = num_envs
                self.features = jax.random.normal(self.rng, (num_envs,))

            def step(self, state):
                rng, self.rng = jax.random.split(self.rng)
                return state + jax.random.normal(rng, state.shape)

        class FixedNoise:
            def __init__(self, seed):
                self.key = jax.random.key(seed)

            def __call__(self, x):
                return x + jax.random.normal(self.key, x.shape)  # the same noise on purpose
        """,
        """
        import jax

        def add_noise(x, key):
            return x + 0.1 * jax.random.normal(key, x.shape)

        def augment(batch, key):
            keys = jax.random.split(key, batch.shape[0])
            return jax.vmap(add_noise)(batch, keys)

        @jax.vmap
        def crop(key, image):
            start = jax.random.randint(key, (2,), 0, 4)
            return jax.lax.dynamic_slice(image, (start[0], start[1]), (28, 28))

        def crop_views(views, key):
            keys = jax.random.split(key, 8)
            return [crop(keys, view) for view in views]  # one crop for every view: aligned
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def random_walk(prng_key, n_steps, dim=2):
            def step(pos, _):
                delta = jax.random.normal(prng_key, (dim,)) * 0.1
                return pos + delta, pos
            _, path = lax.scan(step, jnp.zeros(dim), None, length=n_steps)
            return path

        def demo():
            return random_walk(jax.random.key(0), 5)
        """,
        "key-reuse",
    )
    references = ("https://docs.jax.dev/en/latest/random-numbers.html",)

    def check(self, module, report):
        reused = {id(reuse.use.node) for reuse in module.keys.reuses}
        for draw in module.stale_key_draws:
            if id(draw.method) in module.keys.tests or id(draw.key) in reused:
                continue
            if draw.owner:
                key = ast.unparse(draw.key)
                report(
                    draw.key,
                    f"PRNG key `{key}` is the stream `{draw.owner}` advances (its line {draw.advance.lineno}); "
                    f"consumed here and left in place, it is split again by the next advance, which "
                    f"repeats these numbers; consume a key split off the stream, and store the rest back",
                )
                continue
            report(
                draw.key,
                f"PRNG key `self.{draw.attr}` is consumed here and left in place, while line "
                f"{draw.advance.lineno} advances it: the next call of `{draw.method.name}` consumes it "
                f"again and draws the same numbers; store a fresh key where you draw "
                f"(`key, self.{draw.attr} = jax.random.split(self.{draw.attr})`)",
            )
        for reuse in module.keys.reuses:
            if reuse.loop is None or not reuse.dependent:
                continue
            if reuse.primitive is None:
                if reuse.renewal is not None:
                    # This line already splits the key in the loop, without rebinding it.
                    advice = f"rebind it in this split (give it one more child, bound to `{reuse.name}`)"
                else:
                    advice = f"split it inside the loop ({split_text(reuse.name)})"
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` is consumed again on a later iteration of the loop on line "
                    f"{reuse.loop.lineno} without a fresh key in between: the iterations draw the same "
                    f"numbers; {advice}",
                )
                continue
            where = short(reuse.primitive)
            if reuse.use.kind == "carry":
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` was consumed by {reuse.use.callee} on line {reuse.use.call.lineno} "
                    f"and is handed back in the `{where}` carry: the next iteration consumes it again; "
                    f"split it and carry the new key ({split_text(reuse.name)})",
                )
            elif reuse.primitive in BATCHING:
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` is the same key in every element `{where}` maps over (line "
                    f"{reuse.loop.lineno}): every element draws the same numbers; map over one key per "
                    "element (`jax.random.split(key, n)` with `in_axes=0`)",
                )
            elif reuse.primitive in TREE_MAPS:
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` is closed over by the function `{where}` applies to every leaf "
                    f"(line {reuse.loop.lineno}): every leaf of the same shape gets the same numbers; "
                    "split one key per leaf (`jax.random.split(key, len(leaves))`)",
                )
            else:
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` is closed over by a `{where}` body (line {reuse.loop.lineno}) "
                    "and consumed on every iteration: carry it in the loop state and split it per "
                    "step, or pass per-step keys (`jax.random.split(key, n)`) as `xs`",
                )
