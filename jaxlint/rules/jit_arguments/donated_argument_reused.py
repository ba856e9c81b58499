"""JAX304: an argument donated to a jitted call and read again afterwards."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine import reads
from jaxlint.analysis.shapes import jit_signature
from jaxlint.analysis.tracing.tracing import first_param
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.jit_arguments import JIT_SIGNATURE_LIMITATIONS, JIT_SIGNATURE_LIMITS

_HOST_VALUES = ("numpy.", "builtins.")


@register
class DonatedArgumentReused(Rule):
    code = "JAX304"
    name = "donated-argument-reused"
    summary = "A buffer donated to a jitted call is read again after the call"
    what = """
        Checks for a variable passed in a donated position of a jitted call
        (`donate_argnums`/`donate_argnames`) and read again afterwards, before it is assigned a
        new value. JAX hands the donated buffer to the computation and deletes the input array,
        so the later read raises `RuntimeError: Array has been deleted`. Rebind the result to
        the same name.
        """
    decisions = """
        - A read is reported later in the function, or on the next iteration of a loop that
          never rebinds the variable.
        - In a method, an attribute of its own instance passed in a donated position
          (`self.states`) is followed the same way, until it is assigned again or a call that
          may assign it is made (one made through the instance, or handed it: `self.refresh()`).
        - A plain function of the module that passes its own parameter straight into a donated
          position donates its caller's argument too, and reads in the caller are checked the
          same way.
        - `state, loss = train_step(state, batch)`, where the call's own statement rebinds the
          donated name, is the intended use and is not reported.
        - NumPy arrays and Python values are not reported: JAX copies them to the device instead
          of donating them.
        - `del state["opt"]` (or `del state.opt`) after donating a dict or an object removes an
          entry of the Python container and reads none of its buffers: it is no read (a read of
          the index expression is).
        """
    why = """
        Donating an argument lets XLA reuse its memory for an output, and JAX deletes the input
        array. Reading it afterwards raises `RuntimeError: Array has been deleted` (an
        operation JAX has already compiled for that shape raises a `ValueError` about a deleted
        or donated buffer instead); passing it to the jitted function again raises an
        invalid-buffer error. JAX only donates a buffer that
        some output can reuse (same shape and dtype); backends that cannot donate warn and keep
        it, but the CPU backend of current JAX does donate. Rebind the result to the same name,
        or drop the argument from `donate_argnums`.
        """
    bad = (
        """
        from functools import partial
        import jax

        @partial(jax.jit, donate_argnums=(0,))
        def sgd(params, grads):
            return params - 0.1 * grads

        def train(params, grads):
            new_params = sgd(params, grads)
            drift = new_params - params  # JAX304
            return new_params, drift
        """,
        """
        import jax

        def update(state, batch):
            return {"w": state["w"] - 0.1 * batch.mean(), "step": state["step"] + 1}

        update = jax.jit(update, donate_argnums=0)

        def run(state, batches):
            for batch in batches:
                new_state = update(state, batch)  # JAX304
            return new_state
        """,
        """
        import jax

        def _sgd(params, grads):
            return params - 0.1 * grads

        _apply = jax.jit(_sgd, donate_argnums=0)

        def apply_gradients(params, grads):
            return _apply(params, grads)

        def train(params, grads):
            new_params = apply_gradients(params, grads)
            return new_params, params.sum()  # JAX304
        """,
    )
    good = (
        """
        from functools import partial
        import jax

        @partial(jax.jit, donate_argnums=(0,))
        def train_step(state, batch):
            return {"w": state["w"] - 0.1 * batch.mean()}, batch.sum()

        def run(state, batches):
            for batch in batches:
                state, loss = train_step(state, batch)
            return state, loss
        """,
        """
        from functools import partial
        import numpy as np
        import jax

        @partial(jax.jit, donate_argnames=("buf",))
        def fill(buf, value):
            return buf * 0 + value

        def run(value):
            buf = np.zeros(8)
            out = fill(buf, value)
            return out, buf.sum()

        def replace(x):
            y = fill(x, 1.0)
            x = y + 1
            return x
        """,
        """
        import jax

        def update(state, batch):
            return {"w": state["w"] - 0.1 * batch.mean()}

        train_step = jax.jit(update, donate_argnums=(0,))

        def train(state, batch):
            new_state = train_step(state, batch)
            del state["w"]  # drops the dict's entry: no buffer read
            return new_state
        """,
    )
    demo = JaxDemo(
        """
        from functools import partial
        import jax
        import jax.numpy as jnp
        import numpy as np

        @partial(jax.jit, donate_argnums=(0,))
        def sgd(params, grads):
            return params - 0.1 * grads

        def demo():
            params = jnp.ones(4)
            new_params = sgd(params, jnp.ones(4))
            return new_params, np.asarray(params)  # a read on the host: always RuntimeError
        """,
        "raises:RuntimeError",
    )
    references = ("https://docs.jax.dev/en/latest/faq.html#buffer-donation",)

    limitations = JIT_SIGNATURE_LIMITATIONS
    limits = (
        "Reads are looked for later in the same function, its loop's next iteration, and callers of"
        " a function that donates its parameter.",
        "An attribute of `self` is followed only until a call that may assign it.",
        "NumPy arrays and Python values are not reported: JAX copies them instead of donating them.",
    ) + JIT_SIGNATURE_LIMITS

    def check(self, module, report):
        for site, donated in jit_signature.donating_sites(module):
            owner = site.function if site.function is not None else module.tree
            for param in donated:
                arg = site.argument(param)
                name = _donated_name(arg, owner, module)
                if name is None or isinstance(arg, ast.Name) and _host_value(arg, module):
                    continue
                read = reads.later_read(owner, name, site.call)
                if read is None:
                    continue
                label = jit_signature.function_label(site.target.node)
                if read.next_iteration is not None:
                    report(
                        read.node,
                        f"`{name}` is donated to {label} and never rebound in the loop on line "
                        f"{read.next_iteration.lineno}: the next iteration passes a deleted array; "
                        f"assign the result back to `{name}`",
                    )
                else:
                    report(
                        read.node,
                        f"`{name}` was donated to {label} on line {site.call.lineno} and JAX deleted it; "
                        "reading it raises `RuntimeError: Array has been deleted`; use the call's result, "
                        "or do not donate it",
                    )
        for donation in jit_signature.donating_helpers(module):
            arg = donation.argument
            if _host_value(arg, module):
                continue
            owner = donation.caller if donation.caller is not None else module.tree
            read = reads.later_read(owner, arg.id, donation.call)
            if read is None or read.next_iteration is not None and read.node is arg:
                continue
            report(
                read.node,
                f"`{arg.id}` was donated on line {donation.call.lineno}: `{donation.helper.name}` passes it to "
                f"{donation.label} (line {donation.inner.lineno}), which donates it, and JAX deleted it; "
                "reading it raises `RuntimeError: Array has been deleted`; use the result, or do not donate it",
            )


def _donated_name(arg: ast.AST | None, owner: ast.AST, module) -> str | None:
    """What a donated argument is read back as: a name, or an attribute of the method's own
    instance (`self.states`), which keeps the deleted buffer until it is assigned again."""
    if isinstance(arg, ast.Name):
        return arg.id
    if (
        isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name)
        and id(owner) in module.names.parent_class and arg.value.id == first_param(owner)
        and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in owner.decorator_list)
    ):
        return f"{arg.value.id}.{arg.attr}"
    return None


def _host_value(name: ast.Name, module, seen: frozenset = frozenset()) -> bool:
    """Assigned only NumPy or Python values (copied to the device, never donated)."""
    if name.id in seen:
        return False
    values = module.names.assignments(name)
    if not values:
        return False
    return all(_host_expression(value, module, seen | {name.id}) for value in values)


_CONTAINER_BUILTINS = frozenset({"builtins.dict", "builtins.list", "builtins.tuple"})


def _host_expression(value: ast.AST, module, seen: frozenset) -> bool:
    """A NumPy or Python value; a list, tuple or dict is one only when all its leaves are: a
    dict of JAX arrays is a pytree whose buffers JAX donates."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return all(_host_expression(e, module, seen) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(v is not None and _host_expression(v, module, seen) for v in value.values)
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _host_expression(value.elt, module, seen)
    if isinstance(value, ast.DictComp):
        return _host_expression(value.value, module, seen)
    if isinstance(value, ast.Starred):
        return _host_expression(value.value, module, seen)
    if isinstance(value, ast.Name):
        return _host_value(value, module, seen)
    if isinstance(value, ast.Call):
        callee = module.qualname(value.func) or ""
        if callee in _CONTAINER_BUILTINS:
            parts = [*value.args, *(k.value for k in value.keywords)]
            return all(_host_expression(p, module, seen) for p in parts)
        return callee.startswith(_HOST_VALUES)
    return False
