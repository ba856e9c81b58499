"""Non-array leaves of a jitted function's argument that change from one call to the next.

`eqx.filter_jit` (and `filter_pmap`) makes every leaf of its arguments that is not an array
static: part of the compilation key, compared by value. So does any jit for a pytree field
declared static (`eqx.field(static=True)`, `flax.struct.field(pytree_node=False)`). A field of
a pytree class of the project is such a leaf when its annotation is a Python number or bool
(`step: int`) and the jit is a filtering one, or when it is declared static. It changes from
one call to the next when a loop around the call passes back what the jitted function
returned, and the function returns the class with that field computed from the argument's own
(`MyModule(x=module.x + 1, ...)`, `replace(state, step=state.step + 1)`): a new value, so a new
compilation, on every iteration.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, NamedTuple

from jaxlint.analysis.engine.arguments import bind
from jaxlint.analysis.engine.loop_variance import ASSIGN, AUGMENT
from jaxlint.analysis.engine.named_tuples import NAMED_TUPLE_BASES
from jaxlint.analysis.engine.walk import all_statements, own_nodes, spans, walk
from jaxlint.analysis.tracing.callsites import CallSite


if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule

# Jits that make every non-array leaf static.
FILTERING_JITS = frozenset({"equinox.filter_jit", "equinox.filter_pmap"})
_SCALARS = frozenset({"builtins.int", "builtins.float", "builtins.bool"})
# Copies of a pytree with some fields replaced (`dataclasses.replace(s, step=...)`, `s.replace(...)`).
_REPLACING = frozenset({"dataclasses.replace"})
_REPLACING_METHODS = frozenset({"replace", "_replace"})


class ChangingLeaf(NamedTuple):
    value: ast.expr  # the new value the jitted function gives the field
    field: str
    kind: str  # why the leaf is static: "a Python `int`" ...
    cls: str  # the class
    function: str  # the jitted function
    call: ast.Call  # the call in the loop that passes the result back
    loop: ast.AST


class ChangingNumber(NamedTuple):
    """A Python number that changes every iteration, given to a filtering jit as (part of) an argument."""

    value: ast.expr  # the number, where the call's argument holds it
    why: str  # how it changes
    argument: ast.expr  # the argument that holds it
    function: str  # the jitted function
    transform: str
    loop: ast.AST


def changing_leaves(module: TracedModule, effects: Effects) -> list[ChangingLeaf]:
    found = []
    sites = [site for site in module.call_sites if site.loops and not module.runs_staged(site.function)]
    assigned = call_assignments(module) if sites else {}
    for site in sites:
        filtering = any(t.name in FILTERING_JITS for t in site.target.transforms)
        for param, position, arg in _carried(site, assigned.get(id(site.call)), module):
            made = _class_made(arg, module)
            for value, field, kind, cls in _changed_fields(site.target.node, param, position, made, filtering, module, effects):
                found.append(ChangingLeaf(value, field, kind, cls, _label(site), site.call, site.loops[-1]))
    return found


def changing_numbers(module: TracedModule) -> list[ChangingNumber]:
    """Python numbers that change every iteration of a loop around a call of a filtering jit,
    passed as an argument or inside one: a dict, list or tuple display, or a constructor call
    (`solve(x, {"tol": tol})`, `step(Config(lr=lr), x)`), or a name the loop binds to one."""
    found = []
    for site in module.call_sites:
        transform = next((t.name for t in site.target.transforms if t.name in FILTERING_JITS), None)
        if transform is None or not site.loops or module.runs_staged(site.function):
            continue
        arguments = [*site.call.args, *(k.value for k in site.call.keywords)]
        for arg in arguments:
            for loop in reversed(site.loops):
                hit = _number_inside(arg, loop, module, 0)
                if hit is not None:
                    found.append(ChangingNumber(hit[0], hit[1], arg, _label(site), transform, loop))
                    break
    return found


def _number_inside(expr: ast.expr, loop: ast.AST, module, depth: int) -> tuple[ast.expr, str] | None:
    """A Python number inside `expr` that changes every iteration of `loop`, and how."""
    if depth > 3 or isinstance(expr, ast.Starred):
        return None
    if isinstance(expr, ast.Dict):
        parts = list(expr.values)
    elif isinstance(expr, (ast.Tuple, ast.List)):
        parts = list(expr.elts)
    elif isinstance(expr, ast.Call) and _holds_values(expr, module):
        parts = [*expr.args, *(k.value for k in expr.keywords)]
    elif isinstance(expr, ast.Name) and depth == 0:
        definitions = module.loops.definitions(expr.id, loop, expr)
        if len(definitions) == 1 and definitions[0].kind == ASSIGN and _holds_values(definitions[0].value, module):
            return _number_inside(definitions[0].value, loop, module, depth + 1)
        why = _python_number_change(expr, loop, module)
        return (expr, why) if why is not None else None
    else:
        why = _python_number_change(expr, loop, module)
        return (expr, why) if why is not None else None
    for part in parts:
        hit = _number_inside(part, loop, module, depth + 1)
        if hit is not None:
            return hit
    return None


def _holds_values(expr: ast.expr | None, module) -> bool:
    """A dict, tuple or list display, or a call of a class of the module."""
    if isinstance(expr, (ast.Dict, ast.Tuple, ast.List)):
        return True
    return isinstance(expr, ast.Call) and isinstance(module.names.definition(expr.func), ast.ClassDef)


def _python_number_change(expr: ast.expr, loop: ast.AST, module) -> str | None:
    """How a Python number (not an array) changes every iteration of `loop`: the index of a
    `range` loop, a number swept over a written-out collection, or one the loop updates from a
    number bound before it (`tol = 1e-2`, then `tol *= 0.5`)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Pow)):
        for side, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if _number_literal(other):
                return _python_number_change(side, loop, module)
        return None
    if not isinstance(expr, ast.Name) or not module.varies_in_loop(expr, loop):
        return None
    name = expr.id
    heads = [loop] if isinstance(loop, (ast.For, ast.AsyncFor)) else getattr(loop, "generators", [])
    for head in heads:
        iterable, target = head.iter, head.target
        if (
            isinstance(iterable, ast.Call) and module.qualname(iterable.func) == "builtins.enumerate"
            and iterable.args and isinstance(target, ast.Tuple) and len(target.elts) == 2
        ):
            if _is(target.elts[0], name):
                return f"`{name}`, the loop index"
            iterable, target = iterable.args[0], target.elts[1]
        if not _is(target, name):
            continue
        if isinstance(iterable, ast.Call) and module.qualname(iterable.func) == "builtins.range":
            return f"`{name}`, the loop index"
        if isinstance(iterable, (ast.Tuple, ast.List)) and len(iterable.elts) > 1 and all(_number_literal(e) for e in iterable.elts):
            return f"`{name}`, swept over `{ast.unparse(iterable)}`"
        return None
    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
        return None
    definitions = module.loops.definitions(name, loop, expr)
    if not definitions or not all(d.kind in (AUGMENT, ASSIGN) for d in definitions):
        return None
    if not all(d.kind == AUGMENT or _self_update(d.value, name) for d in definitions):
        return None
    scope = module.names.read_scope.get(id(expr))
    owner = module.names.lookup(name, scope) if scope is not None else None
    if owner is None or name in owner.params:
        return None
    before = [v for v in _bound_values(name, owner) if not spans(loop, v)]
    if not before or not all(_number_literal(v) for v in before):
        return None
    return f"`{name}`, a Python number updated on every iteration"


