"""JAX402: assignment to `x.at[i]` instead of calling `.set`."""

from __future__ import annotations

from jaxlint.analysis.arrays.arrays import is_at_index
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS
from jaxlint.rules.purity.edits import in_place_fix, text

_DATAFRAME_LIBRARIES = ("pandas", "modin", "databricks.koalas", "pyspark.pandas")


@register
class AtItemAssignment(Rule):
    code = "JAX402"
    name = "at-item-assignment"
    summary = "Assignment to `x.at[i]`: the `.at` property is not assignable"
    what = """
        Checks for `x.at[i] = v` and `x.at[i] += v`. The `.at` property is an indexing helper
        for the functional update methods and does not support item assignment: JAX raises
        `TypeError`. The intended update is `x = x.at[i].set(v)`.
        """
    decisions = """
        - It reports when `x` is a JAX array, or any value in a module that uses no data-frame
          library (whose `.at` indexer is assignable).
        """
    why = """
        `x.at[i]` is an indexing helper for the functional update methods (`.set`, `.add`,
        `.multiply`, ...); it does not support item assignment, so JAX raises `TypeError`.
        The intended update is `x = x.at[i].set(v)`.
        """
    fix_safety = """
        The fix rewrites `x.at[i] = v` as `x = x.at[i].set(v)` (and `x.at[i] += v` as
        `x = x.at[i].add(v)`) when `x` is a plain name bound in the same scope. It is safe
        for local variables and unsafe for parameters (the caller will not see the update).
        """
    fixable = True
    bad = (
        """
        import jax.numpy as jnp

        def scatter_rewards(num_states, visits, rewards):
            table = jnp.zeros(num_states)
            for s, r in zip(visits, rewards):
                table.at[s] = table[s] + r  # JAX402
            return table
        """,
        """
        import jax

        @jax.jit
        def bump(x, i):
            x.at[i] += 1.0  # JAX402
            return x
        """,
    )
    good = (
        """
        import jax.numpy as jnp

        def scatter_rewards(num_states, visits, rewards):
            table = jnp.zeros(num_states)
            for s, r in zip(visits, rewards):
                table = table.at[s].set(table[s] + r)
            return table
        """,
        """
        import pandas as pd

        def label(df):
            df.at[0, "label"] = "first"  # pandas: `.at` is assignable
            return df
        """,
    )
    demo = JaxDemo(
        """
        import jax.numpy as jnp

        def demo():
            table = jnp.zeros(3)
            table.at[1] = 5.0
        """,
        "raises:TypeError",
    )
    references = ("https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html",)

    limitations = PURITY_LIMITATIONS
    limits = (
        "In a module that uses a data-frame library, whose `.at` is assignable, only values known to"
        " be JAX arrays are reported.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        candidates = [s for s in effects.subscript_stores if is_at_index(s.target)]
        if not candidates:
            return
        dataframes = any(
            target.startswith(_DATAFRAME_LIBRARIES)
            for scope in module.names.scopes.values()
            for target in scope.imports.values()
        )
        for store in candidates:
            target = store.target
            array = target.value.value
            if dataframes and not module.arrays.is_array(array):
                continue
            if effects.expects_error(store.stmt):
                continue
            base = text(module, array)
            fix = in_place_fix(module, store.stmt, target, array) if store.kind != "unpacked" else None
            report(
                target,
                f"Assignment to `{base}.at[...]` raises `TypeError`: `.at` builds a functional update; "
                f"write `{base} = {base}.at[...].set(...)`",
                fix,
            )
