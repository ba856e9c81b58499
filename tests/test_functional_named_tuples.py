"""A NamedTuple class made by a call (`collections.namedtuple("State", ["values", "idx"])`) is
a pytree whose every field is a child: traced where a jitted function's parameter is annotated
with it, as for a `class State(NamedTuple)`."""

from __future__ import annotations

import textwrap

import pytest

SOURCE = """
    import collections
    import functools

    import jax
    import jax.numpy as jnp

    State = collections.namedtuple("State", ["values", "idx"])


    class Buffer:
        size = 4

        @functools.partial(jax.jit, static_argnums=(0,))
        def position(self, state: State):
            return min(max(state.values[1] - state.idx + self.size, -1), self.size)

        @functools.partial(jax.jit, static_argnums=(0,))
        def clipped(self, state: State):
            return jnp.clip(state.values[1] - state.idx + self.size, -1, self.size)

        @functools.partial(jax.jit, static_argnums=(0,))
        def rows(self, state: State):
            return jnp.zeros((state.values.shape[0], self.size))
    """


def test_a_field_of_a_namedtuple_made_by_a_call_is_traced(cli, make_files):
    make_files({"buffer.py": SOURCE})
    out = cli("check", "--no-cache", "--select", "JAX1", "--output-format", "json", "buffer.py")
    row = textwrap.dedent(SOURCE).splitlines().index("        return min(max(state.values[1] - state.idx + self.size, -1), self.size)") + 1
    assert [(f["location"]["row"], f["code"]) for f in out.json] == [(row, "JAX113")]


def test_jax_traces_the_fields_and_rejects_the_python_max():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    namespace: dict = {}
    exec(textwrap.dedent(SOURCE), namespace)
    buffer, state = namespace["Buffer"](), namespace["State"](values=jnp.arange(3.0), idx=jnp.int32(1))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        buffer.position(state)
    assert float(buffer.clipped(state)) == 4.0
    assert buffer.rows(state).shape == (3, 4)
