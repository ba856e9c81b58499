"""JAX303: a static argument fed a value that changes on every iteration of a loop."""

from __future__ import annotations

import ast

from jaxlint.analysis.shapes import jit_signature
from jaxlint.analysis.shapes.changing_numbers import changing_number
from jaxlint.analysis.shapes.fresh_objects import fresh_object, made_per_call
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS


@register
class StaticArgumentVariesInLoop(Rule):
    code = "JAX303"
    name = "static-argument-varies-in-loop"
    summary = "A static argument gets a new value on every iteration of a loop: one compile per value"
    what = """
        Checks calls of a jitted function inside a loop that pass a static argument (named in
        `static_argnums`/`static_argnames`) whose value changes from one iteration to the next:
        a loop index, a decaying rate, or an object made anew in the loop and hashed by identity
        (a lambda, a `partial`, an optax transformation). JAX compiles once per distinct static
        value, so every iteration compiles again.
        """
    decisions = """
        **Numbers that change.** A number passed for a static parameter is reported when it is:

        - the loop index of a `range` loop;
        - a value updated in the loop (`t *= 0.7`), or one computed from such a value (`eps =
          0.2 * (1 - epoch / n)`);
        - the length of a list that grows in the loop;
        - a float swept over a list (`for lr in (0.1, 0.01, 0.001)`).

        **Objects made anew and hashed by identity.** A static argument is reported when it is:

        - a lambda or a function defined in the loop;
        - a `functools.partial`;
        - an optax transformation (a tuple of fresh closures);
        - an instance of a class of the module that defines neither `__eq__` nor `__hash__`, or
          of one compared field by field (an Equinox module, a dataclass) whose `__init__`
          stores a function it makes (`self.forward = jax.jit(fn)`, a lambda).

        Under `eqx.filter_jit`, which makes every non-array argument static, such an object is
        reported in any position. Under `nnx.jit`, an `nnx.Optimizer` built in the loop around a
        new optax transformation is reported: the optimizer's structure, transformation
        included, is part of the compilation key.

        Such an object made by the plain function that makes the call, outside any loop of it,
        is reported when the module calls that function in a loop or from more than one place
        (`train()` building its optimizer, called once per run): each call makes a new key.

        **Deliberate, and not reported.**

        - A static argument that takes its values from a fixed collection of other kinds (`for
          loss_fn in (huber, l2)`, `for mode in ("train", "eval")`, `for width in (64, 128)`):
          usually a deliberate choice among a few programs.
        - A static argument that stays the same across iterations.
        - A loop inside jitted code: it unrolls once, while the outer function is traced, and
          later calls reuse that compilation.
        """
    why = """
        JAX compiles a jitted function once per distinct combination of static values. A learning
        rate, temperature or smoothing coefficient that changes every step makes every step a
        new compilation: the loop runs at compile speed, and the compilation cache grows without
        bound. Pass such a value as a traced argument (remove it from `static_argnums`); if it
        sets a shape or a Python loop count, round it to a few buckets. Functions, partials and
        plain objects compare equal only to themselves, so one rebuilt on every iteration (an
        optimizer made per epoch, a loss `partial` made per step) is a new cache key every time:
        build it once, before the loop. `nnx.Optimizer(model, optax.adam(lr))` rebuilt every
        epoch compiles the step again every epoch; build the transformation once (an optax
        schedule for a changing learning rate) and, if needed, a new optimizer around it.
        """
    bad = (
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(2,))
        def smoothed_xent(logits, labels, eps):
            n = logits.shape[-1]
            target = jax.nn.one_hot(labels, n) * (1 - eps) + eps / n
            return -jnp.mean(jnp.sum(target * jax.nn.log_softmax(logits), axis=-1))

        def sweep(logits, labels):
            for epoch in range(6):
                eps = 0.2 * (1 - epoch / 6)
                print(epoch, smoothed_xent(logits, labels, eps))  # JAX303
        """,
        """
        import jax

        def soft_assign(points, centroids, temperature):
            d2 = ((points[:, None] - centroids[None]) ** 2).sum(-1)
            return jax.nn.softmax(-d2 / temperature, axis=-1)

        soft_assign = jax.jit(soft_assign, static_argnames="temperature")

        def anneal(pts, cents):
            t = 1.0
            for _ in range(8):
                resp = soft_assign(pts, cents, temperature=t)  # JAX303
                cents = (resp.T @ pts) / resp.sum(0)[:, None]
                t *= 0.7
            return cents
        """,
        """
        from functools import partial
        import numpy as np
        import jax

        @partial(jax.jit, static_argnames=("lr",))
        def sgd(w, g, lr):
            return w - lr * g

        def sweep_loop(w, g):
            for lr in (0.1, 0.03, 0.01):
                w = sgd(w, g, lr)  # JAX303
            return w

        def log_sweep(w, g):
            for i, lr in enumerate(np.logspace(-3, -1, 5)):
                w = sgd(w, g, lr=lr)  # JAX303
            return w
        """,
        """
        from functools import partial
        import jax
        import optax

        @partial(jax.jit, static_argnames=("optimizer", "loss_fn"))
        def update(params, opt_state, batch, optimizer, loss_fn):
            grads = jax.grad(loss_fn)(params, batch)
            updates, opt_state = optimizer.update(grads, opt_state)
            return optax.apply_updates(params, updates), opt_state

        def fit(params, batches, epochs):
            for epoch in range(epochs):
                optimizer = optax.adam(1e-3 / (epoch + 1))
                opt_state = optimizer.init(params)
                for batch in batches:
                    params, opt_state = update(
                        params, opt_state, batch,
                        optimizer,  # JAX303
                        lambda p, b: ((p - b) ** 2).sum(),  # JAX303
                    )
            return params
        """,
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("step",))
        def warmup(params, step):
            return params * min(1.0, step / 100)

        def train(params, n):
            for i in range(n):
                params = warmup(params, step=i)  # JAX303
            return params
        """,
        """
        import optax
        from flax import nnx

        @nnx.jit
        def train_step(model, optimizer, x, y):
            grads = nnx.grad(lambda m: ((m(x) - y) ** 2).mean())(model)
            optimizer.update(model, grads)

        def fit(model, epochs, lr):
            for epoch, batches in enumerate(epochs):
                optimizer = nnx.Optimizer(model, optax.adam(lr * 0.9 ** epoch), wrt=nnx.Param)
                for x, y in batches:
                    train_step(model, optimizer, x, y)  # JAX303
        """,
        """
        from functools import partial
        import jax
        import optax

        @partial(jax.jit, static_argnames=("optimizer",))
        def update(params, opt_state, grads, optimizer):
            updates, opt_state = optimizer.update(grads, opt_state)
            return optax.apply_updates(params, updates), opt_state

        def train(params, grads):
            optimizer = optax.adam(1e-3)
            opt_state = optimizer.init(params)
            for g in grads:
                params, opt_state = update(params, opt_state, g, optimizer)  # JAX303
            return params

        def restarts(params, grads):
            return [train(params, grads) for seed in range(5)]
        """,
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class Model(eqx.Module):
            w: jax.Array
            activation: object

            def __init__(self, fn):
                self.w = jnp.ones(3)
                self.activation = jax.jit(fn)

            def __call__(self, x):
                return self.activation(self.w * x)

        @eqx.filter_jit
        def step(model, x):
            return model(x)

        def restarts(x):
            for seed in range(3):
                model = Model(jnp.tanh)
                step(model, x)  # JAX303
        """,
    )
    good = (
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("k",))
        def shift(x, k):
            return jnp.roll(x, k)

        @jax.jit
        def total(x):  # traced once: the four shifts compile with it, not on every call
            acc = jnp.zeros_like(x)
            for k in range(4):
                acc = acc + shift(x, k)
            return acc
        """,
        """
        import jax
        import jax.numpy as jnp

        def huber(r):
            return jnp.where(jnp.abs(r) < 1, 0.5 * r ** 2, jnp.abs(r) - 0.5)

        def l2(r):
            return 0.5 * r ** 2

        def fit_step(w, x, y, loss_fn):
            return w - 0.1 * jax.grad(lambda w: jnp.mean(loss_fn(x @ w - y)))(w)

        fit_step = jax.jit(fit_step, static_argnums=3)

        def fit(w, x, y):
            for loss_fn in (huber, l2, huber, l2):
                w = fit_step(w, x, y, loss_fn)
            return w
        """,
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("n_steps", "method"))
        def integrate(y0, dt, n_steps=10, method="rk2"):
            y = y0
            for _ in range(n_steps):
                y = y - dt * 0.5 * y if method == "euler" else y - dt * 0.5 * (y - dt * 0.25 * y)
            return y

        def run():
            for dt in (0.1, 0.05, 0.01, 0.2):
                y = integrate(jnp.ones(2), dt, n_steps=20)
            return y

        @jax.jit
        def scaled(x, lr):
            return x * lr

        def anneal(x):
            lr = 1.0
            for _ in range(10):
                x = scaled(x, lr)
                lr *= 0.9
            return x
        """,
        """
        import optax
        from flax import nnx

        @nnx.jit
        def train_step(model, optimizer, x, y):
            grads = nnx.grad(lambda m: ((m(x) - y) ** 2).mean())(model)
            optimizer.update(model, grads)

        def fit(model, epochs, lr):
            schedule = optax.exponential_decay(lr, transition_steps=100, decay_rate=0.9)
            optimizer = nnx.Optimizer(model, optax.adam(schedule), wrt=nnx.Param)  # built once
            for batches in epochs:
                for x, y in batches:
                    train_step(model, optimizer, x, y)
        """,
        """
        from functools import partial
        import jax
        import optax

        @partial(jax.jit, static_argnames=("optimizer",))
        def update(params, opt_state, grads, optimizer):
            updates, opt_state = optimizer.update(grads, opt_state)
            return optax.apply_updates(params, updates), opt_state

        def train(params, grads, optimizer):  # one optimizer, made by the caller
            opt_state = optimizer.init(params)
            for g in grads:
                params, opt_state = update(params, opt_state, g, optimizer)
            return params

        def main(params, grads):  # called once: one optimizer, one compilation
            optimizer = optax.adam(1e-3)
            return update(params, optimizer.init(params), grads, optimizer)

        def restarts(params, grads):
            optimizer = optax.adam(1e-3)
            return [train(params, grads, optimizer) for seed in range(5)]
        """,
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class Model(eqx.Module):
            w: jax.Array
            activation: object

            def __init__(self, fn):
                self.w = jnp.ones(3)
                self.activation = fn  # the caller's function: equal in every instance

            def __call__(self, x):
                return self.activation(self.w * x)

        @eqx.filter_jit
        def step(model, x):
            return model(x)

        def restarts(x):
            for seed in range(3):
                model = Model(jnp.tanh)
                step(model, x)
        """,
    )
    demo = JaxDemo(
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        traces = 0

        @partial(jax.jit, static_argnums=(1,))
        def scale(x, eps):
            global traces
            traces += 1
            return x * (1 - eps)

        def demo():
            for epoch in range(4):
                scale(jnp.ones(3), 0.2 * (1 - epoch / 4))
            return traces
        """,
        "recompiles",
    )
    references = ("https://docs.jax.dev/en/latest/_autosummary/jax.jit.html",)

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "Values taken from a fixed collection of other kinds (`for mode in (\"train\", \"eval\")`) are a"
        " deliberate choice: not reported.",
        "A loop inside jitted code is not reported: it unrolls once, while the outer function is"
        " traced.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        plain = {id(root) for root in jit_signature.plain_jits(module)}
        for site in module.call_sites:
            if module.runs_staged(site.function):
                continue  # a loop in staged code runs once per trace of its function, not per call
            if id(site.target) not in plain:
                self._static_by_filtering(module, site, report)
                continue
            root = site.target
            static = jit_signature.designated(root, "static")
            for name in static:
                arg = site.argument(name)
                if arg is None:
                    continue
                for loop in reversed(site.loops):
                    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                        continue
                    fresh = fresh_object(arg, loop, module)
                    why = fresh or (module.varies_in_loop(arg, loop) and changing_number(arg, loop, module))
                    if why:
                        # An object made anew cannot be rounded: the fix is to make it once.
                        remedy = (
                            "build it once, outside the loop (or pass what changes as a traced argument)"
                            if fresh
                            else f"pass it as a traced argument (drop it from `{static[name].option}`), "
                            "or, if it must stay static, round it to a few values"
                        )
                        report(
                            arg,
                            f"static argument `{name}` of {jit_signature.function_label(root.node)} is {why}: "
                            f"every iteration of the loop on line {loop.lineno} compiles it again; {remedy}",
                        )
                        break
                else:
                    per_call = made_per_call(arg, site, module)
                    if per_call:
                        report(
                            arg,
                            f"static argument `{name}` of {jit_signature.function_label(root.node)} is {per_call}: "
                            "every call compiles it again; build it once, outside, and pass it in",
                        )


    @staticmethod
    def _static_by_filtering(module, site, report) -> None:
        """`eqx.filter_jit` makes every non-array argument static, `nnx.jit` the structure of
        every NNX object: a function, optax transformation or plain object made anew on every
        iteration, or an `nnx.Optimizer` around one, is a new cache key every time."""
        transform = next((t.name for t in site.target.transforms if t.name in _FILTERING), None)
        if transform is None:
            return
        label = ".".join(transform.split(".")[-2:])
        arguments = [*site.call.args, *(k.value for k in site.call.keywords)]
        for arg in arguments:
            if isinstance(arg, ast.Starred):
                continue
            for loop in reversed(site.loops):
                if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                    continue
                why = fresh_object(arg, loop, module)
                if transform == "flax.nnx.jit" and why and "`nnx.Optimizer`" not in why:
                    why = None  # `nnx.jit` traces other leaves: only an NNX object's structure is static
                if why:
                    report(
                        arg,
                        f"{jit_signature.function_label(site.target.node)} is passed {why}; `{label}` makes it part of the compilation key (static, compared by identity): "
                        f"every iteration of the loop on line {loop.lineno} compiles again; build it once, "
                        "outside the loop",
                    )
                    break
            else:
                per_call = made_per_call(arg, site, module)
                if per_call and (transform != "flax.nnx.jit" or "`nnx.Optimizer`" in per_call):
                    report(
                        arg,
                        f"{jit_signature.function_label(site.target.node)} is passed {per_call}; `{label}` makes "
                        "it part of the compilation key (static, compared by identity): every call compiles "
                        "again; build it once, outside, and pass it in",
                    )


# Transformations that make non-array arguments (or NNX graph structure) static.
_FILTERING = frozenset({"equinox.filter_jit", "equinox.filter_pmap", "flax.nnx.jit"})
