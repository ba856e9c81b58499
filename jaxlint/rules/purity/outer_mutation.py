"""JAX407: traced code mutates an object that lives outside it (a global, a closure variable, `self`)."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.lattice import Trace
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS

_WHERE = {
    "module": "`{name}`, a module-level object",
    "closure": "`{name}`, an object of the enclosing function",
    "parameter": "`{name}`, an argument of the enclosing function",
    "self": "the Python object `{name}`",
}


@register
class OuterMutation(Rule):
    code = "JAX407"
    name = "outer-state-mutation"
    summary = "Traced code mutates an object from outside the function: it happens at trace time only"
    what = """
        Checks for traced code that mutates an object living outside it: attribute and item
        stores (`self.step += 1`, `cache[k] = x`, `self.last_hidden = h`) and mutating calls
        (`outer_list.append(x)`, `d.update(...)`) on module globals, captured variables, or a
        jitted method's `self`. The write happens once, while JAX traces the function, and what
        it stores is a tracer that fails when used later. Return values instead.
        """
    decisions = """
        **Objects from outside.**

        - Containers and instances that a module global or a variable of an enclosing eager
          function holds (`captured = []`).
        - An argument of the eager function a jitted function is nested in, when a traced value
          is stored into it (`def make(total): @jax.jit def f(x): total[0] += x`). A `lax` body
          nested in a function is left out: a Pallas kernel writes its results through its
          reference arguments so.
        - The Python object `self` of a jitted method (static `self`, a bound method) or of an
          instance handed to `lax.scan`, also written from a body the method hands to
          `jax.vmap` or a `lax` primitive, and through `setattr(self.env, "sys", v)`.
        - Any of these through a local name every binding of which reads a part of one (`env =
          self.env`, then `env.unwrapped.sys = sys` under `jax.vmap`; `latest = RECORDER.latest`,
          then `latest["x"] = x`): the name is the object, not a copy of it.

        **Where.** Inside staged code (`jit`, `pmap`, `lax` bodies) always; under `vmap` when
        the stored value is traced.

        **Flax NNX.** An NNX object from outside (`optimizer = nnx.Optimizer(...)`, an
        `nnx.Module` instance, `nnx.MultiMetric(...)`) updated inside plain `jax.jit` or a `lax`
        body (`optimizer.update(...)`, `metrics.update(...)`, `model.w.value = ...`) is
        reported, and so is a call of such an object there (`counter()`, `model.step(x)`) when
        its class, defined in the module, updates its own state in the method called
        (`self.count.value += 1` in `__call__`), its own or one it inherits from a base of the
        module.

        **Haiku.** A Haiku module (`hk.Linear(...)`, a class of the module deriving from
        `hk.Module`; closed over, made in place, or a `self.core` a Haiku module's class assigns
        one) or `hk.get_parameter` called inside a function nested in another that a raw JAX
        transformation or `lax` primitive stages (`jax.lax.scan(step, ...)`, `jax.jit(lambda x:
        lin(x))`) is reported, unless the function around has already called that module itself.
        `jax.vmap`, which Haiku runs as it is, is not reported.

        **Not reported.**

        - Containers built inside the function (`features.append(x)` then
          `jnp.stack(features)`).
        - An object the traced code makes itself (`acc = Accumulator()` in a jitted function:
          what its methods store on `self` is made and dropped within the trace).
        - Host callbacks.
        - A write undone before the code leaves: inside a `try` whose `finally` writes the same
          attribute or key back from a name that saved it (`old = env.sys; try: env.sys = sys;
          yield env; finally: env.sys = old`), and that write back.
        - Flax `self.sow`/`self.variable`/`self.param`, and NNX variable updates
          (`self.count.value += 1`, `nnx.jit`), except those from outside described above.
        - Framework modules and registered pytrees.
        - Counters that a test asserts on.
        """
    why = """
        The Python body of a staged function runs while JAX traces it, once per compilation. A
        write to outside state happens on the first call only; later calls run the compiled
        program and skip it. What it stores is a tracer: using it after the trace raises
        `UnexpectedTracerError` (a leaked tracer). Return values from the function instead, or
        use `jax.debug.callback` for host-side bookkeeping. Flax NNX variables belong to the
        trace level they were made at, and Flax refuses to update them from a plain `jax.jit`
        trace or a `lax.scan` body (`TraceContextError`, or `ValueError: Cannot extract graph
        node from different trace level`); NNX's own transformations (`nnx.jit`, `nnx.scan`,
        `nnx.fori_loop`) carry the state in and out. A Haiku module makes its parameters in the
        frame of `hk.transform` the first time it runs: run first inside a raw `jax.lax` body or
        `jax.jit`, it creates them as that trace's tracers, and `init` raises
        `UnexpectedTracerError`. Haiku's lifted forms (`hk.scan`, `hk.fori_loop`, `hk.cond`,
        `hk.switch`, `hk.while_loop`) carry the frame through.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        captured = []

        @jax.jit
        def forward(params, x):
            for w in params:
                x = jnp.tanh(x @ w)
                captured.append(x)  # JAX407
            return x
        """,
        """
        from functools import partial

        import jax

        class Regressor:
            def __init__(self, w):
                self.w = w
                self.cache = {}
                self.calls = 0

            @partial(jax.jit, static_argnums=0)
            def predict(self, x):
                y = x @ self.w
                self.cache["last"] = y  # JAX407
                self.calls += 1  # JAX407
                return y
        """,
        """
        import jax
        import jax.numpy as jnp

        class RNNCell:
            def __init__(self, w):
                self.w = w
                self.last_hidden = None

            def __call__(self, h, x):
                h = jnp.tanh(h @ self.w + x)
                self.last_hidden = h  # JAX407
                return h, h

        def run(w, xs):
            cell = RNNCell(w)
            return jax.lax.scan(cell, jnp.zeros(2), xs)
        """,
        """
        import jax
        import optax
        from flax import nnx

        model = nnx.Linear(4, 1, rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
        metrics = nnx.MultiMetric(loss=nnx.metrics.Average("loss"))

        def train_epoch(batches):
            def body(carry, batch):
                x, y = batch
                loss, grads = nnx.value_and_grad(lambda m: ((m(x) - y) ** 2).mean())(model)
                optimizer.update(model, grads)  # JAX407
                metrics.update(loss=loss)  # JAX407
                return carry, loss

            return jax.lax.scan(body, 0, batches)
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp
        from jax import lax

        carry_shapes = []

        def body(carry, x):
            new_carry = carry + x
            if len(carry_shapes) < 2:  # what tracing learns about the carry, recorded once
                carry_shapes.append([jnp.shape(c) for c in jax.tree.flatten(new_carry)[0]])
            return new_carry, new_carry

        def run(xs):
            return lax.scan(body, jnp.zeros(3), xs)
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def forward_with_features(params, x):
            features = []
            for w in params:
                x = jax.nn.relu(x @ w)
                features.append(x)
            return x, jnp.stack(features)
        """,
        """
        import jax
        import jax.numpy as jnp

        metrics = []

        def _record(loss):
            metrics.append(float(loss))

        @jax.jit
        def step(w, x):
            loss = jnp.sum((x @ w) ** 2)
            jax.debug.callback(_record, loss)
            return w * 0.9
        """,
        """
        import flax.linen as nn
        from flax import nnx

        class Dense(nn.Module):
            @nn.compact
            def __call__(self, x):
                self.sow("intermediates", "x", x)
                return nn.Dense(3)(x)

        class Counter(nnx.Module):
            def __init__(self):
                self.count = nnx.Variable(0)

            def __call__(self, x):
                self.count.value += 1
                return x

        @nnx.jit
        def step(model, x):
            model.count.value += 1
            return model(x)
        """,
        """
        import optax
        from flax import nnx

        model = nnx.Linear(4, 1, rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

        @nnx.jit
        def train_step(model, optimizer, x, y):
            grads = nnx.grad(lambda m: ((m(x) - y) ** 2).mean())(model)
            optimizer.update(model, grads)  # NNX's own jit carries the state out

        def train(batches):
            for x, y in batches:
                train_step(model, optimizer, x, y)
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        captured = []

        @jax.jit
        def forward(w, x):
            x = jnp.tanh(x @ w)
            captured.append(x)
            return x

        def demo():
            forward(jnp.eye(2), jnp.ones(2))
            first = len(captured)
            forward(jnp.eye(2), jnp.ones(2))
            return first, len(captured)
        """,
        "trace-time-only",
    )

    limitations = PURITY_LIMITATIONS
    limits = (
        "Containers and objects the traced code makes itself are not reported.",
        "Framework modules, registered pytrees, Flax `sow`/`variable`/`param` and NNX variables"
        " updated from inside are left alone.",
        "Host callbacks, a write undone in a `finally` before the code leaves, and counters a test"
        " asserts on are not reported.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        for fn, ctx in effects.traced():
            if not ctx.abstract or effects.sanctioned(fn):
                continue
            writes = []
            for store in effects.stores_in.get(id(fn), []):
                if not isinstance(store.target, ast.Name):
                    value = store.stmt.value if store.kind == "augmented" else store.value
                    writes.append((store.target, store.target, [value] if value is not None else [], store.stmt))
            for call in effects.calls_in.get(id(fn), []):
                func = call.func
                if isinstance(func, ast.Attribute) and func.attr in array_api.MUTATING_METHODS:
                    values = [*call.args, *(k.value for k in call.keywords)]
                    writes.append((call, func.value if not isinstance(func.value, ast.Name) else func, values, call))
                elif len(call.args) == 3 and not call.keywords and module.qualname(func) == "builtins.setattr":
                    # `setattr(obj, "sys", v)` stores as `obj.sys = v` does.
                    name = call.args[1].value if isinstance(call.args[1], ast.Constant) else ""
                    target = ast.Attribute(call.args[0], str(name), ast.Store())
                    writes.append((call, target, [call.args[2]], call))
            if ctx.staged:
                for call in module.nodes_of(fn, ast.Call):
                    haiku = effects.haiku_module_call(call, fn)
                    if haiku is not None and not effects.expects_error(call):
                        report(
                            call,
                            f"Staged code calls {haiku} inside a raw JAX trace of its own: "
                            "Haiku makes parameters in the frame of `hk.transform`, which a `jax.lax` body or "
                            "`jax.jit` cannot carry (`init` raises `UnexpectedTracerError`); use Haiku's own "
                            "`hk.scan`/`hk.fori_loop`/`hk.cond`/`hk.switch`/`hk.while_loop`, or jit the "
                            "transformed function's `apply` from outside",
                        )
                for call in effects.calls_in.get(id(fn), []):
                    found = effects.nnx_state_call(call, fn)
                    if found is not None and not effects.expects_error(call):
                        outer, method = found
                        report(
                            call,
                            f"Staged code calls the Flax NNX object `{outer.root.id}`, whose `{method}` updates its "
                            "state: NNX state cannot be updated from a `jax.jit` trace or a `lax` body (Flax raises "
                            "a trace-level error); use `nnx.jit`/`nnx.scan`/`nnx.fori_loop`, or pass it in and "
                            "return `nnx.state(...)`",
                        )
            for node, target, values, stmt in writes:
                if effects.expects_error(stmt):
                    continue
                outer = effects.outer_object(target, fn)
                if outer is not None and ctx.staged and effects.nnx_object(outer):
                    report(
                        node,
                        f"Staged code updates the Flax NNX object `{outer.root.id}` from outside it: NNX state "
                        "cannot be updated from a `jax.jit` trace or a `lax` body (Flax raises a trace-level "
                        "error); use `nnx.jit`/`nnx.scan`/`nnx.fori_loop`, or pass it in and return `nnx.state(...)`",
                    )
                    continue
                if _variable_update(target):
                    continue
                if outer is None or outer.root.id in effects.asserted_names:
                    continue
                if isinstance(stmt, ast.stmt) and effects.restored(stmt, target):
                    continue
                leaked = any(module.is_traced(v) for v in values)
                origin = effects.mutable_origin(outer)
                parameter = not origin and leaked and effects.enclosing_parameter(outer, fn)
                if not (origin or parameter):
                    continue
                if not ctx.staged and not leaked:
                    continue
                if not leaked and _records_trace_metadata(module, values):
                    continue
                what = _WHERE["parameter" if parameter else outer.where].format(name=outer.root.id)
                if outer.alias:
                    what = f"`{outer.alias}`, a part of {what}"
                if leaked:
                    message = (
                        f"Traced code stores a traced value in {what}: the write happens once, while tracing, "
                        "and leaks a tracer; return the value instead"
                    )
                else:
                    message = (
                        f"Traced code mutates {what}: the write happens once, while tracing, not on every call; "
                        "return the new state instead"
                    )
                report(node, message)


def _records_trace_metadata(module, values: list[ast.AST]) -> bool:
    """Every stored value is static and read from values' metadata (`jnp.shape(c)`, `x.dtype`,
    `len(xs)`): what tracing learns about its inputs, recorded by design, the same on every trace."""
    if not values:
        return False
    for value in values:
        fact = module.value(value)
        if fact is None or fact.trace is not Trace.STATIC:
            return False
    return any(_metadata_query(node, module) for value in values for node in ast.walk(value))


def _metadata_query(node: ast.AST, module) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in jax_api.STATIC_ATTRIBUTES
    return isinstance(node, ast.Call) and module.qualname(node.func) in jax_api.STATIC_QUERIES


def _variable_update(target: ast.AST) -> bool:
    """`self.count.value = ...`, `v.value[...] = ...`: a framework variable's sanctioned update."""
    node = target
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute) and node.attr in ("value", "raw_value"):
            return True
        node = node.value
    return False
