"""JAX207: a key used again where no numbers repeat, which only JAX's key reuse checker objects to."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, register
from jaxlint.rules.randomness import KeyFlowRule, child_of, split_text


@register
class KeyReuseWithoutDraws(KeyFlowRule):
    code = "JAX207"
    name = "key-reuse-without-draws"
    summary = "A PRNG key is used twice where no numbers repeat (off by default: for code run under the key reuse checker)"
    opt_in = True
    what = """
        Checks for a key used twice where one of the two uses draws no numbers: a split whose
        children nobody draws from, a helper that only splits the key and hands back children its
        caller drops, a draw made only to give an `init` example inputs, a key handed both to a
        Flax run (which folds its module's path into the key) and to another use. No numbers are
        shown to repeat, but the key is used twice: JAX's key reuse checker
        (`jax_debug_key_reuse`) counts every split and draw as a use and raises `KeyReuseError`
        there. Off unless selected by its code: projects that run their tests under the checker,
        or that hold every key to one use, turn it on.
        """
    decisions = """
        **Which uses draw.** A sampler draws. A split draws through its children: when one of
        them is drawn from (directly, by a function that draws from it, or by code jaxlint cannot
        see, which is taken to draw). A split's children count as unused when every read of the
        names they are bound to (or copied into by `jnp.stack`, `.reshape`, `jax.device_put`) is
        a use jaxlint follows and none of them draws: overwritten before any read, deleted,
        handed to a function that keeps or discards them without drawing. A function that
        consumes a key only by splitting it, draws from none of the children and returns some of
        them draws from the key only if its caller uses what comes back there: a caller that binds
        those places to names it overwrites before reading them draws nothing
        (`evaluator, (params, eval_keys) = evaluator_setup(key)` with `eval_keys` rebound in the
        loop that follows). A draw whose result is only handed to a module's `init` as an example
        input (Flax linen's `init`, Haiku's `Transformed.init`, directly, through a name,
        or as the `xs` a `lax.scan` body hands on) draws nothing that matters: the parameters
        depend on the inputs' shapes, not their values.

        **What is reported here, and not as JAX201, JAX202 or JAX203.** A second use of a key
        whose first (or second) use draws nothing; one key in the `params` slot and another slot
        of a dict of streams (`apply(v, x, rngs={"params": k, "dropout": k})`: the parameters
        stream draws only while parameters are made, when what the other stream draws is not
        kept), or in any two slots of the dict an `init` is given (`init({"params": k, "dropout":
        k, "aqt": k}, x)`, directly, through `jax.eval_shape(m.init, ...)`, or through a name
        handed only to `init`s: `init` keeps the parameters, which are those `k` alone makes, and
        throws away the forward pass the other streams draw for); a Flax run with any other use
        of its key
        (Flax gives each layer the key with a hash of its module path folded in, which no draw,
        split or small `fold_in` of the key itself repeats); the `init`s of two different modules
        with one key where no path is known to be shared: their parameter-drawing layers sit at
        different paths (an actor's `MLP_0` and a double critic's `Critic_0`), or one makes a
        lifted module (`nn.vmap(Critic, ...)`, whose layers Flax names and keys its own way). A
        shared path is JAX201's. Two uses that both draw are the other rules'.

        **Who should turn it on.** Projects whose tests run with
        `jax.config.update("jax_debug_key_reuse", True)`: a split or draw reported here is a
        `KeyReuseError` the checker raises. Flax derives its keys with `fold_in`, which the
        checker does not count as a use, so a Flax run is reported only because the key is used
        twice: a project holding every key to one use wants that too. Select it by its code
        (`extend-select = ["JAX207"]`): `ALL`, `JAX` and `JAX2` do not turn it on.
        """
    limits = (
        "Code it cannot see is taken to draw from the children it is handed: their split is not"
        " reported here.",
        "Two uses that both draw are JAX201's, JAX202's or JAX203's, not this rule's.",
    ) + KeyFlowRule.limits
    why = """
        Nothing repeats: the numbers stay independent. But JAX's key reuse checker cannot tell a
        split whose children are dropped from one whose children are used, and raises
        `KeyReuseError` at the second use; code that is to run under the checker must not use a
        key twice in any way. Split the key once and use each child once, or drop the unused
        split.
        """
    bad = (
        """
        import jax

        def init(key, sizes):
            w_key, b_key = jax.random.split(key)  # children never used
            return jax.random.normal(key, sizes)  # JAX207
        """,
        """
        import jax
        import jax.numpy as jnp

        def setup(key, n):
            key, *worker_keys = jax.random.split(key, n + 1)
            return jnp.stack(worker_keys)

        def run(key, n, evaluate, steps):
            worker_keys = setup(key, n)  # dropped: rebound in the loop before it is read
            for _ in range(steps):
                key, *worker_keys = jax.random.split(key, n + 1)  # JAX207
                evaluate(jnp.stack(worker_keys))
            return key
        """,
        """
        import haiku as hk
        import jax

        def init_params(key, forward, shape):
            example = jax.random.normal(key, shape)  # only an example input
            return hk.transform(forward).init(key, example)  # JAX207
        """,
    )
    good = (
        """
        import jax

        def init(key, sizes):
            w_key, b_key = jax.random.split(key)
            return jax.random.normal(w_key, sizes), jax.random.normal(b_key, sizes[-1:])
        """,
        """
        import haiku as hk
        import jax
        import jax.numpy as jnp

        def init_params(key, forward, shape):
            return hk.transform(forward).init(key, jnp.zeros(shape))
        """,
    )
    demo = JaxDemo(
        """
        import jax

        def demo():
            key = jax.random.key(0)
            w_key, b_key = jax.random.split(key)
            return jax.random.normal(key, (3,))
        """,
        "key-reuse",
    )
    references = ("https://docs.jax.dev/en/latest/jax.random.html#key-reuse-checking",)

    def check(self, module, report):
        for reuse in module.keys.reuses:
            if reuse.dependent:
                continue
            first = reuse.first
            if first is None:
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` is split on every iteration and none of the children is drawn "
                    "from: no numbers repeat, but JAX's key reuse checker raises here; drop the split",
                )
                continue
            if first.kind == "flax" and reuse.use.kind == "flax":
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` was already used by {first.callee} on line {first.call.lineno} "
                    "to initialise another Flax module: Flax folds each layer's path into the key, and no "
                    "layer of the two is known to sit at the same path, so no numbers are shown to repeat, "
                    f"but the key is used twice; split it ({split_text(reuse.name)}) and give each `init` "
                    "its own key",
                )
                continue
            if reuse.use.kind == "slot":
                why = (
                    "`init` keeps only the parameters, and what the streams draw for its forward pass is thrown away"
                    if reuse.use.init else
                    "the `params` stream draws only while parameters are made, when what the other stream draws is not kept"
                )
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` feeds {first.callee} and {reuse.use.callee} of one dict: {why}, so "
                    "no kept number repeats, but the key is used twice; split it and give each stream its own key",
                )
                continue
            if reuse.renewal is not None:
                # This line already splits (or renews) the key: the fix is at the first use.
                name, taken = reuse.name, reuse.renewal
                advice = (
                    f"split it before that use, on line {first.call.lineno} ({split_text(name, taken)}), and "
                    f"use `{child_of(name, taken)}` there, or drop the use that draws nothing"
                )
            else:
                advice = "split the key once and use each child once"
            report(
                reuse.use.node,
                f"PRNG key `{reuse.name}` was already used by {first.callee} on line {first.call.lineno}; one "
                "of the two uses draws no numbers (a split whose children nobody draws from, numbers only "
                "used as example inputs, a Flax run's keys folded from it), so nothing repeats, but the key is "
                f"used twice; {advice}",
            )
