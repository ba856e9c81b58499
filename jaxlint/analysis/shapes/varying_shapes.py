"""Shapes that change from one loop iteration to the next.

Does the shape of an argument of a jitted call change between iterations of a loop around
it?  Yes for an array that grows by concatenation (`tokens = concatenate([tokens, t])`), an
array built from a list the loop appends to, a slice whose size depends on the loop
(`series[:t]`, `x[start:start + n]`), a new array whose size follows the loop (`jnp.arange(t)`,
`jnp.zeros((t, d))`; not over a literal sweep of sizes), an array the loop trims
(`x = x[1:]`), and elements of a list of arrays of different sizes
(`[rng.normal(size=(n, 3)) for n in (120, 87, 143)]`), and what a generator of the module
yields from such a loop of its own (a data loader handing out slices of random sizes).  A
name is followed through the
definitions that reach its use (from `loop_variance`): growth or trimming counts only when
it changes what the previous iteration left (`x = x[1:]`, not `x = data; x = x[1:]`).  A slice of a fixed size
(`x[i:i + bs]`, `x[i * bs:(i + 1) * bs]`, or with the bounds bound to names first) is fixed,
even if the last batch is partial: two shapes, not one per iteration.  Anything not understood is not varying.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.loop_variance import ASSIGN, AUGMENT, ELEMENT, MUTATE, Definition
from jaxlint.analysis.engine.walk import children, target_names, walk
from jaxlint.analysis.knowledge import shape_api
from jaxlint.analysis.shapes.slice_sizes import (
    bounded,
    has_slice,
    mentions,
    polynomial,
    slice_size_uses,
    strided,
    subtract,
)

if TYPE_CHECKING:
    from jaxlint.analysis.project.traced_module import TracedModule

_MAX_DEPTH = 8
# Calls a size passes through unchanged in what it follows.
_SIZE_CONVERSIONS = frozenset({"builtins.len", "builtins.int"})
_MAX_STEPS = 20000


class VaryingShapes:
    def __init__(self, module: TracedModule):
        self.module = module
        self.names = module.names
        self._steps = 0  # work done answering shape questions: bounded per module

    def varying(self, expr: ast.AST, loop: ast.AST) -> str | None:
        """Why the shape of `expr` changes between iterations of `loop` (a statement or a
        comprehension), or None."""
        return self._varies(expr, loop, 0, set())

    def _varies(self, expr: ast.AST, loop: ast.AST, depth: int, seen: set) -> str | None:
        self._steps += 1
        if depth > _MAX_DEPTH or self._steps > _MAX_STEPS:
            return None
        if isinstance(expr, ast.Name):
            return self._name_varies(expr, loop, depth, seen)
        if isinstance(expr, ast.Subscript):
            reason = self._slice_varies(expr.slice, loop, depth + 1)
            if reason is not None:
                return reason
            if _boolean_mask(expr.slice) and self.module.varies_in_loop(expr.slice, loop):
                return (
                    f"is filtered by the boolean mask `{ast.unparse(expr.slice)}`: its length is the number "
                    "of true entries, which changes with the data"
                )
            if has_slice(expr.slice):
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

    def _name_varies(self, node: ast.Name, loop: ast.AST, depth: int, seen: set) -> str | None:
        name = node.id
        key = (id(loop), name)
        if key in seen:
            return None
        seen = seen | {key}
        definitions = self.module.loops.definitions(name, loop, node)
        if not any(d.kind == ASSIGN for d in definitions) and self._list_grows(node, loop):
            return "is a list that grows every iteration (one more leaf in its pytree structure)"
        for definition in definitions:
            if definition.kind == ASSIGN:
                value = definition.value
                if _grows(value, name, self.module) and self._carried(definition, loop):
                    return "grows every iteration"
                if _shrinks(value, name) and self._carried(definition, loop):
                    return "shrinks every iteration"
                reason = self._varies(value, loop, depth + 1, seen)
                if reason is not None:
                    return reason
            elif definition.kind == ELEMENT:
                reason = self._elements_vary(definition.value, definition.path, depth)
                if reason is not None:
                    return reason
        return None

    def _carried(self, definition: Definition, loop: ast.AST) -> bool:
        """The value a definition changes (`x = x[1:]`, `xs.append(t)`) is the one the previous
        iteration left: every definition made in the loop that reaches it derives from the name
        itself (none starts afresh, as `x = data` would)."""
        before = self.module.loops.definitions(definition.name, loop, definition.node)
        return bool(before) and all(_self_derived(d) for d in before)

    def _call_varies(self, call: ast.Call, loop: ast.AST, depth: int, seen: set) -> str | None:
        name = self.module.qualname(call.func)
        if name in shape_api.ARRAY_FROM_SEQUENCE and call.args:
            first = call.args[0]
            if isinstance(first, ast.Name) and self._list_grows(first, loop):
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
        if name in shape_api.SHAPE_JOINING and call.args:
            parts = call.args[0].elts if isinstance(call.args[0], (ast.List, ast.Tuple)) else call.args[:1]
            for part in parts:
                reason = self._varies(part, loop, depth + 1, seen)
                if reason is not None:
                    return reason
            return None
        if name in shape_api.SIZED_CONSTRUCTORS:
            return self._sizes_vary(call, shape_api.SIZED_CONSTRUCTORS[name], loop, depth)
        if name in shape_api.SHAPE_PRESERVING_FUNCTIONS and call.args:
            return self._varies(call.args[0], loop, depth + 1, seen)
        func = call.func
        if any(k.arg == "size" for k in call.keywords) and (
            (name or "").startswith("numpy.random.")
            or name is None and isinstance(func, ast.Attribute) and func.attr in shape_api.NUMPY_DRAWS
        ):
            return self._sizes_vary(call, shape_api.SIZE_KEYWORD, loop, depth)
        if isinstance(func, ast.Attribute) and name is None:
            if func.attr in shape_api.SHAPE_PRESERVING_METHODS:
                return self._varies(func.value, loop, depth + 1, seen)
            if func.attr in shape_api.REDUCING_METHODS and (call.args or call.keywords):
                return self._varies(func.value, loop, depth + 1, seen)
        return None

    def _filtered_list(self, expr: ast.AST, loop: ast.AST) -> str | None:
        """A list comprehension with an `if` that changes between iterations (`[r for r in rows
        if r.user == u]`), or a name the loop binds only to one."""
        if isinstance(expr, ast.Name):
            definitions = self.module.loops.definitions(expr.id, loop, expr)
            if len(definitions) != 1 or definitions[0].kind != ASSIGN:
                return None
            expr = definitions[0].value
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
        if self._sweep(loop):
            return None
        if (self.module.qualname(call.func) or "").endswith(".arange") and (len(call.args) > 1 or call.keywords):
            if len(call.args) < 2 or call.keywords:
                return None
            difference = subtract(self._polynomial(call.args[1], loop), self._polynomial(call.args[0], loop))
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
            if isinstance(part, ast.Starred) or bounded(part):
                continue
            if self._size_follows_loop(part, loop, depth + 1):
                return f"has a size, `{ast.unparse(part)}`, that changes every iteration"
        return None

    def _sweep(self, loop: ast.AST) -> bool:
        """A `for` loop over a collection of values written out in the code (`for n in (8, 16,
        32)`, through `enumerate` or a name bound once to one): a deliberate sweep, not data."""
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            return False
        iterable = loop.iter
        if isinstance(iterable, ast.Call) and self.module.qualname(iterable.func) == "builtins.enumerate" and iterable.args:
            iterable = iterable.args[0]
        if isinstance(iterable, ast.Name):
            values = self.names.assignments(iterable)
            iterable = values[0] if len(values) == 1 else iterable
        return isinstance(iterable, (ast.Tuple, ast.List, ast.Set))

    def _size_follows_loop(self, expr: ast.AST, loop: ast.AST, depth: int) -> bool:
        """A size made of loop variables, constants, arithmetic, `len(...)`, `int(...)` and
        `.shape`, that differs between iterations; a size that passes through any other call (a
        bucketing helper, `max(...)`) is not known to."""
        if depth > _MAX_DEPTH:
            return False
        if any(isinstance(n, ast.Call) and _random_integer(n, self.module.qualname(n.func)) for n in walk(expr)):
            return True  # `rng.integers(5, 50)`: drawn again every iteration
        if not self.module.varies_in_loop(expr, loop):
            return False
        for node in walk(expr):
            if isinstance(node, ast.Call) and self.module.qualname(node.func) not in _SIZE_CONVERSIONS:
                return False
            if isinstance(node, (ast.IfExp, ast.Compare, ast.BoolOp)):
                return False
        for node in walk(expr):
            if not isinstance(node, ast.Name):
                continue
            for definition in self.module.loops.definitions(node.id, loop, node):
                if definition.kind == ASSIGN and not self._size_follows_loop(definition.value, loop, depth + 1):
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
            if bounded(lower) or bounded(upper):
                continue  # `x[:min(bs, n - i)]`: a full batch or the last one
            if strided(part) and not self._loop_dependent(part.step, loop, depth) and (
                upper is None or not self._loop_dependent(upper, loop, depth)
            ):
                continue  # `x[c::n]`: only the phase of a fixed stride changes
            if lower is None or upper is None:
                bound = upper if lower is None else lower
                if self._loop_dependent(bound, loop, depth):
                    return f"is sliced with `{ast.unparse(part)}`, whose size changes every iteration"
                continue
            difference = subtract(self._polynomial(upper, loop), self._polynomial(lower, loop))
            if difference is None:
                if self._loop_dependent(upper, loop, depth) or self._loop_dependent(lower, loop, depth):
                    return f"is sliced with `{ast.unparse(part)}`, whose size changes every iteration"
                continue
            if any(self._symbol_varies(symbol, loop, depth) for monomial in difference for symbol in monomial):
                return f"is sliced with `{ast.unparse(part)}`, whose size changes every iteration"
        return None

    def _polynomial(self, expr: ast.AST, loop: ast.AST):
        """`polynomial`, with a name the loop binds once to a value read through that value
        (`start = i * bs; end = (i + 1) * bs; x[start:end]` is `bs` long), where nothing it reads
        is bound again between the binding and the read."""
        loops = self.module.loops

        def expand(name: ast.Name) -> ast.expr | None:
            reaching = loops.reaching(name.id, loop, name)
            if len(reaching) != 1:
                return None
            (definition,) = reaching
            node = definition.node
            if definition.kind != ASSIGN or id(loop) not in definition.loops or not (
                (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name))
                or (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name))
            ):
                return None
            for read in walk(definition.value):
                if isinstance(read, ast.Name) and (
                    loops.reaching(read.id, loop, read) != loops.reaching(read.id, loop, name)
                ):
                    return None
            return definition.value

        return polynomial(expr, expand=expand)

    def _loop_dependent(self, expr: ast.AST, loop: ast.AST, depth: int = 0) -> bool:
        """Whether an integer (a size, a bound) can differ between iterations of `loop`.

        A loop variable does; a name the loop rebinds does if what it is bound to does;
        `x.shape[0]` and `len(x)` do if `x`'s shape does.
        """
        self._steps += 1
        if depth > _MAX_DEPTH or self._steps > _MAX_STEPS:
            return False
        if any(isinstance(n, ast.Call) and _random_integer(n, self.module.qualname(n.func)) for n in walk(expr)):
            return True  # `int(rng.integers(16, 64))`: drawn again every iteration
        if not self.module.varies_in_loop(expr, loop):
            return False
        if isinstance(expr, ast.Constant):
            return False
        if isinstance(expr, ast.Name):
            definitions = self.module.loops.definitions(expr.id, loop, expr)
            for definition in definitions:
                if definition.kind == ELEMENT:
                    return True
                if definition.kind == ASSIGN and self._loop_dependent(definition.value, loop, depth + 1):
                    return True
            # Changed only in place or by `+=` (`n[0] += 1`): unknown, assume so.
            return not any(d.kind in (ASSIGN, ELEMENT) for d in definitions)
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
                if isinstance(arg, ast.Name) and self._list_grows(arg, loop):
                    return True
                return self._varies(arg, loop, depth + 1, seen=set()) is not None
            if callee is None and isinstance(expr.func, ast.Attribute) and self._loop_dependent(expr.func.value, loop, depth + 1):
                return True  # `(mask > 0).sum()`, `counts.max()`: a number computed from what changes
            return any(self._loop_dependent(a, loop, depth + 1) for a in (*expr.args, *(k.value for k in expr.keywords)))
        return any(self._loop_dependent(child, loop, depth + 1) for child in children(expr)
                   if isinstance(child, ast.expr))

    def _symbol_varies(self, symbol: str, loop: ast.AST, depth: int) -> bool:
        expr = self.names.parse_expression(symbol)
        return True if expr is None else self._loop_dependent(expr, loop, depth)

    def _list_grows(self, node: ast.Name, loop: ast.AST) -> bool:
        """The list read at `node` is one the loop appends to, keeping what earlier iterations added."""
        if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            return False
        return any(
            _adds_to(d, self.module) and self._carried(d, loop) and (d.kind != AUGMENT or self._extends(d, node))
            for d in self.module.loops.definitions(node.id, loop, node)
        )

    def _extends(self, definition: Definition, node: ast.Name) -> bool:
        """Whether `name += value` adds elements: only to a sequence.  The added value is one
        (`xs += [x]`), or the name is bound to one elsewhere in its scope (`xs = []`,
        `list(...)`, a comprehension); on a number (`i = 0 ... i += n`) it is `i = i + n`."""
        if _sequence(definition.value, self.module):
            return True
        return any(_sequence(value, self.module) for value in self.names.assignments(node))

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
            grouped = self._groups_by_length(iterable, path)
            if grouped is not None:
                return grouped
            return self._yields_vary(iterable, path, depth) if isinstance(iterable.func, ast.Name) else None
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

    def _groups_by_length(self, iterable: ast.Call, path: tuple[int, ...]) -> str | None:
        """The groups of a mapping the code fills by length (`groups[len(s)].append(s)`,
        `groups.setdefault(x.shape[0], []).append(x)`), met through `groups.items()` (the value)
        or `groups.values()`: one length per group, so one shape per distinct length."""
        func = iterable.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        if not (func.attr == "items" and path == (1,) or func.attr == "values" and path == ()):
            return None
        mapping = func.value
        owner = self.names.lookup(mapping.id, self.names.read_scope.get(id(mapping), self.names.module))
        for call, scope in self.names.calls:
            target = call.func
            if not (isinstance(target, ast.Attribute) and target.attr in ("append", "extend")):
                continue
            group = target.value
            if isinstance(group, ast.Subscript):
                base, key = group.value, group.slice
            elif isinstance(group, ast.Call) and isinstance(group.func, ast.Attribute) and group.func.attr == "setdefault" and group.args:
                base, key = group.func.value, group.args[0]
            else:
                continue
            if not (isinstance(base, ast.Name) and base.id == mapping.id and self.names.lookup(base.id, scope) is owner):
                continue
            if _length_key(key, self.module):
                return f"comes from groups keyed by `{ast.unparse(key)}`, one length each"
        return None

    def _yields_vary(self, call: ast.Call, path: tuple[int, ...], depth: int) -> str | None:
        """A generator of the module or of another module of the project (a data loader) whose
        `yield`, inside one of its own loops,
        hands out a value (or, at `path`, an item of a yielded tuple) whose shape changes from
        one of those iterations to the next: so do the elements the caller's loop receives.
        A loader whose sizes the code does not show says nothing."""
        generator = self.names.definition(call.func)
        varying = self.varying
        if not isinstance(generator, (ast.FunctionDef, ast.AsyncFunctionDef)):
            link, qualname = self.module.project, self.module.qualname(call.func)
            found = link.callee(qualname) if link is not None and qualname is not None else None
            if found is None:
                return None
            generator, varying = found.node, found.facts.shapes.varying  # a loader of another module
        for loop, value in _loop_yields(generator):
            for step in path:
                if not isinstance(value, ast.Tuple) or step >= len(value.elts):
                    value = None
                    break
                value = value.elts[step]
            reason = varying(value, loop) if value is not None else None
            if reason is not None:
                return f"comes from `{generator.name}`, which yields one that {reason}"
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
            return short in shape_api.RANDOM_INTEGERS
        return False



def _length_key(key: ast.AST, module: TracedModule) -> bool:
    """A key that is a length: `len(x)`, `x.shape`, `x.shape[0]`, or a tuple holding one."""
    parts = key.elts if isinstance(key, ast.Tuple) else [key]
    for part in parts:
        if isinstance(part, ast.Call) and module.qualname(part.func) == "builtins.len":
            return True
        if isinstance(part, ast.Subscript):
            part = part.value
        if isinstance(part, ast.Attribute) and part.attr == "shape":
            return True
    return False


def _random_integer(call: ast.Call, callee: str | None) -> bool:
    """A draw of one random integer (`rng.integers(16, 64)`, `np.random.randint(1, 9)`,
    `random.randint(1, 9)`); with a `size` it is an array of them, not a size."""
    if any(k.arg == "size" for k in call.keywords):
        return False
    if callee is not None:
        return callee.rsplit(".", 1)[0] in ("numpy.random", "random") and callee.rsplit(".", 1)[-1] in shape_api.RANDOM_INTEGERS
    return isinstance(call.func, ast.Attribute) and call.func.attr in shape_api.RANDOM_INTEGERS


def _loop_yields(generator: ast.AST) -> list[tuple[ast.AST, ast.expr]]:
    """The `yield value`s of a function's own body (not of functions nested in it) that sit in
    one of its loops, each with the innermost such loop."""
    found: list[tuple[ast.AST, ast.expr]] = []
    stack: list[tuple[ast.AST, ast.AST | None]] = [(stmt, None) for stmt in generator.body]
    while stack:
        node, loop = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Yield) and node.value is not None and loop is not None:
            found.append((loop, node.value))
        inner = node if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) else loop
        for child in children(node):
            # a loop's iterable and `else` run outside its iterations
            stays = inner is node and (child is getattr(node, "iter", None) or child in getattr(node, "orelse", ()))
            stack.append((child, loop if stays else inner))
    return found


def _boolean_mask(index: ast.AST) -> bool:
    """`x > t`, `~valid`, `(a > 0) & (b < 1)`: an index that selects the true entries."""
    if isinstance(index, ast.Compare):
        return not any(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in index.ops)
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return _boolean_mask(index.operand)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _boolean_mask(index.left) and _boolean_mask(index.right)
    return False


def _self_derived(definition: Definition) -> bool:
    """A definition that changes the name's previous value: in place, by `+=`, or from itself."""
    if definition.kind in (MUTATE, AUGMENT):
        return True
    return definition.kind == ASSIGN and any(_is_name(n, definition.name) for n in walk(definition.value))


