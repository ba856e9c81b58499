"""JAX3xx: `static_argnums`/`static_argnames` and `donate_argnums`/`donate_argnames` that JAX rejects or mishandles."""

from __future__ import annotations
