"""JAX503: a long Python loop over a static range inside jit-compiled code (unrolled by tracing)."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.walk import walk
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.recompilation import RECOMPILATION_LIMITATIONS, RECOMPILATION_LIMITS

DEFAULT_THRESHOLD = 100


@register
class UnrolledLoop(Rule):
    code = "JAX503"
    name = "large-unrolled-loop"
    summary = "A Python loop inside staged code is unrolled: long, or over a static bound that changes between calls"
    what = f"""
        Checks for `for` loops over `range(...)` inside staged code that run at least
        `unroll-threshold` iterations (default {DEFAULT_THRESHOLD}), or whose bound is a static
        parameter that the program passes a new value on each iteration of a loop. Tracing
        unrolls a Python loop, so the compiled program holds one copy of the body per
        iteration, trace and compile time grow with the trip count, and every new bound is a
        new compilation. Use `jax.lax.fori_loop` or `jax.lax.scan`.
        """
    decisions = """
        - Staged code is code staged by `jax.jit`, `jax.pmap` or a `lax` control-flow primitive.
        - The bounds are constants, or a static parameter, counted with the largest constant
          that a call in the module passes for it.
        - The count is the loop's iterations times those of the static loops around it.
        - The loop's body must stage work (compute a traced value or call JAX): a loop that only
          builds Python lists or numbers at trace time is not reported.

        **A static bound that changes between calls**, whatever its size: `range(steps)` with
        `steps` a static parameter of the jitted function, where a call of the jit, made
        outside staged code, passes it the target of a loop around the call (`for steps in
        (1, 8, 32)`) or a number that loop updates. It is followed through the plain functions
        and methods that pass their own parameter on to the jit (`def train(self, steps):
        return self._train(..., steps)`, called in such a loop), a few levels up. Each value
        compiles its own program, as long as the value; `lax.fori_loop` with the count as a
        traced argument compiles once. A static depth that the calls give as different
        constants (`mlp(x, layers=4) + mlp(x, layers=8)`) is a choice among a few programs, and
        is not reported.
        """
    why = """
        Tracing runs the Python loop, so the compiled program contains one copy of the loop body
        per iteration. Trace time, program size and XLA compile time grow with the trip count:
        a thousand-step loop can take minutes to compile for milliseconds of work. Use
        `jax.lax.fori_loop` (or `jax.lax.scan` to collect per-step outputs), which compiles the
        body once. A loop over a static parameter is unrolled anew for every value it is called
        with, each one a separate compilation of its own length; `fori_loop` takes the count as
        a traced argument. Short loops (a few layers, a handful of steps) unroll cheaply and are
        not reported.
        """
    options = f"""
        `unroll-threshold` (integer, default {DEFAULT_THRESHOLD}): the smallest number of
        unrolled iterations that is reported. Set it in `pyproject.toml`:

        ```toml
        [tool.jaxlint.options]
        unroll-threshold = 500
        ```
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def simulate(x, dt):
            for _ in range(1000):  # JAX503
                x = x + dt * jnp.sin(x)
            return x
        """,
        """
        import jax

        STEPS = 50

        @jax.jit
        def relax(grid):
            for _ in range(STEPS):
                for _ in range(4):  # JAX503
                    grid = 0.5 * (grid + grid.mean())
            return grid
        """,
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames="steps")
        def rollout(x, steps):
            for _ in range(steps):  # JAX503
                x = x + 0.01 * jnp.sin(x)
            return x

        def main(x):
            return rollout(x, steps=5000)
        """,
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames="steps")
        def refine(x, steps):
            for _ in range(steps):  # JAX503
                x = x - 0.1 * jnp.tanh(x)
            return x

        class Solver:
            def solve(self, x, steps):
                return refine(x, steps)

        def sweep(x):
            solver = Solver()
            return [solver.solve(x, steps) for steps in (4, 16, 64)] + [
                solver.solve(x, n) for n in range(3)
            ]
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def simulate(x, dt):
            return jax.lax.fori_loop(0, 1000, lambda i, x: x + dt * jnp.sin(x), x)

        @jax.jit
        def apply_layers(weights, x):
            for i in range(4):  # a few layers: cheap to unroll
                x = jnp.tanh(x @ weights[i])
            return x

        def host_loop(x):
            for _ in range(1000):  # not traced
                x = x + 1
            return x
        """,
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames="layers")
        def mlp(x, layers):
            for _ in range(layers):  # a static depth: every call passes a small one
                x = jnp.tanh(x)
            return x

        def main(x):
            return mlp(x, layers=4) + mlp(x, layers=8)
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def simulate(x):
            for _ in range(1000):
                x = x + 0.01 * jnp.sin(x)
            return x

        def demo():
            # the traced program holds one copy of the body per iteration
            jaxpr = jax.make_jaxpr(simulate.__wrapped__)(jnp.ones(3))
            assert len(jaxpr.eqns) < 100, f"{len(jaxpr.eqns)} operations unrolled into the program"
        """,
        "raises:AssertionError",
    )
    references = ("https://docs.jax.dev/en/latest/control-flow.html#fori-loop",)

    limitations = RECOMPILATION_LIMITATIONS
    limits = (
        "A trip count is known only from constants, or the largest constant a call in the module"
        " passes for a static bound.",
        "A loop whose body only builds Python lists or numbers at trace time is not reported.",
        "A static depth the calls give as different constants (`layers=4`, `layers=8`) is a choice"
        " among a few programs: not reported.",
    ) + RECOMPILATION_LIMITS

    def check(self, module, report):
        threshold = _threshold(module.options)
        shapes = module.shapes
        for fn, ctx in module.effects.traced():
            if not ctx.staged:
                continue
            for node in module.effects.traced_nodes[id(fn)].loops:
                count = shapes.trip_count(node)
                if count is not None and count < 2 or not _stages(node, module):
                    continue
                outer = _outer_trips(node, module)
                if count is not None and count * outer >= threshold and outer < threshold:
                    total = f"{count * outer} iterations" if outer > 1 else f"{count} iterations"
                    report(
                        node.iter,
                        f"This Python loop is unrolled into the compiled program ({total}): trace and compile "
                        "time grow with it; use `jax.lax.fori_loop` or `jax.lax.scan`",
                    )
                    continue
                changing = shapes.changing_bound(node) if outer < threshold else None
                if changing is not None:
                    report(
                        node.iter,
                        f"This Python loop over a static bound is unrolled into the compiled program, and {changing}: "
                        "each new bound compiles a new program that grows with it; use `jax.lax.fori_loop` "
                        "with the count as a traced argument",
                    )


def _threshold(options) -> int:
    value = options.get("unroll-threshold", options.get("unroll_threshold", DEFAULT_THRESHOLD))
    try:
        return max(int(value), 2)
    except (TypeError, ValueError):
        return DEFAULT_THRESHOLD


def _stages(loop: ast.AST, module) -> bool:
    """The loop body stages work into the program: it computes a traced value or calls JAX.
    A loop that only builds Python lists or ints runs at trace time and adds nothing."""
    for stmt in loop.body:
        for node in walk(stmt):
            if isinstance(node, ast.expr) and module.is_traced(node):
                return True
            if isinstance(node, ast.Call) and (module.qualname(node.func) or "").startswith("jax."):
                return True
    return False


def _outer_trips(loop: ast.AST, module) -> int:
    """The product of the static trip counts of the loops of the same function around `loop`."""
    product = 1
    for node in module.loops.enclosing(loop):
        count = module.shapes.trip_count(node) if isinstance(node, (ast.For, ast.AsyncFor)) else None
        if count is not None:
            product *= max(count, 1)
    return product