def _adds_to(definition: Definition, module: TracedModule) -> bool:
    """`xs.append(x)`, `xs += [x]`, `xs = xs + [x]`: one more element."""
    node = definition.node
    if definition.kind == MUTATE:
        return isinstance(node, ast.Call) and node.func.attr in ("append", "extend", "insert")
    if definition.kind == AUGMENT:
        return isinstance(node.op, ast.Add)
    return definition.kind == ASSIGN and _grows(definition.value, definition.name, module)


def _sequence(value: ast.AST, module: TracedModule) -> bool:
    """A list or tuple by its construction: a display, a comprehension, `list(...)`, `tuple(...)`."""
    if isinstance(value, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    return isinstance(value, ast.Call) and module.qualname(value.func) in ("builtins.list", "builtins.tuple")


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _grows(value: ast.AST, name: str, module: TracedModule) -> bool:
    """`x = concatenate([x, y])`, `x = jnp.append(x, y)`, `x = x + [y]`: `name` grows."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return (_is_name(value.left, name) and isinstance(value.right, (ast.List, ast.Tuple))) or (
            _is_name(value.right, name) and isinstance(value.left, (ast.List, ast.Tuple))
        )
    if isinstance(value, ast.Call) and value.args:
        callee = module.qualname(value.func)
        if callee in shape_api.SHAPE_JOINING:
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


def _shape_uses(expr: ast.AST, variables: set[str]) -> bool:
    """Whether `expr` builds an array whose shape depends on one of `variables`."""
    if not variables:
        return False
    for node in walk(expr):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in ("size", "shape") and mentions(keyword.value, variables):
                    return True
            func = node.func
            short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if short in shape_api.SHAPE_FIRST_CONSTRUCTORS and node.args and mentions(node.args[0], variables):
                return True
            if short in shape_api.SHAPE_SECOND_SAMPLERS and len(node.args) > 1 and mentions(node.args[1], variables):
                return True
        elif isinstance(node, ast.Subscript) and has_slice(node.slice) and slice_size_uses(node.slice, variables):
            return True
    return False


def _literal_shape(expr: ast.AST) -> str | None:
    """The literal shape argument of `jnp.ones((3, 2))`-style constructors, as text."""
    if not isinstance(expr, ast.Call) or not expr.args:
        return None
    func = expr.func
    short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if short in shape_api.SHAPE_FIRST_CONSTRUCTORS:
        shape = expr.args[0]
    elif short in shape_api.SHAPE_SECOND_SAMPLERS and len(expr.args) > 1:
        shape = expr.args[1]
    else:
        return None
    try:
        value = ast.literal_eval(shape)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return repr(value if isinstance(value, tuple) else (value,))
