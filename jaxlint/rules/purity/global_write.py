"""JAX406: assignment to a `global` or `nonlocal` name inside jit-compiled code."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS


@register
class GlobalWrite(Rule):
    code = "JAX406"
    name = "global-write-in-traced-code"
    summary = "Assignment to a `global`/`nonlocal` name inside staged code happens once, at trace time"
    what = """
        Checks for assignments (`=`, `+=`, ...) to names declared `global` or `nonlocal` inside
        staged code. The write happens once, while JAX traces the function, so a counter counts
        compilations, not calls; and a traced value stored there is a leaked tracer that fails
        when used after the trace.
        """
    decisions = """
        - Staged code is a function staged by `jax.jit`, `jax.pmap` or a `lax` control-flow
          primitive, and the helpers it calls: any write is reported.
        - Under `jax.vmap` or a differentiation (`jax.grad`, and `jax.jvp`, `jax.vjp` and
          `jax.linearize`, which call the function at once), a write of a traced value is
          reported: there the body runs on every call, but the name keeps a tracer that outlives
          the transformation (`UnexpectedTracerError` when it is used).
        - A `nonlocal` that belongs to an enclosing traced function is local to that trace and
          not reported, unless the function writing it is traced on its own (a `lax` body, a
          function differentiated or vmapped inside the traced one) and stores a value made from
          its own arguments or locals: that tracer outlives the inner trace (the usual way to
          smuggle an auxiliary output out of `jax.grad` without `has_aux=True`).
        - Counters a test asserts on (trace counters) are not reported.
        """
    why = """
        The Python body of a staged function runs while JAX traces it, once per compilation;
        the compiled program that later calls run has no Python in it. A counter incremented
        there counts compilations, not calls, and a traced value stored there is a leaked
        tracer that fails when used after the trace. Return the new value from the function
        and keep the state outside.
        """
    bad = (
        """
        import jax

        num_updates = 0

        @jax.jit
        def apply_gradients(params, grads):
            global num_updates
            num_updates += 1  # JAX406
            return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        """,
        """
        import jax
        import jax.numpy as jnp

        def make_step():
            last_loss = None

            @jax.jit
            def step(w, x):
                nonlocal last_loss
                loss = jnp.sum((x @ w) ** 2)
                last_loss = loss  # JAX406
                return w * 0.9
            return step
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(w, x):
            predictions = None

            def loss(w):
                nonlocal predictions
                predictions = x @ w  # JAX406
                return jnp.sum(predictions ** 2)

            g = jax.grad(loss)(w)
            return w - 0.1 * g, predictions
        """,
    )
    good = (
        """
        import jax

        @jax.jit
        def apply_gradients(params, grads, num_updates):
            params = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
            return params, num_updates + 1
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def unrolled(x):
            total = 0.0

            def add(v):
                nonlocal total
                total = total + v  # the enclosing function is traced too: local to the trace

            for i in range(3):
                add(x[i])
            return total
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(w, x):
            def loss(w):
                predictions = x @ w
                return jnp.sum(predictions ** 2), predictions

            g, predictions = jax.grad(loss, has_aux=True)(w)
            return w - 0.1 * g, predictions
        """,
        """
        import jax

        @jax.jit
        def total(xs, scale):
            carry_shape = None

            def body(c, x):
                nonlocal carry_shape
                carry_shape = c.shape  # a static value: the same in every trace
                return c + scale * x, None

            out, _ = jax.lax.scan(body, 0.0, xs)
            return out
        """,
        """
        import jax

        traces = 0

        @jax.jit
        def f(x):
            global traces
            traces += 1
            return x * 2

        def test_traces_once():
            f(1.0)
            f(2.0)
            assert traces == 1
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        num_updates = 0

        @jax.jit
        def apply_gradients(w, g):
            global num_updates
            num_updates += 1
            return w - 0.01 * g

        def demo():
            apply_gradients(jnp.ones(2), jnp.ones(2))
            first = num_updates
            apply_gradients(jnp.ones(2), jnp.ones(2))
            return first, num_updates
        """,
        "trace-time-only",
    )

    limitations = PURITY_LIMITATIONS
    limits = (
        "Under `jax.vmap` or a differentiation, where the body runs on every call, only writes of"
        " traced values are reported.",
        "A `nonlocal` of an enclosing traced function is local to that trace, unless written from a"
        " trace of its own.",
        "Counters a test asserts on (trace counters) are not reported.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        names = module.names
        for fn, ctx in effects.traced():
            if isinstance(fn, ast.Lambda):
                continue
            declared = effects.declared.get(id(fn))
            if not declared:
                continue
            for store in effects.name_stores(fn):
                target = store.target
                if target.id not in declared or target.id in effects.asserted_names:
                    continue
                kind = "global" if declared[target.id] else "nonlocal"
                if not declared[target.id] and self._trace_local(names, effects, fn, target.id):
                    # Local to the enclosing function's trace, unless `fn` runs in a trace of its
                    # own (a `lax` body, `jax.grad` of a nested function): its tracer outlives it.
                    if (
                        module.discovery.traces_itself(fn) and store.value is not None
                        and module.is_traced(store.value) and self._reads_own(names, fn, store.value)
                    ):
                        report(target, self._leak(kind, target.id))
                    continue
                if ctx.staged:
                    report(
                        target,
                        f"Assignment to the {kind} `{target.id}` inside staged code happens once, while tracing, "
                        "not on every call; return the new value instead",
                    )
                elif store.value is not None and module.is_traced(store.value):
                    # Under `vmap` or a differentiation the body runs on every call, but what
                    # it stores is a tracer that outlives the transformation.
                    report(target, self._leak(kind, target.id))

    @staticmethod
    def _leak(kind: str, name: str) -> str:
        return (
            f"Assignment of a traced value to the {kind} `{name}` leaks a tracer out of the transformation: "
            "using it afterwards raises `UnexpectedTracerError`; return the value instead"
        )

    @staticmethod
    def _reads_own(names, fn, value: ast.AST) -> bool:
        """Whether `value` reads a name of `fn`'s own (a parameter, a local): a value made only of
        what `fn` closes over is the enclosing trace's, which it does not outlive."""
        scope = names.scopes.get(id(fn))
        return scope is not None and any(
            isinstance(node, ast.Name) and names.lookup(node.id, scope) is scope for node in ast.walk(value)
        )

    @staticmethod
    def _trace_local(names, effects, fn, name: str) -> bool:
        """The nonlocal belongs to an enclosing function that is itself traced."""
        scope = names.enclosing_scope(fn)
        while scope is not None and scope.kind != "module":
            if scope.kind == "function" and scope.binds(name) and name not in scope.globals and name not in scope.nonlocals:
                return id(scope.node) in effects.contexts
            scope = scope.parent
        return False
