"""JAX303: a static argument fed a value that changes on every iteration of a loop."""

from __future__ import annotations

import ast

from jaxlint.analysis.knowledge import jax_api

from jaxlint.analysis.shapes import jit_signature
from jaxlint.analysis.engine.loop_variance import ASSIGN, AUGMENT, MUTATE
from jaxlint.analysis.knowledge.optax_objects import optax_factory
from jaxlint.analysis.values.records import dataclass_like
from jaxlint.analysis.engine.walk import walk
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS

_NUMERIC_BUILTINS = frozenset({"builtins.len", "builtins.float", "builtins.int", "builtins.round", "builtins.abs"})


@register
class StaticArgumentVariesInLoop(Rule):
    code = "JAX303"
    name = "static-argument-varies-in-loop"
    summary = "A static argument gets a new value on every iteration of a loop: one compile per value"
    what = """
        Checks calls of a jitted function inside a loop that pass a static argument (named in
        `static_argnums`/`static_argnames`) whose value changes from one iteration to the next:
        a loop index, a decaying rate, or an object made anew in the loop and hashed by identity
        (a lambda, a `partial`, an optax transformation). JAX compiles once per distinct static
        value, so every iteration compiles again.
        """
    decisions = """
        **Numbers that change.** A number passed for a static parameter is reported when it is:

        - the loop index of a `range` loop;
        - a value updated in the loop (`t *= 0.7`), or one computed from such a value (`eps =
          0.2 * (1 - epoch / n)`);
        - the length of a list that grows in the loop;
        - a float swept over a list (`for lr in (0.1, 0.01, 0.001)`).

        **Objects made anew and hashed by identity.** A static argument is reported when it is:

        - a lambda or a function defined in the loop;
        - a `functools.partial`;
        - an optax transformation (a tuple of fresh closures);
        - an instance of a class of the module that defines neither `__eq__` nor `__hash__`, or
          of one compared field by field (an Equinox module, a dataclass) whose `__init__`
          stores a function it makes (`self.forward = jax.jit(fn)`, a lambda).

        Under `eqx.filter_jit`, which makes every non-array argument static, such an object is
        reported in any position. Under `nnx.jit`, an `nnx.Optimizer` built in the loop around a
        new optax transformation is reported: the optimizer's structure, transformation
        included, is part of the compilation key.

        Such an object made by the plain function that makes the call, outside any loop of it,
        is reported when the module calls that function in a loop or from more than one place
        (`train()` building its optimizer, called once per run): each call makes a new key.

        **Deliberate, and not reported.**

        - A static argument that takes its values from a fixed collection of other kinds (`for
          loss_fn in (huber, l2)`, `for mode in ("train", "eval")`, `for width in (64, 128)`):
          usually a deliberate choice among a few programs.
        - A static argument that stays the same across iterations.
        - A loop inside jitted code: it unrolls once, while the outer function is traced, and
          later calls reuse that compilation.
        """
    why = """
        JAX compiles a jitted function once per distinct combination of static values. A learning
        rate, temperature or smoothing coefficient that changes every step makes every step a
        new compilation: the loop runs at compile speed, and the compilation cache grows without
        bound. Pass such a value as a traced argument (remove it from `static_argnums`); if it
        sets a shape or a Python loop count, round it to a few buckets. Functions, partials and
        plain objects compare equal only to themselves, so one rebuilt on every iteration (an
        optimizer made per epoch, a loss `partial` made per step) is a new cache key every time:
        build it once, before the loop. `nnx.Optimizer(model, optax.adam(lr))` rebuilt every
        epoch compiles the step again every epoch; build the transformation once (an optax
        schedule for a changing learning rate) and, if needed, a new optimizer around it.
        """
    bad = (
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(2,))
        def smoothed_xent(logits, labels, eps):
            n = logits.shape[-1]
            target = jax.nn.one_hot(labels, n) * (1 - eps) + eps / n
            return -jnp.mean(jnp.sum(target * jax.nn.log_softmax(logits), axis=-1))

        def sweep(logits, labels):
            for epoch in range(6):
                eps = 0.2 * (1 - epoch / 6)
                print(epoch, smoothed_xent(logits, labels, eps))  # JAX303
        """,
        """
        import jax

        def soft_assign(points, centroids, temperature):
            d2 = ((points[:, None] - centroids[None]) ** 2).sum(-1)
            return jax.nn.softmax(-d2 / temperature, axis=-1)

        soft_assign = jax.jit(soft_assign, static_argnames="temperature")

        def anneal(pts, cents):
            t = 1.0
            for _ in range(8):
                resp = soft_assign(pts, cents, temperature=t)  # JAX303
                cents = (resp.T @ pts) / resp.sum(0)[:, None]
                t *= 0.7
            return cents
        """,
        """
        from functools import partial
        import numpy as np
        import jax

        @partial(jax.jit, static_argnames=("lr",))
        def sgd(w, g, lr):
            return w - lr * g

        def sweep_loop(w, g):
            for lr in (0.1, 0.03, 0.01):
                w = sgd(w, g, lr)  # JAX303
            return w

        def log_sweep(w, g):
            for i, lr in enumerate(np.logspace(-3, -1, 5)):
                w = sgd(w, g, lr=lr)  # JAX303
            return w
        """,
        """
        from functools import partial
        import jax
        import optax

        @partial(jax.jit, static_argnames=("optimizer", "loss_fn"))
        def update(params, opt_state, batch, optimizer, loss_fn):
            grads = jax.grad(loss_fn)(params, batch)
            updates, opt_state = optimizer.update(grads, opt_state)
            return optax.apply_updates(params, updates), opt_state

        def fit(params, batches, epochs):
            for epoch in range(epochs):
                optimizer = optax.adam(1e-3 / (epoch + 1))
                opt_state = optimizer.init(params)
                for batch in batches:
                    params, opt_state = update(
                        params, opt_state, batch,
                        optimizer,  # JAX303
                        lambda p, b: ((p - b) ** 2).sum(),  # JAX303
                    )
            return params
        """,
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("step",))
        def warmup(params, step):
            return params * min(1.0, step / 100)

        def train(params, n):
            for i in range(n):
                params = warmup(params, step=i)  # JAX303
            return params
        """,
        """
        import optax
        from flax import nnx

        @nnx.jit
        def train_step(model, optimizer, x, y):
            grads = nnx.grad(lambda m: ((m(x) - y) ** 2).mean())(model)
            optimizer.update(model, grads)

        def fit(model, epochs, lr):
            for epoch, batches in enumerate(epochs):
                optimizer = nnx.Optimizer(model, optax.adam(lr * 0.9 ** epoch), wrt=nnx.Param)
                for x, y in batches:
                    train_step(model, optimizer, x, y)  # JAX303
        """,
        """
        from functools import partial
        import jax
        import optax

        @partial(jax.jit, static_argnames=("optimizer",))
        def update(params, opt_state, grads, optimizer):
            updates, opt_state = optimizer.update(grads, opt_state)
            return optax.apply_updates(params, updates), opt_state

        def train(params, grads):
            optimizer = optax.adam(1e-3)
            opt_state = optimizer.init(params)
            for g in grads:
                params, opt_state = update(params, opt_state, g, optimizer)  # JAX303
            return params

        def restarts(params, grads):
            return [train(params, grads) for seed in range(5)]
        """,
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class Model(eqx.Module):
            w: jax.Array
            activation: object

            def __init__(self, fn):
                self.w = jnp.ones(3)
                self.activation = jax.jit(fn)

            def __call__(self, x):
                return self.activation(self.w * x)

        @eqx.filter_jit
        def step(model, x):
            return model(x)

        def restarts(x):
            for seed in range(3):
                model = Model(jnp.tanh)
                step(model, x)  # JAX303
        """,
    )
    good = (
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("k",))
        def shift(x, k):
            return jnp.roll(x, k)

        @jax.jit
        def total(x):  # traced once: the four shifts compile with it, not on every call
            acc = jnp.zeros_like(x)
            for k in range(4):
                acc = acc + shift(x, k)
            return acc
        """,
        """
        import jax
        import jax.numpy as jnp

        def huber(r):
            return jnp.where(jnp.abs(r) < 1, 0.5 * r ** 2, jnp.abs(r) - 0.5)

        def l2(r):
            return 0.5 * r ** 2

        def fit_step(w, x, y, loss_fn):
            return w - 0.1 * jax.grad(lambda w: jnp.mean(loss_fn(x @ w - y)))(w)

        fit_step = jax.jit(fit_step, static_argnums=3)

        def fit(w, x, y):
            for loss_fn in (huber, l2, huber, l2):
                w = fit_step(w, x, y, loss_fn)
            return w
        """,
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("n_steps", "method"))
        def integrate(y0, dt, n_steps=10, method="rk2"):
            y = y0
            for _ in range(n_steps):
                y = y - dt * 0.5 * y if method == "euler" else y - dt * 0.5 * (y - dt * 0.25 * y)
            return y

        def run():
            for dt in (0.1, 0.05, 0.01, 0.2):
                y = integrate(jnp.ones(2), dt, n_steps=20)
            return y

        @jax.jit
        def scaled(x, lr):
            return x * lr

        def anneal(x):
            lr = 1.0
            for _ in range(10):
                x = scaled(x, lr)
                lr *= 0.9
            return x
        """,
        """
        import optax
        from flax import nnx

        @nnx.jit
        def train_step(model, optimizer, x, y):
            grads = nnx.grad(lambda m: ((m(x) - y) ** 2).mean())(model)
            optimizer.update(model, grads)

        def fit(model, epochs, lr):
            schedule = optax.exponential_decay(lr, transition_steps=100, decay_rate=0.9)
            optimizer = nnx.Optimizer(model, optax.adam(schedule), wrt=nnx.Param)  # built once
            for batches in epochs:
                for x, y in batches:
                    train_step(model, optimizer, x, y)
        """,
        """
        from functools import partial
        import jax
        import optax

        @partial(jax.jit, static_argnames=("optimizer",))
        def update(params, opt_state, grads, optimizer):
            updates, opt_state = optimizer.update(grads, opt_state)
            return optax.apply_updates(params, updates), opt_state

        def train(params, grads, optimizer):  # one optimizer, made by the caller
            opt_state = optimizer.init(params)
            for g in grads:
                params, opt_state = update(params, opt_state, g, optimizer)
            return params

        def main(params, grads):  # called once: one optimizer, one compilation
            optimizer = optax.adam(1e-3)
            return update(params, optimizer.init(params), grads, optimizer)

        def restarts(params, grads):
            optimizer = optax.adam(1e-3)
            return [train(params, grads, optimizer) for seed in range(5)]
        """,
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class Model(eqx.Module):
            w: jax.Array
            activation: object

            def __init__(self, fn):
                self.w = jnp.ones(3)
                self.activation = fn  # the caller's function: equal in every instance

            def __call__(self, x):
                return self.activation(self.w * x)

        @eqx.filter_jit
        def step(model, x):
            return model(x)

        def restarts(x):
            for seed in range(3):
                model = Model(jnp.tanh)
                step(model, x)
        """,
    )
    demo = JaxDemo(
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        traces = 0

        @partial(jax.jit, static_argnums=(1,))
        def scale(x, eps):
            global traces
            traces += 1
            return x * (1 - eps)

        def demo():
            for epoch in range(4):
                scale(jnp.ones(3), 0.2 * (1 - epoch / 4))
            return traces
        """,
        "recompiles",
    )
    references = ("https://docs.jax.dev/en/latest/_autosummary/jax.jit.html",)

    limitations = JIT_SIGNATURE_LIMITATIONS

    def check(self, module, report):
        plain = {id(root) for root in jit_signature.plain_jits(module)}
        for site in module.call_sites:
            if module.runs_staged(site.function):
                continue  # a loop in staged code runs once per trace of its function, not per call
            if id(site.target) not in plain:
                self._static_by_filtering(module, site, report)
                continue
            root = site.target
            static = jit_signature.designated(root, "static")
            method_call = jit_signature.is_method_call(site.call, root, module)
            for name in static:
                arg = jit_signature.argument(site.call, root, name, method_call)
                if arg is None:
                    continue
                for loop in reversed(site.loops):
                    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                        continue
                    fresh = _fresh_object(arg, loop, module)
                    why = fresh or (module.varies_in_loop(arg, loop) and _changing_number(arg, loop, module))
                    if why:
                        # An object made anew cannot be rounded: the fix is to make it once.
                        remedy = (
                            "build it once, outside the loop (or pass what changes as a traced argument)"
                            if fresh
                            else f"pass it as a traced argument (drop it from `{static[name].option}`), "
                            "or, if it must stay static, round it to a few values"
                        )
                        report(
                            arg,
                            f"static argument `{name}` of {jit_signature.function_label(root.node)} is {why}: "
                            f"every iteration of the loop on line {loop.lineno} compiles it again; {remedy}",
                        )
                        break
                else:
                    per_call = _made_per_call(arg, site, module)
                    if per_call:
                        report(
                            arg,
                            f"static argument `{name}` of {jit_signature.function_label(root.node)} is {per_call}: "
                            "every call compiles it again; build it once, outside, and pass it in",
                        )


    @staticmethod
    def _static_by_filtering(module, site, report) -> None:
        """`eqx.filter_jit` makes every non-array argument static, `nnx.jit` the structure of
        every NNX object: a function, optax transformation or plain object made anew on every
        iteration, or an `nnx.Optimizer` around one, is a new cache key every time."""
        transform = next((t.name for t in site.target.transforms if t.name in _FILTERING), None)
        if transform is None:
            return
        label = ".".join(transform.split(".")[-2:])
        arguments = [*site.call.args, *(k.value for k in site.call.keywords)]
        for arg in arguments:
            if isinstance(arg, ast.Starred):
                continue
            for loop in reversed(site.loops):
                if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                    continue
                why = _fresh_object(arg, loop, module)
                if transform == "flax.nnx.jit" and why and "`nnx.Optimizer`" not in why:
                    why = None  # `nnx.jit` traces other leaves: only an NNX object's structure is static
                if why:
                    report(
                        arg,
                        f"{jit_signature.function_label(site.target.node)} is passed {why}; `{label}` makes it part of the compilation key (static, compared by identity): "
                        f"every iteration of the loop on line {loop.lineno} compiles again; build it once, "
                        "outside the loop",
                    )
                    break
            else:
                per_call = _made_per_call(arg, site, module)
                if per_call and (transform != "flax.nnx.jit" or "`nnx.Optimizer`" in per_call):
                    report(
                        arg,
                        f"{jit_signature.function_label(site.target.node)} is passed {per_call}; `{label}` makes "
                        "it part of the compilation key (static, compared by identity): every call compiles "
                        "again; build it once, outside, and pass it in",
                    )


# Transformations that make non-array arguments (or NNX graph structure) static.
_FILTERING = frozenset({"equinox.filter_jit", "equinox.filter_pmap", "flax.nnx.jit"})


def _changing_number(arg: ast.AST, loop: ast.AST, module, seen: frozenset = frozenset()) -> str | None:
    """Why an argument is a number that changes every iteration, or None when it need not be."""
    if isinstance(arg, ast.Name):
        if arg.id in seen:
            return None
        seen = seen | {arg.id}
        if _is_range_index(arg.id, loop, module):
            return f"the loop index `{arg.id}`"
        floats = _float_sweep(arg.id, loop, module)
        if floats:
            return f"`{arg.id}`, a float swept over {floats}"
        for definition in module.loops.definitions(arg.id, loop, arg):
            node = definition.node
            if definition.kind == AUGMENT and _numeric_op(node.op):
                return f"`{arg.id}`, updated on every iteration (`{ast.unparse(node)}`, line {node.lineno})"
            if definition.kind == ASSIGN and isinstance(node, ast.Assign):
                value = definition.value
                if _self_update(value, arg.id) or _numeric_expression(value, loop, module, seen):
                    return f"`{arg.id}`, recomputed on every iteration (`{ast.unparse(node)}`, line {node.lineno})"
        return None
    if _numeric_expression(arg, loop, module, seen):
        return f"`{ast.unparse(arg)}`, a number that changes on every iteration"
    return None


def _fresh_object(arg: ast.AST, loop: ast.AST, module) -> str | None:
    """Why an argument is an object made anew on every iteration and hashed by identity."""
    if isinstance(arg, ast.Name):
        made = [
            d for d in module.loops.definitions(arg.id, loop, arg)
            if d.kind == ASSIGN and isinstance(d.node, ast.Assign) or isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        if not made or not all(_made_here(d, module) for d in made):
            return None
        return f"`{arg.id}`, {_made_here(made[0], module)} made on every iteration (line {made[0].node.lineno})"
    what = _identity_hashed(arg, module)
    return f"{what} made on every iteration" if what else None


def _made_per_call(arg: ast.AST, site, module) -> str | None:
    """Why an argument is an object hashed by identity that the plain function making the call
    makes anew on each of its calls, when the module calls that function in a loop or more than
    once (`train()` building its optimizer, called once per run)."""
    fn = site.function
    if not isinstance(arg, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if fn.decorator_list or id(fn) in module.effects.contexts:
        return None  # a cache may hand back the same object; traced code runs once per trace
    scope = module.names.scopes.get(id(fn))
    name = arg.id
    if scope is None or name in scope.params or name in scope.other or name in scope.imports:
        return None
    made = scope.assigned.get(name, [])
    defined = scope.defs.get(name)
    if isinstance(defined, (ast.FunctionDef, ast.AsyncFunctionDef)) and not made:
        what, line = "a new function", defined.lineno
    elif made and defined is None and all(_identity_hashed(value, module) for value in made):
        what, line = _identity_hashed(made[0], module), made[0].lineno
    else:
        return None
    calls = jit_signature.plain_calls(module, fn)
    looped = next((c for c in calls if module.loops_around(c)), None)
    if looped is not None:
        repeated = f"called in a loop (line {looped.lineno})"
    elif len(calls) > 1:
        repeated = f"called on lines {', '.join(str(c.lineno) for c in calls)}"
    else:
        return None
    return f"`{name}`, {what} made on every call of `{fn.name}` (line {line}), which is {repeated}"


def _made_here(definition, module) -> str | None:
    if isinstance(definition.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "a new function"
    return _identity_hashed(definition.value, module)


def _identity_hashed(expr: ast.AST, module) -> str | None:
    """A new lambda, partial, optax transformation or plain object: equal only to itself."""
    if isinstance(expr, ast.Lambda):
        return "a new lambda"
    if not isinstance(expr, ast.Call):
        return None
    callee = module.qualname(expr.func)
    if callee == "functools.partial":
        return "a new `functools.partial`"
    if optax_factory(callee):
        return f"a new optax transformation (`{callee[6:]}`, a tuple of fresh closures)"
    if callee == "flax.nnx.Optimizer":
        fresh = [_identity_hashed(a, module) for a in (*expr.args, *(k.value for k in expr.keywords))]
        inner = next((f for f in fresh if f and f.startswith("a new optax")), None)
        if inner is not None:
            return f"a new `nnx.Optimizer` around {inner}"
        return None
    cls = module.names.definition(expr.func) if isinstance(expr.func, ast.Name) else None
    if isinstance(cls, ast.ClassDef) and jit_signature.identity_hashed(cls, module):
        return f"a new `{cls.name}` instance (hashed by identity)"
    field = _new_function_field(cls, module) if isinstance(cls, ast.ClassDef) else None
    if field is not None:
        return f"a new `{cls.name}` instance (its field `{field[0]}` is {field[1]} its `__init__` makes, equal only to itself)"
    return None


def _new_function_field(cls: ast.ClassDef, module) -> tuple[str, str] | None:
    """For a class compared field by field (an Equinox module, a dataclass): the field its
    `__init__` sets to a function made there (`self.forward = jax.jit(fn)`), and what it is.
    Every instance then differs from every other, whatever the arguments."""
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if not dataclass_like(cls, module.names) or init is None or not init.args.args:
        return None
    me = init.args.args[0].arg
    local_defs = {n.name for n in init.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for stmt in init.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me):
            continue
        if isinstance(value, ast.Lambda):
            return target.attr, "a lambda"
        if isinstance(value, ast.Name) and value.id in local_defs:
            return target.attr, f"the function `{value.id}`"
        callee = module.qualname(value.func) if isinstance(value, ast.Call) and value.args else None
        if callee in jax_api.TRANSFORMS or callee == "functools.partial":
            return target.attr, f"a new `{callee.split('.')[-1]}` function"
    return None


_FLOAT_RANGES = frozenset({
    "numpy.linspace", "numpy.logspace", "numpy.geomspace", "jax.numpy.linspace", "jax.numpy.logspace",
    "jax.numpy.geomspace",
})


def _float_sweep(name: str, loop: ast.AST, module) -> str | None:
    """`for lr in (0.1, 0.01)`, `for i, lr in enumerate(np.logspace(-4, -1, 8))`: a float target."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return None
    it, target = loop.iter, loop.target
    if (
        isinstance(it, ast.Call)
        and module.qualname(it.func) == "builtins.enumerate"
        and it.args
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
    ):
        it, target = it.args[0], target.elts[1]
    if not _is(target, name):
        return None
    if isinstance(it, ast.Name):
        values = module.names.assignments(it)
        if len(values) != 1:
            return None
        it = values[0]
    if isinstance(it, ast.Call) and module.qualname(it.func) in _FLOAT_RANGES:
        return f"`{ast.unparse(it)}`"
    if not isinstance(it, (ast.Tuple, ast.List)) or len(it.elts) < 2:
        return None
    values = []
    for element in it.elts:
        node = element.operand if isinstance(element, ast.UnaryOp) and isinstance(element.op, ast.USub) else element
        if not (isinstance(node, ast.Constant) and isinstance(node.value, float)):
            return None
        values.append(ast.unparse(element))
    return ", ".join(values)


def _numeric_expression(expr: ast.AST, loop: ast.AST, module, seen: frozenset = frozenset()) -> bool:
    """A number that changes every iteration: built from one that does (a loop index, a value
    updated in the loop, a float sweep, a conversion of a changing value, the length of a
    collection that grows in the loop). The size of each item a loop visits (`len(batch)`,
    `batch.shape[0]`) is not one: equal-sized batches give one value."""
    if not module.varies_in_loop(expr, loop):
        return False
    if isinstance(expr, ast.BinOp) and _numeric_op(expr.op):
        if _stringy(expr):
            return False
        return any(_numeric_expression(side, loop, module, seen) for side in (expr.left, expr.right))
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _numeric_expression(expr.operand, loop, module, seen)
    if isinstance(expr, ast.Call) and module.qualname(expr.func) == "builtins.len":
        return len(expr.args) == 1 and isinstance(expr.args[0], ast.Name) and _grows_in_loop(expr.args[0], loop, module)
    if isinstance(expr, ast.Call) and module.qualname(expr.func) in _NUMERIC_BUILTINS:
        return True
    if isinstance(expr, ast.Name):
        return _changing_number(expr, loop, module, seen) is not None
    return False


def _self_update(value: ast.AST, name: str) -> bool:
    """`lr = lr / 2`: arithmetic on the name's own previous value."""
    return (
        isinstance(value, ast.BinOp)
        and _numeric_op(value.op)
        and not _stringy(value)
        and any(_is(n, name) for n in walk(value))
    )


_GROWING_METHODS = frozenset({"append", "extend", "insert", "add", "update"})


def _grows_in_loop(name: ast.Name, loop: ast.AST, module) -> bool:
    """What `name` holds was changed in the loop by `name.append(...)`, `name += ...` or
    `name = f(name, ...)`."""
    for definition in module.loops.definitions(name.id, loop, name):
        node = definition.node
        if definition.kind == MUTATE and isinstance(node, ast.Call) and node.func.attr in _GROWING_METHODS:
            return True
        if definition.kind == AUGMENT:
            return True
        if definition.kind == ASSIGN and isinstance(node, ast.Assign) and any(_is(n, name.id) for n in walk(definition.value)):
            return True
    return False


def _numeric_op(op: ast.operator) -> bool:
    return isinstance(op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Pow, ast.Mod))


def _stringy(expr: ast.AST) -> bool:
    return any(isinstance(n, (ast.JoinedStr, ast.Constant)) and isinstance(getattr(n, "value", None), str) for n in walk(expr))


def _is_range_index(name: str, loop: ast.AST, module) -> bool:
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    it, target = loop.iter, loop.target
    if isinstance(it, ast.Call) and module.qualname(it.func) == "builtins.enumerate":
        return isinstance(target, ast.Tuple) and target.elts and _is(target.elts[0], name)
    if isinstance(it, ast.Call) and module.qualname(it.func) == "builtins.range":
        return _is(target, name)
    return False


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
