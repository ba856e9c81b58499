"""`lax.switch` given its branches through a name: the items of the list or tuple the name is
bound to, and those `append`, `insert` or `extend` add to it, are the branches JAX traces, and
the keys its operands hold are consumed as those branches consume them."""

from __future__ import annotations

from quiet_and_reported import case_tests

QUIET = {
    # The branches only read shapes: nothing traced is tested.
    "branches_test_shapes": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(x, i):
            def double(x):
                return x * 2 if x.shape[0] > 1 else x

            def negate(x):
                return -x

            branches = [double, negate]
            return jax.lax.switch(i, branches, x)

        def demo():
            return step(jnp.ones(3), 1)
        """,
    # Each branch returns a list, which the switch returns as a list: assigning into it is fine.
    "branches_return_lists": """
        import jax
        import jax.numpy as jnp

        def demo():
            branches = (lambda: [jnp.zeros(()), jnp.ones(())], lambda: [jnp.ones(()), jnp.ones(())])
            out = jax.lax.switch(1, branches)
            out[0] = jnp.ones(())
            return out
        """,
    # Only a key the branches draw from is consumed by the switch: these draw none.
    "branches_that_draw_nothing": """
        import jax

        def keep(key):
            return jax.numpy.zeros(2)

        def run(i, key):
            branches = [keep, keep]
            out = jax.lax.switch(i, branches, key)
            return out + jax.random.uniform(key, (2,))

        def demo():
            with jax.debug_key_reuse(True):
                return run(1, jax.random.key(0))
        """,
}

REPORTED = {
    # A branch appended under a flag is traced as the written ones are.
    "appended_branch_tests_a_tracer": (
        """
        import jax
        import jax.numpy as jnp

        def build(accelerate: bool):
            def on_new(x):
                return x + 1

            def on_replay(x):
                return x - 1

            def on_mutate(x):
                if x.sum() > 0:
                    return x
                return -x

            @jax.jit
            def step(x, i):
                branches = [on_new, on_replay]
                if accelerate:
                    branches.append(on_mutate)
                return jax.lax.switch(i, branches, x)

            return step

        def demo():
            return build(True)(jnp.ones(3), 2)
        """,
        "JAX101",
        "TracerBoolConversionError",
    ),
    # Every branch returns one array: so does the switch, and an array takes no item assignment.
    "named_branches_return_arrays": (
        """
        import jax
        import jax.numpy as jnp

        def demo():
            branches = [lambda: jnp.bool_([1, 1, 0])]
            branches.extend([lambda: jnp.bool_([1, 1, 1])])
            legal = jax.lax.switch(1, branches)
            legal[0] = False
            return legal
        """,
        "JAX401",
        "TypeError",
    ),
    # A branch appended that draws from the key operand consumes it as a written one does.
    "appended_branch_draws_from_the_key": (
        """
        import jax

        def draw(key):
            return jax.random.normal(key, (2,))

        def keep(key):
            return jax.numpy.zeros(2)

        def run(i, key):
            branches = [keep]
            branches.append(draw)
            out = jax.lax.switch(i, branches, key)
            return out + jax.random.uniform(key, (2,))

        def demo():
            with jax.debug_key_reuse(True):
                return run(1, jax.random.key(0))
        """,
        "JAX201",
        "KeyReuseError",
    ),
}

test_stays_quiet, test_is_reported, test_jax_traces_it, test_jax_rejects_it = case_tests(QUIET, REPORTED)
