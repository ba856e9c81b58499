"""JAX205: NumPy or Python `random` drawn inside jit-compiled or scanned code."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register

_NUMPY_NOT_DRAWING = frozenset({
    "seed", "get_state", "set_state", "SeedSequence", "BitGenerator", "Generator", "MT19937",
    "PCG64", "PCG64DXSM", "Philox", "SFC64", "get_bit_generator", "set_bit_generator",
})
_PYTHON_DRAWING = frozenset({
    "random", "uniform", "randint", "randrange", "choice", "choices", "shuffle", "sample", "gauss",
    "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate",
    "betavariate", "paretovariate", "weibullvariate", "triangular", "getrandbits", "randbytes",
    "binomialvariate",
})
_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "random.Random"})


@register
class StatefulRngInTracedCode(Rule):
    code = "JAX205"
    name = "stateful-rng-in-traced-code"
    summary = "NumPy or Python `random` draws inside jit-compiled or scanned code run once, at trace time"
    what = """
        Checks for draws from NumPy's or Python's stateful random generators (`np.random.*`,
        `np.random.default_rng(...)`, `random.*`) inside a function that runs under `jax.jit`
        (or `pmap`, `shard_map`) or as a `lax.scan`, `fori_loop`, `while_loop` or `cond` body.
        The draw happens once, while tracing, and its value is baked into the compiled program:
        every call gets the same "random" number.
        """
    decisions = """
        - Draws from a NumPy or Python generator object made in the module are reported, as well
          as calls of the `np.random` and `random` module functions.
        - Host callbacks (`jax.pure_callback`, `jax.debug.callback`) run on the host on every
          call and are not reported.
        - A draw in a branch that no traced call of the function takes is not reported: a
          helper's NumPy fallback under `if rng is None:` runs only in eager code when every
          traced caller passes a key, since a tracer is never None (the analysis prunes a branch
          the caller's values decide, as it does `if False:`). Unpacking an array binds its
          rows, arrays too: `key, sub = jax.random.split(key)` then `jitter(x, rng=sub)` passes
          a key. So does a key handed to a function, seen or not, and bound again to what it
          returns under a name that says it is a key (`mixup_rng = bind_to_device(mixup_rng,
          ...)`), as the key analysis takes that name for a key; what code not seen returns
          when handed no key (`rng = lookup(table, "rng")`) may be None, and a draw on the
          fallback it may take is reported.
        """
    why = """
        JAX runs the Python body once to trace it, then replays the compiled program. A NumPy or
        Python random draw happens during that single trace; its value is baked into the program
        as a constant, so every later call "draws" the same number. No error is raised. Use
        `jax.random` with a key passed in as an argument.
        """
    bad = (
        """
        import numpy as np
        import jax
        import jax.numpy as jnp

        @jax.jit
        def augment(images):
            scale = np.random.uniform(0.8, 1.2)  # JAX205
            return jnp.clip(images * scale, 0.0, 1.0)
        """,
        """
        import random
        import jax
        from jax import lax

        def jitter(xs):
            def step(carry, x):
                return carry + x * random.gauss(0.0, 0.1), carry  # JAX205
            return lax.scan(step, 0.0, xs)
        """,
        """
        import numpy as np
        import jax

        rng = np.random.default_rng(0)

        @jax.jit
        def add_noise(x):
            gen = np.random.default_rng(1)  # JAX205
            return x + rng.normal(size=x.shape) + gen.normal()  # JAX205
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def augment(images, key):
            scale = jax.random.uniform(key, (), minval=0.8, maxval=1.2)
            return jnp.clip(images * scale, 0.0, 1.0)
        """,
        """
        import random
        import numpy as np
        import jax
        from jax import random as jrandom

        def make_batch(n):
            idx = np.random.permutation(n)
            random.shuffle(idx)
            return idx

        @jax.jit
        def noisy(x, key):
            return x + jrandom.normal(key, x.shape)

        def host_noise(x):
            return jax.pure_callback(lambda v: v + np.random.normal(size=v.shape), x, x)
        """,
        """
        import numpy as np
        import jax

        @jax.vmap
        def per_example(x):
            np.random.seed(0)
            return x * 2
        """,
        """
        import jax
        import numpy as np

        def jitter(x, rng=None):
            if rng is None:  # eager callers only: every traced caller passes a key
                return x + np.random.normal(size=x.shape)
            return x + jax.random.normal(rng, x.shape)

        @jax.jit
        def train_step(x, key):
            return jitter(x, rng=key)
        """,
    )
    demo = JaxDemo(
        """
        import numpy as np
        import jax
        import jax.numpy as jnp

        @jax.jit
        def augment(images):
            scale = np.random.uniform(0.8, 1.2)
            return images * scale

        def demo():
            np.random.seed(0)
            x = jnp.ones(3)
            draws = 0
            for _ in range(2):
                before = np.random.get_state()[2]
                augment(x)
                draws += int(np.random.get_state()[2] != before)
                if _ == 0:
                    first = draws
            # NumPy's generator advanced on the first call only: the draw ran while tracing.
            return first, draws
        """,
        "trace-time-only",
    )
    limitations = """
        A generator object is recognised where a name is bound once, by a direct call of
        `np.random.default_rng`, `np.random.RandomState` or `random.Random`, in the module or in
        the traced function; a generator passed in as an argument or kept in an attribute
        (`self.rng`) is not followed. Only functions jaxlint knows to be traced are checked.
        """
    limits = (
        "A generator object is recognised only where a name is bound once, by a direct call of"
        " `np.random.default_rng`, `RandomState` or `random.Random`.",
        "A generator passed in as an argument or kept in an attribute (`self.rng`) is not followed.",
        "Only functions jaxlint knows to be traced are checked.",
        "Host callbacks (`jax.pure_callback`, `jax.debug.callback`) run on every call: not reported.",
        "A draw on a branch no traced call takes (a NumPy fallback under `if rng is None:`) is not"
        " reported.",
    )
    references = ("https://docs.jax.dev/en/latest/random-numbers.html",)

    def check(self, module, report):
        text = module.source.text
        if "random" not in text:
            return
        for fn, context in module.traced_functions():
            if not context.staged:
                continue
            for node in module.body(fn):
                if isinstance(node, ast.Call) and module.value(node) is not None:  # reached traced
                    what = _stateful_draw(module, node)
                    if what:
                        report(
                            node,
                            f"{what} inside jit-compiled code runs once, while tracing: every call reuses "
                            "the same value; pass a `jax.random` key in and draw with `jax.random`",
                        )


def _stateful_draw(module, call: ast.Call) -> str | None:
    qualname = module.qualname(call.func)
    if qualname is not None:
        if qualname.startswith("numpy.random."):
            name = qualname[len("numpy.random."):]
            if "." not in name and name not in _NUMPY_NOT_DRAWING and name != "RandomState":
                return f"`np.random.{name}`"
            return None
        if qualname.startswith("random.") and qualname[len("random."):] in _PYTHON_DRAWING:
            return f"`{qualname}`"
        return None
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        values = module.names.assignments(func.value)
        if len(values) == 1 and isinstance(values[0], ast.Call):
            maker = module.qualname(values[0].func)
            if maker in _GENERATORS and not func.attr.startswith(("seed", "get", "set", "bit_generator", "spawn")):
                return f"`{func.value.id}.{func.attr}` (a {maker.rsplit('.', 1)[-1]} generator)"
    return None