def _bound_values(name: str, owner) -> list[ast.expr]:
    """What a scope assigns to `name`: plainly, or item by item from a tuple (`x, tol = a, 0.1`)."""
    values = list(owner.assigned.get(name, []))
    if name in owner.other and not isinstance(owner.node, ast.Lambda):
        body = owner.node.body if isinstance(owner.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) else []
        for stmt in body:
            for node in walk(stmt):
                if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple)):
                    continue
                for target in node.targets:
                    if isinstance(target, ast.Tuple) and len(target.elts) == len(node.value.elts):
                        values += [v for t, v in zip(target.elts, node.value.elts) if _is(t, name)]
    return values


def _self_update(value: ast.expr | None, name: str) -> bool:
    return isinstance(value, ast.BinOp) and any(_is(n, name) for n in walk(value)) and all(
        _is(n, name) or _number_literal(n) or isinstance(n, (ast.BinOp, ast.operator, ast.UnaryOp, ast.unaryop, ast.expr_context))
        for n in walk(value)
    )


def _number_literal(expr: ast.AST) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)



def _label(site: CallSite) -> str:
    return getattr(site.target.node, "name", None) or site.target.bound_name or "the jitted function"


def call_assignments(module: TracedModule) -> dict[int, ast.Assign]:
    """id(call) -> the statement `target = call(...)` that binds its result to one target."""
    return {
        id(node.value): node
        for node in all_statements(module.tree.body)
        if node.__class__ is ast.Assign and node.value.__class__ is ast.Call and len(node.targets) == 1
    }


