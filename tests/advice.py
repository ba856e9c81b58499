"""What a finding tells the user to write, and the code of the line it is attached to.

A message quotes code in backticks. Its advice is the clauses (between `;` and `:`) that begin
with an imperative (`use`, `write`, `split it (...)`, ...); the code they quote is what the user
is told to write. Advice is wrong when that code is what the flagged line already says.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

# The words a message's advice begins with, as the rules phrase it.
ADVICE_WORDS = frozenset({
    "assign", "build", "carry", "consume", "copy", "define", "derive", "drop", "fold", "import",
    "keep", "make", "map", "name", "pad", "pass", "read", "rebind", "return", "split", "start",
    "store", "use", "write",
})
_QUOTED = re.compile(r"`([^`]*)`")


def advice(message: str) -> list[str]:
    """The clauses of a message that tell the user what to do, as written."""
    quoted: list[str] = []

    def hold(match: re.Match) -> str:
        quoted.append(match.group(0))
        return f"\0{len(quoted) - 1}\0"

    masked = _QUOTED.sub(hold, message)  # a `;` or `:` inside quoted code does not end a clause
    found = []
    for clause in re.split(r"[;:]\s", masked):
        words = clause.split()
        if words and words[0] in ADVICE_WORDS:
            found.append(re.sub(r"\0(\d+)\0", lambda m: quoted[int(m.group(1))], clause))
    return found


def remedies(message: str) -> list[str]:
    """The code the advice of a message quotes: what it tells the user to write."""
    return [code for clause in advice(message) for code in _QUOTED.findall(clause)]


def normalised(code: str) -> str:
    """Code with its whitespace taken out: two spellings that differ only in spacing are one."""
    return "".join(code.split())


def line_code(source: str, row: int) -> str:
    """Line `row` (from 1) of `source` without its comment."""
    line = source.splitlines()[row - 1]
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and token.start[0] == row:
            return line[: token.start[1]]
    return line


def flagged_code(source: str, row: int) -> set[str]:
    """What the flagged line says, normalised: the line, the simple statement it is part of, and
    the value that statement computes (a `return`'s, an assignment's, an expression's)."""
    texts = {line_code(source, row)}
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a file that does not parse: its line is all there is
        tree = ast.Module(body=[], type_ignores=[])
    statements = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.lineno <= row <= node.end_lineno
    ]
    for statement in statements:
        texts.add(ast.get_source_segment(source, statement))
        value = getattr(statement, "value", None)
        if isinstance(value, ast.expr):
            texts.add(ast.get_source_segment(source, value))
    return {normalised(text) for text in texts if text}
