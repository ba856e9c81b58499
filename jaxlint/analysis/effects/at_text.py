"""Where `.at[` appears in a module's text: cheap, exact prefilters for the array facts.

A name can only be shown to be a JAX array by an `.at[...]` call on it, and an unread
`.at[...]` update can only sit on the lines of one, so the text answers first which names and
which lines are worth a solve.
"""

from __future__ import annotations

import re
import unicodedata

_GAP = r"(?:\s|\\\r?\n|#[^\n]*\n)*"  # what may separate two tokens (each matched one way only)
AT_CALL = re.compile(rf"\.{_GAP}at{_GAP}\[")
_BLANK = " \t\f\r\n\\"  # between a name and its `.at`, without comments
_AT_PLAIN = re.compile(r"\.\s*at\s*\[")  # `.at[` with only whitespace inside


def mentions_at(text: str) -> bool:
    """Whether `.at[` (whitespace allowed between the tokens) appears in the text: most modules, no."""
    return _AT_PLAIN.search(text) is not None


def names_before_at(text: str) -> frozenset[str] | None:
    """The identifier before each `.at[` of the text (whitespace, line continuations and
    comments may lie between the tokens); None when a comment lies between a name and `.at`,
    as the name cannot be told apart from the comment's words going backwards."""
    found = set()
    for match in AT_CALL.finditer(text):
        end = match.start()
        while end and text[end - 1] in _BLANK:
            end -= 1
        line = text.rfind("\n", 0, end) + 1
        if "\n" in text[end:match.start()] and "#" in text[line:end]:
            return None
        start = end
        while start and (text[start - 1].isalnum() or text[start - 1] == "_" or not text[start - 1].isascii()):
            start -= 1
        if start < end:
            name = text[start:end]
            found.add(name if name.isascii() else unicodedata.normalize("NFKC", name))
    return frozenset(found)


def at_call_lines(text: str) -> list[tuple[int, int]]:
    """The first and last line of each `.at[` of the text, in order: every `x.at[i]` of the
    code lies on the lines of one of them (one that a string or a comment started may have
    taken it in)."""
    spans = []
    line, offset = 1, 0
    for match in AT_CALL.finditer(text):
        line += text.count("\n", offset, match.start())
        last = line + text.count("\n", match.start(), match.end())
        spans.append((line, last))
        line, offset = last, match.end()
    return spans
