"""Shapes that change from one loop iteration to the next, and loops that trace many times.

The recompilation rules ask three questions:
- does the shape of an argument of a jitted call change between iterations of a loop
  around it?  Yes for an array that grows by concatenation (`tokens = concatenate([tokens, t])`),
  an array built from a list the loop appends to, a slice whose size depends on the loop
  (`series[:t]`, `x[start:start + n]`), a new array whose size follows the loop
  (`jnp.arange(t)`, `jnp.zeros((t, d))`; not over a literal sweep of sizes), an array the
  loop trims (`x = x[1:]`), and elements of a list of arrays of different sizes
  (`[rng.normal(size=(n, 3)) for n in (120, 87, 143)]`).  A slice of a fixed size
  (`x[i:i + bs]`, `x[i * bs:(i + 1) * bs]`) is fixed, even if the last batch is partial: two
  shapes, not one per iteration.  Anything not understood is not varying.
- which calls happen again and again (in a loop, or in a function called in a loop)?
- how many iterations does a `for` loop over a static `range` make?
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis import jax_api
from jaxlint.analysis.names import FUNCTION_TYPES, FunctionNode
from jaxlint.analysis.walk import children, target_names, walk

if TYPE_CHECKING:
    from jaxlint.analysis.module import ModuleFacts

_MAX_DEPTH = 8
_MAX_STEPS = 20000
Polynomial = dict[tuple[str, ...], int]


class ShapeFacts:
    def __init__(self, module: "ModuleFacts"):
        self.module = module
        self.names = module.names
        self._comprehensions: dict[int, list[tuple]] = {}
        self._steps = 0  # work done answering shape questions: bounded per module
        self._loop_bindings: dict[tuple[int, str], list[tuple[str, ast.AST, ast.AST | None]]] = {}

    # ---- varying shapes ------------------------------------------------------------------
    def varying(self, expr: ast.AST, loop: ast.AST) -> str | None:
        """Why the shape of `expr` changes between iterations of `loop` (a statement or a
        comprehension), or None."""
        return self._varies(expr, loop, 0, set())

    def _varies(self, expr: ast.AST, loop: ast.AST, depth: int, seen: set) -> str | None:
        self._steps += 1
        if depth > _MAX_DEPTH or self._steps > _MAX_STEPS:
            return None
        if isinstance(expr, ast.Name):
            return self._name_varies(expr.id, loop, depth, seen)
        if isinstance(expr, ast.Subscript):
            reason = self._slice_varies(expr.slice, loop, depth + 1)
            if reason is not None:
                return reason
            if _boolean_mask(expr.slice) and self.module.varies_in_loop(expr.slice, loop):
                return (
                    f"is filtered by the boolean mask `{ast.unparse(expr.slice)}`: its length is the number "
                    "of true entries, which changes with the data"
                )
            if _has_slice(expr.slice):
                return self._varies(expr.value, loop, depth + 1, seen)
            return None
        if isinstance(expr, ast.Call):
            return self._call_varies(expr, loop, depth, seen)
        if isinstance(expr, ast.BinOp):
            return self._varies(expr.left, loop, depth + 1, seen) or self._varies(expr.right, loop, depth + 1, seen)
        if isinstance(expr, ast.UnaryOp):
            return self._varies(expr.operand, loop, depth + 1, seen)
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT", "real", "imag"):
            return self._varies(expr.value, loop, depth + 1, seen)
        return None

    def _name_varies(self, name: str, loop: ast.AST, depth: int, seen: set) -> str | None:
        key = (id(loop), name)
        if key in seen:
            return None
        seen = seen | {key}
        if not self._bindings_in(loop, name) and self._list_grows(name, loop):
            return "is a list that grows every iteration (one more leaf in its pytree structure)"
        for kind, value, extra in self._bindings_in(loop, name):
            if kind == "assign":
                if _grows(value, name, self.module):
                    return "grows every iteration"
                if _shrinks(value, name) and not self._reset_in(loop, name):
                    return "shrinks every iteration"
                reason = self._varies(value, loop, depth + 1, seen)
                if reason is not None:
                    return reason
            elif kind == "element":
                reason = self._elements_vary(value, extra, depth)
                if reason is not None:
                    return reason
        return None

    def _reset_in(self, loop: ast.AST, name: str) -> bool:
        """`name` is also bound in the loop to a value that does not read it: a fresh start."""
        return any(
            kind != "assign" or not any(_is_name(n, name) for n in walk(value))
            for kind, value, _ in self._bindings_in(loop, name)
        )

    def _call_varies(self, call: ast.Call, loop: ast.AST, depth: int, seen: set) -> str | None:
        name = self.module.qualname(call.func)
        if name in jax_api.ARRAY_FROM_SEQUENCE and call.args:
            first = call.args[0]
            if isinstance(first, ast.Name) and self._list_grows(first.id, loop):
                return f"is built from `{first.id}`, a list that grows every iteration"
            filtered = self._filtered_list(first, loop)
            if filtered is not None:
                return f"is built from {filtered}, whose length follows the data"
            if isinstance(first, (ast.List, ast.Tuple)):
                for elt in first.elts:
                    reason = self._varies(elt, loop, depth + 1, seen)
                    if reason is not None:
                        return reason
                return None
            return self._varies(first, loop, depth + 1, seen)
        if name in jax_api.SHAPE_JOINING and call.args:
            parts = call.args[0].elts if isinstance(call.args[0], (ast.List, ast.Tuple)) else call.args[:1]
            for part in parts:
                reason = self._varies(part, loop, depth + 1, seen)
                if reason is not None:
                    return reason
            return None
        if name in jax_api.SIZED_CONSTRUCTORS:
            return self._sizes_vary(call, jax_api.SIZED_CONSTRUCTORS[name], loop, depth)
        if name in jax_api.SHAPE_PRESERVING_FUNCTIONS and call.args:
            return self._varies(call.args[0], loop, depth + 1, seen)
        func = call.func
        if isinstance(func, ast.Attribute) and name is None:
            if func.attr in jax_api.SHAPE_PRESERVING_METHODS:
                return self._varies(func.value, loop, depth + 1, seen)
            if func.attr in jax_api.REDUCING_METHODS and (call.args or call.keywords):
                return self._varies(func.value, loop, depth + 1, seen)
        return None

    def _filtered_list(self, expr: ast.AST, loop: ast.AST) -> str | None:
        """A list comprehension with an `if` that changes between iterations (`[r for r in rows
        if r.user == u]`), or a name the loop binds only to one."""
        if isinstance(expr, ast.Name):
            bindings = self._bindings_in(loop, expr.id)
            if len(bindings) != 1 or bindings[0][0] != "assign":
                return None
            expr = bindings[0][1]
        if not isinstance(expr, ast.ListComp):
            return None
        conditions = [c for g in expr.generators for c in g.ifs]
        if conditions and any(self.module.varies_in_loop(c, loop) for c in conditions):
            return f"a list filtered by `if {ast.unparse(conditions[0])}`"
        return None

    def _sizes_vary(self, call: ast.Call, where, loop: ast.AST, depth: int) -> str | None:
        """`jnp.arange(t)`, `jnp.zeros((t, d))`: a new array whose size follows the loop.  A loop
        over a literal collection of sizes (`for n in (8, 16, 32)`) is a deliberate sweep."""
        positions, keywords = where
        if isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.iter, (ast.Tuple, ast.List, ast.Set)):
            return None
        if self.module.qualname(call.func).endswith(".arange") and (len(call.args) > 1 or call.keywords):
            if len(call.args) < 2 or call.keywords:
                return None
            difference = _subtract(_polynomial(call.args[1]), _polynomial(call.args[0]))
            if difference is None or not any(
                self._symbol_varies(symbol, loop, depth) for monomial in difference for symbol in monomial
            ):
                return None
            return "has a length that changes every iteration"
        sizes = [call.args[i] for i in positions if i < len(call.args)]
        sizes += [k.value for k in call.keywords if k.arg in keywords]
        parts = []
        for size in sizes:
            parts.extend(size.elts if isinstance(size, (ast.Tuple, ast.List)) else [size])
        for part in parts:
            if isinstance(part, ast.Starred) or _bounded(part):
                continue
            if self._size_follows_loop(part, loop, depth + 1):
                return f"has a size, `{ast.unparse(part)}`, that changes every iteration"
        return None

    def _size_follows_loop(self, expr: ast.AST, loop: ast.AST, depth: int) -> bool:
        """A size made of loop variables, constants, arithmetic, `len(...)` and `.shape`, that
        differs between iterations; a size that passes through any other call (a bucketing
        helper, `max(...)`) is not known to."""
        if depth > _MAX_DEPTH or not self.module.varies_in_loop(expr, loop):
            return False
        for node in walk(expr):
            if isinstance(node, ast.Call) and self.module.qualname(node.func) != "builtins.len":
                return False
            if isinstance(node, (ast.IfExp, ast.Compare, ast.BoolOp)):
                return False
        for node in walk(expr):
            if not isinstance(node, ast.Name):
                continue
            for kind, value, _ in self._bindings_in(loop, node.id):
                if kind == "assign" and not self._size_follows_loop(value, loop, depth + 1):
                    return False
        return self._loop_dependent(expr, loop, depth)

    def _slice_varies(self, index: ast.AST, loop: ast.AST, depth: int = 0) -> str | None:
        slices = index.elts if isinstance(index, ast.Tuple) else [index]
        for part in slices:
            if not isinstance(part, ast.Slice):
                continue
            lower, upper = part.lower, part.upper
            if lower is None and upper is None:
                continue
            if _bounded(lower) or _bounded(upper):
                continue  # `x[:min(bs, n - i)]`: a full batch or the last one
            if lower is None or upper is None:
                bound = upper if lower is None else lower
                if self._loop_dependent(bound, loop, depth):
                    return f"is sliced with `{ast.unparse(part)}`, whose size changes every iteration"
                continue
            difference = _subtract(_polynomial(upper), _polynomial(lower))
            if difference is None:
                if self._loop_dependent(upper, loop, depth) or self._loop_dependent(lower, loop, depth):
                    return f"is sliced with `{ast.unparse(part)}`, whose size changes every iteration"
                continue
            if any(self._symbol_varies(symbol, loop, depth) for monomial in difference for symbol in monomial):
                return f"is sliced with `{ast.unparse(part)}`, whose size changes every iteration"
        return None

    def _loop_dependent(self, expr: ast.AST, loop: ast.AST, depth: int = 0) -> bool:
        """Whether an integer (a size, a bound) can differ between iterations of `loop`.

        A loop variable does; a name the loop rebinds does if what it is bound to does;
        `x.shape[0]` and `len(x)` do if `x`'s shape does.
        """
        self._steps += 1
        if depth > _MAX_DEPTH or self._steps > _MAX_STEPS or not self.module.varies_in_loop(expr, loop):
            return False
        if isinstance(expr, ast.Constant):
            return False
        if isinstance(expr, ast.Name):
            for kind, value, _ in self._bindings_in(loop, expr.id):
                if kind == "element" or self._loop_dependent(value, loop, depth + 1):
                    return True
            return not self._bindings_in(loop, expr.id)  # mutated in place (`n[0] += 1`): unknown, assume so
        if isinstance(expr, ast.Attribute):
            if expr.attr in ("shape", "size", "ndim"):
                return self._varies(expr.value, loop, depth + 1, seen=set()) is not None
            return self._loop_dependent(expr.value, loop, depth + 1)
        if isinstance(expr, ast.Subscript):
            if isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape":
                return self._loop_dependent(expr.value, loop, depth + 1)
            return self._loop_dependent(expr.value, loop, depth + 1) or self._loop_dependent(expr.slice, loop, depth + 1)
        if isinstance(expr, ast.Call):
            callee = self.module.qualname(expr.func)
            if callee == "builtins.min" and any(not self._loop_dependent(a, loop, depth + 1) for a in expr.args):
                return False  # `min(bs, n - i)`: a full batch, or the last one
            if callee == "builtins.len" and expr.args:
                arg = expr.args[0]
                if isinstance(arg, ast.Name) and self._list_grows(arg.id, loop):
                    return True
                return self._varies(arg, loop, depth + 1, seen=set()) is not None
            if callee is None and isinstance(expr.func, ast.Attribute) and self._loop_dependent(expr.func.value, loop, depth + 1):
                return True  # `(mask > 0).sum()`, `counts.max()`: a number computed from what changes
            return any(self._loop_dependent(a, loop, depth + 1) for a in (*expr.args, *(k.value for k in expr.keywords)))
        return any(self._loop_dependent(child, loop, depth + 1) for child in children(expr)
                   if isinstance(child, ast.expr))

    def _symbol_varies(self, symbol: str, loop: ast.AST, depth: int) -> bool:
        try:
            expr = ast.parse(symbol, mode="eval").body
        except SyntaxError:
            return True
        return self._loop_dependent(expr, loop, depth)

    # ---- bindings inside a loop ------------------------------------------------------------
    def _bindings_in(self, loop: ast.AST, name: str) -> list[tuple[str, ast.AST, ast.AST | None]]:
        """How `name` is bound inside `loop`: ("assign", value, None) or ("element", iterable, target)."""
        key = (id(loop), name)
        cached = self._loop_bindings.get(key)
        if cached is not None:
            return cached
        found: list[tuple[str, ast.AST, ast.AST | None]] = []
        if isinstance(loop, (ast.For, ast.AsyncFor)) and _binds(loop.target, name):
            found.append(("element", loop.iter, _path(loop.target, name)))
        if isinstance(loop, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for generator in loop.generators:
                if _binds(generator.target, name):
                    found.append(("element", generator.iter, _path(generator.target, name)))
            self._loop_bindings[key] = found
            return found
        stack = list(loop.body)
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    found.extend(_assigned(target, stmt.value, name))
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                found.extend(_assigned(stmt.target, stmt.value, name))
            elif isinstance(stmt, (ast.For, ast.AsyncFor)) and _binds(stmt.target, name):
                found.append(("element", stmt.iter, _path(stmt.target, name)))
            for field in ("body", "orelse", "finalbody"):
                block = getattr(stmt, field, None)
                if type(block) is list:
                    stack.extend(block)
            for handler in getattr(stmt, "handlers", ()) or ():
                stack.extend(handler.body)
        self._loop_bindings[key] = found
        return found

    def _list_grows(self, name: str, loop: ast.AST) -> bool:
        """`name` is a list the loop appends to and never resets."""
        if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            return False
        grows = False
        for node in _loop_nodes(loop):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in ("append", "extend", "insert") and _is_name(node.func.value, name):
                    grows = True
            elif isinstance(node, ast.AugAssign) and _is_name(node.target, name) and isinstance(node.op, ast.Add):
                grows = True
            elif isinstance(node, ast.Assign) and any(_is_name(t, name) for t in node.targets):
                if not _grows(node.value, name, self.module):
                    return False  # rebuilt every iteration
                grows = True
        return grows

    # ---- elements of a collection ------------------------------------------------------------
    def _elements_vary(self, iterable: ast.AST, path: tuple[int, ...] | None, depth: int) -> str | None:
        if path is None or depth > _MAX_DEPTH:
            return None
        if isinstance(iterable, ast.Call):
            callee = self.module.qualname(iterable.func)
            if callee == "builtins.zip" and path and path[0] < len(iterable.args):
                return self._elements_vary(iterable.args[path[0]], path[1:], depth + 1)
            if callee == "builtins.enumerate" and path and path[0] == 1 and iterable.args:
                return self._elements_vary(iterable.args[0], path[1:], depth + 1)
            return None
        if path:
            return None
        collection = iterable
        if isinstance(iterable, ast.Name):
            values = self.names.assignments(iterable)
            if len(values) != 1:
                return None
            collection = values[0]
        if isinstance(collection, (ast.ListComp, ast.GeneratorExp)):
            variables = {n for g in collection.generators for n in target_names(g.target)}
            if all(self._distinct_values(g.iter) for g in collection.generators) and _shape_uses(collection.elt, variables):
                return "comes from a list of arrays of different sizes"
            return None
        if isinstance(collection, (ast.List, ast.Tuple)) and len(collection.elts) > 1:
            shapes = {_literal_shape(e) for e in collection.elts}
            if None not in shapes and len(shapes) > 1:
                return "comes from a list of arrays of different sizes"
            if all(isinstance(e, (ast.List, ast.Tuple)) for e in collection.elts):
                if len({len(e.elts) for e in collection.elts}) > 1:
                    return "comes from a list of sequences of different lengths"
        return None

    def _distinct_values(self, iterable: ast.AST) -> bool:
        """A comprehension source that yields more than one value: a literal of distinct items,
        a range, random integers, or a name bound once to one of those."""
        if isinstance(iterable, ast.Name):
            values = self.names.assignments(iterable)
            if len(values) != 1:
                return False
            iterable = values[0]
        if isinstance(iterable, (ast.Tuple, ast.List, ast.Set)):
            return len({ast.dump(e) for e in iterable.elts}) > 1
        if isinstance(iterable, ast.Call):
            func = iterable.func
            if self.module.qualname(func) == "builtins.range":
                return True
            short = func.attr if isinstance(func, ast.Attribute) else None
            return short in jax_api.RANDOM_INTEGERS
        return False

    # ---- repeated calls -----------------------------------------------------------------------
    def in_loop(self, node: ast.AST, function: FunctionNode | None) -> ast.stmt | None:
        """The innermost loop of `function`'s own body whose body contains `node`."""
        best = None
        for loop, owner in self.module.effects.loops:
            if owner is not function:
                continue
            first = loop.body[0].lineno
            if first <= node.lineno <= (loop.end_lineno or loop.lineno) or _in_header(node, loop):
                if best is None or loop.lineno >= best.lineno:
                    best = loop
        return best

    def called_repeatedly(self, function: FunctionNode, depth: int = 0) -> ast.AST | None:
        """A call of `function` that runs again and again: inside a loop, or inside a function
        that is itself called in a loop (a few levels up)."""
        if depth > 2 or isinstance(function, ast.Lambda):
            return None
        for call in self._calls_of(function):
            caller = self._function_of(call)
            if self.in_loop(call, caller) is not None or self._in_comprehension(call, caller):
                return call
            if caller is not None and caller is not function and self.called_repeatedly(caller, depth + 1):
                return call
        return None

    def _in_comprehension(self, node: ast.AST, function: FunctionNode | None) -> bool:
        """Whether `node` is evaluated once per element of a comprehension in `function`."""
        spans = self._comprehensions.get(id(function))
        if spans is None:
            spans = []
            body = function.body if function is not None else self.module.tree.body
            stack = list(body) if isinstance(body, list) else [body]
            while stack:
                child = stack.pop()
                if isinstance(child, (*FUNCTION_TYPES, ast.ClassDef)):
                    continue
                if isinstance(child, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                    first = child.generators[0].iter
                    spans.append((_start(child), _end(child), _start(first), _end(first)))
                stack.extend(children(child))
            self._comprehensions[id(function)] = spans
        where = _start(node)
        return any(a <= where <= b and not (c <= where <= d) for a, b, c, d in spans)

    def _calls_of(self, function: FunctionNode) -> list[ast.Call]:
        names = self.names
        out = []
        cls = names.parent_class.get(id(function))
        for call, scope in names.calls:
            func = call.func
            if isinstance(func, ast.Name) and func.id == function.name:
                if names.definition(func, scope) is function:
                    out.append(call)
            elif (
                cls is not None
                and isinstance(func, ast.Attribute)
                and func.attr == function.name
                and isinstance(func.value, ast.Name)
                and (func.value.id in ("self", "cls") or self._instance_of(func.value, cls, scope))
            ):
                out.append(call)
        return out

    def _instance_of(self, name: ast.Name, cls: ast.ClassDef, scope) -> bool:
        """`model` in `model.predict(x)` is bound only to `Model(...)`, an instance of `cls`."""
        values = self.names.assignments(name, scope)
        return bool(values) and all(
            isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and self.names.definition(v.func, scope) is cls
            for v in values
        )

    def _function_of(self, call: ast.Call) -> FunctionNode | None:
        table = self._call_functions
        return table.get(id(call))

    @property
    def _call_functions(self) -> dict[int, FunctionNode | None]:
        table = getattr(self, "_call_functions_table", None)
        if table is None:
            table = {}
            for call, scope in self.names.calls:
                while scope is not None and scope.kind == "class":
                    scope = scope.parent
                node = scope.node if scope is not None else None
                table[id(call)] = node if isinstance(node, FUNCTION_TYPES) else None
            self._call_functions_table = table
        return table

    # ---- jit objects built again and again -------------------------------------------------------
    def rebuilt_jits(self) -> list[tuple[ast.AST, str, str, str]]:
        """Jitted callables created anew each time they are used: (where, transformation, what, why).

        `jax.jit(lambda x: ...)(x)` in a loop; `@jax.jit` on a closure defined in a function that
        is called in a loop and calls it; `step = jax.jit(partial(f, c))` then `step(x)` in such
        a function.  A module-level function re-wrapped with `jax.jit(f)` hits JAX's cache and
        is not reported; nor is a jitted callable that escapes (returned, stored: a factory).
        """
        found: list[tuple[ast.AST, str, str, str]] = []
        names = self.names
        wanted = self.module.effects.module_short_names(jax_api.CACHING_TRANSFORMS)
        for call, scope in names.calls:
            func = call.func
            if isinstance(func, ast.Call):
                func = func.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) not in wanted:
                continue
            function = self._call_functions.get(id(call))
            if isinstance(call.func, ast.Call):
                inner = call.func
                transform = self.module.qualname(inner.func)
                if transform in jax_api.CACHING_TRANSFORMS and inner.args:
                    why = self._repeated(inner, inner.args[0], function, transform)
                    if why is not None:
                        found.append((inner, transform, _describe(inner.args[0]), why))
                continue
            transform = self.module.qualname(call.func)
            if transform not in jax_api.CACHING_TRANSFORMS or not call.args or function is None:
                continue
            bound = names.call_targets.get(id(call))
            if bound is None:
                stored = self._rebuilt_per_instance(call, function)
                if stored is not None:
                    found.append((call, transform, _describe(call.args[0]), stored))
                continue
            why = self._repeated(call, call.args[0], function, transform)
            if why is not None and self._used_once(bound, function, call):
                found.append((call, transform, _describe(call.args[0]), why))
        for root in self.module.traced_roots:
            fn = root.node
            if isinstance(fn, ast.Lambda) or root.site is None or root.site not in fn.decorator_list:
                continue
            transform = next((t.name for t in root.transforms if t.name in jax_api.CACHING_TRANSFORMS), None)
            if transform is None:
                continue
            function = names.parent_function.get(id(fn))
            if function is None or self._staged(function):
                continue
            if self.in_loop(fn, function) is not None:
                why = "it is defined inside a loop"
            elif not self._memoized(function) and self.called_repeatedly(function) is not None:
                why = f"`{_name(function)}` defines it anew on every call"
            else:
                continue
            if self._used_once(fn.name, function, fn):
                found.append((root.site, transform, f"`{fn.name}`", why))
        return found

    def _rebuilt_per_instance(self, jit_call: ast.Call, function: FunctionNode) -> str | None:
        """`self.step = jax.jit(<new function>)` in `__init__` of a class this module instantiates
        again and again (in a loop, or in a function called in one), and `.step(...)` is called:
        every instance starts with an empty cache.  Why, or None."""
        if not isinstance(function, ast.FunctionDef) or function.name != "__init__":
            return None
        cls = self.names.parent_class.get(id(function))
        self_name = function.args.args[0].arg if function.args.args else None
        if cls is None or self_name is None or self._fresh(jit_call.args[0], function, None) is None:
            return None
        attr = None
        for stmt in walk(function):
            if isinstance(stmt, ast.Assign) and stmt.value is jit_call and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self_name:
                    attr = target.attr
        if attr is None or not any(
            isinstance(call.func, ast.Attribute) and call.func.attr == attr for call, _ in self.names.calls
        ):
            return None
        for call, scope in self.names.calls:
            if not (isinstance(call.func, ast.Name) and call.func.id == cls.name):
                continue
            if self.names.definition(call.func, scope) is not cls:
                continue
            caller = self._function_of(call)
            if self.in_loop(call, caller) is not None or self._in_comprehension(call, caller):
                return f"every iteration makes a new `{cls.name}` (line {call.lineno}), which jits it in `__init__`"
            if caller is not None and not self._memoized(caller) and self.called_repeatedly(caller) is not None:
                return f"`{_name(caller)}` makes a new `{cls.name}` on every call (line {call.lineno}), which jits it in `__init__`"
        return None

    def _repeated(
        self, jit_call: ast.Call, wrapped: ast.AST, function: FunctionNode | None, transform: str
    ) -> str | None:
        """Why wrapping `wrapped` at `jit_call` builds a new cache again and again, or None."""
        if self._staged(function):
            return None  # the enclosing function's body runs once per trace, not per call
        loop = self.in_loop(jit_call, function)
        in_comprehension = self._in_comprehension(jit_call, function)
        if transform in jax_api.NEW_CACHE_PER_APPLICATION:
            fresh: str | None = "loop" if loop is not None or in_comprehension else "call"
        else:
            fresh = self._fresh(wrapped, function, loop if loop is not None or not in_comprehension else jit_call)
        if fresh is None:
            return None
        if (loop is not None or in_comprehension) and fresh == "loop":
            return "it is built inside a loop"
        if function is not None and not self._memoized(function) and self.called_repeatedly(function) is not None:
            return f"`{_name(function)}` builds it anew on every call"
        return None

    def _fresh(self, wrapped: ast.AST, function: FunctionNode | None, loop: ast.AST | None) -> str | None:
        """"loop" if `wrapped` is a new object on every loop iteration, "call" if on every call
        of `function`, None if it is the same object every time (a module-level function)."""
        if isinstance(wrapped, (ast.Lambda, ast.Call)):
            return "loop" if loop is not None else "call"
        if isinstance(wrapped, ast.Attribute):
            if self.module.qualname(wrapped) is not None:
                return None  # `module.f`: one object
            if isinstance(wrapped.value, ast.Name) and wrapped.value.id in ("self", "cls") and self._is_method(wrapped):
                return "loop" if loop is not None else "call"  # a bound method is new on every access
            if self._instance_method(wrapped):
                return "loop" if loop is not None else "call"
            return None
        if isinstance(wrapped, ast.Name) and function is not None:
            scope = self.names.read_scope.get(id(wrapped))
            owner = self.names.lookup(wrapped.id, scope) if scope is not None else None
            if owner is None or owner.node is not function or wrapped.id in owner.params:
                return None
            if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) and self._bound_in(wrapped.id, loop):
                return "loop"
            definition = owner.defs.get(wrapped.id)
            values = owner.assigned.get(wrapped.id, [])
            if definition is not None or any(isinstance(v, (ast.Lambda, ast.Call)) for v in values):
                return "call"
        return None

    def _bound_in(self, name: str, loop: ast.AST) -> bool:
        for node in _loop_nodes(loop):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return True
            if isinstance(node, ast.Assign) and any(_is_name(t, name) for t in node.targets):
                return True
        for stmt in loop.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                return True
        return False

    def _instance_method(self, attribute: ast.Attribute) -> bool:
        """`model.apply` where `model` is bound only to instances of a class of this module that
        defines `apply` as a plain method: a new bound method on every access."""
        base = attribute.value
        if not isinstance(base, ast.Name):
            return False
        scope = self.names.read_scope.get(id(base))
        owner = self.names.lookup(base.id, scope) if scope is not None else None
        if owner is None or any(base.id in bound for bound in (owner.params, owner.defs, owner.imports, owner.other)):
            return False
        values = owner.assigned.get(base.id, [])
        if not values:
            return False
        for value in values:
            if not isinstance(value, ast.Call):
                return False
            cls = self.names.definition(value.func, owner)
            if not isinstance(cls, ast.ClassDef):
                return False
            method = next(
                (s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == attribute.attr),
                None,
            )
            if method is None or method.decorator_list:
                return False  # a staticmethod, a property or an inherited attribute: not known
        return True

    def _is_method(self, attribute: ast.Attribute) -> bool:
        scope = self.names.read_scope.get(id(attribute.value))
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        return scope is not None and isinstance(scope.defs.get(attribute.attr), (ast.FunctionDef, ast.AsyncFunctionDef))

    def _used_once(self, name: str, function: FunctionNode, built: ast.AST) -> bool:
        """Inside `function`, `name` is only ever called (never returned, stored or passed on),
        and not again and again per build (in a loop the build is not in)."""
        called = set()
        loads = []
        for node in walk(function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                called.add(id(node.func))
            elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                loads.append(node)
        if not loads or not all(id(n) in called for n in loads):
            return False
        build_loop = self.in_loop(built, function)
        for load in loads:
            loop = self.in_loop(load, function)
            if loop is not None and loop is not build_loop:
                return False
            if self._in_comprehension(load, function) and not self._in_comprehension(built, function):
                return False
        return True

    def _staged(self, function: FunctionNode | None) -> bool:
        if function is None:
            return False
        context = self.module.effects.contexts.get(id(function))
        return context is not None and context.staged

    def _memoized(self, function: FunctionNode) -> bool:
        if isinstance(function, ast.Lambda):
            return False
        for decorator in function.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.module.qualname(target) in jax_api.MEMOIZING_DECORATORS:
                return True
        return False

    # ---- static trip counts -------------------------------------------------------------------
    def trip_count(self, loop: ast.AST) -> int | None:
        """The number of iterations of `for ... in range(<constants>)`, when known."""
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.iter, ast.Call):
            return None
        if self.module.qualname(loop.iter.func) != "builtins.range" or loop.iter.keywords:
            return None
        values = [self._constant_int(a) for a in loop.iter.args]
        if not values or None in values or len(values) > 3:
            return None
        try:
            return len(range(*values))
        except (ValueError, TypeError, OverflowError):
            return None

    def _constant_int(self, expr: ast.AST, depth: int = 0) -> int | None:
        if depth > 4:
            return None
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return expr.value
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            value = self._constant_int(expr.operand, depth + 1)
            return -value if value is not None else None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow)):
            left, right = self._constant_int(expr.left, depth + 1), self._constant_int(expr.right, depth + 1)
            if left is None or right is None:
                return None
            if isinstance(expr.op, ast.Pow) and (right > 64 or right < 0):
                return None
            try:
                return {
                    ast.Add: lambda: left + right,
                    ast.Sub: lambda: left - right,
                    ast.Mult: lambda: left * right,
                    ast.FloorDiv: lambda: left // right,
                    ast.Pow: lambda: left ** right,
                }[type(expr.op)]()
            except ZeroDivisionError:
                return None
        if isinstance(expr, ast.Name):
            scope = self.names.read_scope.get(id(expr))
            owner = self.names.lookup(expr.id, scope) if scope is not None else None
            if owner is not None and owner.kind == "function" and expr.id in owner.params:
                return self._largest_static_argument(owner.node, expr.id, depth)
            if owner is None or owner.kind != "module" or expr.id in self.module.effects.global_writers:
                return None
            values = owner.assigned.get(expr.id, [])
            if len(values) == 1 and expr.id not in owner.other:
                return self._constant_int(values[0], depth + 1)
        return None


    def _largest_static_argument(self, function: FunctionNode, param: str, depth: int) -> int | None:
        """The largest constant that a call in this module passes for a static parameter of a
        jitted function: that compilation sees it as a Python number."""
        from jaxlint.analysis import jit_signature

        module = self.module
        largest = None
        for site in module.call_sites:
            root = site.target
            if root.node is not function or param not in root.static_params:
                continue
            arg = jit_signature.argument(site.call, root, param, jit_signature.is_method_call(site.call, root, module))
            value = self._constant_int(arg, depth + 1) if arg is not None else None
            if value is not None and (largest is None or value > largest):
                largest = value
        return largest


