"""JAX501: a jitted function called in a loop with an argument whose shape changes every iteration."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.recompilation import RECOMPILATION_LIMITATIONS, RECOMPILATION_LIMITS


@register
class UnbucketedShapes(Rule):
    code = "JAX501"
    name = "unbucketed-shapes"
    summary = "A jitted function is called in a loop with an argument whose shape changes every iteration"
    what = """
        Checks for calls of a jit-compiled function inside a loop where a traced argument's
        shape changes from one iteration to the next: an array that grows, a slice whose size
        follows the loop, a mask-filtered array. `jax.jit` compiles once per input shape, so
        every iteration traces and compiles again. Pad inputs to a few bucket sizes and pass a
        mask.
        """
    decisions = """
        **Shapes that change with the loop.**

        - An array that grows by concatenation (`tokens = jnp.concatenate([tokens, nxt])`).
        - An array built from a list the loop appends to (`jnp.array(buffer)`).
        - A slice whose size depends on the loop (`series[:t]`, `x[start:start + n]`).
        - A new array whose size follows the loop (`jnp.arange(t)`, `jnp.zeros((t, d))`, a NumPy
          draw sized by it: `jnp.asarray(rng.normal(size=t))`).
        - An array the loop trims (`x = x[1:]`).
        - The elements of a list of arrays of different sizes.
        - An array filtered by a boolean mask that changes with the loop (`x[x > t]`).
        - A slice whose bound is computed from changing data (`x[:int(valid.sum())]`).
        - An array built from a list comprehension whose `if` changes with the loop
          (`jnp.array([r for r in rows if r.user == u])`).
        - A Python list the loop appends to, passed as it is: each new length is a new pytree
          structure.
        - A size drawn at random in the loop (`size = int(rng.integers(16, 64))`,
          `np.random.randint`, `random.randint`): it changes every iteration.
        - A size taken from data, one element per iteration (`for n in sizes_array`, also
          through `int(n)`); a loop over sizes written out in the code (`for n in (8, 16, 32)`,
          through `enumerate` or a name bound once to such a tuple) is a deliberate sweep.
        - The groups of a mapping filled by length (`groups[len(s)].append(s)`,
          `groups.setdefault(x.shape, []).append(x)`), met through `.items()` or `.values()`:
          each group has one length, so each is a new shape.

        **Through a data loader.** A loop over a generator of the module or of another module of
        the project (`for xb, yb in batches(x, y, rng)`) receives what its `yield` hands out:
        when the yielded value, inside one of the generator's own loops, is one of the above for
        that loop (a slice of random size, a filtered chunk), so is each element. A loader whose
        sizes the code does not show (an object, another library's loader) is not reported.

        **Through a helper.** A plain function of the module that hands its own parameter to
        the jitted call, as it is or through shape-keeping steps (`def inference(frames):
        frames = frames.astype(np.float32) / 255; return model_apply(params, frames)`), called
        in such a loop with such an argument, is reported where it is called.

        **Jits of what jaxlint does not see into.** A name bound once to `jax.jit(model.apply)`
        (or another jit of a callable that is not a function of the module) traces every
        argument its literal `static_argnums`/`static_argnames` do not name, so each of them
        keys the cache by its shape.

        **`xs += value`** adds elements only to a sequence: it counts as growth when the added
        value is a list or tuple (`xs += [x]`) or the name is bound to one (`xs = []`,
        `list(...)`, a comprehension). On a number (`i = 0 ... i += n`) it is `i = i + n`, a new
        value of the same shape.

        **Not reported.**

        - Fixed-size batches (`x[i:i + bs]`, even with a partial last batch: two shapes) and
          padded inputs. A bound the loop names is read through what it is bound to (`start =
          i * bs`, `end = (i + 1) * bs`, then `x[start:end]`), where nothing it reads is bound
          again in between.
        - The phases of a fixed stride (`x[c::n]`, `x[c:len(x):n]` for each `c`): their length
          is `ceil((len(x) - c) / n)`, one length for the `n` phases when `n` divides `len(x)`
          and two otherwise. A slice is reported when its extent follows the loop (`x[:t]`,
          `x[:t:2]`, `x[s:s + n_t]`), not when only the start of a stride moves; so `x[t::2]`
          with `t` growing past the step is missed.
        """
    why = """
        `jax.jit` compiles once per input shape and dtype. An argument with a new shape on every
        iteration means a new trace and a new XLA compilation on every iteration, which is
        usually far slower than the computation itself, and the cache grows without bound. Pad
        inputs to a few bucket sizes (powers of two, or a fixed maximum length) and pass a mask
        for the valid part. A boolean-mask filter or a data-dependent count gives a new length
        for almost every input: keep the full array and pass the mask (`jnp.where(mask, x, 0)`,
        `where=` arguments of reductions).
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def next_logits(tokens):
            return jax.nn.one_hot(tokens, 6).sum(axis=0)

        def generate(prompt, steps):
            tokens = jnp.array(prompt)
            for _ in range(steps):
                nxt = jnp.argmax(next_logits(tokens))  # JAX501
                tokens = jnp.concatenate([tokens, nxt[None]])
            return tokens
        """,
        """
        import numpy as np
        import jax
        import jax.numpy as jnp

        @jax.jit
        def eval_batch(w, x, y):
            return jnp.mean((x @ w - y) ** 2)

        def evaluate(w, x_all, y_all, sizes):
            start, losses = 0, []
            for n in sizes:
                xb, yb = x_all[start:start + n], y_all[start:start + n]
                losses.append(eval_batch(w, xb, yb))  # JAX501
                start += n
            return losses
        """,
        """
        import numpy as np
        from jax import jit

        @jit
        def centroid(points):
            return points.mean(axis=0)

        def features():
            rng = np.random.default_rng(1)
            clouds = [rng.normal(size=(n, 3)) for n in (120, 87, 143)]
            out = []
            for cloud in clouds:
                out.append(centroid(cloud))  # JAX501
            return out, [centroid(c) for c in clouds]  # JAX501
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def mean_energy(x):
            return jnp.mean(x ** 2)

        def sweep(x, thresholds):
            return [mean_energy(x[x > t]) for t in thresholds]  # JAX501

        def per_user(events, users):
            for u in users:
                rows = [e.value for e in events if e.user == u]
                mean_energy(jnp.array(rows))  # JAX501
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        MAX_LEN = 16

        @jax.jit
        def next_logits(tokens, length):
            mask = jnp.arange(MAX_LEN) < length
            return (jax.nn.one_hot(tokens, 6) * mask[:, None]).sum(axis=0)

        def generate(prompt, steps):
            tokens = jnp.zeros(MAX_LEN, jnp.int32).at[: len(prompt)].set(jnp.array(prompt))
            for t in range(len(prompt), len(prompt) + steps):
                nxt = jnp.argmax(next_logits(tokens, t))
                tokens = tokens.at[t].set(nxt)
            return tokens
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(w, xb, yb):
            g = jax.grad(lambda w: jnp.mean((xb @ w - yb) ** 2))(w)
            return w - 0.05 * g

        def epoch(w, x, y, bs=16):
            for i in range(0, x.shape[0], bs):
                w = train_step(w, x[i:i + bs], y[i:i + bs])  # a partial last batch: two shapes
            for k in range(x.shape[0] // bs):
                w = train_step(w, x[k * bs:(k + 1) * bs], y[k * bs:(k + 1) * bs])
            return w
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def mean_energy(x, mask):
            return jnp.sum(jnp.where(mask, x ** 2, 0.0)) / jnp.maximum(mask.sum(), 1)

        def sweep(x, thresholds):
            return [mean_energy(x, x > t) for t in thresholds]  # one shape: the mask is an argument
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        traces = 0

        @jax.jit
        def next_logits(tokens):
            global traces
            traces += 1
            return jax.nn.one_hot(tokens, 6).sum(axis=0)

        def demo():
            tokens = jnp.array([1, 2])
            for _ in range(4):
                nxt = jnp.argmax(next_logits(tokens))
                tokens = jnp.concatenate([tokens, nxt[None]])
            return traces
        """,
        "recompiles",
    )
    references = ("https://docs.jax.dev/en/latest/jit-compilation.html",)

    limitations = RECOMPILATION_LIMITATIONS
    limits = (
        "Fixed-size batches (a partial last batch included), padded inputs and the phases of a fixed"
        " stride are not reported.",
        "A sweep over sizes written out in the code (`for n in (8, 16, 32)`) is deliberate: not"
        " reported.",
        "A slice is reported when its extent follows the loop, not when only a stride's start moves:"
        " `x[t::2]` is missed.",
    ) + RECOMPILATION_LIMITS

    def check(self, module, report):
        shapes = module.shapes
        for site in shapes.jit_calls():
            for _, arg in site.arguments:
                label = ast.unparse(arg)
                reason = _varying(shapes, arg, site.loops)
                if reason is not None:
                    report(
                        site.call,
                        f"`{site.name}` is called in a loop with `{label}`, which {reason}: every new shape "
                        "compiles again; pad it to a few bucket sizes (with a mask for the valid part)",
                    )
                    break
                # A plain function of the module whose parameter has the argument's shape
                # (`def inference(frames): return model_apply(frames / 255, key)`), called in a loop.
                for call, passed, helper in shapes.forwarded(site, arg):
                    reason = _varying(shapes, passed, module.loops_around(call))
                    if reason is not None:
                        report(
                            call,
                            f"`{helper.name}` passes `{label}` to the jitted `{site.name}` (line {site.call.lineno}) "
                            f"and is called in a loop with `{ast.unparse(passed)}`, which {reason}: every new "
                            "shape compiles again; pad it to a few bucket sizes (with a mask for the valid part)",
                        )


def _varying(shapes, arg, loops) -> str | None:
    """Why `arg`'s shape changes from one iteration of one of these loops to the next, innermost first."""
    for loop in reversed(loops):
        reason = shapes.varying(arg, loop)
        if reason is not None:
            return reason
    return None
