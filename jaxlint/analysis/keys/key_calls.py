"""The transfer function of a call: what a call does to the keys passed to it.

`jax.random` calls consume or derive as JAX's checker counts; calls into the module's own
functions consume what their summaries say; calls into code the analysis cannot see
consume the keys passed to them directly, unless they only read (printing, shapes, tree
bookkeeping) or their result is only tested (`KeyTransfer.condition`).  Consuming a key
that every path has consumed before, or one consumed under a condition the later use does
not share, is reported to the `KeyFlow` (by `KeyTransfer`, once the states are solved).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.source_text import short_source
from jaxlint.analysis.engine.walk import attribute_path, nodes_run_with, own_nodes, runs_parameter, start_of
from jaxlint.analysis.keys.flax_runs import UNPLACED, flax_run, linen_receivers
from jaxlint.analysis.keys.key_draws import Draws, dropped, only_example_inputs
from jaxlint.analysis.keys.key_intent import only_reorders
from jaxlint.analysis.keys.key_state import DEFINITE, MAYBE, NONE, Elem, KeyState, Mark, Ref, Streams, Tied, Use
from jaxlint.analysis.keys.shaped_partials import only_traced_for_shapes
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge import random_api as api
from jaxlint.analysis.tracing.transforms import PARTIAL

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import FunctionNode, Names
    from jaxlint.analysis.keys.key_state import ModuleKeys


# JAX's own functions and `functools` take a function to transform it, trace it or fix its
# arguments (each followed where it is known), not to run it unseen.
_OWN_API = ("jax.", "functools.")


class CallTransfer:
    """Calls and consumption, for `KeyTransfer` (which supplies the state, `expr` and the reports)."""

    flow: ModuleKeys
    names: "Names"
    fn: ast.AST
    loop_body: tuple[ast.Call, str] | None
    closure: set[int]
    globals: dict[int, str]
    arrays: set[int]
    seeds: dict[int, int]
    guards: list[ast.AST]
    loops: list[ast.AST]
    carried: ast.AST | None
    quiet: bool
    draws: Draws

    def expr(self, node: ast.AST, state: KeyState) -> object:  # pragma: no cover - supplied by KeyTransfer
        raise NotImplementedError

    def module_key(self, name: str) -> int:  # pragma: no cover - supplied by KeyTransfer
        raise NotImplementedError

    def call(self, node: ast.Call, state: KeyState) -> object:
        qualname = api.public(self.names.qualname(node.func))
        if qualname in api.KEY_CONSTRUCTORS:
            self._args(node, state)
            if qualname == "jax.random.wrap_key_data" or not api.constant_seed(node):
                return ("seed", None)
            return ("seed", None if self.quiet else self.flow.seed_candidate(node, self.fn, self.loops))
        if qualname in api.KEY_DERIVATIONS or qualname in api.KEY_READERS:
            key = api.key_argument(node)
            ref = self.expr(key, state) if key is not None else None
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if arg is not key:
                    self.expr(arg, state)
            if qualname == api.FOLD_IN and isinstance(ref, (int, Elem)):
                self.fold(ref, Use(key, node, "fold_in", "`jax.random.fold_in`"), state)
            return ("seed", None) if qualname in api.KEY_DERIVATIONS else None
        if qualname == api.SPLIT or qualname in api.SAMPLERS:
            key = api.key_argument(node)
            ref = self.expr(key, state) if key is not None else None
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if arg is not key:
                    self.expr(arg, state)
            if ref is not None:
                kind = "split" if qualname == api.SPLIT else "sample"
                example = kind == "sample" and self._example_inputs(node)
                draws = None if kind == "split" else not example
                use = Use(key, node, kind, f"`{qualname}`", draws=draws)
                if kind == "split" and isinstance(ref, (int, Elem)):
                    folded = state.mark(("fold", ref))
                    if folded.level == DEFINITE and folded.first is not None and api.may_collide(folded.first.call, node):
                        self.report_reuse(use, folded.first, None)
                self.consume(ref, use, DEFINITE, state)
            return ("array",) if qualname == api.SPLIT else None
        func = node.func
        if _builds_record(node, qualname):
            # `state.replace(key=key)`: a record keeping the key, not a use of it; returned
            # spent, it is reported (`hand_back`).
            self.expr(func, state)
            held = [(arg, ref) for arg, ref in self._args(node, state) if isinstance(ref, (int, Elem))]
            held += self._kept_fields(node, qualname, state)
            return Streams(tuple(held), record=True) if held else None
        if isinstance(func, ast.Attribute) and func.attr in api.KEY_COPY_METHODS:
            # `keys.reshape(n, -1)`: the same keys in another shape, not a use of them.
            receiver = self.expr(func.value, state)
            self._args(node, state)
            if isinstance(receiver, (int, Elem)):
                return receiver
            return None
        called = self.expr(func, state)
        refs = self._args(node, state)
        if isinstance(called, Streams) and called.fixed:
            # A partial that fixed keys, called: it draws from them now.
            for member, ref in called.keys:
                self.consume(ref, Use(member, node, "call", f"`{short_source(func)}`"), DEFINITE, state)
        linen = self.flow.linen.get(id(self.fn))
        if linen is None:
            linen = self.flow.linen[id(self.fn)] = linen_receivers(self.fn)
        run = flax_run(node, self.names, linen)
        if run is not None:
            refs = self._flax_run(node, run, refs, state)
        nested = self._nested_callee(node)
        if nested is not None:
            self._closure_uses(node, nested, state)
        elif qualname in jax_api.BRANCHING:
            self._branch_closures(node, qualname, state)
        elif qualname is None or qualname in api.TREE_MAPS or not (
            qualname.startswith(_OWN_API) or qualname in jax_api.TRANSFORMS
        ):
            # A function of this one handed to code not seen (`model.apply_gradient(loss_fn)`) is
            # taken to be called there, as a key handed to it is taken to be drawn from; a tree
            # map calls it there and then, on each leaf. A transformation
            # (`nnx.value_and_grad(loss_fn)`) calls nothing: calling what it returns runs the
            # function (`_nested_callee`).
            self._handed_functions(node, state)
        held = self.flow.keynames.returned_module_key(node, self.flow.module_keys) if self.flow.module_keys else None
        if held is not None:
            return self.module_key(held)
        if not refs:
            return None
        if (
            qualname in api.KEY_COPIES and len(refs) == 1 and node.args and refs[0][0] is node.args[0]
            and isinstance(refs[0][1], (int, Elem))
        ):
            # The same key elsewhere: where the copy goes is followed, as the key's own would be.
            return refs[0][1]  # `jax.device_put(key)`, `jnp.stack(keys)`
        if qualname is not None:
            if qualname in api.READING_CALLS or qualname.startswith(api.READING_PREFIXES):
                return None
            if qualname in jax_api.STATIC_QUERIES:
                return None
        if isinstance(node.func, ast.Call) and self.names.qualname(node.func.func) in api.TRACING_ONLY:
            return None
        if only_traced_for_shapes(node, self.fn, self.names):
            return None  # the keys a partial fixes draw only where it is called: here never
        if qualname in PARTIAL and node.args:
            # `functools.partial(f, key=key)` draws nothing: the function it makes draws where it
            # is called (or handed to code that may call it, or stored where it may be).
            held = tuple((arg, ref) for arg, ref in refs if isinstance(ref, (int, Elem)) and arg is not node.args[0])
            return Streams(held, fixed=True) if held else None
        if isinstance(func, ast.Call) and self.names.qualname(func.func) in api.BATCHING:
            self._broadcast(node, func, refs, state)
        again = _given_again(node, refs, state)
        helper = self.flow.helper(node, self.quiet, [arg for arg, _ in refs] + [arg for arg, _ in again])
        if helper is None:
            helper = self._branch(node, refs)
        if helper is not None:
            return self._hand_to(node, helper, refs, again, state)
        if isinstance(node.func, ast.Attribute) and node.func.attr in api.NON_CONSUMING_METHODS:
            return None
        if _is_assertion(node.func):
            return None  # code not seen that, by its name, only checks the key
        label = _call_label(node.func)
        draws = not self._example_inputs(node)
        for arg, ref in refs:
            if isinstance(ref, tuple):
                continue  # a key made in the call, handed to code not seen: what it draws is not known
            self.consume(ref, Use(arg, node, "call", label, draws=draws), DEFINITE, state)
        return None

    def _example_inputs(self, node: ast.Call) -> bool:
        """Whether what a call returns serves only as example inputs of an `init` (an observation
        `space.sample(key)` makes to build a network's parameters): whatever it draws decides
        nothing (`only_example_inputs`)."""
        return bool(self.flow.keynames.inits) and only_example_inputs(node, self.fn, self.names)

    def _hand_to(self, node: ast.Call, helper, refs: list, again: list, state: KeyState) -> Ref | None:
        """The keys a call hands to a function seen, consumed as its summary says; what the call
        gives back (a key it returns, `Tied` keys)."""
        result = None
        self._twice(node, helper, again)
        for arg, ref in refs:
            # A key inside a list, tuple or dict is handed on with the parameter it fills.
            param = helper.parameters.get(id(arg), helper.members.get(id(arg)))
            level = helper.member_level(arg, param) if param is not None else NONE
            if level == MAYBE and helper.submodule:
                level = DEFINITE
            if level != NONE:
                handed = helper.summary.undrawn.get(param) if param is not None else None
                draws = (handed is None or not dropped(node, handed, self.fn, self.names)) and not self._example_inputs(node)
                use = Use(arg, node, "call", f"`{helper.name}`", draws=draws)
                self.consume(ref, use, level, state, partial=level == MAYBE)
            elif param in helper.summary.key_params and param not in helper.summary.returned_from:
                self.draws.read(arg)  # followed as a key, kept or discarded, not handed back: nothing drawn
            self._helper_flax_runs(node, helper, arg, ref, param, state)
            if param in helper.summary.returns and level != DEFINITE:
                result = ref  # one it drew from is reported where it returns it (`hand_back`)
        if result is None and helper.summary.tied:
            result = Tied(helper.summary.tied)  # `return key, key`: one key at two places
        return result

    def _branch(self, node: ast.Call, refs: list):
        """`lax.cond(pred, f, g, key)`, `lax.switch(i, [f, g], key)`: JAX hands the operands to
        every branch (it traces them all), so the keys in them are consumed as the branch that
        consumes them most does, as a call of that branch with the operands would. None (code not
        seen) unless every branch is a function seen and the operands are written out."""
        name = api.public(self.names.qualname(node.func))
        if name not in jax_api.BRANCHING or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        # A switch's branches not written out nor bound to a sequence come back as the name:
        # no function seen, so the call is not one either.
        branches = [branch for _, branch in jax_api.passed_callables(node, name, self.names.sequence_items)]
        operands = node.args[jax_api.BRANCH_OPERANDS[name]:]
        keyed = [arg for arg, _ in refs]
        best, most = None, -1
        for at, branch in enumerate(branches):
            call = self.flow.branch_calls.get((id(node), at))
            if call is None:  # one call per branch, kept: the summaries remember the calls they answered
                call = ast.copy_location(ast.Call(func=branch, args=list(operands), keywords=[]), node)
                self.flow.branch_calls[(id(node), at)] = call
            helper = self.flow.helper(call, self.quiet, keyed)
            if helper is None:
                return None
            level = max((self._level_in(helper, arg) for arg in keyed), default=NONE)
            if level > most:
                best, most = helper, level
        return best

    def _branch_closures(self, node: ast.Call, qualname: str, state: KeyState) -> None:
        """`lax.cond(pred, lambda _: draw(key), g, x)`: one branch runs, and a key of this
        function that the branches read is consumed at the call as the branch that consumes it
        most does (as `_branch` does for the keys passed as operands)."""
        most: dict[str, tuple[int, FunctionNode]] = {}
        for _, branch in jax_api.passed_callables(node, qualname, self.names.sequence_items):
            fn = self._nested_function(branch)
            for key, level in self.flow.summary(fn).free.items() if fn is not None else ():
                if level > most.get(key, (NONE, None))[0]:
                    most[key] = (level, fn)
        for fn in {id(fn): fn for _, fn in most.values()}.values():
            self._closure_uses(node, fn, state, keys={key for key, (_, f) in most.items() if f is fn})

    def _level_in(self, helper, arg: ast.AST) -> int:
        """How much a function seen consumes the key an argument (or an item of one) gives it: as
        its parameter, or through the Flax runs it hands it to."""
        param = helper.parameters.get(id(arg), helper.members.get(id(arg)))
        if param is None:
            return NONE
        flax = max((level for _, _, level in helper.summary.flax.get(param, ())), default=NONE)
        return max(helper.member_level(arg, param), flax)

    def _twice(self, node: ast.Call, helper, again: list[tuple[ast.expr, ast.expr]]) -> None:
        """One key given to two parameters that the function seen draws from on every path
        (`mixup(key_0, key_0, x)`): the second draws what the first did."""
        for arg, first in again:
            param, other = helper.parameters.get(id(arg)), helper.parameters.get(id(first))
            if param is None or other is None or param == other:
                continue
            if helper.summary.params.get(param) == DEFINITE == helper.summary.params.get(other):
                label = f"`{helper.name}`"
                self.report_reuse(Use(arg, node, "call", label), Use(first, node, "call", label), None)

    def _flax_run(self, node: ast.Call, run, refs: list, state: KeyState) -> list:
        """Consume the keys a Flax run carries, as drawn by that module only (`flax_runs`); the
        other keys passed, left for the call's other consumers."""
        carried: list[tuple[ast.AST, Ref]] = []
        for key in run.keys:
            while isinstance(key, ast.IfExp) and (arm := self.decided_arm(key)) is not None:
                key = arm  # `{"dropout": rng} if train else {}`, `train` given
            members = key.values if isinstance(key, ast.Dict) else key.elts if isinstance(key, (ast.List, ast.Tuple)) else [key]
            for member in members:
                ref = state.env.get(member.id) if isinstance(member, ast.Name) else None
                held = _held(member, ref) if isinstance(ref, Streams) and not ref.record else [(member, ref)]
                for expr, ref in held:
                    if isinstance(ref, (int, Elem)) and all(ref != r for _, r in carried):
                        carried.append((expr, ref))
        label = _call_label(node.func)
        for member, ref in carried:
            self.consume(ref, Use(member, node, "flax", label, run.module, run.init), DEFINITE, state)
        return [(arg, ref) for arg, ref in refs if all(ref != r for _, r in carried)]

    def _helper_flax_runs(self, node: ast.Call, helper, arg: ast.AST, ref: Ref, param: str | None, state: KeyState) -> None:
        """The Flax runs a helper hands the key passed for `param` (or inside a list, tuple or dict
        passed for it) to, each of the module the caller passes, or of the one the helper names."""
        param = param if param is not None else helper.members.get(id(arg))
        for module, init, level in helper.summary.flax.get(param, ()) if param is not None else ():
            if level != NONE:
                module = helper.arguments.get(module, module)
                self.consume(ref, Use(arg, node, "flax", f"`{helper.name}`", module, init), level, state)

    def _nested_callee(self, node: ast.Call):
        """The function nested in this one that the call runs, directly or through a transformation
        (`loss_fn(p)`, `jax.value_and_grad(loss_fn)(p)`, `grad_fn(p)` with `grad_fn =
        jax.grad(loss_fn)`), when it reads keys of this function."""
        callee = self.flow.keynames.callees.body_run(node.func)
        if callee is None or self.names.parent_function.get(id(callee)) is not self.fn:
            return None
        return callee if self.flow.keynames.enclosing_keys(callee) else None

    def _nested_function(self, node: ast.AST):
        """The function nested in this one that `node` names or writes (a lambda), when it reads
        keys of this function."""
        callee = node if isinstance(node, ast.Lambda) else self.flow.resolve(node) if isinstance(node, ast.Name) else None
        if callee is None or self.names.parent_function.get(id(callee)) is not self.fn:
            return None
        return callee if self.flow.keynames.enclosing_keys(callee) else None

    def _handed_functions(self, node: ast.Call, state: KeyState) -> None:
        """A function of this one handed to code not seen (`model.apply_gradient(loss_fn)`) is
        taken to be called there, as a key handed to it is taken to be drawn from; handed to a
        function seen, it is called there when that function runs the parameter it fills
        (`update_by_loss_grad(state, loss_fn)` calling `jax.value_and_grad(loss_fn)`)."""
        target = self.flow.keynames.target(node.func)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            handed = self._nested_function(arg)
            if handed is None:
                continue
            if target is not None:
                param = next((p for a, p in target.bind(node).pairs() if a is arg), None)
                if param is None or not runs_parameter(target.function, param):
                    continue
            self._closure_uses(node, handed, state, inside=True)

    def returned_functions(self, node: ast.Return, state: KeyState) -> None:
        """A function of this one that it returns (`return noisy_net if noisy else dense_net`,
        `return lambda x: ...`) draws from the keys it reads whenever its caller calls it: the
        keys are handed on at the return, as a key handed to code not seen is."""
        pending = [node.value]
        while pending:
            value = pending.pop()
            if isinstance(value, ast.IfExp):
                pending += [value.body, value.orelse]
            elif isinstance(value, (ast.Tuple, ast.List)):
                pending += value.elts
            elif value is not None:
                returned = self._nested_function(value)
                if returned is not None:
                    self._closure_uses(node, returned, state, inside=True)

    def _closure_uses(self, node: ast.AST, callee, state: KeyState, inside: bool = False, keys=None) -> None:
        """The keys of this function that the nested `callee` consumes, consumed by the call: named
        at the call, or (`inside`: the function is handed to code that calls it elsewhere) where the
        function consumes them. A handed function reads a key of this one when it runs, which may be
        after the hand-off: a name this function binds again later may then hold another key, so
        which one it reads is not known. `keys`: only these (None: every one it reads)."""
        func = getattr(node, "func", None)
        name = getattr(callee, "name", None) or (func.id if isinstance(func, ast.Name) else "<lambda>")
        summary = self.flow.summary(callee)
        for key, level in summary.free.items():
            if keys is not None and key not in keys:
                continue
            ref = state.env.get(key)
            if inside and self._bound_after(key, node):
                continue
            if level != NONE and ref is not None:
                at = summary.free_uses.get(key, node) if inside else node
                where = ast.copy_location(ast.Name(key, ast.Load()), at)
                if not inside and key in summary.free_uses:
                    where.written = summary.free_uses[key]  # type: ignore[attr-defined]
                self.consume(ref, Use(where, node, "call", f"`{name}`"), level, state, partial=level == MAYBE)

    def _bound_after(self, name: str, node: ast.AST) -> bool:
        """Whether this function binds `name` in a statement that starts after `node` ends."""
        stores = self.flow.stores.get(id(self.fn))
        if stores is None:
            stores = self.flow.stores[id(self.fn)] = _bindings(self.fn)
        end = (node.end_lineno, node.end_col_offset)
        return any(at > end for at in stores.get(name, ()))

    def _args(self, node: ast.Call, state: KeyState) -> list[tuple[ast.AST, Ref]]:
        """Evaluate a call's arguments; the key values passed directly (or in a literal container)."""
        refs: list[tuple[ast.AST, Ref]] = []
        seen: set[object] = set()
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Starred):
                ref = self.expr(arg.value, state)
                if isinstance(ref, int) and ref not in seen:  # `*args` that hold a key, spread
                    seen.add(ref)
                    refs.append((arg.value, ref))
                elif isinstance(ref, Streams) and not ref.record:  # a tuple of arguments, spread
                    for member, inner in ref.keys:
                        if inner not in seen:
                            seen.add(inner)
                            refs.append((member, inner))
                continue
            ref = self.expr(arg, state)
            if isinstance(ref, (int, Elem)) and ref not in seen:
                seen.add(ref)
                refs.append((arg, ref))
            elif isinstance(ref, Streams) and isinstance(arg, ast.Name) and not ref.record:
                for member, inner in _held(arg, ref):
                    if inner not in seen:
                        seen.add(inner)
                        refs.append((member, inner))
            elif isinstance(ref, tuple) and ref and ref[0] == "seed" and ref[1] is not None:
                # A key made in the call (`sim(jax.random.key(0), p)`): drawn from when a
                # function of the module draws from that parameter.
                refs.append((arg, ref))
            elif isinstance(arg, (ast.Dict, ast.Tuple, ast.List)):
                members = arg.values if isinstance(arg, ast.Dict) else arg.elts
                for member in members:
                    inner = None
                    if isinstance(member, ast.Name):
                        inner = state.env.get(member.id)
                    elif attribute_path(member) is not None:
                        inner = state.env.get(attribute_path(member))
                    if isinstance(inner, (int, Elem)) and inner not in seen:
                        seen.add(inner)
                        refs.append((member, inner))
        return refs

    # ---- consumption -----------------------------------------------------------------
    def consume(self, ref: object, use: Use, level: int, state: KeyState, partial: bool = False) -> None:
        """`partial`: a MAYBE because the function seen draws on some of its own paths (`Mark.partial`)."""
        if isinstance(ref, tuple) and ref and ref[0] == "seed":
            if ref[1] is not None:
                self.seed_consumed(ref[1])
            return
        if not isinstance(ref, (int, Elem)):
            return
        self.draws.consumed(ref, use)
        if isinstance(ref, Elem):
            if ref.index is None:
                return
            slots: list[object] = [ref, ref.array]
        else:
            slots = [ref]
            if ref in self.arrays:
                slots += [s for s in state.used if isinstance(s, Elem) and s.array == ref]
        if isinstance(ref, int) and ref in self.seeds:
            self.seed_consumed(self.seeds[ref])
        plain = slots
        if use.kind == "flax":
            # Flax folds each module's path into the key: of two Flax runs, only two of the same
            # module draw the same numbers, and two `init`s of one module build one copy twice.
            slots = [("flax", slot, use.module) for slot in plain]
        if level == DEFINITE and isinstance(ref, int):
            if ref in self.closure and self.loop_body is not None and not self._aligns_leaves(use):
                call, primitive = self.loop_body
                self.report_reuse(use, None, call, primitive)
            if ref in self.globals:
                self.report_global(self.globals[ref], use)
        if level == DEFINITE:
            # A key drawn from directly and handed to a Flax run is still one key used twice.
            if not self._reused(use, slots, state) and use.kind == "flax":
                if not self._reused(use, plain, state, drawn=True) and use.init:
                    self._shared_paths(use, plain, state)
        elif level == MAYBE:
            # A spent key (split, drawn from, or handed to a call that consumes it) handed to a
            # function that draws from it on some path repeats those numbers on that path.
            for slot in slots:
                mark = state.mark(slot)
                if mark.level == DEFINITE and mark.first is not None and mark.first.kind in ("split", "sample", "call"):
                    self.report_reuse(use, mark.first, self.carried)
                    break
        for own in dict.fromkeys((slots[0], plain[0])):
            current = state.mark(own)
            if level == DEFINITE and (current.level != DEFINITE or _flax_only(current) and use.kind != "flax"):
                state.used[own] = Mark(DEFINITE, use, drawn=use if use.draws else None)
            elif level == DEFINITE and current.drawn is None and use.draws:
                state.used[own] = replace(current, drawn=use)
            elif current.level == NONE and level == MAYBE:
                state.used[own] = Mark(MAYBE, use, partial=partial)

    def _reused(self, use: Use, slots: list, state: KeyState, drawn: bool = False) -> bool:
        """Report `use` when an earlier use marks one of `slots` (`drawn`: only a use other than
        a Flax run); whether one did."""
        for slot in slots:
            mark = state.mark(slot)
            if mark.first is None or (drawn and _flax_only(mark)):
                continue
            if mark.level == DEFINITE and (mark.first.node is not use.node or self.carried is not None):
                if not (use.init and mark.first.init) and not self._rebuilt(use, mark.first):
                    self.report_reuse(use, mark.first, self.carried, other=mark.drawn)
                return True
            if mark.level == MAYBE and mark.partial and self._decided_by_result(mark.first.call):
                return True
            if mark.level == MAYBE and mark.guard is not None and not self._same_condition(mark.guard):
                self.report_reuse(use, mark.first, self.carried, guard=mark.guard, partial=mark.partial)
                return True
            if mark.level == MAYBE and mark.partial and mark.guard is None and self.carried is None:
                self.report_reuse(use, mark.first, None, partial=True)
                return True
        return False

    def _decided_by_result(self, call: ast.AST) -> bool:
        """Whether a condition around this point tests what `call` returned: the call itself
        (`restore(key) or init(key)`) or a name its statement binds (`if state is None:`). A
        function that draws on some paths may return what tells its caller whether to draw
        again (a checkpoint restored, else a fallback built from the key): which path ran is
        then decided, and the two draws may exclude each other."""
        guards = self.guards
        if not guards:
            return False
        if any(call is inner for guard in guards for inner in ast.walk(guard)):
            return True
        parents = self.names.parents
        stmt = parents.get(id(call))
        while stmt is not None and not isinstance(stmt, ast.stmt):
            stmt = parents.get(id(stmt))
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            targets = [stmt.target]
        else:
            return False
        bound = set().union(*(_subjects(target) for target in targets))
        return any(_overlap(bound, _subjects(guard)) for guard in guards)

    def _rebuilt(self, use: Use, first: Use) -> bool:
        """Two `init`s of one module (Flax linen's, Haiku's, any `init` building parameters) on the
        same inputs, none rebound in between: the second builds a copy of the first's parameters,
        which is how a target network starts, not a second draw."""
        a, b = first.call, use.call
        if not (
            isinstance(a, ast.Call) and isinstance(b, ast.Call) and isinstance(a.func, ast.Attribute)
            and isinstance(b.func, ast.Attribute) and a.func.attr in api.MODULE_INITS
        ):
            return False
        if _signature(a) != _signature(b):
            return False
        read = _names(a)
        return not any(
            isinstance(n.ctx, ast.Store) and n.id in read and (a.lineno, a.col_offset) < (n.lineno, n.col_offset) < (b.lineno, b.col_offset)
            for n in self.flow.keynames.nodes_of(self.fn, (ast.Name,))
        )

    def _shared_paths(self, use: Use, plain: list, state: KeyState) -> None:
        """An `init` of one Flax module after an `init` of another with the same key: reported where
        both make a parameter-drawing submodule at one path (`flax_runs.draw_paths`); where they
        draw at different paths, or one of them is a class seen whose layers cannot be placed
        (`flax_runs.UNPLACED`: it makes a lifted module), as a use that repeats no numbers
        shown. A helper that runs the `init` of a module its caller passes
        (`Model.create(actor_def, inputs=[key, x])`) draws at the paths of the module passed."""
        mine = self.flow.flax_paths(use.call, _module_passed(use))
        if not mine:
            return  # a module not seen, or one that draws no parameters
        apart = None
        for slot, mark in state.used.items():
            if (
                isinstance(slot, tuple) and len(slot) == 3 and slot[0] == "flax" and slot[1] in plain
                and slot[2] != use.module and mark.level == DEFINITE and mark.first is not None and mark.first.init
            ):
                theirs = self.flow.flax_paths(mark.first.call, _module_passed(mark.first))
                if not theirs:
                    continue
                if mine is not UNPLACED and theirs is not UNPLACED and mine & theirs:
                    self.report_reuse(use, mark.first, self.carried)
                    return
                apart = apart or mark.first
        if apart is not None:
            # No path is known to be shared (the paths differ, or a module's layers cannot be
            # placed): the key is used twice, and no numbers are shown to repeat (JAX207's).
            self.report_reuse(replace(use, draws=False), apart, self.carried)

    def _broadcast(self, node: ast.Call, batching: ast.Call, refs: list, state: KeyState) -> None:
        """`jax.vmap(f, in_axes=(0, None))(xs, key)`: a key given to every element of the batch,
        which `f` draws from, draws the same numbers in each (a key made in the call aside)."""
        mapped = self.flow.keynames.function_of(batching.args[0]) if batching.args else None
        if mapped is None or isinstance(mapped, ast.Lambda) and not mapped.args.args:
            return
        axes = batching.args[1] if len(batching.args) > 1 else next(
            (k.value for k in batching.keywords if k.arg == "in_axes"), None
        )
        summary = self.flow.summary(mapped)
        params = [p.arg for p in (*mapped.args.posonlyargs, *mapped.args.args)]
        for arg, ref in refs:
            if not isinstance(ref, (int, Elem)) or arg not in node.args:
                continue
            index = node.args.index(arg)
            axis = axes.elts[index] if isinstance(axes, (ast.Tuple, ast.List)) and index < len(axes.elts) else axes
            if not (isinstance(axis, ast.Constant) and axis.value is None) or index >= len(params):
                continue
            if summary.consumes(params[index]):
                primitive = self.names.qualname(batching.func) or "jax.vmap"
                self.report_reuse(Use(arg, node, "call", f"`{api.short(primitive)}`"), None, node, primitive)

    def _aligns_leaves(self, use: Use) -> bool:
        """A permutation drawn from one key for every leaf of a pytree (or element of a batch): the
        rows stay aligned, on purpose. So is one a function of the module draws for each, when
        all it does with the key is reorder (`preprocess(x, rng)` that returns
        `jax.random.permutation(rng, x)` reshaped)."""
        if not (
            self.loop_body is not None
            and (self.loop_body[1] in api.TREE_MAPS or self.loop_body[1] in api.BATCHING)
            and isinstance(use.call, ast.Call)
        ):
            return False
        if api.public(self.names.qualname(use.call.func)) in api.REORDERING:
            return True
        target = self.flow.keynames.target(use.call.func)
        param = next((p for a, p in target.bind(use.call).pairs() if a is use.node), None) if target is not None else None
        return param is not None and only_reorders(self.names, target.function, param)

    def _same_condition(self, guard: ast.AST) -> bool:
        """Whether an enclosing condition here tests what the earlier one tested (often exclusive):
        a name, or an attribute (`config.noise`, not any other field of `config`).

        On a later iteration of a loop, the loop's own variables hold new values: a test of them
        is a new condition, which may hold again (`if step >= warmup:` on every step past the
        warmup), unless it tests the variable for one value (`if i == 0:`), which holds once.
        """
        first = _subjects(guard)
        if self.carried is not None:
            for loop in self.loops:
                if isinstance(loop, (ast.For, ast.AsyncFor)):
                    renewed = _names(loop.target)
                    if any(s.split(".", 1)[0] in renewed for s in first):
                        return _one_value(guard, renewed)
        return any(_overlap(first, _subjects(g)) for g in self.guards)

    def fold(self, ref: Ref, use: Use, state: KeyState) -> None:
        """`fold_in(key, i)` is `split(key, n)[i]`: deriving from a split key repeats a child."""
        mark = state.mark(ref)
        if mark.level == DEFINITE and mark.first is not None and mark.first.kind == "split":
            if api.may_collide(use.call, mark.first.call):
                self.report_reuse(use, mark.first, None)
        state.used.setdefault(("fold", ref), Mark(DEFINITE, use))

    def carry(self, value: ast.AST, state: KeyState) -> None:
        """A consumed key handed back as a loop primitive's state is consumed again next iteration."""
        if self.loop_body is None or self.loop_body[1] not in api.CARRYING_PRIMITIVES:
            return
        call, primitive = self.loop_body
        if api.LIFTED_LOOPS.get(primitive, primitive) == "jax.lax.scan":
            if not (isinstance(value, ast.Tuple) and len(value.elts) == 2):
                return
            value = self._packed(value.elts[0])
        for node, ref in self._handed_keys(value, state):
            mark = state.mark(ref)
            if mark.level == DEFINITE and mark.first is not None:
                use = Use(node, mark.first.call, "carry", mark.first.callee)
                self.report_reuse(use, mark.first, call, primitive)

    def hand_back(self, node: ast.Return, state: KeyState) -> None:
        """A function that returns a key it consumed (on every path, or under a branch condition
        the return does not share) hands its caller a spent key: the caller's next draw from it
        (`key, x = f(key)`, the usual contract) repeats this one.
        A loop primitive's body hands its state to the next iteration instead (`carry`)."""
        if self.loop_body is not None and self.loop_body[1] not in api.BATCHING or node.value is None:
            return
        for name, ref in self._handed_keys(node.value, state):
            mark = state.mark(ref)
            if mark.first is None:
                continue
            use = Use(name, mark.first.call, "return", mark.first.callee)
            if start_of(name) < start_of(node) and start_of(name) < start_of(mark.first.call):
                # Put in the returned value by an earlier statement (`ts = ts.replace(rng=rng)`),
                # then consumed: the consumption is the second use, where it is reported.
                use = Use(mark.first.node, mark.first.call, "held", mark.first.callee, put=name)
            if mark.level == DEFINITE:
                self.report_reuse(use, mark.first, None)
            elif mark.level == MAYBE and mark.guard is not None and not self._same_condition(mark.guard):
                self.report_reuse(use, mark.first, None, guard=mark.guard)

    def _handed_keys(self, value: ast.AST, state: KeyState) -> list[tuple[ast.Name, Ref]]:
        """The keys a returned value holds (`returned_keys`), records built around keys
        (`state.replace(key=key)`), around such records (`self.replace(state=new_state)`), and
        dicts of keys or records bound to names included."""
        found = [(name, ref) for name, ref, _ in self.returned_keys(value, state)]
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Tuple, ast.List)):
                stack.extend(node.elts)
            elif isinstance(node, ast.Call) and _builds_record(node, api.public(self.names.qualname(node.func))):
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    if isinstance(arg, ast.Name) and isinstance(state.env.get(arg.id), (int, Elem)):
                        found.append((arg, state.env[arg.id]))
                    else:  # a record held in a record: `self.replace(state=new_state)`
                        stack.append(arg)
            elif isinstance(node, ast.Name) and isinstance(state.env.get(node.id), Streams):
                found.extend(_held(node, state.env[node.id]))  # type: ignore[arg-type]
        return found

    def returned_keys(self, value: ast.AST, state: KeyState) -> list[tuple[ast.Name, Ref, tuple[int, ...]]]:
        """The keys a returned value holds, each with its place in it (indices into nested tuples):
        itself, the items of nested tuple and list literals, and those of a literal a name was bound
        to (`state = (params, key)` then `return state`)."""
        found: list[tuple[ast.Name, Ref, tuple[int, ...]]] = []
        stack: list[tuple[ast.AST, tuple[int, ...]]] = [(self._packed(value), ())]
        while stack:
            node, position = stack.pop()
            copied = self._copied(node)
            if copied is not None:
                stack.append((copied, position))
            elif isinstance(node, (ast.Tuple, ast.List)):
                stack.extend((self._packed(e), (*position, i)) for i, e in enumerate(node.elts))
            elif isinstance(node, ast.Name):
                ref = state.env.get(node.id)
                if isinstance(ref, (int, Elem)):
                    found.append((node, ref, position))
        return found

    def _kept_fields(self, node: ast.Call, qualname: str | None, state: KeyState) -> list[tuple[ast.expr, Ref]]:
        """The keys of the record a `replace` copies that the copy keeps: those held in the fields
        it does not replace (`ts = ts.replace(last_obs=obs)` keeps the key `ts.replace(rng=rng)`
        put in)."""
        copied = _record_copied(node, qualname)
        streams = state.env.get(copied.id) if isinstance(copied, ast.Name) else None
        if not isinstance(streams, Streams) or not streams.record:
            return []
        replaced = {k.arg for k in node.keywords}
        if None in replaced:
            return []  # `**changes`: which fields it replaces is not known
        return [(put, ref) for put, ref in streams.keys if record_field(put, self.names) not in (None, *replaced)]

    def _copied(self, node: ast.AST) -> ast.AST | None:
        """What a copy of a key hands back (`jnp.stack(keys)`, `keys.reshape(n, -1)`), else None."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in api.KEY_COPY_METHODS:
            return func.value
        if node.args and api.public(self.names.qualname(func)) in api.KEY_COPIES:
            return node.args[0]
        return None

    def _packed(self, value: ast.AST) -> ast.AST:
        """The tuple or list literal a returned name holds: the function's last top-level
        assignment of it before the `return`, when the return is a top-level statement too and
        nothing between them rebinds the name or the literal's names (else the name itself)."""
        body = getattr(self.fn, "body", None)
        if not isinstance(value, ast.Name) or not isinstance(body, list):
            return value
        literal = None
        for stmt in body:
            if isinstance(stmt, ast.Return):
                return literal if literal is not None and value in ast.walk(stmt) else value
            if (
                isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == value.id and isinstance(stmt.value, (ast.Tuple, ast.List))
            ):
                literal = stmt.value
            elif literal is not None and _stores(stmt) & ({value.id} | _names(literal)):
                literal = None
        return value


