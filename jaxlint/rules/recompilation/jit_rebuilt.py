"""JAX502: `jax.jit` applied to a new function object on every call or iteration, then invoked."""

from __future__ import annotations

from jaxlint.analysis.knowledge.shape_api import EAGER_COMPILED_LOOPS
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.recompilation import RECOMPILATION_LIMITATIONS, RECOMPILATION_LIMITS


@register
class JitRebuilt(Rule):
    code = "JAX502"
    name = "jit-rebuilt"
    summary = "A jitted function is rebuilt for every call: each one starts with an empty cache"
    what = """
        Checks for `jax.jit` applied to a new function object each time it is called:
        `jax.jit(lambda x: ...)(x)`, a jitted closure made in a function called in a loop, a
        `jax.jit(self.method)` stored by a class that is instantiated again and again; and for
        `lax.scan`, `fori_loop`, `while_loop` or `map` run outside any jit over a body made anew
        on each call. JAX caches compilations per function object, so each new one traces and
        compiles again, which often costs far more than running it. Build the jitted function
        (or the loop's body) once.
        """
    decisions = """
        **Builds that are new every time, and then invoked.** `jax.jit` (and `jax.pmap`,
        `eqx.filter_jit`, `nnx.jit`) applied to:

        - a new function object called on the spot: `jax.jit(lambda x: ...)(x)`,
          `jax.jit(partial(f, c))`, `jax.jit(jax.vmap(f))`, `jax.jit(jax.grad(loss))`,
          `jax.jit(self.method)` inside a loop;
        - a `@jax.jit`-decorated closure, or a local `step = jax.jit(...)`, in a function that
          is called in a loop and calls it itself;
        - a jitted function stored on `self` in `__init__` (`self.step = jax.jit(self._step)`)
          of a class that is instantiated again and again;
        - any `f`, with `nnx.jit(f)` applied in a loop: `nnx.jit` wraps `f` in a new object each
          time.

        Calling it through a transformation applied on the spot (`eqx.filter_grad(loss_fn)(m,
        x)`, `jax.grad(step)(w)`) calls it all the same. A build in a loop stays new for the
        calls in the loops nested in that one (`for epoch ...: step = jax.jit(closure)`, then
        `for batch ...: step(batch)`: one compilation per epoch).

        **`lax` loops outside a trace.** Run eagerly, `lax.scan`, `fori_loop`, `while_loop` and
        `map` compile the loop for the function they are given and cache it per function
        object, as a jit does: a body defined in a function called again and again (a closure,
        a lambda, a `partial`, a bound method) compiles the loop on every call. Inside a trace
        the loop is part of the caller's program and is not reported.

        **Called again and again.** In a loop or a comprehension, or in a function that is
        itself called so (a few levels up), by its name, as a method of `self`, as a method
        of an instance of its class or of a subclass that inherits it, or through a parameter
        it is handed to (`train(state, eval_fn=evaluate)`, where `train` calls `eval_fn(...)`
        in its loop and never rebinds it). The repeating call must
        be in code that runs eagerly: not in a traced function, nor one the module hands to JAX
        or uses as a value in traced code, nor a method of a class whose base comes from another
        module (a framework module's methods run traced), nor one under an unknown decorator.

        **Across modules.** A function of one project module that builds one of the above on
        each of its calls (and does not keep it), called again and again in another module, is
        reported at its build, as it is when the loop is in its own module: the loop's module
        hands the repeating call to the function's module, so the finding does not move when a
        helper does. A check of either file alone shows it: the function's module is checked
        with the modules that import it, and the loop's module reports what its calls cause in
        the modules they enter.

        **Not reported.**

        - A jitted function that is returned, stored or passed on, or built in one loop and
          called in a later one; factories that return the jitted function, or a closure that
          calls it (a thread's target, a rollout function): built once per call of the factory
          (at start-up, once per thread), and kept by what it hands out.
        - A build once per pass: a function that builds and calls a jit once, outside its loops,
          and on each call runs a loop of its own over jitted work (a jitted function of the
          module, or a step its caller hands in): one compilation per pass over the data (an
          evaluation round), as a jit built per call and then called in a loop is.
        - Re-wrapping the same module-level function, `jax.jit(f)(x)`: it hits JAX's cache.
        - A build that is a different function each time: when what is jitted depends on the
          target of a `for` loop over distinct values written out in the code (`for scheme in
          ("euler", "rk4")`, `for method in [Euler, RK4]`, a name bound once to such a tuple, or
          to such a list that the code only extends with `+=` of more of them: `dtypes +=
          [jnp.float64]`), or over a mapping's entries (`for name, cfg in datasets.items()`,
          `.keys()`: its keys differ), directly (`make_step(scheme)`), through a value the loop makes from
          it (`replace(cfg, smoothed=flag)`) or as a closure, each value picks its own function
          and compiles once, which no rewrite avoids. So does a helper whose build depends on a
          parameter that every repeated call passes such a target.

        A loop over anything else (a parameter, a `range`, values computed at run time: data, or
        a configuration met twice), a build that does not read the target (`partial(f, cfg)` per
        epoch), or a loop around it, may all build the same function again, and are reported.
        """
    why = """
        JAX caches compilations per function object. A new lambda, closure, `functools.partial`,
        bound method or `jax.vmap(...)`/`jax.grad(...)` result is a new function object, so
        every iteration or call traces and compiles again, which often costs far more than
        running the function. Build the jitted function once (at module level, or once outside
        the loop) and pass changing values as arguments; or memoise the factory
        (`functools.lru_cache`, a dict). A jitted bound method or lambda stored on an instance
        lives as long as the instance: a trainer or evaluator built per epoch or per call
        compiles again each time.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        def compute_metrics(logits, labels):
            @jax.jit  # JAX502
            def _metrics(logits, labels):
                return jnp.mean(jnp.argmax(logits, -1) == labels)

            return _metrics(logits, labels)

        def evaluate(batches):
            return [compute_metrics(x, y) for x, y in batches] + [
                compute_metrics(x, y) for x, y in batches
            ]

        def main(batches):
            for epoch in range(10):
                compute_metrics(*batches[epoch])
        """,
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        def loss(w, x, scale):
            return scale * jnp.sum((x @ w) ** 2)

        def sweep(w, x, scales):
            out = []
            for scale in scales:
                out.append(jax.jit(partial(loss, scale=scale))(w, x))  # JAX502
                out.append(jax.jit(jax.grad(loss))(w, x, scale))  # JAX502
                out.append(jax.jit(lambda w: loss(w, x, 2.0))(w))  # JAX502
            return out
        """,
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class Trainer:
            def __init__(self, lr):
                self.lr = lr
                self.step = jax.jit(self._step)  # JAX502

            def _step(self, w, x):
                return w - self.lr * jax.grad(lambda w: jnp.sum((x @ w) ** 2))(w)

        def evaluate(model, x):
            @eqx.filter_jit  # JAX502
            def predict(model, x):
                return model(x)

            return predict(model, x)

        def fit(w, model, epochs):
            for batches in epochs:
                trainer = Trainer(0.1)
                for x in batches:
                    w = trainer.step(w, x)
                evaluate(model, batches[0])
            return w
        """,
        """
        import jax.numpy as jnp
        from jax import lax

        class Generator:
            def __init__(self, w):
                self.w = w

            def generate(self, x, steps):
                def step(h, _):
                    h = jnp.tanh(h @ self.w)
                    return h, h

                return lax.scan(step, x, None, length=steps)  # JAX502

        class Sampler(Generator):
            pass

        def sample(w, prompts):
            sampler = Sampler(w)
            return [sampler.generate(p, 8) for p in prompts]
        """,
    )
    good = (
        """
        import functools

        import jax
        import jax.numpy as jnp

        def score(w, x):
            return jnp.tanh(x @ w).sum()

        def evaluate_checkpoints(checkpoints, x):
            # the same module-level function each time: jax.jit hits its cache
            return [float(jax.jit(score)(ckpt, x)) for ckpt in checkpoints]

        @functools.lru_cache(maxsize=None)
        def make_step(lr):
            @jax.jit
            def step(w, g):
                return w - lr * g
            return step

        def train(w, grads):
            for g in grads:
                w = make_step(0.1)(w, g)
            return w
        """,
        """
        import jax

        def make_predict(model):
            predict = jax.jit(lambda x: model(x))
            return predict  # a factory: built once by its caller

        def run(model, xs):
            predict = jax.jit(lambda x: model(x))
            return [predict(x) for x in xs]  # built once, called many times
        """,
        """
        import jax

        def make_step(scheme):
            if scheme == "euler":
                return lambda x: x + 0.1 * x
            return lambda x: x + 0.1 * (x + 0.05 * x)

        def compare(x):
            # a different function per scheme: each compiles once, however it is built
            return {scheme: jax.jit(make_step(scheme))(x) for scheme in ("euler", "midpoint")}
        """,
        """
        import jax
        import jax.numpy as jnp

        class Trainer:
            def __init__(self, lr):
                self.lr = lr
                self.step = jax.jit(self._step)

            def _step(self, w, x):
                return w - self.lr * jax.grad(lambda w: jnp.sum((x @ w) ** 2))(w)

        def fit(w, epochs):
            trainer = Trainer(0.1)  # one instance: one cache for every epoch
            for batches in epochs:
                for x in batches:
                    w = trainer.step(w, x)
            return w
        """,
        """
        import threading

        import jax
        import jax.numpy as jnp

        def make_actor(params):
            @jax.jit
            def act(obs):
                return jnp.tanh(obs @ params)

            def run(observations):
                return [act(o) for o in observations]

            return run  # the jitted `act` lives on in `run`: one compilation per actor

        def start(params, streams):
            for stream in streams:
                threading.Thread(target=make_actor(params), args=(stream,)).start()
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def eval_step(w, x):
            return jnp.mean(jnp.tanh(x @ w))

        def evaluate(w, batches):
            scores = [eval_step(w, x) for x in batches]  # the pass over the data
            gathered = jax.jit(lambda s: jnp.stack(s))(scores)  # once per pass
            return gathered.mean()

        def train(w, batches, rounds):
            return [evaluate(w, batches) for _ in range(rounds)]
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        traces = 0

        def compute_metrics(logits, labels):
            @jax.jit
            def _metrics(logits, labels):
                global traces
                traces += 1
                return jnp.mean(jnp.argmax(logits, -1) == labels)

            return _metrics(logits, labels)

        def demo():
            logits, labels = jnp.ones((3, 2)), jnp.zeros(3, jnp.int32)
            for _ in range(3):
                compute_metrics(logits, labels)  # same shapes every time
            return traces
        """,
        "recompiles",
    )
    references = ("https://docs.jax.dev/en/latest/jit-compilation.html#caching",)

    limitations = RECOMPILATION_LIMITATIONS
    limits = (
        "A jitted function returned, stored or passed on, or built in one loop and called in a later"
        " one, is not reported.",
        "Re-wrapping the same module-level function (`jax.jit(f)(x)`) hits JAX's cache: not reported.",
        "A build that differs with each value of a loop over values written out in the code compiles"
        " once per value: not reported.",
        "The repeating call must run eagerly: not in traced code, a framework module's method, or"
        " under an unknown decorator.",
        "A loop in a module that names no JAX library (a plain driver script) is not read.",
    ) + RECOMPILATION_LIMITS

    def check(self, module, report):
        shapes = module.shapes
        for rebuild in shapes.rebuilt_jits():
            report(rebuild.node, _message(rebuild.transform, rebuild.what, rebuild.why))


def _message(transform: str, what: str, why: str) -> str:
    short = ".".join(transform.split(".")[-2:])  # `jax.jit`, `equinox.filter_jit`, `lax.scan`
    if transform in EAGER_COMPILED_LOOPS:
        return (
            f"`{short}` runs outside any jit over {what}, a new function again and again ({why}): it traces "
            "and compiles the loop again each time; define the function once and pass what it reads as "
            "arguments (or jit the code around it once)"
        )
    return (
        f"`{short}` of {what} is rebuilt again and again ({why}): each one starts with an empty "
        "cache and compiles again; build it once and pass changing values as arguments"
    )
