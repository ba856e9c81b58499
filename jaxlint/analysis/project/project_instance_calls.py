"""Parameters of a framework module's `__call__` (and of any module-level function, for the
summaries `Project.summary` gives) that every call the project makes passes a value that is not
traced, wherever the calls are. Each is read once per run.

`instance_calls` reads the calls a module makes of its own classes. A layer is often built in one
module and called in another: a Flax model's network module makes `rel = layers.Bias(...)`, hands
it to a block as a field (`Block(bias=rel)`), and the block calls `self.bias(x.shape[-2], ...)`; a
test calls `self.layer.init(key, self.length, ...)`. Here every module of the project whose text
names the class is read (the linted one included), and the instances followed: made and called at
once, bound to a name, stored on `self` in any method, or handed as a keyword to a constructor of a
class of that module, whose methods then call it as `self.<field>`. Calls are `m(...)`,
`m.init(rngs, ...)`, `m.init_with_output(rngs, ...)` and `m.apply(variables, ...)` without
`method=`. Each argument is a Python value (`instance_calls._python_value`; an attribute of `self`
that the class's methods only ever set to one, as a test's `setUp` does), or a value the analysis
never takes for traced: a parameter with a literal default of the calling function (a framework
module's keyword option), or a conditional choosing between such values. A parameter every call
passes a Python value is static; one that some call passes a parameter with a default is
unknown; one that any call passes anything else, or a class with no call in view, or an instance
or the class handed to other code, leaves it as it was (the first said apart from the others: a
parameter the module uses as a dimension is traced only where a call passes it such a value).
"""

from __future__ import annotations

import ast
import os
import re
from itertools import chain
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Protocol, Tuple
from weakref import WeakKeyDictionary

from jaxlint.analysis.engine.names import Names, Scope
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.tracing.array_annotations import python_annotation
from jaxlint.analysis.tracing.instance_calls import _python_value
from jaxlint.analysis.tracing.static_arguments import positional_params
from jaxlint.analysis.tracing.tracing import first_param
from jaxlint.analysis.knowledge.decorators import plain


class _Module(Protocol):
    """What is read of a module (a `traced_module.TracedModule`): its tree, names, file and link."""

    tree: ast.Module
    names: Names
    path: Optional[str]
    project: Any  # its `ModuleLink`, None outside a project


PYTHON, QUIET, UNDECIDED = "python", "quiet", "undecided"
_DEPTH = 8  # how deep an argument's expression (names followed) is read
_MAX_FILES = 5000  # a project larger than this is not searched
_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages"})
# Entry points of a Flax module running `__call__` with the arguments after their first.
_RUNNERS = frozenset({"init", "init_with_output", "apply"})
_RUNNER_KEYWORDS = frozenset({"variables", "rngs", "method", "mutable", "capture_intermediates"})
# Methods a Flax module inherits that read or make its state and never run its `__call__`.
_FRAMEWORK_METHODS = frozenset({
    "param", "variable", "make_rng", "sow", "put_variable", "get_variable", "has_variable", "has_rng",
    "is_mutable_collection", "is_initializing", "perturb",
})

# One call of `__call__`: positional arguments, keywords, the scope they are read in.
_Passed = Tuple[List[ast.expr], List[ast.keyword], Scope]


class _Escaped(Exception):
    """An instance or the class reaches code whose calls of it are out of view."""


def untraced_parameters(
    facts: _Module, cls: ast.ClassDef, method: ast.FunctionDef, asked: FrozenSet[str], asker: Any = None
) -> Dict[str, Optional[bool]]:
    """The parameters of `cls.__call__` (`method`) among `asked` that every call of the class's
    instances in the project passes a value that is not traced: True where every call passes a
    Python value, False where some pass a value never taken for traced, None where some pass a
    value that may be traced. None of them where no call is in view (or an instance is handed to
    code out of view). The search stops at the first call that decides all of them. The modules
    read are dependencies of `asker` (a `ModuleLink`; default: that of `facts`)."""
    return _decided(
        facts, cls.name, method, positional_params(method)[1:], asked, lambda other: _Calls(other, facts, cls), asker
    )


