"""JAX302: a static argument that is an array, a list, a dict or another unhashable value."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS


@register
class UnhashableStaticArgument(Rule):
    code = "JAX302"
    name = "unhashable-static-argument"
    summary = "A static argument is an array, list, dict or other unhashable value"
    what = """
        Checks for a parameter named in `static_argnums`/`static_argnames` that receives an
        array, a list, a dict or another unhashable value. JAX hashes static arguments on every
        call to look up the compiled program, so such a call raises `ValueError` before tracing
        starts. Pass arrays traced, tuples instead of lists, and frozen dataclasses for
        configuration.
        """
    decisions = """
        **What shows the value is unhashable.**

        - An annotation as an array (`jax.Array`, `jax.typing.ArrayLike`, `np.ndarray`, a
          jaxtyping array, a kauldron one such as `Int["B L"]` but its `Scalar...` types,
          which admit Python numbers, a project's own alias named `Array` or `...Array` such as `from
          mylib.types import Array, IntArray`), a sequence of them (`Sequence[ArrayLike]`), a
          union of only those, a name the module binds once to one of these (`Array =
          Union[jnp.ndarray, np.ndarray]`), or a list, dict or set.
        - Use as an array inside the function: `x[None, :]`, `x.T`, `x.at[...]`,
          `x.reshape(...)`, `x @ y`, a reduction along an axis such as `x.max(axis=1)` (only
          arrays have those methods with an `axis`), or the first operand of a `jax.numpy`
          function given an axis, `jnp.split(obs, n, axis=1)`: JAX's NumPy rejects a list or
          tuple there and a Python number has no axis (not `expand_dims` or `linspace`, which
          add the axis they are given, nor `stack` and the others that take a sequence).
        - A NamedTuple, or an instance of a class hashed by its fields, holding such a value: a
          frozen (or `unsafe_hash`) dataclass, an Equinox module (`eqx.Module.__hash__` hashes
          its fields), a `flax.struct.dataclass` (frozen), of this module or of another module
          of the project (`State(packed=[x], tree_def=None)`). Where the class's own `__init__`
          decides the fields, a field it declares a list, dict, set or array says so. A
          `chex.dataclass` hashes as a `dataclasses.dataclass` with the same options does; a field
          the generated hash leaves out (`field(hash=False)`, or `compare=False` with no `hash=`)
          does not count.
        - An annotation naming such a class, of this module or of another module of the project,
          that declares a list, dict, set or array field (`batch: ArrayBatch`, a frozen
          `chex.dataclass` of arrays), or whose instances cannot be hashed at all (a dataclass of
          this module that is not frozen).
        - A half of such an instance from `eqx.partition(model, ...)` (`params, static =
          ...`) or `eqx.filter`: a list, dict or set is a pytree node, which both halves keep,
          so a module with a dict field stays unhashable; its array fields are None in the
          non-array half, which hashes.
        - A parameter mapped by `jax.vmap(f)` (no `in_axes`, or an axis for it that is not
          `None`), or one the function (or a function nested in it) passes on to a
          `jax.vmap(g, in_axes)(...)` call that maps it (`jax.vmap(online)(states, rngs)`):
          every leaf of a mapped argument is an array, since a Python number has no axis to
          map.
        - A static `self` whose class is a non-frozen dataclass, or defines `__eq__` without
          `__hash__` (unless `@dataclass(unsafe_hash=True)` adds one).

        **What the calls in the same module pass.**

        - An array, list, dict or set, passed directly, through names bound once (`rng =
          jax.random.key(0)` then `metric = rng`), or through a name every assignment of which
          is such a value.
        - A value that is a JAX array where it is passed, as JAX401 decides: a comparison of
          arrays (`mask = (g < 4.0) & (g > 0.0)`), a parameter annotated as an array, the state
          an Optax transformation's `init` returns (`opt_state = optax.adam(1e-3).init(params)`,
          a pytree of arrays).
        - Such a value passed through a plain function of the module that hands its own
          parameter to the static position (`def mesh_eval(f, lims): return _eval(f, lims)`).
        - What a `jax.jit`- or `jax.pmap`-compiled function returns, or a part of it unpacked
          (`logits, cache = prefill(...)`): every leaf a compiled function returns is a JAX
          array. So is every leaf `lax` control flow returns (`carry, ys = lax.scan(...)`,
          `lax.fori_loop`, `lax.while_loop`, `lax.cond`, `lax.switch`, `lax.map`), even run
          eagerly: a Python number carried in comes back as an array.
        - An item unpacked from what a plain function of the module returns, where every
          `return` of it is a tuple holding such a value at that place (`state, feats, labels =
          collect(...)` with `return state, np.concatenate(feats), labels`).
        - A traced value passed from traced code.
        - Inside a loop, the value a name holds before the loop reaches the first call, whatever
          the loop rebinds it to (a compiled function's output unpacked there included).

        **Another transformation around the jit.** When one wraps it (`@jax.custom_jvp` above
        `@partial(jax.jit, ...)`), whatever it passes on reaches the jit: the annotation and the
        uses in the body are judged, the call sites are not.

        **Fine, and not reported.**

        - Ints, floats, bools, strings, enums, callables, `None`, tuples of them and frozen
          dataclasses are hashable.
        - A list default that callers never override is never hashed.
        - The annotation yields to the callers of a private function (`_solve`): when every call
          of it in the module passes a value shown to be hashable (a literal, a tuple,
          `tuple(...)`, a name bound only to one), a stale `list[int]` or `Array` annotation is
          not reported.
        - An array annotation yields to the body: a parameter the function passes, as it
          received it, where JAX needs a Python value while tracing (`chunk_size: jax.Array`
          then `lax.dynamic_slice_in_dim(x, start, chunk_size)`, `jnp.zeros(n)`) is declared
          static because callers pass an int; an array there would fail static or not.
        """
    why = """
        JAX keys its compilation cache on the static arguments, so it hashes them on every call.
        An unhashable value makes the call raise `ValueError: Non-hashable static arguments are
        not supported` before tracing starts. Arrays are never hashable (even 0-d ones): pass
        them traced instead. Pass a tuple instead of a list, and make a static configuration
        object a frozen dataclass. A tracer is not hashable either: a static parameter cannot
        receive a value of the enclosing trace, nor one that `jax.vmap` batches (give it
        `in_axes=None` there).
        """
    bad = (
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))  # JAX302
        def rbf_features(x, centers, gamma=1.0):
            d2 = jnp.sum((x[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
            return jnp.exp(-gamma * d2)
        """,
        """
        import jax
        import jax.numpy as jnp

        def init_and_apply(x, layer_sizes, seed):
            for n in layer_sizes:
                x = jnp.tanh(x[:, :n])
            return x

        forward = jax.jit(init_and_apply, static_argnums=(1,))  # JAX302

        def main():
            return forward(jnp.ones((2, 4)), [8, 8, 1], 0)
        """,
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("mask",))  # JAX302
        def apply_mask(x, mask: jax.Array):
            return x * mask
        """,
        """
        import dataclasses
        from functools import partial
        import jax

        @dataclasses.dataclass
        class Scaler:
            scale: float

            @partial(jax.jit, static_argnums=0)  # JAX302
            def __call__(self, x):
                return x * self.scale
        """,
        """
        import dataclasses
        import jax

        @dataclasses.dataclass
        class Config:
            depth: int = 2

        def forward(x, config):
            for _ in range(config.depth):
                x = x * 2
            return x

        forward_jit = jax.jit(forward, static_argnames="config")  # JAX302

        def main(x):
            return forward_jit(x, config=Config(depth=3))
        """,
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=1)  # JAX302
        def power(x, n):
            return x ** n

        def all_powers(xs, ns):
            return jax.vmap(power)(xs, ns)
        """,
        """
        from collections.abc import Sequence
        from functools import partial
        import jax
        import jax.numpy as jnp

        @jax.custom_jvp
        @partial(jax.jit, static_argnames=("keys",))  # JAX302
        def lexsort(keys: Sequence[jax.Array]):
            return jnp.lexsort(keys)
        """,
    )
    good = (
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("sizes", "activation", "mode"))
        def mlp(x, sizes=(8, 8), activation=jnp.tanh, mode="train"):
            for n in sizes:
                x = activation(x[:, :n])
            return x if mode == "train" else x * 0.5

        def main(x):
            return mlp(x, sizes=(4, 2), activation=jax.nn.relu, mode="eval")
        """,
        """
        import dataclasses
        import enum
        from functools import partial
        import jax

        class Mode(enum.Enum):
            TRAIN = 1
            EVAL = 2

        @dataclasses.dataclass(frozen=True)
        class Scaler:
            scale: float

            @partial(jax.jit, static_argnums=0)
            def __call__(self, x):
                return x * self.scale

        @partial(jax.jit, static_argnums=(1, 2))
        def run(x, mode, scaler):
            return scaler(x) if mode is Mode.TRAIN else x

        def main(x):
            return run(x, Mode.TRAIN, Scaler(2.0))
        """,
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))
        def pad(tokens, shape, fill=None):
            buf = jnp.zeros(shape[0], dtype=tokens.dtype)
            return buf.at[: tokens.shape[0]].set(tokens)

        @partial(jax.jit, static_argnames=("axes",))
        def total(x, axes=[0]):
            return x.sum(axis=tuple(axes))

        def main(tokens):
            return pad(tokens, (8,)), total(tokens)
        """,
    )
    demo = JaxDemo(
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))
        def rbf_features(x, centers):
            return jnp.sum((x[:, None, :] - centers[None, :, :]) ** 2, axis=-1)

        def demo():
            rbf_features(jnp.ones((4, 2)), jnp.array([[0.0, 0.0], [1.0, 1.0]]))
        """,
        "raises:ValueError",
    )
    references = ("https://docs.jax.dev/en/latest/_autosummary/jax.jit.html",)

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "A value is unhashable only where an annotation, a use as an array in the body, or a call in"
        " the same module shows it.",
        "A private function's stale `list` or `Array` annotation yields to its callers where every"
        " call passes a hashable value.",
        "Where another transformation wraps the jit, its calls are not judged: only the annotation"
        " and the body.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        for found in module.unhashable_statics:
            report(
                found.node,
                f"static argument `{found.name}` {found.why}: JAX hashes static arguments and raises "
                "`ValueError` (non-hashable static argument); pass arrays traced, lists as tuples",
            )
