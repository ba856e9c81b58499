"""JAX410: a jitted function reads a module global that the module reassigns afterwards."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS


@register
class StaleGlobal(Rule):
    code = "JAX410"
    name = "stale-global-in-jit"
    summary = "A jitted function reads a global (or an enclosing local) that is reassigned: its value is frozen at trace time"
    what = """
        Checks for a global (or a local of the enclosing function) read inside staged code
        (`jax.jit`, `jax.pmap`, `lax` bodies) that the code assigns a new value after the
        function is defined, or between its calls. JAX bakes the value it read at the first call
        into the compiled program, so later calls silently keep using the old value.
        """
    decisions = """
        **Module-level names.** Reported when the module:

        - binds the name again after the function is defined, and its module-level code calls
          the function (through the name it or its jitted form is bound to, or a function or
          method of the module whose calls run it, as the module's calls are resolved for every
          rule: another function of the same name does not) both before the new binding (that
          call traced it with the old value) and after it, or in a loop that also rebinds it. A
          notebook that rebinds its model in a later cell and never calls the old jitted
          function again keeps nothing stale, nor does a module that rebinds the name before any
          call. Where no name of the module is seen to run the function (a method, a nested
          function), any binding after the definition counts;
        - binds it twice after the definition with a call of one of its own functions in between
          (that call traced it with the first value: `args = (2.0, 3.0); f_jit(*args); args =
          ...`), under the same condition;
        - or assigns it from a function through `global`.

        Excepted: lazy one-time initialisation (`if _X is None: _X = ...`), and a context
        manager that sets a switch for its `with` block and restores it in `finally` (code
        traced inside the block sees the switch by design).

        **Locals of the enclosing function.** A local that a function jitted inside it reads (`g
        = jax.jit(loss)`, `loss` reading `a`) is reported when the enclosing function calls `g`,
        assigns `a` again and calls `g` once more, in that order in its body. A new
        `jax.jit(loss)` in between changes nothing: JAX caches the trace with the function. A
        `def loss` run again does, as a new function is traced anew.

        **Not reported:** a name the jitted function reads only in assertions (a probe of
        whether Python runs); a lambda a transformation wraps and the code calls at once
        (`jax.jit(lambda: w.sum())()`, a notebook cell's one-off): each run of the expression
        makes a new function, which JAX traces then, with the globals' values of that moment,
        and nothing keeps it to be called again.
        """
    why = """
        A global read inside a traced function is a constant of the trace: JAX bakes the value
        it had at the first call into the compiled program and caches it. Reassigning the
        global later changes nothing for calls that hit the cache, so the function silently
        keeps using the old value (until something else forces a retrace). Pass the value as
        an argument (mark it static with `static_argnames` if it must be a Python value).
        """
    bad = (
        """
        import jax

        TEMPERATURE = 1.0

        @jax.jit
        def soften(logits):
            return jax.nn.softmax(logits / TEMPERATURE)  # JAX410

        def set_temperature(t):
            global TEMPERATURE
            TEMPERATURE = t
        """,
        """
        import jax
        import jax.numpy as jnp

        scale = 1.0

        @jax.jit
        def apply(x):
            return x * scale  # JAX410

        for scale in (1.0, 2.0, 4.0):
            print(apply(jnp.ones(2)))
        """,
    )
    good = (
        """
        from contextlib import contextmanager

        import jax
        import jax.numpy as jnp

        _EXACT = False

        @contextmanager
        def exact():
            global _EXACT
            saved = _EXACT
            try:
                _EXACT = True
                yield
            finally:
                _EXACT = saved

        @jax.jit
        def gelu(x):
            return jax.nn.gelu(x, approximate=not _EXACT)
        """,
        """
        import jax

        @jax.jit
        def soften(logits, temperature):
            return jax.nn.softmax(logits / temperature)

        _TABLE = None

        def table():
            global _TABLE
            if _TABLE is None:
                _TABLE = jax.numpy.arange(10.0)
            return _TABLE

        @jax.jit
        def lookup(i):
            return table()[i]
        """,
        """
        import jax

        try:
            SCALE = float(open("scale.txt").read())
        except OSError:
            SCALE = 1.0

        @jax.jit
        def apply(x):
            return x * SCALE
        """,
        """
        import jax
        import jax.numpy as jnp

        w = jnp.ones(3)
        total = jax.jit(lambda: w.sum())()  # traced now, with this `w`; not kept
        w = w * 2
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        SCALE = 1.0

        @jax.jit
        def apply(x):
            return x * SCALE

        def demo():
            global SCALE
            first = float(apply(jnp.ones(())))
            SCALE = 2.0
            return first, float(apply(jnp.ones(())))  # still 1.0: SCALE was frozen at trace time
        """,
        "trace-time-only",
    )

    limitations = PURITY_LIMITATIONS
    limits = (
        "A rebinding counts where the module's code calls the function before and after it; where no"
        " call is seen, any later one does.",
        "Lazy one-time initialisation (`if _X is None:`) and a switch a context manager restores in"
        " `finally` are not reported.",
        "A name read only in assertions, and a lambda a transformation wraps and calls at once, are"
        " not reported.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        for stale in module.stale_closures:
            report(
                stale.read,
                f"`{stale.read.id}` is a local of the function around this jitted one, assigned again on line "
                f"{stale.assignment.lineno} after `{stale.callable_name}` was called (line {stale.call.lineno}): "
                "later calls keep the value it had when traced; pass it as an argument",
            )
        effects = module.effects
        if not effects.global_writers and not any(len(v) > 1 for v in effects.module_stores.values()):
            return
        for fn, ctx in effects.traced():
            if not ctx.staged:
                continue
            seen = set()
            for node in effects.traced_nodes[id(fn)].reads:
                if node.id not in seen:
                    where = effects.reassignment(node, fn)
                    if where is not None:
                        seen.add(node.id)
                        report(
                            node,
                            f"`{node.id}` is a global that the module reassigns (line {where.lineno}), but the "
                            "jitted function keeps the value it had when traced; pass it as an argument",
                        )
