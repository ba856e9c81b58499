"""JAX305: one buffer passed twice to a jitted call that donates it."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine import reads
from jaxlint.analysis.shapes import jit_signature
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS


@register
class BufferDonatedTwice(Rule):
    code = "JAX305"
    name = "buffer-donated-twice"
    summary = "The same array is passed twice to a jitted call that donates one of them"
    what = """
        Checks for a call of a function jitted with `donate_argnums`/`donate_argnames` that
        passes a donated buffer in another argument position too: `step(x, x)`, `update(state,
        state.params)`. XLA refuses to run a call that reads a buffer it was also handed to
        overwrite.
        """
    decisions = """
        - The same buffer is the same variable, or a variable and an item or attribute of it, in
          two argument positions, at least one of them donated.
        - A name that is a plain copy of another where the call is made (`k = m` earlier in the
          same block or the blocks around it, outside any loop, neither name bound again in
          between) is the same buffer: `step(m, k)`.
        """
    why = """
        A donated buffer is handed over to the computation; the same buffer cannot also be read
        as another argument of that call. XLA refuses to run it: `INVALID_ARGUMENT: Attempt to
        use a buffer that was previously donated in the same call to Execute()`. Pass a copy
        (`jnp.copy(x)`) for the second argument, or do not donate.
        """
    bad = (
        """
        from functools import partial
        import jax

        @partial(jax.jit, donate_argnums=(0,))
        def residual(h, skip):
            return h * 2 + skip

        def block(h):
            return residual(h, h)  # JAX305
        """,
        """
        import jax

        def apply_update(state, params):
            return {"params": params * 0.9}

        apply_update = jax.jit(apply_update, donate_argnums=(0, 1))

        def step(state):
            return apply_update(state, state["params"])  # JAX305
        """,
    )
    good = (
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnums=(0,))
        def residual(h, skip):
            return h * 2 + skip

        def block(h, skip):
            out = residual(h, skip)
            return residual(out, jnp.copy(out))

        @jax.jit
        def add(a, b):
            return a + b

        def double(x):
            return add(x, x)
        """,
    )
    demo = JaxDemo(
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnums=(0,))
        def residual(h, skip):
            return h * 2 + skip

        def demo():
            h = jnp.ones(4)
            return residual(h, h)
        """,
        "raises:JaxRuntimeError",
    )
    references = ("https://docs.jax.dev/en/latest/faq.html#buffer-donation",)

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "The same buffer is known only as one variable, an item or attribute of it, or a plain copy"
        " made outside any loop.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        for site, donated in jit_signature.donating_sites(module):
            root = site.target
            sig = jit_signature.signature(root)
            params = site.positional
            owner = site.function if site.function is not None else module.tree
            passed = []
            for param in [*params, *sig.keyword_only]:
                arg = site.argument(param)
                if arg is not None:
                    path = _path(arg)
                    if isinstance(arg, ast.Name):
                        # `k = m` just before: one buffer under two names
                        path = (reads.copied_from(owner, arg.id, site.call) or arg.id,)
                    passed.append((param, arg, path))
            for i, (param, arg, path) in enumerate(passed):
                if path is None:
                    continue
                for other_param, other, other_path in passed[:i]:
                    if other_path is None or (param not in donated and other_param not in donated):
                        continue
                    if _overlaps(path, other_path):
                        name = other_param if other_param in donated else param
                        report(
                            arg,
                            f"`{ast.unparse(arg)}` shares its buffer with `{ast.unparse(other)}`, and "
                            f"`{name}` is donated: XLA refuses to read a buffer donated in the same call; "
                            "pass a copy or do not donate it",
                        )
                        break


def _path(expr: ast.AST) -> tuple | None:
    """`state["params"].w` -> ("state", "params", "w"); None for anything but names, items, attributes."""
    parts = []
    while True:
        if isinstance(expr, ast.Name):
            return (expr.id, *reversed(parts))
        if isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        elif isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
            parts.append(repr(expr.slice.value))
            expr = expr.value
        else:
            return None


def _overlaps(a: tuple, b: tuple) -> bool:
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return longer[: len(shorter)] == shorter