def untraced_arguments(
    facts: _Module, function: ast.FunctionDef, asked: FrozenSet[str], asker: Any = None
) -> Dict[str, Optional[bool]]:
    """The same of a module-level function of the module `facts`, from every call of it in the
    project: called by its name (or through its module, `helpers.clip(...)`), and not handed
    to other code (a transformation, `functools.partial`), which calls it out of view."""
    return _decided(
        facts, function.name, function, positional_params(function), asked,
        lambda other: _FunctionCalls(other, facts, function), asker,
    )


def _decided(
    facts: _Module, name: str, method: ast.FunctionDef, positional_params_: List[ast.arg], asked: FrozenSet[str],
    calls_in: Callable[[_Module], "_Calls"], asker: Any,
) -> Dict[str, Optional[bool]]:
    """What every call of the function (or instance) named `name` passes, read once per run (the
    modules it was read from are recorded as the asker's dependencies each time)."""
    link = facts.project
    if link is None:
        return {}
    home = os.path.abspath(facts.path) if facts.path else None
    memo = _DECIDED.setdefault(link.project, {})
    key = (home, method.lineno, method.col_offset, name, asked)
    if key not in memo:
        deps: set = set()
        memo[key] = (_read_calls(facts, name, method, positional_params_, asked, calls_in, home, deps), frozenset(deps))
    verdicts, deps = memo[key]
    (asker or link).deps.update(deps)  # a result computed from those modules: re-linted when one changes
    return dict(verdicts)


# Per run (`Project`): (module, function, name, parameters asked) -> what every call passes, and
# the modules read to find out.
_DECIDED: "WeakKeyDictionary[object, Dict[tuple, Tuple[Dict[str, Optional[bool]], FrozenSet[str]]]]" = WeakKeyDictionary()


def _read_calls(
    facts: _Module, name: str, method: ast.FunctionDef, positional_params_: List[ast.arg], asked: FrozenSet[str],
    calls_in: Callable[[_Module], "_Calls"], home: Optional[str], deps: set,
) -> Dict[str, Optional[bool]]:
    link = facts.project
    positional = [p.arg for p in positional_params_]
    verdicts: Dict[str, Optional[str]] = {
        p: PYTHON for p in (*positional, *(a.arg for a in method.args.kwonlyargs)) if p in asked
    }
    others = [p for p in _files_naming(link, name) if os.path.abspath(p) != home]
    required = _required(method, positional)
    seen = False
    with link.project.search():  # the modules it reads are released after it
        try:
            for other in chain((facts,), (link.project.scanned(p) for p in others)):  # its own first, as linted
                if other is None:
                    continue
                if other is not facts:
                    deps.add(other.path)
                for args, keywords, scope in calls_in(other).calls():
                    if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in keywords):
                        return {}
                    passed = dict(zip(positional, args))
                    passed.update((k.arg, k.value) for k in keywords if k.arg is not None)
                    if not required <= passed.keys():
                        continue  # a call that leaves a parameter unbound runs another `__call__`
                    seen = True
                    for param, verdict in verdicts.items():
                        value = _untraced(passed[param], other.names, scope, _DEPTH) if param in passed else None
                        verdicts[param] = _weakest([verdict, value])
                    if all(verdict is None for verdict in verdicts.values()):
                        return dict(verdicts)
        except _Escaped:
            return {}
        if not seen:
            return {}
        return {
            param: None if verdict is None else verdict == PYTHON
            for param, verdict in verdicts.items() if verdict != UNDECIDED
        }


