"""JAX0xx: the linter itself."""

from __future__ import annotations
