"""JAX202: the parent key used again after `jax.random.split(key)` without rebinding it."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, register
from jaxlint.rules.randomness import KeyFlowRule, path_of, split_text


@register
class KeyUsedAfterSplit(KeyFlowRule):
    code = "JAX202"
    name = "key-used-after-split"
    summary = "A PRNG key is used again after it was split, without being rebound"
    what = """
        Checks for a key that is used again after `jax.random.split` consumed it, when the
        split's result was not assigned back to the same name: `k1, k2 = split(key)` followed by
        `normal(key)` or a second `split(key)`. Drawing from the parent repeats bits its
        children were made from, so the "independent" streams are not. Rebind the parent in the
        same statement: `key, sub = jax.random.split(key)`.
        """
    decisions = """
        - A key put in a dict of named streams after the split (`rngs = {"dropout": rng}`, then
          `module.init(rngs, x)`), or read by a nested function defined after it (a `loss_fn`
          run through `grad_fn = jax.value_and_grad(loss_fn)`), is reported where it is written;
          one put there before the split is used where the dict is handed on or the function
          called, and is reported there.
        - Deriving a key from the split parent with `jax.random.fold_in(key, i)` is reported as
          well: in JAX (with its default `jax_threefry_partitionable`), `fold_in(key, i)` is the
          same key as `split(key, n)[i]`, so it repeats one of the children. It is not reported
          when both are literals and `i` is `n` or more, nor when `i` is written as the split's
          own count (`fold_in(key, n)` is child `n`, one past the last).
        - A key split in one branch of an `if` (or in a later operand of `and` / `or`) and used
          again after the branches meet is reported: it is reused on the path that split it,
          unless the later use sits under a condition that tests one of the same names, or
          follows an `if` on one of them whose other arm returns, raises or leaves the loop.
        - A split key handed to a function of the project that draws from it on some of its
          paths (`if dim == 1: return x` before the draw) is reported too: after a split the
          parent is spent, and on the paths that draw, it repeats the children.
        - A function returning, on every path, a key it split without rebinding (`k1, k2 =
          split(key)`, then `return key`) is reported at the return: the caller's next split or
          draw repeats the children. A key put in the returned value first (`ts =
          ts.replace(rng=rng)`, kept by copies that change other fields) and split after is
          reported at the split: `split(rng, n)` where the other child was meant.
        - A split draws through its children: one whose children nobody draws from (overwritten,
          deleted, or handed only to functions that keep or discard them: a data loader that
          `del`s its key, a manager that stores one it never uses) leaves nothing to repeat, and
          using the parent after it is JAX207's (off by default; JAX's checker still raises). So
          is a split whose children a function hands back to a caller that drops them.
        - Which values are keys, and what consumes one, is decided as for JAX201.
        """
    limits = (
        "A split whose children nobody draws from leaves nothing to repeat: the parent's later use"
        " is JAX207's.",
        "A later use under a condition testing one of the same names as the split's branch is not"
        " reported.",
    ) + KeyFlowRule.limits
    why = """
        `split` consumes its argument: the new keys are derived from its bits, and JAX's
        guarantee that draws are independent holds only for keys used once, so drawing from the
        parent afterwards uses up bits the children were made from. JAX's key reuse checker
        raises `KeyReuseError` at the second use (a `fold_in` it does not count as a use; there
        the evidence is the repeated key itself: with JAX's default `jax_threefry_partitionable`,
        `fold_in(key, i)` equals `split(key, n)[i]`). Rebind the parent in the same statement,
        `key, sub = jax.random.split(key)`, and carry `key` forward.
        """
    bad = (
        """
        import jax

        def init_mlp(key, sizes):
            w_key, b_key = jax.random.split(key)
            w = jax.random.normal(w_key, sizes)
            b = jax.random.normal(b_key, sizes[-1:])
            head = jax.random.normal(key, (sizes[-1], 1))  # JAX202
            return w, b, head
        """,
        """
        import jax

        @jax.jit
        def two_batches(key):
            keys_a = jax.random.split(key, 4)
            keys_b = jax.random.split(key, 4)  # JAX202
            return keys_a, keys_b
        """,
        """
        import jax

        def host_keys(seed, process_id):
            key = jax.random.key(seed)
            params_key, data_key = jax.random.split(key)
            local_key = jax.random.fold_in(key, process_id)  # JAX202
            return params_key, data_key, local_key
        """,
        """
        import jax

        def init_layer(key, d_in, d_out):
            w_key, b_key = jax.random.split(key)
            w = jax.random.normal(w_key, (d_in, d_out))
            b = jax.random.normal(b_key, (d_out,))
            key, sub = jax.random.split(key)  # JAX202
            scale = jax.random.uniform(sub, ())
            return (w * scale, b), key
        """,
    )
    good = (
        """
        import jax

        def init_mlp(key, sizes):
            key, w_key, b_key = jax.random.split(key, 3)
            w = jax.random.normal(w_key, sizes)
            b = jax.random.normal(b_key, sizes[-1:])
            head = jax.random.normal(key, (sizes[-1], 1))
            return w, b, head
        """,
        """
        import jax

        def init_encoder(key, sizes):
            key, *layer_keys = jax.random.split(key, len(sizes))
            params = [jax.random.normal(k, (n, n)) for k, n in zip(layer_keys, sizes)]
            head = jax.random.normal(key, (sizes[-1], 1))
            return params, head
        """,
        """
        import jax

        def ensemble(key, n):
            keys = jax.random.split(key, n)
            first = jax.random.normal(keys[0], (3,))
            rest = [jax.random.normal(keys[i], (3,)) for i in range(1, n)]
            return first, rest
        """,
    )
    demo = JaxDemo(
        """
        import jax

        def demo():
            key = jax.random.key(0)
            w_key, b_key = jax.random.split(key)
            w = jax.random.normal(w_key, (4, 2))
            head = jax.random.normal(key, (2, 1))
            return w, head
        """,
        "key-reuse",
    )
    references = ("https://docs.jax.dev/en/latest/random-numbers.html",)

    def check(self, module, report):
        for reuse in module.keys.reuses:
            if reuse.loop is not None or reuse.first is None or reuse.first.kind != "split" or not reuse.dependent:
                continue
            if reuse.use.kind == "fold_in":
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` was split on line {reuse.first.call.lineno}; `jax.random.fold_in` "
                    "on it gives the same key as one of the split's children (`fold_in(key, i)` is "
                    "`split(key, n)[i]`); fold in from one of the new keys instead",
                )
                continue
            if reuse.use.kind == "held":
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` is split here after it was put in the value returned (line "
                    f"{reuse.use.put.lineno}): the caller's next split or draw from it repeats the children; "
                    "split one of the new keys here",
                )
                continue
            if reuse.use.kind == "return":
                report(
                    reuse.use.node,
                    f"PRNG key `{reuse.name}` was split on line {reuse.first.call.lineno} and is returned: the "
                    "caller's next split or draw from it repeats the children; return one of the new keys "
                    f"({split_text(reuse.name)})",
                )
                continue
            when = f" {path_of(module.tree, reuse.guard, reuse.first.call)}" if reuse.guard is not None else ""
            if reuse.renewal is not None:
                # This line already splits (or renews) the key: the rebinding belongs to the first split.
                advice = (
                    f"rebind it in that split, on line {reuse.first.call.lineno} (give it one more child, bound "
                    f"to `{reuse.name}`), and use the new key here"
                )
            else:
                advice = f"rebind it when splitting ({split_text(reuse.name)}) and use the new key"
            report(
                reuse.use.node,
                f"PRNG key `{reuse.name}` was split on line {reuse.first.call.lineno}{when} and is used again "
                f"here; {advice}",
            )
