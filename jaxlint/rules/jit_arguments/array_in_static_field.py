"""JAX307: a pytree field declared static and declared an array."""

from __future__ import annotations

import ast

from jaxlint.analysis.tracing.array_annotations import declares_array
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS

# Field constructors, and the keyword and value that make the field static.
_STATIC_FIELDS = {
    "equinox.field": ("static", True),
    "flax.struct.field": ("pytree_node", False),
}


@register
class ArrayInStaticField(Rule):
    code = "JAX307"
    name = "array-in-static-field"
    summary = "A pytree field declared static (`eqx.field(static=True)`, `pytree_node=False`) holds an array"
    what = """
        Checks for dataclass fields annotated as an array and declared static
        (`eqx.field(static=True)`, `flax.struct.field(pytree_node=False)`). A static field is
        part of the pytree's structure, which JAX hashes and compares on every call: an array
        there raises `ValueError`, or makes every new array a new compilation.
        """
    decisions = """
        - An array annotation is `jax.Array`, `jax.typing.ArrayLike`, `np.ndarray`, a jaxtyping
          array, a project's own alias named `Array` or `...Array`, or a union of only those.
        - A static field is declared with `eqx.field(static=True)`,
          `flax.struct.field(pytree_node=False)`, or
          `dataclasses.field(metadata=dict(static=True))` in a class registered with
          `jax.tree_util.register_dataclass`.
        """
    why = """
        A static field is not a leaf of the pytree: it is part of its structure, which JAX
        hashes and compares with `==` to look up a compiled program each time a jitted function
        is called. An array has no hash and no single truth value for `==`, so the next call
        with such a pytree raises `ValueError` ("arrays cannot be passed as metadata fields"),
        and where it does not, every new array is a new structure and a new compilation. Keep
        arrays in ordinary (traced) fields and make static only Python configuration: sizes,
        flags, activation functions.
        """
    bad = (
        """
        import equinox as eqx
        import jax

        class Linear(eqx.Module):
            weight: jax.Array = eqx.field(static=True)  # JAX307
            bias: jax.Array
            activation: str = eqx.field(static=True, default="relu")
        """,
        """
        import dataclasses
        import jax
        import numpy as np
        from flax import struct

        @struct.dataclass
        class Buffer:
            data: np.ndarray = struct.field(pytree_node=False)  # JAX307
            size: int = struct.field(pytree_node=False)

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Table:
            rows: jax.Array = dataclasses.field(metadata=dict(static=True))  # JAX307
            n: int = dataclasses.field(metadata={"static": True})
        """,
    )
    good = (
        """
        import equinox as eqx
        import jax
        from flax import struct

        class Linear(eqx.Module):
            weight: jax.Array
            bias: jax.Array
            activation: str = eqx.field(static=True, default="relu")

        @struct.dataclass
        class Buffer:
            data: jax.Array
            size: int = struct.field(pytree_node=False)
            mask: jax.Array | None = struct.field(pytree_node=True, default=None)
        """,
    )
    demo = JaxDemo(
        """
        import dataclasses
        import jax
        import jax.numpy as jnp

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Layer:
            weight: jax.Array = dataclasses.field(metadata=dict(static=True))

        @jax.jit
        def apply(layer, x):
            return x @ layer.weight

        def demo():
            apply(Layer(jnp.ones((2, 2))), jnp.ones(2))
            apply(Layer(jnp.ones((2, 2))), jnp.ones(2))
        """,
        "raises:ValueError",
    )
    references = (
        "https://docs.jax.dev/en/latest/_autosummary/jax.tree_util.register_dataclass.html",
        "https://docs.kidger.site/equinox/api/module/advanced_fields/",
    )

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "A field is an array only by its annotation, and static only through `eqx.field`,"
        " `flax.struct.field` or `register_dataclass` metadata.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        if "field" not in module.source.text:
            return
        for cls in module.names.classes:
            registered = any(
                module.qualname(d.func if isinstance(d, ast.Call) else d) == "jax.tree_util.register_dataclass"
                for d in cls.decorator_list
            )
            for stmt in cls.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                how = _declared_static(stmt.value, registered, module)
                if how and declares_array(stmt.annotation, module.names):
                    report(
                        stmt.target,
                        f"field `{stmt.target.id}` is an array declared static ({how}): JAX hashes and compares "
                        "static fields on every call of a jitted function, and an array there raises "
                        "`ValueError` or recompiles; make it an ordinary (traced) field",
                    )


def _declared_static(value: ast.expr | None, registered: bool, module) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    callee = module.qualname(value.func)
    keywords = {k.arg: k.value for k in value.keywords if k.arg}
    if callee == "equinox.static_field":
        return "`eqx.static_field()`"
    if callee in _STATIC_FIELDS:
        keyword, static = _STATIC_FIELDS[callee]
        given = keywords.get(keyword)
        if isinstance(given, ast.Constant) and given.value is static:
            return f"`{keyword}={static}`"
        return None
    if callee == "dataclasses.field" and registered:
        metadata = keywords.get("metadata")
        if _static_metadata(metadata, module):
            return "`metadata` `static=True`"
    return None


def _static_metadata(metadata: ast.expr | None, module) -> bool:
    """`dict(static=True)` or `{"static": True}`."""
    if isinstance(metadata, ast.Call) and module.qualname(metadata.func) == "builtins.dict":
        return any(k.arg == "static" and isinstance(k.value, ast.Constant) and k.value.value is True for k in metadata.keywords)
    if isinstance(metadata, ast.Dict):
        return any(
            isinstance(k, ast.Constant) and k.value == "static" and isinstance(v, ast.Constant) and v.value is True
            for k, v in zip(metadata.keys, metadata.values)
        )
    return False
