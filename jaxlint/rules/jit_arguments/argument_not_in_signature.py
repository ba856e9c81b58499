"""JAX301: `static_argnums`/`static_argnames`/`donate_argnums`/`donate_argnames` that name no parameter."""

from __future__ import annotations

from jaxlint.analysis.shapes import jit_signature
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS


@register
class JitArgumentNotInSignature(Rule):
    code = "JAX301"
    name = "jit-argument-not-in-signature"
    summary = "`static_argnums`/`static_argnames` (or `donate_*`) name a parameter the function does not have"
    what = """
        Checks `jax.jit`'s `static_argnums`, `static_argnames`, `donate_argnums` and
        `donate_argnames` against the jitted function's signature, the way JAX resolves them. An
        option that names a parameter the function does not have (usually one since renamed)
        makes `jax.jit` raise `ValueError` as soon as it wraps the function.
        """
    decisions = """
        Reported:

        - an index past the positional parameters (unless the function takes `*args`);
        - a name that is no parameter (unless the function takes `**kwargs`);
        - a name of a positional-only parameter, or of `*args`;
        - a parameter that is both static and donated;
        - the name of the `**kwargs` parameter itself (accepted, but then nothing is static).

        Accepted by JAX, and not reported: duplicates (`static_argnums=(1, 1)`), an index into
        `*args`, a name matched by a keyword-only parameter or absorbed by `**kwargs`, and a
        parameter named by both `static_argnums` and `static_argnames`.
        """
    why = """
        JAX checks these options against the signature as soon as `jax.jit` wraps the function
        (at import time, for a decorator) and raises `ValueError` ("Jitted function has invalid
        argnames {'is_training'} in static_argnames. Function does not take these args."). The
        usual cause is a renamed parameter that the option still names by its old name.
        """
    bad = (
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("is_training", "num_classes"))  # JAX301
        def logits(params, x, train=False, num_classes=10):
            h = x @ params
            return h * 0.9 if train else h
        """,
        """
        import jax

        def scale(x, factor):
            return x * factor

        scale_jit = jax.jit(scale, static_argnums=(2,))  # JAX301
        """,
        """
        import jax

        def update(state, grads, /, lr):
            return state - lr * grads

        update_jit = jax.jit(update, static_argnames="state", donate_argnums=(0,))  # JAX301
        both = jax.jit(update, static_argnames="lr", donate_argnames="lr")  # JAX301
        """,
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("options",))  # JAX301
        def reduce(x, **options):
            return x.sum(axis=options["axis"]) if options["keepdims"] else x.sum()
        """,
    )
    good = (
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("train", "num_classes"))
        def logits(params, x, train=False, num_classes=10):
            h = x @ params
            return h * 0.9 if train else h

        @partial(jax.jit, static_argnums=(1, 1, -1))
        def power(x, n):
            return x ** n
        """,
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("mode",))
        def apply(x, *, mode="train"):
            return x * 2 if mode == "train" else x

        @partial(jax.jit, static_argnums=(2, 3))
        def combine(x, *extras):
            return x + sum(extras)

        @partial(jax.jit, static_argnames=("axis",))
        def reduce(x, **options):
            return x.sum(axis=options.get("axis"))
        """,
        """
        from functools import partial
        import jax

        class Model:
            @partial(jax.jit, static_argnums=(0, 2))
            def apply(self, x, depth):
                return x * depth

            def compiled(self):
                return jax.jit(self.apply_free, static_argnums=(1,))

            def apply_free(self, x, depth):
                return x * depth
        """,
    )
    demo = JaxDemo(
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("is_training",))
        def logits(params, x, train=False):
            h = x @ params
            return h * 0.9 if train else h

        def demo():
            logits(jnp.ones((3, 2)), jnp.ones((4, 3)), train=True)
        """,
        "raises:ValueError",
    )
    references = ("https://docs.jax.dev/en/latest/_autosummary/jax.jit.html",)

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "What JAX accepts is not reported: duplicates, an index into `*args`, a name a keyword-only"
        " parameter or `**kwargs` takes.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        for root in jit_signature.plain_jits(module):
            sig = jit_signature.signature(root)
            label = jit_signature.function_label(root.node)
            for kind in ("static", "donate"):
                for entry in jit_signature.entries(root, f"{kind}_argnums"):
                    n = len(sig.positional)
                    if sig.vararg is None and not -n <= entry.value < n:
                        report(
                            entry.node,
                            f"`{entry.option}` names position {entry.value}, but {label} takes "
                            f"{n} positional parameter{'s' if n != 1 else ''}: JAX raises `ValueError` "
                            "when it jits the function",
                        )
                for entry in jit_signature.entries(root, f"{kind}_argnames"):
                    name = entry.value
                    if name == sig.kwarg and kind == "static" and name not in sig.positional and name not in sig.keyword_only:
                        report(
                            entry.node,
                            f"`{entry.option}` names `**{name}` itself: JAX matches names against the "
                            f"keywords a call passes, so none of the keyword arguments becomes static; "
                            "name the keywords (`static_argnames=(\"axis\",)`)",
                        )
                    elif name in sig.positional_only or name == sig.vararg:
                        report(
                            entry.node,
                            f"`{entry.option}` names `{name}`, which {label} takes positionally only: "
                            f"JAX raises `ValueError` when it jits the function; use `{kind}_argnums`",
                        )
                    elif sig.kwarg is None and name not in sig.positional and name not in sig.keyword_only:
                        hint = _closest(name, [*sig.positional, *sig.keyword_only])
                        report(
                            entry.node,
                            f"`{entry.option}` names `{name}`, but {label} has no such parameter"
                            f"{f' (did you mean `{hint}`?)' if hint else ''}: JAX raises `ValueError` "
                            "when it jits the function",
                        )
            static = _names(root, sig, "static")
            for name, entry in _names(root, sig, "donate").items():
                if name in static:
                    report(
                        entry.node,
                        f"`{name}` is both static and donated: JAX raises `ValueError` "
                        "(static and donated arguments cannot intersect)",
                    )


def _names(root, sig, kind):
    """Argument names as JAX infers them: from argnames, or from argnums when argnames is absent."""
    keywords = root.transforms[0].keywords
    found = {}
    if f"{kind}_argnames" in keywords:
        for entry in jit_signature.entries(root, f"{kind}_argnames"):
            found.setdefault(entry.value, entry)
        return found
    for entry in jit_signature.entries(root, f"{kind}_argnums"):
        n = len(sig.positional)
        if -n <= entry.value < n:
            name = sig.positional[entry.value]
            if name not in sig.positional_only:
                found.setdefault(name, entry)
    return found


def _closest(name, candidates):
    import difflib

    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
    if match:
        return match[0]
    for candidate in candidates:
        if candidate in name or name in candidate:
            return candidate
    return None
