"""JAX4xx: purity — in-place updates of immutable arrays, discarded updates, side effects in traced code."""

from __future__ import annotations
