"""JAX1xx: Python control flow and concretization on traced values."""

from __future__ import annotations
