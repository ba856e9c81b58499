"""JAX101: Python `if`/`elif`/conditional expression on a traced value."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS


@register
class TracedIf(Rule):
    code = "JAX101"
    name = "traced-if"
    summary = "Python `if` or conditional expression on a traced value inside transformed code"
    what = """
        Checks for `if`, `elif` and `a if cond else b` whose condition is a traced value inside
        a function run under `jax.jit`, `jax.vmap`, `jax.pmap`, `jax.checkpoint` or a `lax`
        control-flow body. Python needs a concrete `True` or `False` to choose a branch, and a
        traced value has none while JAX traces the function.
        """
    decisions = """
        - The condition is reported when it is traced, or when it has a traced value among the
          operands Python takes the truth of: each operand of `and`/`or` it evaluates, and the
          operand of `not` (`if err < 1 and done:`). Python stops at an operand whose outcome
          is known: a traced array is a tracer, so `isinstance(shape, np.ndarray)` of one is
          false there and what follows it in an `and` never runs (`isinstance(x, Tracer)` is
          true, and ends an `or`).
        - Conditions on static facts are fine and not reported: `x.shape[0] > 1`, `x.ndim == 2`;
          `x is None` or `x == None`, which a JAX array answers by identity too, as it does a
          comparison with a string, bytes, `...` or `slice(...)`, written out or a name this
          module, or another module of the project, binds once to a string or bytes
          (`model_mode == MODEL_MODE_PREFILL`), or a member of an enum class that derives from
          no number type (`kind == Kind.ATTENTION` for an `enum.Enum`, not an `IntEnum`); the
          truth of an argument
          annotated as a sequence (`arrays: Sequence[jax.Array]`, `tuple`, `list`, a union of
          them: a Python sequence of tracers, whose truth is its length); arguments in
          `static_argnames`; closure constants.
        - A parameter annotated as a string (`str`, `bytes`, a `Literal` of strings, or one of
          these or None) holds a Python value wherever the function is called from: JAX never
          traces a string (a jitted function refuses one for a parameter that is not static), so
          a mode a module's `__call__` hands on to a method declaring `mode: str` is that string.
        - A field of a pytree is reported only where it cannot be static. A field of a loop
          carry that is a `typing.NamedTuple` (`state.i == 1` in a `lax.while_loop` body), of
          such an operand of `lax.cond` or `lax.switch` (passed one by one, or spread from a
          tuple whose items are known: `*(x, state)`), or of a traced argument annotated with
          such a class (read in the function, through the closure in a function nested in it,
          or in a nested function's parameter that every call of it passes that argument), is
          traced.
          A dataclass or module field may be metadata, and is left alone.
        - A NamedTuple or dataclass built in traced code holds what it was given: `State(done=x
          > 0).done` is traced, `State(done=False).done` a Python value.
        - So does a dict built in traced code from a literal with constant keys: `{"w": x, "n":
          3}["n"]` is a Python int, the array under `"w"` traced; a store (`cfg["n"] = x.sum()`)
          changes what its key holds, and a method that may change the dict (`update`, `pop`)
          leaves nothing known key by key.
        - In a Pallas kernel, what it loads from a reference (`x_ref[...]`) is traced, and so is
          a grid index in a block's index map.
        """
    why = """
        Under these transformations the function's arguments are abstract tracers: they have a
        shape and a dtype but no value. Python needs a concrete `True` or `False` to choose a
        branch, so JAX raises `TracerBoolConversionError` when the function is traced. Under a
        plain `jax.grad` (no `jit` around it) values are concrete and the branch works.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def clip(g, max_norm):
            norm = jnp.linalg.norm(g)
            if norm > max_norm:  # JAX101
                g = g * (max_norm / norm)
            return g
        """,
        """
        import jax
        import jax.numpy as jnp

        def masked_mse(pred, target, mask):
            count = mask.sum()
            scale = 1.0 / count if count > 0 else 0.0  # JAX101
            return ((pred - target) ** 2 * mask).sum() * scale

        masked_mse_jit = jax.jit(masked_mse)
        """,
        """
        from functools import partial
        import jax
        from jax import lax

        def top(mat):
            def body(i, v):
                if v.sum() > 0:  # JAX101
                    v = -v
                return v
            return lax.fori_loop(0, 3, body, mat)
        """,
        """
        import jax

        def hinge(w, x, y):
            margin = y * (x @ w)
            if margin.mean() < 1.0:  # JAX101
                return 1.0 - margin.mean()
            return 0.0 * margin.mean()

        grad_fn = jax.jit(jax.grad(hinge))
        """,
        """
        import jax
        from jax.experimental import pallas as pl

        def relu_kernel(x_ref, o_ref):
            x = x_ref[...]
            o_ref[...] = x if x.min() > 0 else x * 0  # JAX101

        def relu(x):
            return pl.pallas_call(relu_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
        """,
        """
        from jax import lax

        def newton(g, y):
            return y

        def cube_root(a):
            # `lax.custom_root` traces its solvers: `y` is a tracer, `f` the function solved
            return lax.custom_root(
                lambda x: x ** 3 - a, a, newton, lambda f, y: y if y > 0 else -y  # JAX101
            )
        """,
        """
        import jax.numpy as jnp
        import numpyro
        import numpyro.distributions as dist
        from numpyro.infer import MCMC, NUTS

        def model(y=None):
            mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
            if mu > 0:  # JAX101: NUTS traces the model, `mu` is a tracer
                mu = jnp.abs(mu)
            numpyro.sample("obs", dist.Normal(mu, 1.0), obs=y)

        mcmc = MCMC(NUTS(model), num_warmup=500, num_samples=1000)
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def clip(g, max_norm):
            norm = jnp.linalg.norm(g)
            return jnp.where(norm > max_norm, g * (max_norm / norm), g)
        """,
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("train",))
        def forward(x, train):
            if x.shape[0] > 1 and x.ndim == 2:
                x = x * 2
            if train:
                x = x + 1
            return x
        """,
        """
        import jax
        import jax.numpy as jnp

        def smooth_l1(w, x):
            r = jnp.abs(x @ w).mean()
            if r < 1.0:  # concrete under plain jax.grad
                return 0.5 * r ** 2
            return r - 0.5

        def step(w, x):
            return w - 0.1 * jax.grad(smooth_l1)(w, x)
        """,
        """
        import jax

        @jax.jit
        def f(x, mask=None):
            if mask is not None:
                x = x * mask
            if isinstance(x, tuple):
                x = x[0]
            return x
        """,
        """
        import jax
        import jax.numpy as jnp
        from jax.experimental import pallas as pl

        def relu_kernel(x_ref, o_ref):
            if x_ref.shape[0] > 1:  # a reference's shape is static
                o_ref[...] = jnp.maximum(x_ref[...], 0)

        def relu(x):
            return pl.pallas_call(relu_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
        """,
        """
        import jax
        import jax.numpy as jnp

        _EAGER_DEBUG = False  # private, never rebound: the branch below never runs

        @jax.jit
        def relu(x):
            if _EAGER_DEBUG:
                return x if x.min() > 0 else x * 0
            return jnp.maximum(x, 0)
        """,
        """
        import flax.linen as nn
        import jax.numpy as jnp

        MAX = "max"

        class Pool(nn.Module):
            def reduce(self, x, mode: str):
                if mode == MAX:  # a string: JAX never traces one
                    return x.max(axis=-1)
                return x.mean(axis=-1)

            def __call__(self, x, mode):
                return self.reduce(x, mode)
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def clip(g, max_norm):
            norm = jnp.linalg.norm(g)
            if norm > max_norm:
                g = g * (max_norm / norm)
            return g

        def demo():
            clip(jnp.ones(3), 1.0)
        """,
        "raises:TracerBoolConversionError",
    )
    references = ("https://docs.jax.dev/en/latest/control-flow.html",)

    limitations = TRACED_VALUE_LIMITATIONS
    limits = (
        "Conditions on static facts are not reported: shapes, `ndim`, `is None`, static arguments,"
        " closure constants.",
        "A field of a dataclass or framework module may be metadata, and is left alone.",
    ) + TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in [*module.unguarded(fn, ast.If), *module.unguarded(fn, ast.IfExp)]:
                traced = module.traced_truth(node.test)
                if traced is not None:
                    kind = "conditional expression" if isinstance(node, ast.IfExp) else "`if`"
                    report(
                        node.test,
                        f"Python {kind} on traced value `{module.source.snippet(traced)}`: JAX cannot "
                        "choose a branch while tracing; "
                        "use `jnp.where(cond, a, b)` or `jax.lax.cond(cond, true_fn, false_fn, ...)`, "
                        "or make the value static",
                    )
