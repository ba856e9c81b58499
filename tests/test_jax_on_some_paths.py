"""JAX401 where a name is a JAX array on some paths only: a branch binds `jnp.zeros(...)`, the
other what a dict or a parameter held. The store raises `TypeError` on the first path; the
look-alikes that bind a NumPy array on every path, store where only the other path reaches, or
bind a NumPy array on another branch (code written for both kinds), run under JAX.
"""

from __future__ import annotations

from quiet_and_reported import case_tests

QUIET = {
    "code_written_for_both_kinds_of_array": """
        import jax.numpy as jnp
        import numpy as np

        def first_to_one(on_device):
            if on_device:
                values = jnp.zeros(3)
            else:
                values = np.zeros(3)
            if not on_device:
                values[0] = 1.0  # another branch binds a NumPy array: left alone
            return values

        def demo():
            return first_to_one(True), first_to_one(False)
        """,
    "a_numpy_copy_on_every_path_before_the_store": """
        import jax.numpy as jnp
        import numpy as np

        def stack_into(state, key, tensor, layers, index):
            if key in state:
                stacked = state[key]
            else:
                stacked = jnp.zeros((layers,) + tensor.shape)
            stacked = np.array(stacked)
            stacked[index] = tensor
            return stacked

        def demo():
            return stack_into({}, "w", np.ones(2), 3, 1)
        """,
    "the_store_is_in_the_branch_without_the_jax_array": """
        import jax.numpy as jnp
        import numpy as np

        def fill(values, use_jax):
            if use_jax:
                values = jnp.asarray(values)
                return values.at[0].set(1.0)
            values[0] = 1.0
            return values

        def demo():
            return fill(np.zeros(3), False), fill(np.zeros(3), True)
        """,
    "an_isinstance_test_leaves_only_the_other_path": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        def first_to_one(values, fresh):
            if fresh:
                values = jnp.zeros(3)
            if not isinstance(values, jax.Array):
                values[0] = 1.0
            return values

        def demo():
            return first_to_one(np.zeros(3), False), first_to_one(np.zeros(3), True)
        """,
}

REPORTED = {
    "a_fresh_buffer_in_one_branch": (
        """
        import jax.numpy as jnp
        import numpy as np

        def stack_into(state, key, tensor, layers, index):
            if key in state:
                stacked = state[key]
            else:
                stacked = jnp.zeros((layers,) + tensor.shape)
            stacked[index] = tensor
            return stacked

        def demo():
            return stack_into({}, "w", np.ones(2), 3, 1)
        """,
        "JAX401",
        "TypeError",
    ),
    "a_parameter_converted_when_asked": (
        """
        import jax.numpy as jnp
        import numpy as np

        def clipped(values, on_device=False):
            if on_device:
                values = jnp.asarray(values)
            values[values > 1.0] = 1.0
            return values

        def demo():
            return clipped(np.array([0.5, 2.0]), on_device=True)
        """,
        "JAX401",
        "TypeError",
    ),
}

(
    test_quiet_case_stays_quiet,
    test_reported_case_is_reported,
    test_jax_runs_the_quiet_case,
    test_jax_rejects_the_reported_case,
) = case_tests(QUIET, REPORTED)


def test_no_fix_is_offered(cli, make_files):
    """`x = x.at[i].set(v)` would fail on the path where `x` is a NumPy array or a list."""
    import textwrap

    make_files({"m.py": textwrap.dedent(REPORTED["a_fresh_buffer_in_one_branch"][0])})
    (finding,) = cli("check", "--no-cache", "--output-format", "json", "m.py").json
    assert finding["code"] == "JAX401" and finding["fix"] is None
