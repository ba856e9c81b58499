"""JAX403: a functional update whose result is thrown away (`x.at[i].set(v)` as a statement)."""

from __future__ import annotations

import ast

from jaxlint.analysis.arrays.arrays import is_at_index
from jaxlint.analysis.knowledge import array_api
from jaxlint.analysis.knowledge.optax_objects import optax_transformation
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS
from jaxlint.rules.purity.edits import rebind


@register
class DiscardedUpdate(Rule):
    code = "JAX403"
    name = "discarded-functional-update"
    summary = "A functional update whose result is discarded: nothing happens"
    what = """
        Checks for functional updates whose result is thrown away: `x.at[i].set(v)`,
        `jnp.clip(x, 0, 1)` or an Optax `update` called as a statement, or an `.at[...]` update
        assigned to a name that nothing reads. JAX never modifies its arguments, so the program
        silently goes on with the old value.
        """
    decisions = """
        **Expression statements** that compute a new value and drop it:

        - `x.at[i].set(v)` (and `.add`, `.multiply`, ...);
        - a `jax.numpy` function applied to an array (`jnp.clip(x, 0, 1)`, `jnp.sort(x)`);
        - an array method on a JAX array that NumPy would apply in place (`x.sort()`);
        - an Optax optimizer's `update`/`init`, or `optax.apply_updates`.

        **Updates nobody reads.** An `.at[...]` update assigned to a local name that no path
        from the assignment reads before the name is bound again or the function returns, except
        to compute its own next update: `x = x.at[i].set(v)` and then `return None`, an
        accumulator that is never returned, an update overwritten before it is read. A chain of
        such updates of one name (`m = m.at[a].set(0)`, then `m = m.at[b].set(0)`, ...) is one
        finding, at its first update, naming the lines of the others.

        **Not reported.**

        - A name that a nested function or lambda reads: it may be called later.
        - In a Pallas kernel, `ref.at[i].set(v)` on one of its references writes through the
          reference (and returns None): it is a store, not a discarded update.
        - Calls inside `pytest.raises`/`assertRaises` blocks, in test code as the randomness
          rules' `test-functions` option names it (`def test_...`, a test class's methods,
          where a bare call checks that something does not raise), and in the body of a `try`
          whose every handler raises (`try: jnp.asarray(value) except Exception: raise
          TypeError(...)`, a check that the value converts).
        """
    why = """
        JAX functions and array methods never modify their arguments: they return a new array.
        Called as a statement, their result is dropped and the program goes on with the old
        value, silently. Assigning it to a name nobody reads loses it just the same: the
        caller's array is unchanged. Assign the result (`x = x.at[i].set(v)`, `updates,
        opt_state = tx.update(grads, opt_state)`).
        """
    fix_safety = """
        For `x.at[i].set(v)`, `jnp.clip(x, ...)` and `x.sort()` with a plain local name `x`,
        the fix assigns the result back (`x = x.at[i].set(v)`). It is unsafe: the program's
        behaviour changes (that is the point), and a caller that relied on the old value would
        see the new one.
        """
    fixable = True
    bad = (
        """
        import jax.numpy as jnp

        def clip_and_mark(x, i):
            jnp.clip(x, 0.0, 1.0)  # JAX403
            x.at[i].set(0.0)  # JAX403
            return x
        """,
        """
        import optax

        def train(params, grads):
            tx = optax.sgd(0.1)
            opt_state = tx.init(params)
            tx.update(grads, opt_state, params)  # JAX403
            return params
        """,
        """
        import jax.numpy as jnp

        def reset_slot(buffer, i):
            buffer = buffer.at[i].set(0.0)  # JAX403

        def gather(xs, idx):
            out = jnp.zeros(len(idx))
            for k, i in enumerate(idx):
                out = out.at[k].set(xs[i])  # JAX403
            return xs
        """,
        """
        import jax.numpy as jnp

        def ranked(scores):
            s = jnp.asarray(scores)
            s.sort()  # JAX403
            return s
        """,
    )
    good = (
        """
        import jax.numpy as jnp

        def clip_and_mark(x, i):
            x = jnp.clip(x, 0.0, 1.0)
            x = x.at[i].set(0.0)
            return x
        """,
        """
        import numpy as np
        import pytest
        import jax.numpy as jnp

        def test_bad_index():
            a = np.arange(3.0)
            a.sort()  # NumPy sorts in place
            with pytest.raises(IndexError):
                jnp.zeros(3).at[5].get(mode="promise_in_bounds")
                jnp.clip(a, 2.0, 1.0)
        """,
        """
        import jax.numpy as jnp

        def gather(xs, idx, keep_first):
            out = jnp.zeros(len(idx))
            for k, i in enumerate(idx):
                out = out.at[k].set(xs[i])
            _ = xs.at[0].set(0.0)  # an underscore name: discarded on purpose
            first = xs.at[0].set(1.0)
            return out if keep_first else lambda: first  # read by a closure
        """,
        """
        from flax import nnx

        def train_step(model, optimizer, grads):
            optimizer.update(model, grads)  # NNX optimizers update in place
        """,
    )
    demo = JaxDemo(
        """
        import jax.numpy as jnp

        def demo():
            x = jnp.zeros(3)
            x.at[0].set(1.0)
            assert float(x[0]) == 1.0, "the update was discarded"
        """,
        "raises:AssertionError",
    )

    limitations = PURITY_LIMITATIONS
    limits = (
        "A name a nested function or lambda reads may be read later: not reported.",
        "Calls in `pytest.raises` blocks, in test functions, and in a `try` whose every handler"
        " raises are checks: not reported.",
        "In a Pallas kernel, `ref.at[i].set(v)` on a reference is a store, not a discarded update.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        for stmt, call, function in effects.expression_calls:
            found = self._discarded(module, call)
            if found is None or effects.expects_error(stmt) or effects.in_test(function) or id(stmt) in effects.validity_checks:
                continue
            what, updated = found
            report(
                call,
                f"The result of {what} is discarded: JAX never updates in place, so nothing changes; "
                "assign the result",
                rebind(module, stmt, updated) if updated is not None else None,
            )
        # One finding per name a function updates and never reads: a chain of dead updates
        # (`m = m.at[a].set(0)`, then `m = m.at[b].set(0)`, ...) is one mistake, reported at its start.
        chains: dict[tuple[int, str], list] = {}
        for store in effects.unread_updates:
            if effects.expects_error(store.stmt) or effects.in_test(store.function):
                continue
            chains.setdefault((id(store.function), store.target.id), []).append(store)
        for (_, name), stores in chains.items():
            first, later = stores[0], stores[1:]
            also = ""
            if later:
                rows = ", ".join(str(s.stmt.lineno) for s in later)
                also = f"; so are its later updates on line{'s' if len(later) > 1 else ''} {rows}"
            report(
                first.value,
                f"`{name}` is assigned the result of `.at[...].{first.value.func.attr}(...)` but never read "
                f"again (except to update itself): the updated array is lost{also}; return or use `{name}`",
            )

    @staticmethod
    def _discarded(module, call: ast.Call):
        """What the call computes, and the name it would update (for the fix)."""
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr in array_api.AT_UPDATE_METHODS and is_at_index(func.value):
                base = func.value.value.value
                held = module.value(base)
                if held is not None and held.ref:
                    return None  # a Pallas reference's `.at[i].set(v)` writes through it
                return f"`.at[...].{func.attr}(...)`", base
            if func.attr in array_api.IN_PLACE_IN_NUMPY_METHODS and module.arrays.is_array(func.value):
                return f"`.{func.attr}()` on a JAX array", func.value
            if func.attr in ("update", "init") and optax_transformation(module, func.value):
                return f"the optimizer's `{func.attr}`", None
        name = module.qualname(func)
        if name == "optax.apply_updates":
            return "`optax.apply_updates`", None
        if array_api.array_function(name) and name.startswith("jax.numpy.") and call.args and not call.keywords:
            first = call.args[0]
            if isinstance(first, (ast.Name, ast.Attribute, ast.Subscript)):
                short = name.rsplit(".", 1)[-1]
                updated = first if short in array_api.IN_PLACE_IN_NUMPY_FUNCTIONS else None
                return f"`jnp.{short}(...)`", updated
        return None