def record_field(put: ast.expr, names) -> str | None:
    """The field a key was put in by a record's `replace(field=key)`, as `Streams` keeps it."""
    slot = names.parents.get(id(put))
    return slot.arg if isinstance(slot, ast.keyword) else None


def _record_copied(call: ast.Call, qualname: str | None) -> ast.expr | None:
    """The record a `_builds_record` call copies: `state` of `state.replace(...)` and of
    `dataclasses.replace(state, ...)`."""
    if qualname in api.RECORD_BUILDERS:
        return call.args[0] if call.args else None
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def _builds_record(call: ast.Call, qualname: str | None) -> bool:
    """`state.replace(...)`, `state._replace(...)`, `dataclasses.replace(state, ...)`: a record
    built anew with some fields changed."""
    func = call.func
    return qualname in api.RECORD_BUILDERS or (
        qualname is None and isinstance(func, ast.Attribute) and func.attr in api.RECORD_METHODS
    )


def _given_again(node: ast.Call, refs: list, state: KeyState) -> list[tuple[ast.expr, ast.expr]]:
    """The arguments naming a key an earlier argument of the call already gave, each with that
    earlier one (`_args` hands each key on once)."""
    firsts = {ref: arg for arg, ref in refs if isinstance(ref, int)}
    given = {id(arg) for arg, _ in refs}
    found = []
    for arg in [*node.args, *(k.value for k in node.keywords)]:
        if isinstance(arg, ast.Name) and id(arg) not in given:
            first = firsts.get(state.env.get(arg.id))
            if first is not None:
                found.append((arg, first))
    return found


