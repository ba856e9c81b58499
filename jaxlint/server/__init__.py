"""`jaxlint server`: a language server (LSP over standard input and output) for editors; needs the `server` extra."""

from __future__ import annotations
