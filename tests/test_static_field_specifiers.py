"""A field specifier of the project's own that declares a field static (`static_field()`, as
Flax's older API and the projects that copy it spell it): the field holds a Python value, for
every reader of the class's fields alike (a traced instance's fields, and the fields read
through a parameter's annotation where the value shows no class)."""

from __future__ import annotations

from quiet_and_reported import case_tests

OWN_STATIC_FIELD = """
    import jax
    import jax.numpy as jnp
    from flax import struct


    def static_field(**kwargs):
        return struct.field(pytree_node=False, **kwargs)


    @struct.dataclass
    class Grid:
        cells: jax.Array
        num_dims: int = static_field()


    def count(cells, grid: Grid):
        out = 0.0
        for axis in range(grid.num_dims):
            out = out + cells.sum(axis=axis).sum()
        return out


    @jax.jit
    def total(grid):
        return count(grid.cells, grid)


    def demo():
        return total(Grid(jnp.ones((2, 3)), 2))
    """

QUIET = {"own-static-field-read-through-an-annotation": OWN_STATIC_FIELD}
REPORTED = {
    # Without the specifier, a Flax dataclass holds the number as a leaf: a tracer under `jit`.
    "number-field-read-through-an-annotation": (
        OWN_STATIC_FIELD.replace("num_dims: int = static_field()", "num_dims: int"),
        "JAX109",
        "TracerIntegerConversionError",
    ),
}

(
    test_static_fields_stay_quiet,
    test_leaf_fields_are_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED, needs=("jax", "flax"))
