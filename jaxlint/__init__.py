"""jaxlint: a static linter for JAX tracing, randomness, jit-argument, purity and recompilation bugs."""

from __future__ import annotations

__version__ = "0.1.0"
