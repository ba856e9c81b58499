"""JAX302 on a value a function of the module returns in a tuple: where every `return` of it puts
an array at that place, the item the caller unpacks and passes to a static parameter cannot be
hashed, and JAX raises `ValueError`; where the item is a Python number, JAX compiles.
"""

from __future__ import annotations

from quiet_and_reported import case_tests

QUIET = {
    "a_returned_count_passed_static": """
        import functools
        import jax
        import jax.numpy as jnp
        import numpy as np

        def collect(batches):
            feats = [np.ones((2, 3)) for _ in batches]
            return len(feats), np.concatenate(feats)

        @functools.partial(jax.jit, static_argnums=(1,))
        def scale(x, n):
            return x * n

        def demo():
            n, feats = collect(range(2))
            return scale(feats, n)
        """,
}

REPORTED = {
    "a_returned_array_passed_static": (
        """
        import functools
        import jax
        import jax.numpy as jnp
        import numpy as np

        def collect(batches):
            feats = [np.ones((2, 3)) for _ in batches]
            return len(feats), np.concatenate(feats)

        @functools.partial(jax.jit, static_argnums=(0,))
        def whiten(x, n):
            return (x - jnp.mean(x)) / n

        def demo():
            n, feats = collect(range(2))
            return whiten(feats, n)
        """,
        "JAX302",
        "ValueError",
    ),
}

(
    test_quiet_case_stays_quiet,
    test_reported_case_is_reported,
    test_jax_runs_the_quiet_case,
    test_jax_rejects_the_reported_case,
) = case_tests(QUIET, REPORTED)