def _files_naming(link, name: str) -> List[str]:
    """The project's Python files whose text names `name` (the project: the folder the module's
    top-level package sits in and the project root above it), in the order a walk finds them."""
    index = _INDEXES.get(link.project)
    if index is None:
        index = _INDEXES[link.project] = _WordIndex()
    return index.naming(link.roots, name)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _WordIndex:
    """The files naming each identifier, each file read once per run: the projects of modules in
    different top-level folders share their project root's files (a repository's every module)."""

    def __init__(self) -> None:
        self.walked: Dict[Tuple[str, ...], Dict[str, int]] = {}  # roots -> their files, by walk position
        self.files: Dict[str, List[str]] = {}  # identifier -> the files read that name it
        self.read: set = set()

    def naming(self, roots: Tuple[str, ...], name: str) -> List[str]:
        found = self.walked.get(roots)
        if found is None:
            found = self.walked[roots] = {path: i for i, path in enumerate(_project_files(roots))}
            for path in found.keys() - self.read:
                self.read.add(path)
                text = _text(path)
                for word in set(_WORD.findall(text)) if text is not None else ():
                    self.files.setdefault(word, []).append(path)
        return sorted((path for path in self.files.get(name, ()) if path in found), key=found.__getitem__)


# Per run (`Project`): the word index of the files read.
_INDEXES: "WeakKeyDictionary[object, _WordIndex]" = WeakKeyDictionary()


def _project_files(roots: Tuple[str, ...]) -> List[str]:
    seen: Dict[str, None] = {}
    for root in roots:
        for directory, folders, names in os.walk(root):
            folders[:] = [
                f for f in folders
                if not f.startswith(".") and f not in _SKIPPED_FOLDERS
                and not os.path.exists(os.path.join(directory, f, "pyvenv.cfg"))
            ]
            seen.update((os.path.join(directory, n), None) for n in names if n.endswith(".py"))
            if len(seen) > _MAX_FILES:
                return []
    return list(seen)


def _text(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


_REFERENCES: "WeakKeyDictionary[Names, Dict[str, List[ast.expr]]]" = WeakKeyDictionary()


def _references(names: Names, tree: ast.AST) -> Dict[str, List[ast.expr]]:
    """The names read and the attributes of a module, by identifier (once)."""
    found = _REFERENCES.get(names)
    if found is None:
        found = _REFERENCES[names] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                found.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.Attribute):
                found.setdefault(node.attr, []).append(node)
    return found


