"""Name resolution: scopes, their bindings, and qualified names through every import style.

One walk over the module builds the scope tree (module, class, function, lambda), records
what each name is bound to in each scope (an import, a def, a class, assignments, a
parameter) and which scope every loaded name was read in.  `qualname` then answers
"what does this expression refer to?" (`jnp.where` -> `jax.numpy.where`), honouring
shadowing by local bindings, as pyflakes does.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterator, Union

from jaxlint.analysis.engine.reachability import dead_nodes
from jaxlint.analysis.engine.walk import _AST, _FIELDS, children, node_fields, nodes_of_classes, walk

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]
FUNCTION_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)

_BUILTINS = frozenset(dir(builtins))
_MISSING = object()  # not yet asked: None is an answer
# The list methods that add items, and how many arguments each takes (what it adds last).
LIST_GROWERS = {"append": 1, "insert": 2, "extend": 1}

@dataclass(frozen=True)
class Spelling:
    """How a library's names are spelled: `canonical` gives the one spelling of a name that has
    several (aliases), `public` the public name of one reached through the private packages
    that `private` lists the prefixes of. The engine knows no library; `PLAIN` changes nothing."""

    canonical: Callable[[str], str]
    public: Callable[[str], str]
    private: tuple[str, ...]


def _same(name: str) -> str:
    return name


PLAIN = Spelling(_same, _same, ())


@dataclass
class Scope:
    """A module, class or function scope and the names bound in it."""

    node: ast.AST
    parent: "Scope | None"
    kind: str  # "module" | "class" | "function"
    imports: dict[str, str] = field(default_factory=dict)
    defs: dict[str, ast.AST] = field(default_factory=dict)  # def/class statements by name
    assigned: dict[str, list[ast.expr]] = field(default_factory=dict)
    params: set[str] = field(default_factory=set)
    other: set[str] = field(default_factory=set)  # bound in ways we do not follow
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)

    def binds(self, name: str) -> bool:
        return (
            name in self.imports
            or name in self.defs
            or name in self.assigned
            or name in self.params
            or name in self.other
        )


class Names:
    """The module's scopes and a qualified-name resolver over them."""

    def __init__(self, tree: ast.Module, package: str | None = None, spelling: Spelling = PLAIN):
        # The package a relative import is relative to ("" or None: the module is in none).
        self.package = package
        self._canonical, self._public, self._private = spelling.canonical, spelling.public, spelling.private
        self.module = Scope(tree, None, "module")
        self.scopes: dict[int, Scope] = {id(tree): self.module}
        self.read_scope: dict[int, Scope] = {}  # id(Name) -> scope it is read in
        self.functions: list[FunctionNode] = []
        self.classes: list[ast.ClassDef] = []
        self.calls: list[tuple[ast.Call, Scope]] = []
        self.parent_function: dict[int, FunctionNode | None] = {}
        self.parent_class: dict[int, ast.ClassDef] = {}  # id(method) -> class
        self.call_targets: dict[int, str] = {}  # id(call) -> name in `name = call(...)`
        # Every name and attribute name the module's expressions spell, and each part of each
        # module name its imports spell: the words a search of the code for a name can find,
        # comments and strings left out.
        self.words: set[str] = set()
        self._resolved: dict[tuple[int, int], str | None] = {}  # qualname's answers, asked again and again
        self._resolved_here: dict[int, str | None] = {}  # ... and those asked without a scope
        self._names: dict[tuple[str, int, int], str | None] = {}  # (name, id(scope), depth) -> what it names
        self._owners: dict[tuple[str, int], Scope | None] = {}  # lookup's answers
        # Expressions parsed from strings (annotations, shape symbols), kept alive with the
        # module: the caches above key nodes by id(), which a freed node would hand to another.
        self._parsed: dict[str, ast.expr | None] = {}
        self._dead: dict[int, frozenset[int]] = {}  # id(scope node) -> its nodes that never run
        # `from m import *`: (scope, m), whose names only a reader of `m` knows (`bind_star`).
        self.star_imports: list[tuple[Scope, str]] = []
        # What a qualified name of another module stands for where that module binds it once to
        # another name (`GridState: TypeAlias = jax.Array`): only a reader of that module knows,
        # so the project layer sets this; alone, a module knows no other.
        self.alias_of: Callable[[str], str | None] = _not_known
        # ... and the string (or bytes) it binds such a name to once (`MODE_PREFILL = "prefill"`).
        self.constant_of: Callable[[str], str | bytes | None] = _not_known
        self._build(tree)

    # ---- building ------------------------------------------------------------
    def _build(self, tree: ast.Module) -> None:
        # The hot loop of the whole analysis: one pass over every node, depth first. A nested
        # scope's body is pushed above a `_Leave` holding the scope around it, so the stack
        # holds bare nodes, and the common node types are tested first, by class.
        scope: Scope = self.module
        function: FunctionNode | None = None
        stack: list = list(reversed(tree.body))
        read_scope = self.read_scope
        calls = self.calls
        spelled = self.words.add
        fields_of = _FIELDS
        Name, Attribute, Constant, Call, Load = ast.Name, ast.Attribute, ast.Constant, ast.Call, ast.Load
        Subscript, BinOp, Compare, Tuple, Expr = ast.Subscript, ast.BinOp, ast.Compare, ast.Tuple, ast.Expr
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            node = pop()
            cls = node.__class__
            if cls is Name:
                spelled(node.id)
                if node.ctx.__class__ is Load:
                    read_scope[id(node)] = scope
                else:
                    _bind_other(scope, node.id)
                continue
            if cls is Attribute:
                spelled(node.attr)
                push(node.value)
                continue
            if cls is Constant:
                continue
            # The next most common nodes, their children pushed in field order as below.
            if cls is Call:
                calls.append((node, scope))
                push(node.func)
                extend(node.args)
                for keyword in node.keywords:  # a keyword node binds and reads nothing itself
                    push(keyword.value)
                continue
            if cls is Subscript or cls is BinOp:
                push(node.value if cls is Subscript else node.left)
                push(node.slice if cls is Subscript else node.right)
                continue
            if cls is Tuple:
                extend(node.elts)
                continue
            if cls is Compare:
                push(node.left)
                extend(node.comparators)
                continue
            if cls is Expr:
                push(node.value)
                continue
            special = _SPECIAL.get(cls)
            if special is not None:
                if special is _SKIP:
                    continue
                if special is _LEAVE:
                    scope, function = node.scope, node.function
                    continue
                entered = special(self, node, scope, function, stack)
                if entered is not None:
                    scope, function = entered
                continue
            fields = fields_of.get(cls)
            if fields is None:
                fields = node_fields(cls)
            for name in fields:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    extend(value)  # None keys of `{**d}` and the like are skipped when popped
                elif isinstance(value, _AST):
                    push(value)

    # Handlers of the node types that bind names or open scopes. They push what is evaluated in
    # the enclosing scope, then (for a new scope) a `_Leave` and the body, and return the scope
    # and function the body is read in.
    def _function(self, node: FunctionNode, scope: Scope, function, stack) -> tuple[Scope, FunctionNode]:
        self.functions.append(node)
        self.parent_function[id(node)] = function
        if not isinstance(node, ast.Lambda):
            self._type_parameters(node)
            scope.defs[node.name] = node
            stack.extend(node.decorator_list)
            if node.returns:
                stack.append(node.returns)
        inner = Scope(node, scope, "function")
        self.scopes[id(node)] = inner
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                inner.params.add(arg.arg)
                if arg.annotation is not None:
                    stack.append(arg.annotation)
        stack.extend(args.defaults)
        stack.extend(d for d in args.kw_defaults if d is not None)
        stack.append(_Leave(scope, function))
        if isinstance(node, ast.Lambda):
            stack.append(node.body)
        else:
            stack.extend(reversed(node.body))
        return inner, node

    def _class(self, node: ast.ClassDef, scope: Scope, function, stack) -> tuple[Scope, FunctionNode | None]:
        scope.defs[node.name] = node
        self._type_parameters(node)
        self.classes.append(node)
        inner = Scope(node, scope, "class")
        self.scopes[id(node)] = inner
        for sub in node.body:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.parent_class[id(sub)] = node
        stack.extend(node.decorator_list)
        stack.extend(node.bases)
        stack.extend(node.keywords)
        stack.append(_Leave(scope, function))
        stack.extend(reversed(node.body))
        return inner, function

    def _type_parameters(self, node: ast.AST) -> None:
        """The words of a def's or class's type parameters (Python 3.12), which name no binding here."""
        for parameter in getattr(node, "type_params", ()):
            for part in walk(parameter):
                if isinstance(part, ast.Name):
                    self.words.add(part.id)
                elif isinstance(part, ast.Attribute):
                    self.words.add(part.attr)

    def _import(self, node: ast.Import, scope: Scope, function, stack) -> None:
        for alias in node.names:
            self._imported_words(alias)
            if alias.asname:
                scope.imports[alias.asname] = self._canonical(alias.name)
            else:
                top = alias.name.split(".")[0]
                scope.imports[top] = top

    def _import_from(self, node: ast.ImportFrom, scope: Scope, function, stack) -> None:
        if node.module:
            self.words.update(node.module.split("."))
        for alias in node.names:
            self._imported_words(alias)
        base = self._imported_module(node)
        if base:
            for alias in node.names:
                if alias.name != "*":
                    scope.imports[alias.asname or alias.name] = self._canonical(f"{base}.{alias.name}")
                else:
                    self.star_imports.append((scope, base))
        else:
            for alias in node.names:
                _bind_other(scope, alias.asname or alias.name)

    def _imported_words(self, alias: ast.alias) -> None:
        if alias.name != "*":
            self.words.update(alias.name.split("."))
        if alias.asname:
            self.words.add(alias.asname)

    def _assign(self, node: ast.Assign, scope: Scope, function, stack) -> None:
        if isinstance(node.value, ast.Call) and len(node.targets) == 1:
            if isinstance(node.targets[0], ast.Name):
                self.call_targets[id(node.value)] = node.targets[0].id
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.words.add(target.id)
                scope.assigned.setdefault(target.id, []).append(node.value)
            else:
                stack.append(target)
        stack.append(node.value)

    def _global(self, node: ast.Global, scope: Scope, function, stack) -> None:
        scope.globals.update(node.names)

    def _nonlocal(self, node: ast.Nonlocal, scope: Scope, function, stack) -> None:
        scope.nonlocals.update(node.names)

    def _imported_module(self, node: ast.ImportFrom) -> str | None:
        """The absolute module a `from ... import` reads: relative ones only when the package is known."""
        if node.level == 0:
            return node.module
        if not self.package:
            return None
        parts = self.package.split(".")
        if node.level - 1 >= len(parts):
            return None
        base = ".".join(parts[: len(parts) - node.level + 1])
        return f"{base}.{node.module}" if node.module else base

    def bind_star(self, scope: Scope, bound: dict[str, str]) -> None:
        """Bind what a star import into `scope` brings in (name -> the qualified name it stands
        for), where the scope does not bind the name itself. Called before any query: answers
        are cached."""
        for name, qualname in bound.items():
            if not scope.binds(name):
                scope.imports[name] = qualname

    # ---- queries ---------------------------------------------------------------
    def scope_of(self, node: ast.AST) -> Scope:
        """The scope a function or class node opens."""
        return self.scopes[id(node)]

    def lookup(self, name: str, scope: Scope) -> Scope | None:
        """The scope whose binding of `name` is visible from `scope` (class scopes are skipped from inside)."""
        key = (name, id(scope))
        found = self._owners.get(key, _MISSING)
        if found is _MISSING:
            found = self._owners[key] = self._lookup(name, scope)
        return found

    def _lookup(self, name: str, scope: Scope) -> Scope | None:
        current: Scope | None = scope
        first = True
        while current is not None:
            if name in current.globals:
                current = self.module
            elif name in current.nonlocals:
                current = current.parent
                first = False
                continue
            if (first or current.kind != "class") and current.binds(name):
                return current
            first = False
            current = current.parent
        return None

    def parse_expression(self, text: str) -> ast.expr | None:
        """The expression a string holds (a string annotation, a shape symbol); None if it is not one."""
        expr = self._parsed.get(text, _MISSING)
        if expr is _MISSING:
            try:
                expr = ast.parse(text, mode="eval").body
            except SyntaxError:
                expr = None
            self._parsed[text] = expr
        return expr

    def qualname(self, expr: ast.AST, scope: Scope | None = None) -> str | None:
        """The dotted name an expression refers to, if it is an import, a builtin or an alias of one."""
        if scope is None:
            # Resolved in the scope its base name is read in, which the expression decides: the
            # answer is kept by the expression alone (most questions are asked again and again).
            name = self._resolved_here.get(id(expr), _MISSING)
            if name is _MISSING:
                base = expr
                while base.__class__ is ast.Attribute:
                    base = base.value
                if base.__class__ is ast.Name:
                    scope = self.read_scope.get(id(base), self.module)
                name = self._resolved_here[id(expr)] = self.qualname(expr, scope) if scope is not None else None
            return name
        key = (id(expr), id(scope))
        name = self._resolved.get(key, _MISSING)
        if name is _MISSING:
            name = self._qualname(expr, scope, 0)
            if name is not None and name.startswith(self._private):
                name = self._public(name)
            self._resolved[key] = name
        return name

    def _qualname(self, expr: ast.AST, scope: Scope | None, _depth: int) -> str | None:
        if _depth > 8:
            return None
        if isinstance(expr, ast.Attribute):
            base = self._qualname(expr.value, scope, _depth + 1)
            if base is None:
                return self._class_attribute(expr, scope, _depth)
            return self._canonical(f"{base}.{expr.attr}")
        if not isinstance(expr, ast.Name):
            return None
        if scope is None:
            scope = self.read_scope.get(id(expr), self.module)
        # A name's meaning depends only on the scope it is read in: resolved once per scope.
        key = (expr.id, id(scope), _depth)
        name = self._names.get(key, _MISSING)
        if name is _MISSING:
            name = self._names[key] = self._name_qualname(expr.id, scope, _depth)
        return name

    def _name_qualname(self, name: str, scope: Scope, _depth: int) -> str | None:
        owner = self.lookup(name, scope)
        if owner is None:
            return f"builtins.{name}" if name in _BUILTINS else None
        if name in owner.imports and not _rebound(owner, name):
            return owner.imports[name]
        values = owner.assigned.get(name)
        if values and len(values) == 1 and name not in owner.defs and name not in owner.params:
            value = values[0]
            if isinstance(value, (ast.Name, ast.Attribute)):
                return self._qualname(value, owner, _depth + 1)
            imported = _imported_by_call(value)
            if imported is not None and self._qualname(value.func, owner, _depth + 1) in _MODULE_IMPORTERS:
                return self._canonical(imported)  # `jax = pytest.importorskip("jax")` is the module
        return None

    def _class_attribute(self, expr: ast.Attribute, scope: Scope | None, _depth: int) -> str | None:
        """`ns.Module` where `class ns: Module = module.Module` gathers aliases in a class body."""
        cls = self.definition(expr.value, scope)
        if not isinstance(cls, ast.ClassDef):
            return None
        inner = self.scopes[id(cls)]
        values = inner.assigned.get(expr.attr)
        if not values or len(values) != 1 or not isinstance(values[0], (ast.Name, ast.Attribute)):
            return None
        return self._qualname(values[0], inner, _depth + 1)

    def definition(self, expr: ast.AST, scope: Scope | None = None) -> ast.AST | None:
        """The def or class statement a name refers to, when it is bound by exactly that."""
        if not isinstance(expr, ast.Name):
            return None
        if scope is None:
            scope = self.read_scope.get(id(expr), self.module)
        owner = self.lookup(expr.id, scope)
        if owner is None or expr.id not in owner.defs or owner.imports.get(expr.id):
            return None
        return owner.defs[expr.id]

    def rebinding(self, expr: ast.Name, scope: Scope | None = None) -> ast.expr | None:
        """For a def that is later rebound (`f = jax.jit(f)`), the last assignment before this use."""
        if scope is None:
            scope = self.read_scope.get(id(expr), self.module)
        owner = self.lookup(expr.id, scope)
        if owner is None or expr.id not in owner.defs:
            return None
        before = [v for v in owner.assigned.get(expr.id, ()) if v.lineno < expr.lineno]
        if not before or before[-1].lineno < owner.defs[expr.id].lineno:
            return None
        return before[-1]

    def assignments(self, expr: ast.Name, scope: Scope | None = None) -> list[ast.expr]:
        """The values assigned to a plain name in the scope that binds it."""
        if scope is None:
            scope = self.read_scope.get(id(expr), self.module)
        owner = self.lookup(expr.id, scope)
        return owner.assigned.get(expr.id, []) if owner else []

    def sequence_items(self, expr: ast.Name, scope: Scope | None = None) -> list[ast.expr] | None:
        """The items of the list or tuple a name is bound to once, written out (`branches = [f,
        g]`), with those an `append`, `insert` or `extend` of a written sequence adds to it in
        that scope or one nested in it (`branches.append(h)`, wherever it may run); None where
        the name is bound any other way or more than once."""
        if scope is None:
            scope = self.read_scope.get(id(expr), self.module)
        owner = self.lookup(expr.id, scope)
        if owner is None or expr.id in owner.other or expr.id in owner.params or expr.id in owner.defs:
            return None
        values = owner.assigned.get(expr.id, ())
        if len(values) != 1 or not isinstance(values[0], (ast.List, ast.Tuple)):
            return None
        items = list(values[0].elts)
        for call, where in self.calls:
            func = call.func
            if not (
                isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == expr.id
                and func.attr in LIST_GROWERS and self.lookup(expr.id, where) is owner
            ):
                continue
            if len(call.args) != LIST_GROWERS[func.attr] or call.keywords:
                return None
            added = call.args[-1]
            if func.attr != "extend":
                items.append(added)
            elif isinstance(added, (ast.List, ast.Tuple)):
                items.extend(added.elts)
            else:
                return None  # extended by what is not written here
        return None if any(isinstance(item, ast.Starred) for item in items) else items

    def closed_over(self, function: FunctionNode) -> tuple[str, ...]:
        """The names `function`'s body (nested functions included) reads from the functions
        around it, sorted."""
        around = set()
        scope = self.scopes[id(function)].parent
        while scope is not None:
            if scope.kind == "function":
                around.add(id(scope))
            scope = scope.parent
        if not around:
            return ()
        body = [function.body] if isinstance(function, ast.Lambda) else function.body
        found = set()
        for node in nodes_of_classes(body, _NAME, _NOTHING):
            if node.id not in found:
                read = self.read_scope.get(id(node))
                owner = None if read is None else self.lookup(node.id, read)
                if owner is not None and id(owner) in around:
                    found.add(node.id)
        return tuple(sorted(found))

    @cached_property
    def parents(self) -> dict[int, ast.AST]:
        """id(node) -> the node it sits in, for the whole module (built on first ask); the context
        and operator singletons, shared by many nodes, have no one parent to ask for."""
        return {id(child): node for node in walk(self.module.node) for child in children(node)}

    @cached_property
    def imported_or_assigned(self) -> frozenset[str]:
        """Every name some scope imports or assigns: a plain name can refer to an imported
        object only through these (any other one is a builtin, a def, a parameter or unknown)."""
        found: set[str] = set()
        for scope in self.scopes.values():
            found.update(scope.imports)
            found.update(scope.assigned)
        return frozenset(found)

    def unreached(self, node: ast.AST, scope: Scope) -> bool:
        """Whether `node`, read in `scope`, never runs: it, or a def or class around it, sits in a
        statement after a `return` or `raise` (`reachability.py`). Each scope is read on first ask."""
        while scope is not None:
            dead = self._dead.get(id(scope.node))
            if dead is None:
                dead = self._dead[id(scope.node)] = dead_nodes(scope.node)
            if id(node) in dead:
                return True
            node, scope = scope.node, scope.parent
        return False

    def enclosing_scope(self, function: FunctionNode) -> Scope:
        parent = self.scopes[id(function)].parent
        assert parent is not None
        return parent

    def iter_function_scopes(self) -> Iterator[Scope]:
        for function in self.functions:
            yield self.scopes[id(function)]


