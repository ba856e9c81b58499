"""Jitted functions built again and again that are a different function each time: one compile per variant.

A build that runs again and again compiles again each time, and that is a waste only when it
is the same function each time. It is a different one when the function handed to the
transformation depends on a Python value that is different on each run: the target of a
`for` loop over values written out in the code (`for scheme in ("euler", "rk4")`,
`for method in [Euler, RK4]`, a name bound once to such a tuple) or over a mapping's entries
(`for name, cfg in datasets.items()`: its keys differ), whether the build reads it
directly (`make_step(scheme)`), through a name the loop binds from it
(`eq = replace(cfg, smoothed=flag)`) or as a closure (`lambda x: step(x, scheme)`). Such a loop
runs once per value and the values are distinct, so each variant compiles once: nothing is
compiled twice. A function called again and again builds a different function on each call
when the build depends on a parameter that every repeated call passes such a loop target.
Anything else may repeat: a loop over a parameter or over values computed at run time (data,
or a configuration seen twice), a `range`, a `while`, a build that does not read the target
(`partial(f, cfg)` per epoch), a loop around the whole thing.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from jaxlint.analysis.engine.arguments import bind, implicit_count, receiver
from jaxlint.analysis.engine.loop_variance import ASSIGN, AUGMENT, ELEMENT, OTHER, UNPACK
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Scope
from jaxlint.analysis.engine.walk import target_names, walk
from jaxlint.analysis.shapes.repeated_calls import RepeatedCalls

if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_MAX_DEPTH = 4  # assignments followed from a build back to a loop target or a parameter


class JitVariants:
    def __init__(self, module: TracedModule, effects: Effects, repeated: RepeatedCalls):
        self.module = module
        self.effects = effects
        self.names = module.names
        self.repeated = repeated

    # ---- one run of a function: its loops ------------------------------------------------
    def per_iteration(self, built: ast.AST, at: ast.AST, function: FunctionNode | None) -> bool:
        """Every loop and comprehension of `function` that runs `at` again and again iterates
        over values written out in the code, and `built` (evaluated at `at`) depends on its target."""
        scope = self._scope(function)
        loops = [loop for loop, owner in self.effects.loops if owner is function and _runs(loop, at)]
        comprehensions = [c for c in self._comprehensions(function) if _in_element(at, c)]
        if not loops and not comprehensions:
            return False
        for loop in loops:
            if not isinstance(loop, (ast.For, ast.AsyncFor)) or not self.distinct(loop.iter, scope):
                return False
            if not self._reads_target(built, loop, at, scope, 0):
                return False
        for comprehension in comprehensions:
            read = {n.id for n in self._reads(built, scope)}
            for generator in comprehension.generators:
                if generator.ifs or not self.distinct(generator.iter, scope):
                    return False
                if read.isdisjoint(target_names(generator.target)):
                    return False
        return True

    def _reads_target(self, expr: ast.AST, loop: ast.stmt, at: ast.AST, scope: Scope, depth: int) -> bool:
        """`expr`, read at `at`, holds what the loop's target is on that iteration, or a value made from it."""
        if depth > _MAX_DEPTH:
            return False
        facts = self.module.loops
        for name in self._reads(expr, scope):
            for definition in facts.definitions(name.id, loop, at):
                kind, node = definition.kind, definition.node
                if kind == ELEMENT and node is loop:
                    return True
                if kind in (ASSIGN, AUGMENT) and definition.value is not None:
                    if self._reads_target(definition.value, loop, node, scope, depth + 1):
                        return True
                elif kind == UNPACK and isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    if self._reads_target(node.value, loop, node, scope, depth + 1):
                        return True
                elif kind == OTHER and isinstance(node, FUNCTION_TYPES):
                    if self._reads_target(node, loop, node, scope, depth + 1):
                        return True
        return False

    # ---- a function called again and again: its parameters --------------------------------
    def per_call(self, built: ast.AST, function: FunctionNode | None, depth: int = 0) -> bool:
        """Every call of `function` that runs again and again passes a different value, each
        time, to a parameter `built` depends on: what `per_iteration` asks of a loop around the
        call, and of a caller called again and again, `per_call` of it."""
        if function is None or isinstance(function, ast.Lambda) or depth > 2:
            return False
        params = self._parameters_read(built, function)
        if not params:
            return False
        repeated = self.repeated
        for call in repeated.calls_of(function):
            caller = repeated.function_of(call)
            looped = repeated.in_loop(call, caller) is not None or repeated.in_comprehension(call, caller)
            called = caller is not None and caller is not function and repeated.called_repeatedly(caller) is not None
            if not looped and not called:
                continue  # runs once: one build
            arguments = [a for a in (_argument(call, function, p, self.names) for p in params) if a is not None]
            if looped and not any(self.per_iteration(a, call, caller) for a in arguments):
                return False
            if called and not any(self.per_call(a, caller, depth + 1) for a in arguments):
                return False
        return True

    def _parameters_read(self, expr: ast.AST, function: FunctionNode) -> set[str]:
        """The parameters of `function` whose value `expr` reads, directly or through the names
        the function binds from them."""
        scope = self._scope(function)
        found: set[str] = set()
        seen: set[str] = set()
        todo = [(expr, 0)]
        while todo:
            node, depth = todo.pop()
            for name in self._reads(node, scope):
                if name.id in seen:
                    continue
                seen.add(name.id)
                if name.id in scope.params:
                    found.add(name.id)
                elif depth < _MAX_DEPTH:
                    todo.extend((value, depth + 1) for value in scope.assigned.get(name.id, ()))
                    nested = scope.defs.get(name.id)
                    if isinstance(nested, FUNCTION_TYPES):
                        todo.append((nested, depth + 1))
        return found

    # ---- values written out -----------------------------------------------------------------
    def distinct(self, iterable: ast.AST, scope: Scope) -> bool:
        """An iterable whose items are distinct: values written out in the code, or the entries of
        a mapping (`cfgs.items()`, `cfgs.keys()`), whose keys differ."""
        if (
            isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr in ("items", "keys") and not iterable.args and not iterable.keywords
        ):
            return True
        return self.written_out(iterable, scope)

    def written_out(self, iterable: ast.AST, scope: Scope) -> bool:
        """A tuple, list or set display of distinct values written out in the code (constants,
        classes, functions, imported objects, tuples of these), or a name bound only to one tuple,
        or to one list that only `+=` of more such displays extends."""
        if isinstance(iterable, ast.Name):
            owner = self.names.lookup(iterable.id, scope)
            if owner is None:
                return False
            values = owner.assigned.get(iterable.id, [])
            if (
                len(values) != 1
                or iterable.id in owner.params
                or iterable.id in owner.defs
                or iterable.id in owner.imports
                or not isinstance(values[0], (ast.Tuple, ast.List))
            ):
                return False
            parts = [values[0]]
            if iterable.id in owner.other or isinstance(values[0], ast.List):
                extended = self._extended_by_displays(iterable.id, owner)
                if extended is None:
                    return False
                parts.extend(extended)
            return self.written_out(ast.Tuple([e for part in parts for e in part.elts], ast.Load()), owner)
        if not isinstance(iterable, (ast.Tuple, ast.List, ast.Set)) or not iterable.elts:
            return False
        if not all(self._value_written_out(e, scope) for e in iterable.elts):
            return False
        return len({ast.dump(e) for e in iterable.elts}) == len(iterable.elts)

    def _extended_by_displays(self, name: str, owner: Scope) -> list[ast.expr] | None:
        """The displays `name += [...]` adds to it in its scope, when that, after the one
        assignment, is all that ever changes it (no other binding, no method called on it, no
        store into it); None otherwise."""
        if isinstance(owner.node, ast.Lambda):
            return None
        nodes = [node for stmt in owner.node.body for node in walk(stmt)]
        added: list[ast.expr] = []
        augmented: set[int] = set()
        for node in nodes:
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                if not isinstance(node.op, ast.Add) or not isinstance(node.value, (ast.List, ast.Tuple)):
                    return None
                added.append(node.value)
                augmented.add(id(node.target))
        # Read only where a loop goes through it: handed anywhere else, it may be changed there.
        iterated = {
            id(node.iter) for node in nodes if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension))
        }
        stores = 0
        for node in nodes:
            if isinstance(node, ast.Name) and node.id == name:
                if not isinstance(node.ctx, ast.Load):
                    stores += id(node) not in augmented
                elif id(node) not in iterated:
                    return None
        return added if stores == 1 else None

    def _value_written_out(self, value: ast.AST, scope: Scope) -> bool:
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
            return isinstance(value.operand, ast.Constant)  # a signed number: `-1`
        if isinstance(value, ast.Tuple):
            return all(self._value_written_out(e, scope) for e in value.elts)
        if isinstance(value, (ast.Name, ast.Attribute)):
            if self.names.qualname(value, scope) is not None:
                return True  # an imported object (a class, a function, a module constant)
            return isinstance(self.names.definition(value, scope), (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        return False

    # ---- helpers ------------------------------------------------------------------------------
    def _scope(self, function: FunctionNode | None) -> Scope:
        return self.names.module if function is None else self.names.scope_of(function)

    def _reads(self, expr: ast.AST, scope: Scope) -> Iterator[ast.Name]:
        """The names `expr` reads (inside its lambdas, and the defaults and body of a def too) that
        `scope` binds."""
        names = self.names
        roots: list = [expr]
        if isinstance(expr, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots = [*expr.args.defaults, *(d for d in expr.args.kw_defaults if d is not None), *expr.body]
        for root in roots:
            for node in walk(root):
                if node.__class__ is ast.Name and node.ctx.__class__ is ast.Load:
                    read = names.read_scope.get(id(node))
                    if read is not None and names.lookup(node.id, read) is scope:
                        yield node

    def _comprehensions(self, function: FunctionNode | None) -> list[ast.AST]:
        body = self.module.tree.body if function is None else function.body
        roots = body if isinstance(body, list) else [body]
        return [n for root in roots for n in walk(root) if isinstance(n, _COMPREHENSIONS)]


def _runs(loop: ast.stmt, node: ast.AST) -> bool:
    """`node` is in the loop's body (or a `while` test): it runs once per iteration."""
    if isinstance(loop, ast.While) and loop.test.lineno <= node.lineno <= (loop.test.end_lineno or loop.test.lineno):
        return True
    return loop.body[0].lineno <= node.lineno <= (loop.end_lineno or loop.lineno)


def _in_element(node: ast.AST, comprehension: ast.AST) -> bool:
    """`node` is evaluated once per element of the comprehension (not in its first iterable)."""
    where = (node.lineno, node.col_offset)
    start = (comprehension.lineno, comprehension.col_offset)
    end = (comprehension.end_lineno or comprehension.lineno, comprehension.end_col_offset or 0)
    first = comprehension.generators[0].iter
    first_start = (first.lineno, first.col_offset)
    first_end = (first.end_lineno or first.lineno, first.end_col_offset or 0)
    return start <= where <= end and not first_start <= where <= first_end


def _argument(call: ast.Call, function: FunctionNode, param: str, names) -> ast.AST | None:
    """The expression `call` passes to `function`'s parameter `param` (None: its default, or unknown)."""
    return bind(function, call, implicit_count(function, receiver(call.func, function, names))).argument(param)