def _start(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _name(function: FunctionNode) -> str:
    return getattr(function, "name", "the enclosing function")


def _describe(wrapped: ast.AST) -> str:
    if isinstance(wrapped, ast.Lambda):
        return "a `lambda`"
    text = ast.unparse(wrapped)
    return f"`{text}`" if len(text) <= 40 else f"`{text[:37]}...`"


# ---- helpers ---------------------------------------------------------------------------------
def _has_slice(index: ast.AST) -> bool:
    return isinstance(index, ast.Slice) or (isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) for e in index.elts))


def _boolean_mask(index: ast.AST) -> bool:
    """`x > t`, `~valid`, `(a > 0) & (b < 1)`: an index that selects the true entries."""
    if isinstance(index, ast.Compare):
        return not any(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in index.ops)
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return _boolean_mask(index.operand)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _boolean_mask(index.left) and _boolean_mask(index.right)
    return False


def _bounded(bound: ast.AST | None) -> bool:
    """`min(bs, n - i)`: at most two sizes."""
    return (
        isinstance(bound, ast.Call)
        and isinstance(bound.func, ast.Name)
        and bound.func.id == "min"
    )


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _grows(value: ast.AST, name: str, module: "ModuleFacts") -> bool:
    """`x = concatenate([x, y])`, `x = jnp.append(x, y)`, `x = x + [y]`: `name` grows."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return (_is_name(value.left, name) and isinstance(value.right, (ast.List, ast.Tuple))) or (
            _is_name(value.right, name) and isinstance(value.left, (ast.List, ast.Tuple))
        )
    if isinstance(value, ast.Call) and value.args:
        callee = module.qualname(value.func)
        if callee in jax_api.SHAPE_JOINING:
            first = value.args[0]
            parts = first.elts if isinstance(first, (ast.List, ast.Tuple)) else value.args[:2]
            return any(_is_name(p, name) for p in parts)
    return False


def _shrinks(value: ast.AST, name: str) -> bool:
    """`x = x[1:]`, `x = x[:-1]`: `name` loses rows on every pass."""
    if not (isinstance(value, ast.Subscript) and _is_name(value.value, name)):
        return False
    index = value.slice
    first = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
    if not isinstance(first, ast.Slice) or first.step is not None:
        return False
    lower, upper = _constant(first.lower), _constant(first.upper)
    if first.lower is not None and lower is None or first.upper is not None and upper is None:
        return False
    return (lower is not None and lower > 0) or (upper is not None and upper < 0)


def _constant(expr: ast.AST | None) -> int | None:
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant):
        value = expr.operand.value
        return -value if type(value) is int else None
    return None


def _binds(target: ast.AST, name: str) -> bool:
    return name in target_names(target)


def _path(target: ast.AST, name: str) -> tuple[int, ...] | None:
    """Where `name` sits in an unpacking target: () for the whole, (1,) for `(_, x)`."""
    if isinstance(target, ast.Name):
        return () if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        for i, elt in enumerate(target.elts):
            if isinstance(elt, ast.Starred):
                return None
            sub = _path(elt, name)
            if sub is not None:
                return (i, *sub)
    return None


def _assigned(target: ast.AST, value: ast.AST, name: str) -> list[tuple[str, ast.AST, None]]:
    if isinstance(target, ast.Name):
        return [("assign", value, None)] if target.id == name else []
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
        if len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
            out = []
            for t, v in zip(target.elts, value.elts):
                out.extend(_assigned(t, v, name))
            return out
    return []


def _loop_nodes(loop: ast.AST):
    stack = list(loop.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            continue
        yield node
        stack.extend(children(node))


def _in_header(node: ast.AST, loop: ast.AST) -> bool:
    return isinstance(loop, ast.While) and loop.test.lineno <= node.lineno <= (loop.test.end_lineno or loop.test.lineno)


def _shape_uses(expr: ast.AST, variables: set[str]) -> bool:
    """Whether `expr` builds an array whose shape depends on one of `variables`."""
    if not variables:
        return False
    for node in walk(expr):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in ("size", "shape") and _mentions(keyword.value, variables):
                    return True
            func = node.func
            short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if short in jax_api.SHAPE_FIRST_CONSTRUCTORS and node.args and _mentions(node.args[0], variables):
                return True
            if short in jax_api.SHAPE_SECOND_SAMPLERS and len(node.args) > 1 and _mentions(node.args[1], variables):
                return True
        elif isinstance(node, ast.Subscript) and _has_slice(node.slice) and _slice_size_uses(node.slice, variables):
            return True
    return False


def _slice_size_uses(index: ast.AST, variables: set[str]) -> bool:
    """A slice whose size (not just its position) depends on `variables`: `x[:n]`, not `x[i:i + bs]`."""
    for part in index.elts if isinstance(index, ast.Tuple) else [index]:
        if not isinstance(part, ast.Slice) or (part.lower is None and part.upper is None):
            continue
        if part.lower is None or part.upper is None:
            if _mentions(part.lower or part.upper, variables):
                return True
            continue
        difference = _subtract(_polynomial(part.upper), _polynomial(part.lower))
        if difference is None:
            if _mentions(part, variables):
                return True
        elif any(symbol in variables or _mentions_text(symbol, variables) for m in difference for symbol in m):
            return True
    return False


def _mentions_text(symbol: str, variables: set[str]) -> bool:
    try:
        return _mentions(ast.parse(symbol, mode="eval").body, variables)
    except SyntaxError:
        return True


def _mentions(expr: ast.AST, variables: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in variables for n in walk(expr))


def _literal_shape(expr: ast.AST) -> str | None:
    """The literal shape argument of `jnp.ones((3, 2))`-style constructors, as text."""
    if not isinstance(expr, ast.Call) or not expr.args:
        return None
    func = expr.func
    short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if short in jax_api.SHAPE_FIRST_CONSTRUCTORS:
        shape = expr.args[0]
    elif short in jax_api.SHAPE_SECOND_SAMPLERS and len(expr.args) > 1:
        shape = expr.args[1]
    else:
        return None
    try:
        value = ast.literal_eval(shape)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return repr(value if isinstance(value, tuple) else (value,))


# ---- slice sizes as polynomials over symbols ----------------------------------------------------
def _polynomial(expr: ast.AST | None, depth: int = 0) -> Polynomial | None:
    """`i * bs + 1` -> {("bs", "i"): 1, (): 1}; None when not a polynomial we can read."""
    if expr is None or depth > 8:
        return None
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return {(): expr.value}
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = _polynomial(expr.operand, depth + 1)
        return {k: -v for k, v in inner.items()} if inner is not None else None
    if isinstance(expr, ast.BinOp):
        left, right = _polynomial(expr.left, depth + 1), _polynomial(expr.right, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(expr.op, ast.Add):
            return _add(left, right, 1)
        if isinstance(expr.op, ast.Sub):
            return _add(left, right, -1)
        if isinstance(expr.op, ast.Mult):
            out: Polynomial = {}
            for a, x in left.items():
                for b, y in right.items():
                    key = tuple(sorted(a + b))
                    out[key] = out.get(key, 0) + x * y
            return {k: v for k, v in out.items() if v}
        return None
    if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return {(ast.unparse(expr),): 1}
    return None


def _add(left: Polynomial, right: Polynomial, sign: int) -> Polynomial:
    out = dict(left)
    for k, v in right.items():
        out[k] = out.get(k, 0) + sign * v
    return {k: v for k, v in out.items() if v}


def _subtract(upper: Polynomial | None, lower: Polynomial | None) -> Polynomial | None:
    if upper is None or lower is None:
        return None
    return _add(upper, lower, -1)
