"""JAX001: the file could not be read or parsed."""

from __future__ import annotations

from jaxlint.rule import Rule, register


@register
class SyntaxErrorRule(Rule):
    code = "JAX001"
    name = "syntax-error"
    summary = "The file could not be read or parsed as Python"
    what = """
        Reports a file that jaxlint cannot read or parse: not valid Python for the running
        interpreter, not valid in its declared encoding, or too deeply nested to analyse. The
        finding points at the error, and the other files are still linted.
        """
    decisions = """
        A path that cannot be read at all is reported the same way: a folder without read
        permission, a FIFO or a device named on the command line, a symbolic link loop, a file
        over 128 MiB.
        """
    limits = (
        "A file is parsed as the running interpreter's Python: syntax of a newer Python is reported"
        " under an older one.",
        "A path that cannot be read (no permission, a FIFO, a link loop, a file over 128 MiB) is"
        " reported, not analysed.",
    )
    why = """
        A file jaxlint cannot parse is a file it cannot check: this finding makes that visible
        instead of silently skipping it. Python would refuse to import the file too.
        """
    bad = (
        """
        def broken(x)  # JAX001
            return x
        """,
    )
    good = (
        """
        def fixed(x):
            return x
        """,
    )

    def check(self, module, report):
        """Parse errors are reported by the linter before any rule runs."""
