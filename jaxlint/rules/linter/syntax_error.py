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
        finding points at the error (for an encoding, the line, column and byte offset of the
        first byte that is not text), and the other files are still linted.
        """
    decisions = """
        A path that cannot be read at all is reported with the same code under the name
        `io-error` (in JSON's `name` and in `--statistics`), as ruff's E902, its message the
        system's reason: a path given on the command line that does not exist (`No such file or
        directory`: a typo in a CI script, not a broken file), a folder without read permission,
        a FIFO or a device named on the command line, a symbolic link loop, a file over 128 MiB.
        A file that was read but does not parse keeps the name `syntax-error`.

        JAX001 is reported whatever `--select` or `select` names, as ruff always reports a syntax
        error: a run that selects one rule must still fail on a file it could not check, or on a
        path that is not there. Only an ignore that names it (`--ignore JAX001`, or `JAX0`) turns
        it off, and no `# noqa` suppresses it.
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
