"""JAX107: a NumPy (`np.*`) or `math.*` function applied to a traced value."""

from __future__ import annotations

import ast

from jaxlint.analysis.knowledge import jax_api
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS

# NumPy functions that call the array's own method (or only read metadata), checked
# against JAX: they work on tracers.
_DELEGATING = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "prod", "product", "std", "var", "any", "all",
    "argmax", "argmin", "cumsum", "cumprod", "round", "around", "transpose", "reshape",
    "squeeze", "swapaxes", "repeat", "shape", "ndim", "size", "flip", "moveaxis", "real",
    "imag", "array_equal", "searchsorted", "result_type", "dtype", "issubdtype", "iinfo",
    "finfo", "isscalar",
    # Only the shape, slicing and the array's own `swapaxes` (checked under `jax.jit`).
    "split", "array_split", "hsplit", "vsplit", "dsplit", "rollaxis",
})


@register
class NumpyOnTracer(Rule):
    code = "JAX107"
    name = "numpy-on-tracer"
    summary = "NumPy or `math` function applied to a traced value (use `jax.numpy`)"
    what = """
        Checks for calls into `numpy` or `math` with a traced argument, and for a NumPy array
        indexed by a traced value, inside transformed code. NumPy and `math` need a concrete
        host value, which a tracer refuses to give. Use the `jax.numpy` twin of the function, or
        make the table a JAX array.
        """
    decisions = """
        - NumPy's reductions that delegate to the array's own method (`np.sum`, `np.mean` and
          similar) work on a traced array and are not reported.
        - A NumPy array is a name bound only to `np.array(...)`, `np.arange(...)` and other
          NumPy constructors, or such a call itself, indexed by a traced value (`table[i]`,
          `np.arange(n)[idx]`).
        - A helper's parameter whose default names a module (`xnp=np`, for code shared between
          NumPy and JAX) is that module where a call leaves the default, so `xnp.stack(...)`
          there is `np.stack`; a call that passes `xnp=jnp` makes it `jnp.stack`.
        - NumPy functions that only read the shape, slice and call the array's own `swapaxes`
          (`np.split`, `np.array_split`, `np.hsplit`, `np.vsplit`, `np.dsplit`, `np.swapaxes`,
          `np.rollaxis`) work on a traced array and are not reported.
        - A NumPy constructor given a tracer (`np.arange(n)`, `np.asarray(x)`) raises there:
          that call is reported, and what is computed from its result later is a NumPy array,
          never traced, so one mistake gives one finding.
        """
    why = """
        NumPy converts its input to a host array with `__array__`; a tracer refuses, and JAX
        raises `TracerArrayConversionError` (under `jit`, `vmap` and also `grad`). `math`
        functions call `float()` and raise `ConcretizationTypeError`. The `jax.numpy` twin of the
        function (`jnp.sin`, `jnp.asarray`, `jnp.sqrt`) stays traced. `np.sum`, `np.mean`, `np.max`
        and similar reductions call the array's method and work, so they are not reported.
        Indexing a NumPy array with a tracer fails the same way (`TracerArrayConversionError`):
        make the table a JAX array (`jnp.asarray(table)[i]`), which JAX indexes on the device.
        Indexing with a static number (`table[2]`, a loop counter over `range`) is fine.
        """
    bad = (
        """
        import jax
        import numpy as np

        @jax.jit
        def features(x):
            return np.sin(x) + np.asarray(x)  # JAX107
        """,
        """
        import math
        import jax

        @jax.jit
        def scale(x):
            return x / math.sqrt(x.sum())  # JAX107
        """,
        """
        import jax
        import numpy as np

        CODEBOOK = np.linspace(-1.0, 1.0, 16)

        @jax.jit
        def decode(codes):
            return CODEBOOK[codes]  # JAX107
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def summarize(w):
            total = np.sum(w)
            avg = np.mean(w, axis=0)
            return jnp.sin(total) + avg * np.pi + np.float32(2.0) + np.sqrt(w.shape[0])
        """,
        """
        import jax
        import jax.numpy as jnp
        import numpy as np

        CODEBOOK = np.linspace(-1.0, 1.0, 16)

        @jax.jit
        def decode(codes, layers):
            first = CODEBOOK[0]  # a static index
            return jnp.asarray(CODEBOOK)[codes] + first
        """,
        """
        import jax
        import numpy as np

        @jax.jit
        def gated(x):
            a, b = np.split(x, 2, axis=-1)  # slices of the tracer: no conversion
            return np.swapaxes(a * jax.nn.sigmoid(b), 0, 1)
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def features(x):
            return np.sin(x)

        def demo():
            features(jnp.ones(3))
        """,
        "raises:TracerArrayConversionError",
    )

    limitations = TRACED_VALUE_LIMITATIONS
    limits = (
        "NumPy functions that delegate to the array's own methods (`np.sum`, `np.mean`, `np.split`)"
        " work on a tracer and are not reported.",
        "A NumPy array is known only as a NumPy constructor's result, or a name bound only to one.",
    ) + TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Subscript):
                if isinstance(node.ctx, ast.Load):
                    index = node.slice
                    parts = index.elts if isinstance(index, ast.Tuple) else [index]
                    if any(module.is_abstract(p) for p in parts) and module.arrays.numpy_array(node.value):
                        table = ast.unparse(node.value)
                        report(
                            node,
                            f"`{table}` is a NumPy array indexed by a traced value: NumPy converts the index "
                            f"with `__array__`/`__index__`, which a tracer refuses; use `jnp.asarray({table})[...]`",
                        )
            for node in module.unguarded(fn, ast.Call):
                name = module.qualname(node.func)
                if name is None:
                    continue
                args = [*node.args, *(k.value for k in node.keywords)]
                if name.startswith("numpy.") and not name.startswith("numpy.random."):
                    func = name[len("numpy."):]
                    if func in _DELEGATING or name in jax_api.STATIC_QUERIES or not any(module.is_traced(a) for a in args):
                        continue
                    report(node, f"`np.{func}` on a traced value converts it to a NumPy array; use `jnp.{func}`")
                elif name.startswith("math.") and any(module.is_abstract(a) for a in args):
                    func = name[len("math."):]
                    report(node, f"`math.{func}` needs a concrete Python number; use `jnp.{func}` on traced values")
