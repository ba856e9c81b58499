"""JAX308: a jitted method with a static `self` that is hashed by identity, whose attributes change."""

from __future__ import annotations

import ast

from jaxlint.analysis.shapes import jit_signature
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS


@register
class StaleStaticSelf(Rule):
    code = "JAX308"
    name = "stale-static-self"
    summary = "A jitted method with a static `self` reads attributes that change later: stale values are baked in"
    what = """
        Checks for a method jitted with `self` static (`@partial(jax.jit, static_argnums=0)`)
        that reads an attribute (`self.w`) assigned again after construction. JAX traces the
        method once per object and bakes in the values it read then, so after the attribute
        changes every call silently computes with the old value.
        """
    decisions = """
        - The class is a plain class hashed by identity: no `__hash__`/`__eq__`, no class
          decorator.
        - An attribute is assigned again after construction in another method of the class (`def
          fit(self, ...): self.w = ...`), or on an instance (`model.w = ...`).
        - Attributes set only while constructing the object (in `__init__`, or in a method that
          only `__init__` calls) are not reported.
        """
    why = """
        A static argument is part of the compilation cache key through its hash and equality.
        With the default ones, `self` is the same key for the object's whole life, so JAX traces
        the method once and bakes in the attribute values it read then. After `self.w` changes,
        every later call hits the cache and silently computes with the old `self.w`. Pass what
        changes as an argument, make the class a pytree
        (`jax.tree_util.register_pytree_node_class`, `flax.struct.dataclass`, `eqx.Module`) so
        its arrays are traced, or define `__hash__` and `__eq__` over the attributes the method
        reads (then a change compiles again).
        """
    bad = (
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        class Regressor:
            def __init__(self, w):
                self.w = w

            @partial(jax.jit, static_argnums=0)  # JAX308
            def predict(self, x):
                return x @ self.w

            def fit(self, x, y):
                self.w = jnp.linalg.lstsq(x, y)[0]
                return self
        """,
    )
    good = (
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        class Regressor:
            def __init__(self, w, scale):
                self.w = w
                self.scale = scale  # set once: a true constant of the instance

            @partial(jax.jit, static_argnums=0)
            def predict(self, x, w):
                return self.scale * (x @ w)  # what changes is an argument

            def fit(self, x, y):
                self.w = jnp.linalg.lstsq(x, y)[0]
                return self.predict(x, self.w)

        class Keyed:
            def __init__(self, w):
                self.w = w

            def __hash__(self):
                return hash(self.w)

            def __eq__(self, other):
                return self.w == other.w

            @partial(jax.jit, static_argnums=0)
            def predict(self, x):
                return x * self.w

            def set(self, w):
                self.w = w  # a new hash: the next call compiles again
        """,
    )
    demo = JaxDemo(
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        class Scaler:
            def __init__(self, s):
                self.s = s

            @partial(jax.jit, static_argnums=0)
            def apply(self, x):
                return x * self.s

        def demo():
            m = Scaler(2.0)
            m.apply(jnp.ones(1))
            m.s = 3.0
            out = float(m.apply(jnp.ones(1))[0])
            assert out == 3.0, f"the compiled method still uses the old value: {out}"
        """,
        "raises:AssertionError",
    )
    references = ("https://docs.jax.dev/en/latest/faq.html#strategy-2-marking-self-as-static",)

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "Only plain classes hashed by identity are checked: no `__hash__` or `__eq__`, no class"
        " decorator.",
        "Attributes set only while the object is constructed are not reported.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        for root in jit_signature.plain_jits(module):
            fn = root.node
            cls = module.names.parent_class.get(id(fn))
            if cls is None or isinstance(fn, ast.Lambda) or not any(root.site is d for d in fn.decorator_list):
                continue
            positional = [*fn.args.posonlyargs, *fn.args.args]
            if not positional or positional[0].arg not in jit_signature.designated(root, "static"):
                continue
            if not jit_signature.identity_hashed(cls, module):
                continue
            self_name = positional[0].arg
            read = {
                node.attr
                for node in module.body(fn)
                if isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == self_name
                and isinstance(node.ctx, ast.Load)
            }
            if not read:
                continue
            changed = jit_signature.reassigned_attributes(cls, module)
            stale = sorted((attr, changed[attr][0]) for attr in read if attr in changed)
            if not stale:
                continue
            attr, store = stale[0]
            where = f"in `{store.function.name}`" if store.function is not None else "at module level"
            report(
                root.site,
                f"`{fn.name}` is jitted with `{self_name}` static, and `{cls.name}` is hashed by identity: "
                f"`{self_name}.{attr}` is assigned again {where} (line {store.stmt.lineno}), but later calls "
                f"reuse the compiled method with the old value; pass `{attr}` as an argument or make "
                f"`{cls.name}` a pytree",
            )
