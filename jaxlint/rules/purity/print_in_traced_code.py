"""JAX404: `print` of a traced value inside jit-compiled code."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.call_index import may_resolve_to
from jaxlint.analysis.knowledge import jax_api
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS
from jaxlint.rules.purity.edits import debug_print

_PRINT = frozenset({"print"})  # how a call of `builtins.print` can end


@register
class PrintInTracedCode(Rule):
    code = "JAX404"
    name = "print-in-traced-code"
    summary = "`print` of a traced value inside staged code runs once, at trace time"
    what = """
        Checks for `print(...)` of a traced value inside code that `jax.jit`, `jax.pmap` or a
        `lax` control-flow primitive stages. The print runs once, while JAX traces the function,
        and shows an abstract tracer instead of the value. Use `jax.debug.print`, which prints
        the value on every call.
        """
    decisions = """
        - A traced value is shown directly, in an f-string, or through `str.format` or `%`.
        - Staged code is the jitted function, the helpers it calls, and scan and loop bodies.
          Such calls in a function `jax.vmap` maps without `jit` are reported too.
        - Any `print(...)` in a branch handed to `lax.cond` or `lax.switch` is reported,
          whatever it prints.
        - Otherwise, printing static information (`x.shape`) is not reported, nor are prints
          under a plain `jax.grad`, whose tracers show their primal values.
        """
    why = """
        A staged function's Python body runs once per compilation, while JAX traces it; later
        calls run the compiled program, which has no `print` in it. So the message appears on
        the first call only, and it shows an abstract tracer (`Traced<ShapedArray(float32[])>`),
        not the value. `jax.debug.print("loss {}", loss)` is staged into the program and prints
        the runtime value on every call. Under `jax.vmap` without `jit`, `print` runs on every
        call but shows a batch tracer (`VmapTracer(aval=float32[], batched=float32[3])`), never
        the values. JAX traces every branch of `lax.cond` and `lax.switch`, in eager code as
        well as under `jit`, so a message meant for one branch ("no step size found") is printed
        whether or not that branch is taken, and never when it runs later. `jax.debug.print` in
        the branch prints only when the branch runs.
        """
    fix_safety = """
        The fix replaces the call with `jax.debug.print`, turning every traced argument into a
        `{}` field (with its format spec, from f-strings) and formatting static arguments while
        tracing, as `print` did; it adds `import jax` when the module does not bind it. It is
        unsafe: output now appears on every call, asynchronously, with array formatting.
        """
    fixable = True
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(w, x, y):
            loss, g = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
            print("batch loss", loss)  # JAX404
            print(f"grad norm {jnp.linalg.norm(g):.3f}")  # JAX404
            return w - 0.05 * g
        """,
        """
        import jax.numpy as jnp
        from jax import lax

        def cumulative(xs):
            def body(carry, x):
                carry = carry + x
                print("carry is", carry)  # JAX404
                return carry, carry
            return lax.scan(body, 0.0, xs)
        """,
        """
        from jax import lax

        def safe_step(found, state):
            def give_up(state):
                print("line search failed: no step size found")  # JAX404
                return state

            return lax.cond(found, lambda state: state, give_up, state)
        """,
        """
        import jax

        class Trainer:
            def __init__(self, lr):
                self.lr = lr

            def step(self, w, g):
                print("step", g)  # JAX404
                return w - self.lr * g

        trainer = Trainer(0.1)
        step = jax.jit(trainer.step)  # the bound method is traced, `self` bound into it
        """,
        """
        import jax
        import jax.numpy as jnp

        def elbo(key, mean):
            sample = mean + jax.random.normal(key, mean.shape)
            print("sample", sample)  # JAX404
            return -jnp.sum(sample ** 2)

        def batch_elbo(keys, mean):
            return jax.vmap(elbo, in_axes=(0, None))(keys, mean).mean()
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(w, x, y):
            print("compiling for shape", x.shape)  # static: printed once per compilation, on purpose
            loss, g = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
            jax.debug.print("batch loss {}", loss)
            return w - 0.05 * g
        """,
        """
        import jax
        import jax.numpy as jnp

        def loss(w, x):
            value = jnp.sum((x @ w) ** 2)
            print("loss", value)  # plain grad: runs on every call, with concrete values
            return value

        def step(w, x):
            return w - 0.1 * jax.grad(loss)(w, x)
        """,
        """
        import jax
        from jax.experimental import io_callback

        def log_on_host(x):
            print("value", x)  # a host callback: runs on the host with the value

        @jax.jit
        def f(x):
            io_callback(log_on_host, None, x)
            jax.debug.callback(lambda v: print("v", v), x)
            return x
        """,
        """
        import jax
        from jax import lax

        def safe_step(found, state):
            def give_up(state):
                jax.debug.print("line search failed: no step size found")  # only when it runs
                jax.debug.callback(lambda: print("giving up"))  # a host callback, at run time
                return state

            return lax.cond(found, lambda state: state, give_up, state)
        """,
    )
    demo = JaxDemo(
        """
        import contextlib
        import io

        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(x):
            loss = jnp.sum(x ** 2)
            print("loss", loss)
            return x - 0.1 * loss

        def demo():
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                step(jnp.ones(3))
                first = out.getvalue().count("loss")
                step(jnp.ones(3))
                second = out.getvalue().count("loss")
            return first, second
        """,
        "trace-time-only",
    )
    references = ("https://docs.jax.dev/en/latest/debugging/print_breakpoint.html",)

    limitations = PURITY_LIMITATIONS
    limits = (
        "Printing static information (`x.shape`) is not reported outside `lax.cond` and `lax.switch`"
        " branches, nor under a plain `jax.grad`.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        reported = set()
        for calls, message in (
            (
                effects.staged_calls(),
                "`print` of a traced value runs once, while tracing, and shows a tracer; "
                "use `jax.debug.print('... {}', value)` to print on every call",
            ),
            (
                effects.batched_calls(),
                "`print` of a value batched by `vmap` shows a tracer (its shape and dtype), not the values; "
                "use `jax.debug.print('... {}', value)` to print them",
            ),
        ):
            for node in calls:
                if (
                    id(node) not in reported and may_resolve_to(module.names, node.func, _PRINT)
                    and module.qualname(node.func) == "builtins.print"
                    and any(effects.shows_traced(arg) for arg in node.args)
                ):
                    reported.add(id(node))
                    report(node, message, debug_print(module, node, effects.shows_traced))
        for fn, call, callee in module.discovery.bodies:
            if callee not in jax_api.BRANCHING or module.runs_eagerly(call):
                continue
            for node in module.body(fn):
                if (
                    isinstance(node, ast.Call)
                    and id(node) not in reported
                    and may_resolve_to(module.names, node.func, _PRINT)
                    and module.qualname(node.func) == "builtins.print"
                ):
                    reported.add(id(node))
                    report(
                        node,
                        f"`print` in a branch of `{callee.rsplit('.', 1)[-1]}` runs while JAX traces every branch: "
                        "it prints whether or not this branch is taken; use `jax.debug.print(...)`, which "
                        "prints only when the branch runs",
                        debug_print(module, node, effects.shows_traced),
                    )