class _Calls:
    """The calls one module makes of the instances of a class (of its own module or another)."""

    def __init__(self, facts: _Module, home: _Module, cls: ast.ClassDef):
        self.facts, self.names, self.home, self.cls = facts, facts.names, home, cls
        self.parents = facts.names.parents
        self.found: List[_Passed] = []
        self.followed: set = set()

    def calls(self) -> List[_Passed]:
        for ref in _references(self.names, self.facts.tree).get(self.cls.name, ()):
            if not self._is_target(ref):
                continue
            parent = self.parents.get(id(ref))
            if isinstance(parent, ast.Attribute):
                continue  # `layers.Bias` inside `layers.Bias.attr`: read where the attribute is
            if self._in_annotation(ref):
                continue  # `positions: Optional[Bias]`: a type, no instance made or handed on
            if not (isinstance(parent, ast.Call) and parent.func is ref):
                raise _Escaped  # the class (the function) itself handed on, called out of view
            self._called(parent)
        return self.found

    def _called(self, call: ast.Call) -> None:
        """The class called: an instance made, followed where it goes."""
        self._instance(call)

    def _is_target(self, ref: ast.expr) -> bool:
        """Whether `ref` names the class (the function) whose calls are read."""
        if self.facts is self.home and isinstance(ref, ast.Name):
            return self.names.definition(ref) is self.cls
        qualname = self.names.qualname(ref)
        link = self.facts.project
        if qualname is None or link is None:
            return False
        located = link.project.definition(link, qualname)
        return (
            located is not None and type(located[1]) is type(self.cls)
            and located[1].name == self.cls.name and located[1].lineno == self.cls.lineno
            and os.path.abspath(located[0].path or "") == os.path.abspath(self.home.path or "")
        )

    def _in_annotation(self, node: ast.AST) -> bool:
        """Whether `node` is part of an annotation (of a field, a variable or a parameter, or a return type)."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None and not isinstance(parent, ast.stmt):
            if isinstance(parent, ast.arg):
                return parent.annotation is child
            child, parent = parent, self.parents.get(id(parent))
        if isinstance(parent, ast.AnnAssign):
            return parent.annotation is child
        return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is child

    # -- where an instance goes ------------------------------------------------------------------
    def _instance(self, made: ast.expr) -> None:
        """Follow an expression that is an instance of the class."""
        parent = self.parents.get(id(made))
        if isinstance(parent, ast.Call) and parent.func is made:
            self.found.append((parent.args, parent.keywords, self._scope(parent)))
            return
        if isinstance(parent, ast.Attribute) and parent.attr in _RUNNERS:
            self._runner(parent)
            return
        if isinstance(parent, ast.Attribute) and self._other_method_call(parent):
            return  # `self.pe_layer.forward_with_coords(...)`: no call of `__call__`
        if _only_tested(made, parent):
            return  # `if self.rpe is not None:`: the instance's identity or truth, no call
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.value is made:
            self._bound(parent.targets[0], parent)
            return
        if isinstance(parent, ast.keyword) and parent.arg is not None:
            call = self.parents.get(id(parent))
            owner = self.names.definition(call.func) if isinstance(call, ast.Call) else None
            if isinstance(owner, ast.ClassDef):
                self._field_uses(owner, parent.arg)
                return
        raise _Escaped

    def _other_method_call(self, attribute: ast.Attribute) -> bool:
        """`instance.method(...)` of a plain method the class defines that never reaches
        `__call__`: its body reads `self` only as `self.<name>`, and no method it calls so does
        otherwise (a bare `self` may be called or handed on)."""
        call = self.parents.get(id(attribute))
        if not (isinstance(call, ast.Call) and call.func is attribute):
            return False
        return _keeps_off_call(self.cls, attribute.attr, self.home.names, set())

    def _runner(self, attribute: ast.Attribute) -> None:
        call = self.parents.get(id(attribute))
        if not (isinstance(call, ast.Call) and call.func is attribute):
            raise _Escaped
        if any(k.arg is None or k.arg == "method" for k in call.keywords):
            raise _Escaped  # another method, or keywords that may name one
        first = "variables" if attribute.attr == "apply" else "rngs"
        skip = 0 if any(k.arg == first for k in call.keywords) else 1
        keywords = [k for k in call.keywords if k.arg not in _RUNNER_KEYWORDS]
        self.found.append((call.args[skip:], keywords, self._scope(call)))

    def _bound(self, target: ast.expr, statement: ast.Assign) -> None:
        scope = self._scope(statement)
        if isinstance(target, ast.Name):
            self._name_uses(target.id, scope)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            cls = self._method_class(target.value.id, scope)
            if cls is None:
                raise _Escaped
            self._field_uses(cls, target.attr)
        else:
            raise _Escaped

    def _name_uses(self, name: str, scope: Scope) -> None:
        key = ("name", name, id(scope.node))
        if key in self.followed:
            return
        self.followed.add(key)
        owner = self.names.lookup(name, scope)
        if owner is None or owner.kind == "class":
            raise _Escaped
        for node in ast.walk(owner.node):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                if self.names.lookup(name, self._scope(node)) is owner:
                    self._instance(node)

    def _field_uses(self, cls: ast.ClassDef, attr: str) -> None:
        """Uses of `self.<attr>` in the methods of `cls`."""
        key = ("field", id(cls), attr)
        if key in self.followed:
            return
        self.followed.add(key)
        for method in cls.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            owner = first_param(method)
            for node in ast.walk(method):
                if (
                    isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, ast.Load)
                    and isinstance(node.value, ast.Name) and node.value.id == owner
                ):
                    self._instance(node)

    # -- scopes -----------------------------------------------------------------------------------
    def _scope(self, node: ast.AST) -> Scope:
        current = self.parents.get(id(node))
        while current is not None:
            scope = self.names.scopes.get(id(current))
            if scope is not None and scope.kind != "class":
                return scope
            current = self.parents.get(id(current))
        return self.names.module

    def _method_class(self, name: str, scope: Scope) -> Optional[ast.ClassDef]:
        """The class whose method's `self` (its first parameter) `name` is, read in `scope`."""
        owner = self.names.lookup(name, scope)
        if owner is None or owner.kind != "function" or first_param(owner.node) != name:
            return None
        return self.names.parent_class.get(id(owner.node))


