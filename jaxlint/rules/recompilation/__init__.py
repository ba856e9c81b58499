"""JAX5xx: recompilation — shapes that change on every call, jit rebuilt on every call, unrolled loops."""

from __future__ import annotations
