"""JAX306: `@jax.jit` on a method whose `self` is neither static nor a pytree."""

from __future__ import annotations

import ast

from jaxlint.analysis.shapes import jit_signature
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS

# Class decorators and registration calls that make instances pytrees (or static).
_PYTREE_DECORATORS = frozenset({
    "jax.tree_util.register_pytree_node_class",
    "jax.tree_util.register_pytree_with_keys_class",
    "jax.tree_util.register_dataclass",
    "jax.tree_util.register_static",
    "flax.struct.dataclass",
    "chex.dataclass",
})
_REGISTRATIONS = frozenset({
    "jax.tree_util.register_pytree_node",
    "jax.tree_util.register_pytree_with_keys",
    "jax.tree_util.register_pytree_node_class",
    "jax.tree_util.register_pytree_with_keys_class",
    "jax.tree_util.register_dataclass",
    "jax.tree_util.register_static",
})
_PLAIN_DECORATORS = frozenset({"dataclasses.dataclass"})


@register
class JitMethodTracedSelf(Rule):
    code = "JAX306"
    name = "jit-method-traced-self"
    summary = "`@jax.jit` on a method of a class that is not a pytree, without making `self` static"
    what = """
        Checks for `@jax.jit` (or `partial(jax.jit, ...)`) on a method of a plain Python class
        without making `self` static. `self` becomes the first argument of the jitted function,
        and JAX cannot trace a plain object: the first call raises `TypeError`.
        """
    decisions = """
        - A plain Python class has no base classes other than plain classes of the same module,
          and no decorator or registration call that makes it a pytree.
        - `self` named in `static_argnums`/`static_argnames` is static, and not reported.
        - Not reported: classes that are pytrees (Equinox and Flax modules,
          `flax.struct.dataclass`, `register_pytree_node_class`, `NamedTuple`s, anything with an
          unknown base or class decorator), `staticmethod`s, and `jax.jit(self.method)` (a bound
          method, `self` already bound).
        """
    why = """
        `jax.jit` on a method wraps the plain function, so `self` is its first argument, and
        JAX must treat it as an array or a pytree of arrays. A plain object is neither: the
        first call raises `TypeError: Error interpreting argument to ... as an abstract array`.
        Either make `self` static (`@partial(jax.jit, static_argnums=0)`, with `__hash__` and
        `__eq__` that reflect what the method reads), register the class as a pytree, or jit a
        free function that takes the arrays it needs.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        class Scaler:
            def __init__(self, scale):
                self.scale = scale

            @jax.jit  # JAX306
            def __call__(self, x):
                return x * self.scale
        """,
        """
        from functools import partial
        import jax

        class Model:
            def __init__(self, depth):
                self.depth = depth

            @partial(jax.jit, static_argnames=("train",))  # JAX306
            def apply(self, x, train=False):
                return x * self.depth if train else x
        """,
    )
    good = (
        """
        from functools import partial
        import jax

        class Scaler:
            def __init__(self, scale):
                self.scale = scale

            @partial(jax.jit, static_argnums=0)
            def __call__(self, x):
                return x * self.scale

            @staticmethod
            @jax.jit
            def double(x):
                return x * 2

            def compiled(self):
                return jax.jit(self.__call__)
        """,
        """
        import jax
        import equinox as eqx
        from flax import struct

        class Linear(eqx.Module):
            w: jax.Array

            @jax.jit
            def __call__(self, x):
                return x @ self.w

        @struct.dataclass
        class Params:
            w: jax.Array

            @jax.jit
            def apply(self, x):
                return x @ self.w

        @jax.tree_util.register_pytree_node_class
        class Box:
            def __init__(self, v):
                self.v = v

            def tree_flatten(self):
                return (self.v,), None

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)

            @jax.jit
            def doubled(self):
                return self.v * 2
        """,
        """
        import jax

        class Point:
            def __init__(self, x):
                self.x = x

            @jax.jit
            def norm(self):
                return abs(self.x)

        jax.tree_util.register_pytree_node(Point, lambda p: ((p.x,), None), lambda _, c: Point(*c))
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        class Scaler:
            def __init__(self, scale):
                self.scale = scale

            @jax.jit
            def __call__(self, x):
                return x * self.scale

        def demo():
            Scaler(2.0)(jnp.ones(3))
        """,
        "raises:TypeError",
    )
    references = ("https://docs.jax.dev/en/latest/faq.html#how-to-use-jit-with-methods",)

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "A class that may be a pytree (a framework module, a registered class, an unknown base or"
        " class decorator) is left alone.",
        "`jax.jit(self.method)` is not reported: the bound method has `self` already bound.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        registered = None
        for root in jit_signature.plain_jits(module):
            fn = root.node
            cls = module.names.parent_class.get(id(fn))
            if cls is None or root.bound_positional or not any(root.site is d for d in fn.decorator_list):
                continue
            positional = [*fn.args.posonlyargs, *fn.args.args]
            if not positional or positional[0].arg != "self":
                continue
            if any(_decorator_name(d) in ("staticmethod", "classmethod") for d in fn.decorator_list):
                continue
            if "self" in jit_signature.designated(root, "static"):
                continue
            if not jit_signature.option_is_literal(root, "static_argnums") or not jit_signature.option_is_literal(root, "static_argnames"):
                continue
            if registered is None:
                registered = _registered_classes(module)
            if not _plain_class(cls, module, registered, set()):
                continue
            report(
                root.site,
                f"`@jax.jit` on method `{fn.name}` of `{cls.name}`, which is not a pytree: `self` is traced "
                "and JAX raises `TypeError` on the first call; use `static_argnums=0` (with `__hash__`/"
                "`__eq__`), register the class as a pytree, or jit a free function",
            )


def _decorator_name(decorator: ast.AST) -> str | None:
    if isinstance(decorator, ast.Name):
        return decorator.id
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return None


def _registered_classes(module) -> set[str]:
    """Names of classes passed to a pytree registration call anywhere in the module."""
    found = set()
    for call, _scope in module.names.calls:
        if module.qualname(call.func) in _REGISTRATIONS and call.args and isinstance(call.args[0], ast.Name):
            found.add(call.args[0].id)
    return found


def _plain_class(cls: ast.ClassDef, module, registered: set[str], seen: set[int]) -> bool:
    """A class whose instances are plain Python objects: not a pytree, by any route we can see."""
    if id(cls) in seen or cls.name in registered or cls.keywords:
        return False
    seen.add(id(cls))
    for decorator in cls.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if module.qualname(target) not in _PLAIN_DECORATORS:
            return False  # a pytree decorator, or one we do not know
    for base in cls.bases:
        if module.qualname(base) == "builtins.object":
            continue
        definition = module.names.definition(base) if isinstance(base, ast.Name) else None
        if not isinstance(definition, ast.ClassDef) or not _plain_class(definition, module, registered, seen):
            return False
    return True
