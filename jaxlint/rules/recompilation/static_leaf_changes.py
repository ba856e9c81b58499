"""JAX504: a static (non-array) leaf of a jitted function's argument changes on every call."""

from __future__ import annotations

from jaxlint.analysis.engine.source_text import short_source
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.recompilation import RECOMPILATION_LIMITATIONS, RECOMPILATION_LIMITS


@register
class StaticLeafChanges(Rule):
    code = "JAX504"
    name = "static-leaf-changes"
    summary = "A static leaf of a jitted function's argument changes on every call: one compile per value"
    what = """
        Checks for a jitted function that returns a pytree with a static leaf computed from the
        argument's own, `MyModule(x=module.x + 1, ...)`, when a loop passes the result back in;
        and for a Python number that changes on every iteration of a loop, passed to
        `eqx.filter_jit` as an argument or inside one (`solve(x, {"tol": tol})`).
        `eqx.filter_jit` makes every leaf that is not an array static (a Python `int` or `float`
        field of an `eqx.Module`), and any jit makes a field declared static
        (`eqx.field(static=True)`, `flax.struct.field(pytree_node=False)`) part of the
        compilation key: a new value is a new compilation, so every iteration compiles again.
        """
    decisions = """
        **Static leaves.** A field of a pytree class (an `eqx.Module`, a dataclass pytree, a
        `NamedTuple`) is a static leaf when the class declares it static, or, under
        `eqx.filter_jit`/`filter_pmap`, when its annotation is a Python `int`, `float` or
        `bool`. A field annotated as an array (`step: jax.Array`) is traced, whatever its value.

        **Changed on every call.** The jitted function returns the class (built with the field
        given, `MyModule(x=..., ...)`, or copied, `dataclasses.replace(m, x=...)`,
        `m.replace(x=...)`) with that field computed from the same field of its argument by
        arithmetic (`module.x + 1`), and the call sits in a loop that rebinds the argument to
        the result (`module = step(module, data)`, or one item of a returned tuple). The finding
        is the new value, inside the jitted function.

        **A number that changes, passed in.** Under `eqx.filter_jit`/`filter_pmap`, a Python
        number given as an argument, or inside a dict, list or tuple display or a call of a
        class of the module given as one (or a name the loop binds to such a display), that is
        the index of a `range` loop around the call, a number swept over a written-out
        collection of numbers, or one the loop updates from a number bound before it (`tol =
        1e-2`, then `tol *= 0.5`), is reported where the argument holds it. (A single value, or
        the same one on every iteration, compiles once.) (Under `jax.jit`
        such a number is traced; made static by name, it is JAX303's.)

        **Not reported.** A field passed through unchanged (`x=module.x`) or set to a constant
        (one value after the first call); a field of the argument that the loop does not feed
        back; a loop in staged code (it runs once per trace).
        """
    why = """
        A jit's compilation cache is keyed by its static values. A counter or tolerance kept as a
        Python number in a module or state that `filter_jit` treats as static is a new key every
        time it changes: a step counter incremented inside the step recompiles the step on every
        iteration, and the cache grows without bound. Keep such values as arrays
        (`jnp.asarray(0)`, a `jax.Array` field): they are traced, and one compilation serves
        every value. Keep static only what must be static (a shape, a Python branch), and change
        it rarely.
        """
    bad = (
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class Model(eqx.Module):
            step: int
            w: jax.Array

        @eqx.filter_jit
        def update(model, x):
            g = jax.grad(lambda w: jnp.sum((x @ w) ** 2))(model.w)
            return Model(step=model.step + 1, w=model.w - 0.1 * g)  # JAX504

        def fit(model, x):
            for _ in range(100):
                model = update(model, x)
            return model
        """,
        """
        import dataclasses
        import jax
        import jax.numpy as jnp
        from flax import struct

        @struct.dataclass
        class State:
            w: jax.Array
            tol: float = struct.field(pytree_node=False)

        @jax.jit
        def refine(state: State):
            w = state.w - 0.5 * jnp.tanh(state.w)
            return dataclasses.replace(state, w=w, tol=state.tol * 0.5)  # JAX504

        def solve(state):
            for _ in range(20):
                state = refine(state)
            return state
        """,
        """
        import equinox as eqx
        import jax.numpy as jnp

        @eqx.filter_jit
        def solve(a, b, options):
            x = jnp.linalg.solve(a, b)
            return x, jnp.linalg.norm(a @ x - b) < options["tol"]

        def sweep(a, b):
            return [solve(a, b, {"tol": tol}) for tol in (1e-2, 1e-4, 1e-6)] + [  # JAX504
                solve(a, b, {"tol": t}) for t in (1e-3,)
            ]

        def anneal(a, b):
            tol = 1e-2
            for _ in range(10):
                solve(a, b, {"tol": tol})  # JAX504
                tol *= 0.5
        """,
    )
    good = (
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class Model(eqx.Module):
            step: jax.Array  # an array leaf: traced, one compilation for every value
            w: jax.Array
            depth: int  # static, but passed through unchanged

        @eqx.filter_jit
        def update(model, x):
            g = jax.grad(lambda w: jnp.sum((x @ w) ** 2))(model.w)
            return Model(step=model.step + 1, w=model.w - 0.1 * g, depth=model.depth)

        def fit(model, x):
            for _ in range(100):
                model = update(model, x)
            return model
        """,
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class Model(eqx.Module):
            step: int
            w: jax.Array

        @eqx.filter_jit
        def update(model, x):
            return Model(step=model.step + 1, w=model.w - 0.1 * x)

        def evaluate(model, xs):
            # each call starts from the same model: the step is the same value every time
            return [update(model, x) for x in xs] + [update(model, x) for x in xs]
        """,
    )
    demo = JaxDemo(
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        traces = 0

        class Model(eqx.Module):
            step: int
            w: jax.Array

        @eqx.filter_jit
        def update(model, x):
            global traces
            traces += 1
            return Model(step=model.step + 1, w=model.w - 0.1 * x)

        def demo():
            model = Model(step=0, w=jnp.zeros(3))
            for _ in range(4):
                model = update(model, jnp.ones(3))
            return traces
        """,
        "recompiles",
    )
    references = (
        "https://docs.kidger.site/equinox/api/transformations/#equinox.filter_jit",
        "https://docs.jax.dev/en/latest/jit-compilation.html#caching",
    )

    limitations = RECOMPILATION_LIMITATIONS
    limits = (
        "A field is static only as its class declares it, or under `eqx.filter_jit` as a Python"
        " `int`, `float` or `bool` annotation.",
        "A field passed through unchanged or set to a constant, one the loop does not feed back, and"
        " loops in staged code are not reported.",
    ) + RECOMPILATION_LIMITS

    def check(self, module, report):
        shapes = module.shapes
        for number in shapes.changing_numbers():
            short = ".".join(number.transform.split(".")[-2:])
            inside = "" if number.value is number.argument else f" in `{short_source(number.argument)}`"
            report(
                number.value,
                f"`{number.function}` is passed {number.why}{inside}: a Python number is a non-array leaf, "
                f"static under `{short}`, and it changes on every iteration of the loop on line "
                f"{number.loop.lineno}: every iteration compiles again; pass it as an array (`jnp.asarray(...)`)",
            )
        for leaf in shapes.changing_leaves():
            report(
                leaf.value,
                f"`{leaf.function}` returns `{leaf.cls}` with its field `{leaf.field}`, {leaf.kind}, changed "
                f"(`{leaf.field}={short_source(leaf.value)}`), and the loop on line {leaf.loop.lineno} passes the result "
                f"back (line {leaf.call.lineno}): every call compiles again; keep it as an array "
                "(`jnp.asarray(...)`, a `jax.Array` field) so that it is traced",
            )
