"""JAX309: a jitted function's traced parameter passed a string or another value that is no array."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS


@register
class NonArrayArgument(Rule):
    code = "JAX309"
    name = "non-array-argument"
    summary = "A jitted function's traced parameter is passed a string, bytes or a function"
    what = """
        Checks for a call of a jitted function (`@jax.jit`, `jax.jit(f, ...)`, `jax.pmap`)
        that passes a parameter not named in `static_argnums`/`static_argnames` a value no
        array can be made of: a string literal or f-string (`decode(logits, "argmax")`),
        bytes, a lambda, or a name the calling scope binds only to such literals. The call
        must be one the code shows reaching the jitted function itself: through the name it
        is bound to, `jax.jit(f)(...)` in place, or `self.method(...)` of a jitted method
        (a call `obj.method(...)` on another object may reach a different method of the same
        name, and is not judged). Values made at run time, parameters and `None` (an empty
        pytree, which JAX accepts) are not reported.
        """
    why = """
        `jax.jit` makes every argument that is not static an abstract array, leaf by leaf, so
        that one compiled program serves every value of that shape and dtype. A string has
        no shape or dtype: the call raises `TypeError` (`Argument 'argmax' of type <class
        'str'> is not a valid JAX type`) before tracing starts. A value that selects what the
        function does is configuration: name its parameter in `static_argnames` (each value
        compiles its own program), or turn it into an array or a Python flag before the call.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def decode(logits, mode):
            return jnp.argmax(logits, -1) if mode == "argmax" else logits

        def predict(logits):
            return decode(logits, "argmax")  # JAX309
        """,
        """
        import jax

        def scale(x, name):
            return x * 2

        scale_jit = jax.jit(scale, donate_argnums=0)

        def main(x):
            label = "weights"
            return scale_jit(x, name=label)  # JAX309
        """,
    )
    good = (
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("mode",))
        def decode(logits, mode):
            return jnp.argmax(logits, -1) if mode == "argmax" else logits

        @jax.jit
        def shift(x, offset=None):
            return x if offset is None else x + offset

        class Logger:
            def log(self, x, tag):
                return tag

        def predict(logits, logger: Logger):
            logger.log(logits, "decode")
            return decode(logits, "argmax"), decode(logits, mode="sample"), shift(logits, None)
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def decode(logits, mode):
            return jnp.argmax(logits, -1)

        def demo():
            decode(jnp.ones((2, 3)), "argmax")
        """,
        "raises:TypeError",
    )
    references = ("https://docs.jax.dev/en/latest/_autosummary/jax.jit.html",)

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "Only literals no array is made of are reported (strings, bytes, lambdas): values made at"
        " run time, parameters and `None` are not.",
        "A call `obj.method(...)` on another object is not judged: it may reach another method of"
        " that name.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        for found in module.non_array_arguments:
            report(
                found.node,
                f"{found.function} is jitted and `{found.param}` is not static, but this call passes it "
                f"{found.what}, which JAX cannot make an array of: the call raises `TypeError`; name "
                f"`{found.param}` in `static_argnames` or pass an array",
            )