class _Leave:
    """On the building stack, below a scope's body: the scope and function around it, restored once the body is read."""

    __slots__ = ("scope", "function")

    def __init__(self, scope: Scope, function: FunctionNode | None):
        self.scope = scope
        self.function = function


_SKIP, _LEAVE = object(), object()
_NAME, _NOTHING = frozenset({ast.Name}), frozenset()
_SPECIAL = {
    ast.FunctionDef: Names._function,
    ast.AsyncFunctionDef: Names._function,
    ast.Lambda: Names._function,
    ast.ClassDef: Names._class,
    ast.Import: Names._import,
    ast.ImportFrom: Names._import_from,
    ast.Assign: Names._assign,
    ast.Global: Names._global,
    ast.Nonlocal: Names._nonlocal,
    _Leave: _LEAVE,
    type(None): _SKIP,
    str: _SKIP,
}


# Calls that import the module their first argument names and return it.
_MODULE_IMPORTERS = frozenset({"pytest.importorskip", "importlib.import_module"})


def _imported_by_call(value: ast.expr) -> str | None:
    """The module name a call passes as a literal first argument (`importorskip("jax")`), if any."""
    if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Constant):
        name = value.args[0].value
        return name if isinstance(name, str) and all(p.isidentifier() for p in name.split(".")) else None
    return None


