"""JAX408: a jitted function mutates an argument's container, which the caller never sees."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine import reads
from jaxlint.analysis.engine.walk import walk
from jaxlint.analysis.knowledge import array_api
from jaxlint.analysis.tracing.tracing import positional_params
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS


@register
class ArgumentMutation(Rule):
    code = "JAX408"
    name = "argument-mutation-in-jit"
    summary = "A jitted function mutates an argument's container: the caller never sees the change"
    what = """
        Checks for item and attribute stores (`state["step"] = ...`, `batch.x = ...`) and
        mutating calls (`history.append(...)`) on a parameter of a function staged by `jax.jit`
        or `jax.pmap`. The transformation hands the function a fresh copy of its arguments, so
        the caller never sees the change.
        """
    decisions = """
        - Reported when the function neither returns that parameter nor reads it after the
          write: the write can only have been meant for the caller.
        - An attribute the function sets and reads itself is reported where a caller passes a
          name and reads that attribute of it after the call (`f(cpt)`, then `cpt.c`).
        - Flax NNX transformations, which propagate module state on purpose, are not reported,
          nor are Pallas kernels, whose parameters are references they write their results
          through.
        - Nor is a module that makes NNX variables hijax (`nnx.var_defaults(hijax=True)`, as a
          call, a `with` or a decorator, or `flax.config.update("flax_hijax_variable", True)`):
          `jax.jit` hands the function the caller's own NNX objects, so a write reaches the
          caller (`optimizer.update(model, grads)` in a jitted step updates the caller's
          optimizer), or, in Flax versions that want `ref=True` for that, Flax refuses it with
          `ImmutableVariableError`; never the silent copy this rule is about.
        """
    why = """
        A transformation flattens its arguments into arrays and rebuilds fresh containers for
        the traced function, so the function mutates a copy: the caller's dict or list is never
        changed, although the same code without `jit` changes it. Return the updated container
        (`return state`) and rebind it at the call site.
        """
    bad = (
        """
        import jax

        @jax.jit
        def record(state, loss):
            state["last_loss"] = loss  # JAX408
            state["history"].append(loss)  # JAX408
            return loss * 2
        """,
        """
        import jax

        @jax.jit
        def predict(t, params):
            params.out = params.a * t  # JAX408
            return params.out + params.b

        def run(t, params):
            y = predict(t, params)
            return y, params.out  # the caller's object has no `out`
        """,
    )
    good = (
        """
        import jax

        @jax.jit
        def record(state, loss):
            state["last_loss"] = loss
            return state, loss * 2
        """,
        """
        import jax

        @jax.jit
        def normalise(batch):
            batch["x"] = batch["x"] / 255.0  # a local edit, read below
            return batch["x"].mean()
        """,
        """
        import jax

        @jax.jit
        def predict(t, params):
            params.out = params.a * t  # scratch space of the trace, read below
            return params.out + params.b

        def run(t, params):
            y = predict(t, params)
            return y, params.a  # reads what the caller set itself
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def record(state, loss):
            state["last_loss"] = loss
            return loss * 2

        def demo():
            state = {"last_loss": jnp.zeros(())}
            record(state, jnp.ones(()))
            assert float(state["last_loss"]) == 1.0, "the caller's dict was not updated"
        """,
        "raises:AssertionError",
    )

    limitations = PURITY_LIMITATIONS
    limits = (
        "A write is reported only where the function neither returns the parameter nor reads it"
        " after the write.",
        "Flax NNX transformations, Pallas kernels and modules with hijax NNX variables write their"
        " arguments on purpose: not reported.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        for root in module.traced_roots:
            fn = root.node
            if not root.context.staged or root.framework_method or effects.sanctioned(fn) or effects.hijax_variables:
                continue
            if root.kernel:
                continue  # a Pallas kernel's parameters are references: it returns results by writing through them
            if isinstance(fn, ast.Lambda):
                continue
            params = _mutable_parameters(root)
            if not params:
                continue
            writes = []
            for store in effects.stores_in.get(id(fn), []):
                if not isinstance(store.target, ast.Name):
                    writes.append((store.target, store.target, store.stmt))
            for call in effects.calls_in.get(id(fn), []):
                func = call.func
                if isinstance(func, ast.Attribute) and func.attr in array_api.MUTATING_METHODS:
                    writes.append((call, func.value, call))
            if not writes:
                continue
            write_roots = {id(r) for _, t, _ in writes if (r := _root(t)) is not None}
            rebound = {s.target.id for s in effects.name_stores(fn)}
            for node, target, stmt in writes:
                root_name = _root(target)
                if root_name is None or root_name.id not in params or root_name.id in rebound:
                    continue
                if module.names.read_scope.get(id(root_name)) is not module.names.scope_of(fn):
                    continue
                if _used_after(fn, root_name.id, stmt, write_roots):
                    read = _caller_read(module, root, target)
                    if read is not None:
                        report(
                            node,
                            f"`{root_name.id}` is an argument of a jitted function: the function sets "
                            f"`{target.attr}` on a copy, and the caller's read of `{read[0]}` on line {read[1].lineno} "
                            "never sees it; return the value instead",
                        )
                    continue
                report(
                    node,
                    f"`{root_name.id}` is an argument of a jitted function: the function mutates a copy and "
                    "the caller never sees the change; return the updated value instead",
                )


def _caller_read(module, root, target: ast.AST) -> tuple[str, ast.expr] | None:
    """For an attribute set on a parameter (`cpt.c = ...`): a call of the jitted function that
    passes a plain name for it, and the caller's first read of that attribute of the name
    afterwards (`cpt.c`), before anything may set it again."""
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
        return None
    param = target.value.id
    for site in module.call_sites:
        if site.target is not root:
            continue
        arg = site.argument(param)
        if not isinstance(arg, ast.Name):
            continue
        path = f"{arg.id}.{target.attr}"
        read = reads.later_read(site.function if site.function is not None else module.tree, path, site.call)
        if read is not None and read.next_iteration is None:
            return path, read.node
    return None


def _mutable_parameters(root) -> set[str]:
    fn = root.node
    positional = positional_params(fn)
    skipped = {p.arg for p in positional[: root.bound_positional]}
    names = {p.arg for p in (*positional, *fn.args.kwonlyargs)}
    return names - skipped - set(root.static_params) - set(root.bound_keywords)


def _root(target: ast.AST) -> ast.Name | None:
    node = target
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _used_after(fn, name: str, stmt: ast.AST, write_roots: set[int]) -> bool:
    """`name` is read after `stmt` (later in the body, in a loop around it, or returned),
    other than to mutate it again."""
    end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
    loops = [
        node for node in walk(fn)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        and node.lineno <= stmt.lineno <= (node.end_lineno or node.lineno)
    ]
    for node in walk(fn):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and id(node) not in write_roots:
            if (node.lineno, node.col_offset) > end:
                return True
            if any(loop.lineno <= node.lineno <= (loop.end_lineno or loop.lineno) for loop in loops):
                return True
    return False
