"""JAX002: a `# noqa` directive names a JAX code that suppresses nothing."""

from __future__ import annotations

from jaxlint.rule import Rule, register
from jaxlint.suppression import UNUSED_NOQA_CODE, UNUSED_NOQA_NAME


@register
class UnusedNoqa(Rule):
    code = UNUSED_NOQA_CODE
    name = UNUSED_NOQA_NAME
    summary = "A `# noqa` directive names a JAX code that suppresses nothing on its line"
    what = """
        Reports the JAX codes in a line's `# noqa: ...` directive that suppressed no finding. A
        stale suppression would silently hide the next real finding on that line. Like ruff's
        RUF100.
        """
    decisions = """
        - A code is unused when its rule ran and found nothing on that line, or when it is a
          `JAX` code that names no rule.
        - Codes of other tools (`F401`, `E501`, ...) and a bare `# noqa` are left alone: they
          may serve another linter.
        """
    limits = (
        "Codes of other tools (`F401`, `E501`) and a bare `# noqa` are left alone: they may serve"
        " another linter.",
        "A code is judged only when its rule ran: the code of a rule not selected is not reported,"
        " unless no rule has it.",
    )
    why = """
        A suppression outlives the problem it hid: after the code is fixed (or jaxlint stops
        reporting it), the comment stays and would silently hide the next real finding on that
        line. A misspelt code suppresses nothing at all, while looking as if it did.
        """
    bad = (
        """
        import jax


        @jax.jit
        def scale(x, factor: float):
            return x * factor  # noqa: JAX101  # JAX002
        """,
        """
        import jax


        @jax.jit
        def clip(x):
            if x > 0:  # noqa: JAX101, JAX901  # JAX002
                return x
            return -x
        """,
    )
    good = (
        """
        import jax


        @jax.jit
        def scale(x, factor: float):
            return x * factor
        """,
        """
        import jax


        @jax.jit
        def clip(x):
            if x > 0:  # noqa: JAX101, E501
                return x
            return -x
        """,
    )
    fix_safety = """
        The fix removes the unused codes from the directive, or the directive when none is left,
        keeping any other text of the comment. It is safe: a code that suppresses nothing changes
        nothing when removed.
        """
    fixable = True

    def check(self, module, report):
        """Suppression reports unused directives, once every other rule has run (`jaxlint.suppression`)."""
