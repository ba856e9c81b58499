"""The array domain: which expressions are JAX arrays, in eager code too."""
