"""JAX1xx: Python control flow and concretization on traced values."""
