"""JAX0xx: the linter itself."""