def _bind_other(scope: Scope, name: str) -> None:
    if name not in scope.imports and name not in scope.defs and name not in scope.assigned:
        scope.other.add(name)


def _rebound(scope: Scope, name: str) -> bool:
    """An imported name that the same scope also assigns or defines is no longer the import."""
    return name in scope.assigned or name in scope.defs


def annotation_name(annotation: ast.expr | None, names: Names) -> tuple[ast.expr | None, str | None]:
    """An annotation (string annotations parsed) and the qualified name of its base (`Float` of
    `Float[...]`), a project's alias of a type followed to that type (`type_name`)."""
    if annotation is None:
        return None, None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = names.parse_expression(annotation.value)
        if annotation is None:
            return None, None
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return annotation, type_name(target, names)


def type_name(expr: ast.AST, names: Names, scope: Scope | None = None) -> str | None:
    """The qualified name a type expression stands for: through the aliases other modules of the
    project bind (`from .types import GridState`, where `types` binds `GridState = jax.Array`,
    is `jax.Array`)."""
    name = names.qualname(expr, scope)
    for _ in range(_ALIAS_HOPS):
        alias = names.alias_of(name) if name is not None else None
        if alias is None or alias == name or alias in _SAYS_NOTHING:
            break  # `Array = Any` says nothing of the type: the name the project gave it still does
        name = alias
    return name


_ALIAS_HOPS = 4
_SAYS_NOTHING = frozenset({"typing.Any", "typing_extensions.Any", "builtins.object"})


def _not_known(qualname: str) -> None:
    return None


def function_in(scope: Scope | None) -> FunctionNode | None:
    """The function whose body runs code read in `scope` (a class body runs in the function around it)."""
    while scope is not None and scope.kind == "class":
        scope = scope.parent
    node = scope.node if scope is not None else None
    return node if isinstance(node, FUNCTION_TYPES) else None
