"""A generic base (`Base[State]`) is the class it parametrises: its methods are found through it,
and its fields are the subclass's fields."""

from __future__ import annotations

import textwrap

import pytest

SOURCE = """
    from typing import Generic, TypeVar

    import jax
    import jax.numpy as jnp
    import flax.struct

    T = TypeVar("T")


    class Base(flax.struct.PyTreeNode, Generic[T]):
        count: jax.Array

        def positive(self, x):
            if x > 0:
                return x
            return -x


    class Counter(Base[int]):
        total: jax.Array

        @jax.jit
        def step(self, x):
            return self.positive(x) + self.count

        @jax.jit
        def full(self):
            return jnp.where(self.total > 0, self.total, 0) if self.count > 3 else self.total
    """


def test_a_method_and_the_fields_are_found_through_a_generic_base(cli, make_files):
    make_files({"counter.py": SOURCE})
    out = cli("check", "--no-cache", "--select", "JAX1", "--output-format", "json", "counter.py")
    lines = textwrap.dedent(SOURCE).splitlines()
    assert sorted((f["location"]["row"], f["code"]) for f in out.json) == [
        (lines.index("        if x > 0:") + 1, "JAX101"),
        (lines.index("        return jnp.where(self.total > 0, self.total, 0) if self.count > 3 else self.total") + 1, "JAX101"),
    ]


def test_jax_traces_the_inherited_method_and_the_fields():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    pytest.importorskip("flax")
    namespace: dict = {}
    exec(textwrap.dedent(SOURCE), namespace)
    counter = namespace["Counter"](count=jnp.int32(4), total=jnp.int32(2))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        counter.step(jnp.float32(1.0))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        counter.full()
