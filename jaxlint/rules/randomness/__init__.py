"""JAX2xx: PRNG keys reused, used after `split`, or made afresh from a constant seed; stateful RNGs in traced code."""

from __future__ import annotations
