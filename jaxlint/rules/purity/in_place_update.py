"""JAX401: item assignment on a JAX array (`x[i] = v`, `x[i] += v`)."""

from __future__ import annotations

import ast

from jaxlint.analysis.arrays.arrays import is_at_index
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS
from jaxlint.rules.purity.edits import in_place_fix, text


@register
class InPlaceUpdate(Rule):
    code = "JAX401"
    name = "in-place-array-update"
    summary = "Item assignment on a JAX array: JAX arrays are immutable"
    what = """
        Checks for item assignment (`x[i] = v`, `x[i] += v`, `x[a:b] *= 2`) on a value known to
        be a JAX array, in eager and traced code alike. JAX arrays are immutable, so the
        assignment raises `TypeError`; the functional form `x = x.at[i].set(v)` returns an
        updated copy. NumPy arrays, lists and dicts are mutable and are not reported.
        """
    decisions = """
        **A name is a JAX array** when, on every path reaching the assignment, it was last bound
        to:

        - a result of `jax.numpy`, `jax.random` or `jax.nn` functions, or a comparison of one
          with a number or an array (`g < 4.0`), or an array method of an equality with one
          (`(a != jnp.roll(a, 1)).astype(int)`: a NumPy array on the other side gives JAX's
          array, and the bool that None or a string would give has no `.astype`);
        - a result of the `jax.lax` operations that return one array (`lax.select`,
          `lax.dynamic_slice`, `lax.cumsum`, ...; not `lax.sort`, `lax.scan` or the other
          operations that may return a tuple or a pytree);
        - a result of `lax.cond` or `lax.switch` whose every branch returns one array (a lambda
          or a function of the module, not a container of arrays): JAX makes every leaf the
          branches return a JAX array;
        - a result of Flax activations and layers (`nn.relu(x)`, `nn.Dense(4)(x)`);
        - a result of einops (`rearrange`, `repeat`, `reduce`, `einsum`) whose first operand is a
          JAX array: einops runs the operations of that operand's own library, so a NumPy array
          gives a NumPy array, which takes item assignment;
        - a result of the helpers JAX's own `jax.numpy` functions convert their arguments with
          (`ensure_arraylike`, `promote_dtypes`, `promote_args`, ... of `jax._src.numpy.util`):
          each value given comes back as a JAX array, a NumPy array or a Python scalar too
          (`arr, idx = ensure_arraylike("put", a, i)`); the list the `promote_*` helpers return
          is a Python list, and replacing one of its items is fine;
        - a result of a function or lambda of the module every `return` of which gives such an
          array, reached as every rule follows a call: by its name, a name bound to it or to its
          `jax.jit` (`double = jax.jit(scale)`), or to what a factory returns (`init =
          make_init(n)`), or as a static method of its class (`Ops.place(...)`, `jax.vmap(Ops.place)`);
          plain or under `@jax.jit`; so does a plain function of another module of the project,
          as that module's facts say (`from .grid import room`, `grid.room(...)`);
        - a name imported from another module of the project that binds it once, at module
          level, to a call returning one JAX array (`TEXTURE = jnp.rot90(load(...))`);
        - a result of an `.at[...]` update, so a parameter counts from a statement that converts
          it, such as `x = jnp.asarray(x)`, on;
        - an item of a JAX array or of a sequence of them (`q, r = jnp.linalg.qr(a)`, `t, z =
          lax.linalg.schur(a)`, `for row in x`; `jax.lax.linalg` decompositions return one array
          or a tuple of them);
        - an item (not a slice) of a list or tuple the code builds of JAX arrays only, where it
          is read (`mos = [jnp.reshape(m, s) for m in mos]`, then `mos[0][..., i] = v`);
          replacing the item itself (`mos[0] = v`) changes the Python list and is fine;
        - a parameter annotated as a JAX array (`jax.Array`, `jnp.ndarray`, a jaxtyping array),
          also through an alias that another module of the project binds once to one
          (`GridState: TypeAlias = jax.Array` in `types.py`, then `grid: GridState`);
        - an item of a parameter annotated as a mapping or sequence of JAX arrays
          (`tokens: Dict[str, jnp.ndarray]`, through a name the module binds once to that type,
          `ArrayDict = Dict[str, jnp.ndarray]`; `list[jax.Array]`), until the code replaces one
          of its items with something else (`batch["label"] = {}`).

        **A JAX array on some paths only.** Where one branch binds the name to a JAX array and
        another to a value not known (`stacked = state[key]` or `jnp.zeros(...)`, a parameter
        converted under a flag), the store raises on the first path; it is reported without a
        fix (`.at[...]` fails where the value is a NumPy array). Not where another branch binds
        a NumPy array (code written for both kinds), nor a store the other branch alone
        reaches, or one after an `isinstance` test or a rebinding that leaves no JAX array.

        **A name the code uses as only a JAX array can be used** is one too:

        - a name the code has already used with `x.at[i].get()`, `.set(...)` or another
          `.at[...]` method (only JAX arrays have them), or goes on to use so, not rebound,
          later in the same straight run of statements (no branch between: `x[i] = v` then `x =
          x.at[j].set(w)`);
        - a parameter the function never rebinds and uses so anywhere.

        **Attributes and fields.** An attribute that every store in the module sets to such a
        value (`self.data = jnp.zeros(...)`) is a JAX array, and so is a field of a parameter
        annotated with a class of the module that declares the field a JAX array (`ff:
        ForceField` with `v1: jax.Array`; the parameter never rebound, or rebound only to what a
        callee is declared to return of that class: `state = advance(state)` with `def
        advance(s: State) -> State`, `state = callback(state)` with `callback:
        Optional[Callable[[State], State]]`). So is a field that a framework's state class
        declares a JAX array, read from a parameter annotated with that class and never rebound:
        `q` and `qd` of Brax's pipeline state (`pipeline_state: base.State`), `reward` and `done`
        of its environment's state (its `obs` may be a dict, its `metrics` is one).

        **Inside traced code**, also:

        - a traced value indexed as only an array can be (`x[:, 0]`, `x[..., 0]`, an index
          array);
        - a traced parameter the function also uses as only an array can be used (`x.shape`, `x
          @ w`, `jnp.sum(x)`; not `jnp.stack(x)` or `jnp.asarray(x)`, which take a list too);
        - what a method only arrays have returns from a traced value (`x.reshape(-1)`; not
          `x.copy()`, which a dict has too).

        **Also reported.**

        - Inside traced code, item assignment on a traced value at an index that is itself a
          tracer (`x[i] = v` with `i` a `fori_loop` index or a scanned value), whatever the
          value is.
        - Inside traced code, item assignment on any value under a traced boolean mask
          (`rewards[terminated] = 0`, the mask a comparison, a boolean JAX function, or a
          carry made by `jnp.zeros(n, dtype=jnp.bool_)`): a JAX array is immutable, NumPy
          cannot read a tracer, a list or dict cannot take one. The fix is `jnp.where`, since
          `.at[mask]` needs a concrete mask too.
        - Item assignment on `np.asarray(<JAX array>)`, a read-only view.

        **What overrides this, and is not reported.**

        - An `isinstance` test that shows the value is not a JAX array (a JAX array is an
          instance of `jax.Array` and of no NumPy, builtin or SciPy sparse type): inside `if
          isinstance(x, np.ndarray):`, or past `if isinstance(x, jax.Array): return ...`
          (`jax` imported, or a name bound once to `pytest.importorskip("jax")` or
          `importlib.import_module("jax")`, which return the module).
        - A value made by calling a class of the module or of the project (`a = Array([...])`):
          an instance of that class is not a JAX array, whatever `.at` it offers (a mutable
          array wrapper offers both).
        - A store into a Pallas reference (`o_ref[...] = y` in a kernel): it is how a kernel
          writes its results.
        - A traced value read with a string key (`batch["inputs"]`) is a dict of a pytree, not
          an array (JAX does not index an array by a string). What the key holds is taken for an
          array leaf, but what iterating it binds is not known (a dict under the key gives its
          keys: `for name in batch["inputs"]: batch["label"][name] = y` stores under names).
        """
    why = """
        JAX arrays are immutable. Item assignment raises `TypeError: JAX arrays are immutable
        and do not support in-place item assignment`, in eager code and under `jit` alike
        (`np.asarray` of a JAX array shares its read-only buffer: `ValueError`).
        The functional form `x = x.at[i].set(v)` returns an updated copy (which XLA performs
        in place when it can). A traced index fails on the other traced values too: a list
        cannot be indexed by a tracer (`TracerIntegerConversionError`, a `TypeError`) and a dict
        cannot hash one. A value the next statements use with `.at[...]` is a JAX array at the
        store too: anything else has no `.at` (`AttributeError`). NumPy arrays, lists and dicts
        (`params["w"] -= lr * g` on a dict of arrays) are mutable and are not reported.
        """
    fix_safety = """
        The fix rewrites `x[i] = v` as `x = x.at[i].set(v)` and `x[i] op= v` as
        `x = x.at[i].add(v)` (`subtract`, `multiply`, `divide`, `power`), only when `x` is a
        plain name bound in the same scope. It is safe for local variables. When `x` is a
        parameter, the fix is unsafe: NumPy-style code meant the caller's array to change, and
        after the fix only the local name sees the update; return the new array instead. So it
        is when `x` is a loop target (`for row in m: row[0] = 0`): the iterated array is not
        updated.
        Attributes (`self.data[i] = v`) are reported without a fix: write
        `self.data = self.data.at[i].set(v)`. A traced value known only by its traced index (it
        may be a list) is reported without a fix.
        """
    fixable = True
    bad = (
        """
        import jax.numpy as jnp

        def histogram(values, bins):
            counts = jnp.zeros(bins)
            for v in values:
                counts[v] += 1  # JAX401
            return counts
        """,
        """
        import jax
        import jax.numpy as jnp

        class Replay:
            def __init__(self, capacity, dim):
                self.data = jnp.zeros((capacity, dim))
                self.ptr = 0

            def add(self, transition):
                self.data[self.ptr] = transition  # JAX401
                self.ptr = (self.ptr + 1) % self.data.shape[0]
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def zero_diagonal(m):
            out = m * 1.0
            out[jnp.arange(3), jnp.arange(3)] = 0.0  # JAX401
            out[:, 0] *= 2  # JAX401
            m[..., 0] = 1.0  # JAX401
            return out
        """,
        """
        import jax.numpy as jnp
        from jax import lax

        def projected_gauss_seidel(a, b):
            def sweep(x, row):
                i, a_i, b_i = row
                x[i] = jnp.maximum(x[i] - (b_i + a_i @ x) / a_i[i], 0.0)  # JAX401
                return x, None

            n = b.shape[0]
            x, _ = lax.scan(sweep, jnp.zeros(n), (jnp.arange(n), a, b))
            return x
        """,
        """
        import jax.numpy as jnp

        def buffer_set(buffer, i, x, pred=None):
            if pred is not None:
                x = jnp.where(pred, x, buffer.at[i].get())
            buffer[i] = x  # JAX401
            return buffer
        """,
        """
        import numpy as np
        import jax.numpy as jnp

        def to_host(x):
            host = np.asarray(jnp.tanh(x))
            host[0] = 0.0  # JAX401
            return host
        """,
    )
    good = (
        """
        import jax.numpy as jnp

        def histogram(values, bins):
            counts = jnp.zeros(bins)
            for v in values:
                counts = counts.at[v].add(1)
            return counts
        """,
        """
        import numpy as np
        import jax.numpy as jnp

        def prepare(batch):
            mask = np.zeros(len(batch))
            mask[0] = 1  # a NumPy array is mutable
            params = {"w": jnp.ones(3)}
            params["w"] -= 0.1 * jnp.ones(3)  # a dict of arrays: the dict is mutable
            table = jnp.zeros(4)
            table = np.asarray(table).copy()
            table[1] = 2.0  # rebound to a NumPy copy
            return mask, params, table
        """,
        """
        import numpy as np
        import jax.numpy as jnp

        def coords(points, n):
            if isinstance(points, tuple):
                points = jnp.stack(points, axis=-1)
            else:
                points = np.zeros((n, 2))
            points[:, 0] = 0.0  # a NumPy array on one path: not known to be a JAX array
            return points
        """,
        """
        import numpy as np

        def move_row(arr, src, dst):
            if isinstance(arr, np.ndarray):
                arr[dst] = arr[src]  # a NumPy array: written in place
                return arr
            return arr.at[dst].set(arr[src])
        """,
        """
        import jax
        from jax import lax

        @jax.jit
        def step(state, x):
            state["count"] = state["count"] + 1  # a traced dict: a Python container
            for name, value in x.items():
                state[name] = value  # a dict's keys are static
            return state, x

        def total(xs):
            def body(i, carry):
                parts = list(carry)
                parts[0] = parts[0] + xs[i]  # a list at a static index
                return tuple(parts)
            return lax.fori_loop(0, len(xs), body, (0.0, 0))
        """,
    )
    demo = JaxDemo(
        """
        import jax.numpy as jnp

        def demo():
            counts = jnp.zeros(3)
            counts[1] += 1
        """,
        "raises:TypeError",
    )
    references = ("https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html",)

    limitations = PURITY_LIMITATIONS + """
    A class of another package is not seen: a value made by calling one, which the code also
    uses with `.at[...]`, is taken for a JAX array.
    """
    limits = (
        "A class of another package is not seen: a value made by calling one that the code also"
        " updates with `.at[...]` is taken for a JAX array.",
        "A value an `isinstance` test shows is no JAX array, or one made by calling a class of the"
        " project, is not reported.",
        "A store into a Pallas reference (`o_ref[...] = y`) is how a kernel writes its results: not"
        " reported.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        if not effects.subscript_stores:
            return
        arrays, stores = module.arrays, module.traced_stores
        for store in effects.subscript_stores:
            target = store.target
            if is_at_index(target) or store.kind not in ("assign", "augmented", "annotated", "unpacked"):
                continue
            if effects.expects_error(store.stmt):
                continue
            if arrays.read_only_view(target.value):
                base = text(module, target.value)
                report(
                    target,
                    f"`{base}` is `np.asarray` of a JAX array: a read-only view of JAX's buffer, and this "
                    f"assignment raises `ValueError`; copy it with `np.array(...)` first",
                )
                continue
            base_node = target.value
            if isinstance(base_node, ast.Name) and stores.excluded_by_test(base_node):
                continue  # the branch that finds it a JAX array has left: a NumPy array or a list here
            known_array = True
            if (
                arrays.is_array(base_node)
                or stores.indexed_like_array(target)
                or (isinstance(base_node, ast.Name) and stores.used_as_array(base_node))
            ):
                base = text(module, base_node)
                message = f"In-place update of the JAX array `{base}`: JAX arrays are immutable and this raises `TypeError`"
            elif arrays.jax_on_some_path(base_node):
                base = text(module, base_node)  # no fix: `.at[...]` fails where it is not a JAX array
                report(
                    target,
                    f"In-place update of `{base}`, a JAX array on some path here: where a branch above binds it to "
                    "one, this raises `TypeError` (JAX arrays are immutable); bind a NumPy array (`np.zeros`) on "
                    f"every path, or a JAX array on every path and write `{base} = {base}.at[...].set(...)`",
                )
                continue
            elif stores.traced_key(target):
                known_array = False  # perhaps a list or a dict: `.at[...]` is no fix for those
                base = text(module, base_node)
                message = (
                    f"In-place update of the traced value `{base}` at a traced index: a JAX array is immutable, "
                    "a list cannot be indexed by a tracer and a dict cannot hash one, so this raises `TypeError`"
                )
            elif stores.traced_mask(target):
                base, mask = text(module, base_node), text(module, target.slice)
                report(
                    target,
                    f"In-place update of `{base}` under a traced boolean mask: a JAX array is immutable, NumPy "
                    "cannot read a tracer and a list or dict cannot take one, so this raises `TypeError`; write "
                    f"`{base} = jnp.where({mask}, <new value>, {base})` (`.at[{mask}]` needs a concrete mask too)",
                )
                continue
            else:
                continue
            fix = None
            if known_array and store.kind != "unpacked":
                fix = in_place_fix(module, store.stmt, target, target.value)
            report(
                target,
                f"{message}; write `{base} = {base}.at[...].set(...)` (or `.add`, `.multiply`, ...)",
                fix,
            )