class _FunctionCalls(_Calls):
    """The calls one module makes of a module-level function (of its own module or another)."""

    def __init__(self, facts: _Module, home: _Module, function: ast.FunctionDef):
        super().__init__(facts, home, function)  # type: ignore[arg-type]

    def _called(self, call: ast.Call) -> None:
        self.found.append((call.args, call.keywords, self._scope(call)))


def _only_tested(made: ast.expr, parent: Optional[ast.AST]) -> bool:
    """Whether an expression's value is only compared by identity (`x is None`) or taken the truth
    of (`if x:`, `not x`): neither calls the instance nor hands it on."""
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops)
    if isinstance(parent, (ast.If, ast.While, ast.IfExp)):
        return parent.test is made
    return isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)


# -- what a call passes ---------------------------------------------------------------------------
def _keeps_off_call(cls: ast.ClassDef, name: str, names: Names, seen: set) -> bool:
    """Whether the class's own plain method `name` never runs `__call__` on its instance."""
    if name == "__call__" or name in seen:
        return name != "__call__"
    if name in _FRAMEWORK_METHODS:
        return True
    seen.add(name)
    method = names.scopes[id(cls)].defs.get(name) if id(cls) in names.scopes else None
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not plain(method, names):
        return False
    self_name = first_param(method)
    parents = names.parents
    for node in ast.walk(method):
        if isinstance(node, ast.Name) and node.id == self_name and isinstance(node.ctx, ast.Load):
            parent = parents.get(id(node))
            if not isinstance(parent, ast.Attribute):
                return False  # `self` called or handed on
            caller = parents.get(id(parent))
            if isinstance(caller, ast.Call) and caller.func is parent and not _keeps_off_call(cls, parent.attr, names, seen):
                return False
    return True


def _untraced(expr: ast.expr, names: Names, scope: Scope, depth: int) -> Optional[str]:
    """PYTHON for a Python value, QUIET for a value the analysis never takes for traced,
    UNDECIDED for a parameter of a plain function (whose callers say what it holds), else None."""
    if depth <= 0:
        return None
    if isinstance(expr, ast.IfExp):
        return _weakest([_untraced(side, names, scope, depth - 1) for side in (expr.body, expr.orelse)])
    if isinstance(expr, ast.Name):
        owner = names.lookup(expr.id, scope)
        if owner is not None and expr.id in owner.params:
            if _literal_default(owner.node, expr.id):
                return QUIET
            return UNDECIDED if _plain_function(owner.node, names) else None
        if owner is not None and expr.id not in owner.other and owner.assigned.get(expr.id):
            return _weakest([_untraced(v, names, owner, depth - 1) for v in owner.assigned[expr.id]])
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        stored = _self_attribute_values(expr, names, scope)
        if stored:
            return _weakest([_untraced(v, names, s, depth - 1) for v, s in stored])
        if _python_field(expr, names, scope):
            return PYTHON
    return PYTHON if _python_value(expr, names, scope, depth, {}) else None