def _held(name: ast.expr, streams: Streams) -> list[tuple[ast.expr, Ref]]:
    """The keys a dict or record bound to `name` holds: a dict's each named as it was put in, at
    `name` (where it is handed on), remembering where it was `written` in the dict; a record's
    where it was put in."""
    if streams.record:
        return list(streams.keys)
    held = []
    for key, ref in streams.keys:
        named = ast.copy_location(ast.Name(ast.unparse(key), ast.Load()), name)
        named.written = key  # type: ignore[attr-defined]
        held.append((named, ref))
    return held


def _stores(stmt: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

def _names(node: ast.AST) -> set[str]:
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    found.update(n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute))
    return found


def _subjects(node: ast.AST) -> set[str]:
    """What a condition tests: the names it reads and the attributes (`config.noise`) it reads of
    names, each as written."""
    found: set[str] = set()
    inside: set[int] = set()
    for inner in ast.walk(node):
        if id(inner) in inside:
            continue
        path = attribute_path(inner) if isinstance(inner, ast.Attribute) else None
        if path is not None:
            found.add(path)
            inside.update(id(n) for n in ast.walk(inner))
        elif isinstance(inner, ast.Name):
            found.add(inner.id)
    return found


def _one_value(test: ast.AST, renewed: set[str], negated: bool = False) -> bool:
    """Whether a test holds (`negated`: fails) for one value of a loop variable at most: `i ==
    0`, `step == last`, an `and` with one such operand; `not (i != 0)`, the test an iteration
    passes a `continue` under (`if i != 0: continue`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _one_value(test.operand, renewed, not negated)
    if isinstance(test, ast.BoolOp):
        both = isinstance(test.op, ast.And) != negated  # not (a or b): not a and not b
        return both and any(_one_value(v, renewed, negated) for v in test.values)
    return (
        isinstance(test, ast.Compare) and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.NotEq, ast.IsNot) if negated else (ast.Eq, ast.Is))
        and any(isinstance(side, ast.Name) and side.id in renewed for side in (test.left, test.comparators[0]))
    )


def _overlap(first: set[str], second: set[str]) -> bool:
    """Whether two conditions test one thing: a name or attribute, or one inside the other."""
    return any(a == b or a.startswith(b + ".") or b.startswith(a + ".") for a in first for b in second)


def _is_assertion(func: ast.AST) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith(("assert", "_assert", "check_"))


def _call_label(func: ast.AST) -> str:
    return f"`{short_source(func)}`"


def _signature(call: ast.Call) -> tuple:
    """A call as written: its callee and arguments."""
    return (ast.dump(call.func), [ast.dump(a) for a in call.args], sorted(ast.dump(k) for k in call.keywords))


def _flax_only(mark: Mark) -> bool:
    """Whether the key's first consumer on these paths is a Flax run (`flax_runs`)."""
    return mark.first is not None and mark.first.kind == "flax"


def _bindings(fn: ast.AST) -> dict[str, list[tuple[int, int]]]:
    """Where a function (not the functions nested in it) binds each name."""
    stores: dict[str, list[tuple[int, int]]] = {}
    for node in own_nodes(fn) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else nodes_run_with([fn]):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores.setdefault(node.id, []).append((node.lineno, node.col_offset))
    return stores


def _module_passed(use: Use) -> ast.expr | None:
    """The argument of a helper's call that is the module the helper's Flax run runs, if the run
    is a helper's (`Use.module` names what the caller passes for the module parameter)."""
    call = use.call
    if not isinstance(call, ast.Call) or use.module is None:
        return None
    for arg in (*call.args, *(k.value for k in call.keywords)):
        if not isinstance(arg, ast.Starred) and ast.unparse(arg) == use.module:
            return arg
    return None
