"""JAX505: calls of one jitted function whose signature changes where nothing else does."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.recompilation import RECOMPILATION_LIMITATIONS, RECOMPILATION_LIMITS


@register
class JitSignatureChanges(Rule):
    code = "JAX505"
    name = "jit-signature-changes"
    summary = "A jitted function is called with a different signature for the same computation: it compiles again"
    what = """
        Checks for calls of a jitted function that change its signature without changing what it
        computes: a `functools.partial` or `jax.tree_util.Partial` that binds a parameter by
        keyword where other calls pass it by position, and a loop carry that starts as a Python
        number and comes back from the jitted call as an array. JAX keys its compilation cache by how each argument is passed and by its exact
        type, so each form compiles again.
        """
    decisions = """
        **Keyword and position, hidden by a partial.** A name bound once to a
        `functools.partial` or `jax.tree_util.Partial` of a jitted function that binds a
        parameter by keyword, called outside staged code where another call passes that
        parameter by position (or binds it by position where a call passes it by keyword), is
        reported at the `partial`: the call through it does not show the keyword it adds.

        **A carry that changes type.** `total = 0.0` (or any Python `int`/`float` literal) bound
        before a loop, and rebound in it only to the result of a jitted call that takes it as a
        traced argument (`total = accumulate(total, x)`): the first call sees a weakly typed
        Python scalar, the following ones the array the function returns.

        **Not reported.** Calls inside staged code (inlined into the caller's program); a
        parameter passed the same way everywhere; direct calls that pass it by keyword in one
        place and by position in another (a choice the calls show, one compilation each); a
        carry started as an array; a static parameter (its value is the key: see JAX303).
        """
    why = """
        `jax.jit` looks up a compiled function by the structure of its call: which arguments
        come by position and which by keyword, and each one's shape, dtype and weak type. A
        keyword where another call used a position, or a Python scalar where later calls pass an
        array, is another entry: the same program traced and compiled again, which for a large
        training step costs as much as the first compilation. Pass each argument the same way
        everywhere (bind by position in a `partial`, or always by keyword), and start a loop
        carry as the array the function returns (`jnp.zeros((), jnp.float32)`).
        """
    bad = (
        """
        import jax
        from jax.tree_util import Partial

        @jax.jit
        def scaled(x, scale):
            return x * scale

        def run(x):
            a = scaled(x, 2.0)
            times_two = Partial(scaled, scale=2.0)  # JAX505
            return a, times_two(x)
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def accumulate(total, x):
            return total + jnp.sum(x ** 2)

        def epoch(batches):
            total = 0.0
            for x in batches:
                total = accumulate(total, x)  # JAX505
            return total
        """,
    )
    good = (
        """
        import jax
        from jax.tree_util import Partial

        @jax.jit
        def scaled(x, scale):
            return x * scale

        def run(x):
            a = scaled(x, scale=2.0)
            times_two = Partial(scaled, scale=2.0)  # by keyword both times
            return a, times_two(x)
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def accumulate(total, x):
            return total + jnp.sum(x ** 2)

        def epoch(batches):
            total = jnp.zeros((), jnp.float32)  # the array the function returns
            for x in batches:
                total = accumulate(total, x)
            return total

        @jax.jit
        def train(batches):
            total = 0.0
            for x in batches:  # staged: the calls are inlined
                total = accumulate(total, x)
            return total
        """,
    )
    demo = JaxDemo(
        """
        import jax
        from jax.tree_util import Partial

        traces = 0

        @jax.jit
        def scaled(x, scale):
            global traces
            traces += 1
            return x * scale

        def demo():
            scaled(1.0, 2.0)
            Partial(scaled, scale=2.0)(1.0)  # same shapes and values: compiles again
            return traces
        """,
        "recompiles",
    )
    references = ("https://docs.jax.dev/en/latest/jit-compilation.html#caching",)

    limitations = RECOMPILATION_LIMITATIONS
    limits = (
        "Direct calls passing a parameter by keyword in one place and by position in another show"
        " the choice: not reported.",
        "Calls inside staged code, a carry started as an array, and static parameters (JAX303's) are"
        " not reported.",
    ) + RECOMPILATION_LIMITS

    def check(self, module, report):
        for change in module.shapes.signature_changes():
            report(change.node, change.why)