def _carried(site: CallSite, parent: ast.Assign | None, module: TracedModule) -> Iterator[tuple[str, int | None, ast.Name]]:
    """The parameters whose argument the loop rebinds from this call's result (`parent`, the
    assignment of it), where in the result it comes from (None: the whole result; k: the k-th
    item of a returned tuple), and the argument."""
    if parent is None:
        return
    target = parent.targets[0]
    if isinstance(target, ast.Name):
        bound = {target.id: None}
    elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        bound = {e.id: i for i, e in enumerate(target.elts)}
    else:
        return
    static = site.target.static_params
    for param, arg in bind(site.target.node, site.call, site.implicit).arguments.items():
        if isinstance(arg, ast.Name) and arg.id in bound and param not in static:
            yield param, bound[arg.id], arg


def _changed_fields(fn, param: str, position: int | None, made, filtering: bool, module, effects):
    """(new value, field, why static, class) for each static leaf the function returns computed
    from `param`'s own (`made`: the class the caller passes, when its code shows it)."""
    for node in own_nodes(fn):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value = node.value
        if position is not None:
            if not isinstance(value, ast.Tuple) or position >= len(value.elts):
                continue
            value = value.elts[position]
        yield from _rebuilt_fields(value, fn, param, made, filtering, module, effects)


def _class_made(arg: ast.Name, module) -> ast.ClassDef | None:
    """The class of this module every binding of the argument's name outside the call makes."""
    made = [module.names.definition(v.func) for v in module.names.assignments(arg) if isinstance(v, ast.Call)]
    classes = {id(cls): cls for cls in made if isinstance(cls, ast.ClassDef)}
    return next(iter(classes.values())) if len(classes) == 1 else None


def _rebuilt_fields(value: ast.expr, fn, param: str, made, filtering: bool, module, effects):
    if not isinstance(value, ast.Call):
        return
    callee = module.qualname(value.func)
    cls = module.names.definition(value.func) if isinstance(value.func, ast.Name) else None
    given: list[tuple[str, ast.expr]] = []
    if isinstance(cls, ast.ClassDef):
        fields = _fields(cls)
        given = [(k.arg, k.value) for k in value.keywords if k.arg is not None]
        given += [(name, arg) for (name, _, _), arg in zip(fields, value.args)]
    elif (callee in _REPLACING and value.args and _is(value.args[0], param)) or (
        isinstance(value.func, ast.Attribute) and value.func.attr in _REPLACING_METHODS and _is(value.func.value, param)
    ):
        cls = _annotated_class(param, fn, module) or made
        given = [(k.arg, k.value) for k in value.keywords if k.arg is not None]
    if not isinstance(cls, ast.ClassDef) or not _pytree_class(cls, module, effects):
        return
    declared = {name: (annotation, default) for name, annotation, default in _fields(cls)}
    for field, new in given:
        if field not in declared:
            continue
        kind = _static_kind(*declared[field], filtering, module)
        if kind is not None and _updated_from(new, param, field):
            yield new, field, kind, cls.name


def _fields(cls: ast.ClassDef) -> list[tuple[str, ast.expr, ast.expr | None]]:
    return [
        (stmt.target.id, stmt.annotation, stmt.value)
        for stmt in cls.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
    ]


def _static_kind(annotation: ast.expr, default: ast.expr | None, filtering: bool, module) -> str | None:
    """Why a field is static: declared so, or, under a filtering jit, a Python number."""
    if isinstance(default, ast.Call):
        for keyword in default.keywords:
            if keyword.arg == "static" and _constant(keyword.value) is True:
                return "a field declared static"
            if keyword.arg == "pytree_node" and _constant(keyword.value) is False:
                return "a field declared static"
    if filtering and module.names.qualname(annotation) in _SCALARS:
        return f"a Python `{module.names.qualname(annotation).split('.')[-1]}` (a non-array leaf, static under a filtering jit)"
    return None


def _updated_from(new: ast.expr, param: str, field: str) -> bool:
    """`new` computes a number from the argument's own field (`module.x + 1`), not the field itself."""
    if not isinstance(new, (ast.BinOp, ast.UnaryOp)):
        return False
    return any(
        isinstance(node, ast.Attribute) and node.attr == field and _is(node.value, param) for node in walk(new)
    )


def _annotated_class(param: str, fn, module) -> ast.AST | None:
    """The class of this module a parameter of `fn` is annotated with."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs):
        if arg.arg == param and arg.annotation is not None:
            return module.names.definition(arg.annotation)
    return None


def _pytree_class(cls: ast.ClassDef, module, effects) -> bool:
    if effects.is_framework_class(cls):
        return True
    return any(module.names.qualname(base) in NAMED_TUPLE_BASES for base in cls.bases)


def _constant(expr: ast.expr):
    return expr.value if isinstance(expr, ast.Constant) else None


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