def _weakest(verdicts: List[Optional[str]]) -> Optional[str]:
    """What several values together are: the least a caller may rely on of them."""
    for verdict in (None, UNDECIDED, QUIET):
        if verdict in verdicts:
            return verdict
    return PYTHON


def _plain_function(function: ast.AST, names: Names) -> bool:
    """A def with no decorator that is no method: nothing traces its parameters but what its own
    callers pass (`def noisy_net(x, features): return Noisy(...)(x, features)`)."""
    return (
        isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and not function.decorator_list
        and id(function) not in names.parent_class
    )


def _required(function: ast.FunctionDef, positional: List[str]) -> set:
    """The parameters among `positional` (and the keyword-only ones) that have no default."""
    a = function.args
    count = len([*a.posonlyargs, *a.args]) - len(a.defaults)
    without = {p.arg for p in [*a.posonlyargs, *a.args][:count]} & set(positional)
    return without | {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None}


def _literal_default(function: ast.AST, name: str) -> bool:
    """Whether `name` is a parameter of `function` with a literal default (`max_length=None`)."""
    args = getattr(function, "args", None)
    if not isinstance(args, ast.arguments):
        return False
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    default = defaults.get(name)
    return isinstance(default, ast.Constant)


def _self_attribute_values(expr: ast.Attribute, names: Names, scope: Scope) -> List[Tuple[ast.expr, Scope]]:
    """What the methods of a class store in `self.<attr>` (`self.length = 5` in `setUp`), for
    `self.<attr>` read in one of them; empty when it is not such a read, or a store is not a plain one."""
    owner = names.lookup(expr.value.id, scope)  # type: ignore[union-attr]
    if owner is None or owner.kind != "function" or first_param(owner.node) != expr.value.id:  # type: ignore[union-attr]
        return []
    cls = names.parent_class.get(id(owner.node))
    if cls is None:
        return []
    table = _STORED.setdefault(names, {})
    key = (id(cls), expr.attr)
    if key not in table:
        table[key] = _stored_in_methods(cls, expr.attr, names)
    return table[key]


def _python_field(expr: ast.Attribute, names: Names, scope: Scope) -> bool:
    """`self.<attr>` read in a method of a framework module (whose fields are its configuration)
    that declares the field a Python number, string or bool, or a tuple of those
    (`image_embedding_size: Tuple[int, int] = (64, 64)`), and whose methods never store into it."""
    owner = names.lookup(expr.value.id, scope)  # type: ignore[union-attr]
    if owner is None or owner.kind != "function" or first_param(owner.node) != expr.value.id:  # type: ignore[union-attr]
        return False
    cls = names.parent_class.get(id(owner.node))
    if cls is None:
        return False
    outer = names.enclosing_scope(cls)
    if not any(names.qualname(base, outer) in jax_api.MODULE_BASES for base in cls.bases):
        return False
    declared = any(
        isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == expr.attr
        and python_annotation(stmt.annotation, names, outer)
        for stmt in cls.body
    )
    return declared and not any(
        isinstance(node, ast.Attribute) and node.attr == expr.attr and isinstance(node.ctx, ast.Store)
        for node in ast.walk(cls)
    )


# Per module: (id(class), attribute) -> what the class's methods store in `self.<attribute>`.
_STORED: "WeakKeyDictionary[Names, Dict[Tuple[int, str], List[Tuple[ast.expr, Scope]]]]" = WeakKeyDictionary()


def _stored_in_methods(cls: ast.ClassDef, attr: str, names: Names) -> List[Tuple[ast.expr, Scope]]:
    stored: List[Tuple[ast.expr, Scope]] = []
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        self_name = first_param(method)
        for node in ast.walk(method):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == attr and isinstance(target.value, ast.Name) and target.value.id == self_name:
                    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                        return []
                    stored.append((node.value, names.scopes[id(method)]))
    return stored
