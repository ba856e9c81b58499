"""Which expressions are known JAX arrays, in eager code as well as traced code.

The value analysis covers traced code only.  Item assignment on a JAX array fails in eager
code too, so this module answers "is this a JAX array?" from what the code shows: a
`jax.numpy`/`jax.random`/`jax.nn` result, the result of a `jax.lax` operation that returns
one array, a Flax activation or a Flax layer applied to an input, an `.at[...]` update,
arithmetic, indexing or array methods on such a value, a call of a plain function of the
module, or of another module of the project (that module's facts answer), that returns one,
and an attribute `self.data` that every store in the module sets to such a value.  A name of
the function (or module) that reads it is an array where the dataflow domain of
`array_flow.py` says so at that point; a name read from an enclosing scope, when every
binding of it there is one.  Anything else (a parameter
without an array annotation, a loop target over unknown items, a call into unknown code, a
name that may hold a NumPy array, a branch where an `isinstance` test shows it is not a JAX
array, an instance of a class of the project) is not known, and rules stay quiet about it.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Tuple

from jaxlint.analysis.arrays.array_flow import (
    ARRAY,
    ITEMS,
    JAX,
    NUMPY,
    SOME_PATHS,
    UNKNOWN,
    VIEW,
    Arrays,
    parallel,
    possible_arrays,
    scope_bindings,
    solve_scope,
)
from jaxlint.analysis.effects.at_text import AT_CALL, mentions_at, names_before_at
from jaxlint.analysis.engine.arguments import named_parameter
from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.conditions import single_value
from jaxlint.analysis.engine.names import FUNCTION_TYPES, Names, Scope, type_name
from jaxlint.analysis.engine.walk import children, contains, own_statements, target_names
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.analysis.tracing.array_annotations import ALIAS_DEPTH, SEQUENCE_TYPES, aliased
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.tracing.tracing import first_param

if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule

_Local = Tuple[Scope, Arrays]  # a scope and its names known to be arrays at one point
_MAX_DEPTH = 6
# Array methods that Python's containers have too: no evidence that the receiver is an array.
_CONTAINER_METHODS = frozenset({"copy", "sort"})
# Packages a call into which is never a class of the project.
_NOT_THE_PROJECT = frozenset({*jax_api.MODELLED_PACKAGES, "numpy", "builtins"})
# Expressions `_array` may find to be an array, depending on what they read.
_MAYBE_ARRAY_SYNTAX = frozenset({ast.Name, ast.BinOp, ast.Subscript, ast.IfExp, ast.Attribute})


class ArrayFacts:
    """Answers `is_array(expr)`: a JAX array for certain, traced or not."""

    def __init__(self, module: TracedModule, effects: Effects):
        self.module = module
        self.effects = effects  # where names and attributes are stored
        self.names: Names = module.names
        self._bindings: dict[int, dict[str, list[object]]] = {}
        self._names: dict[tuple[int, str], bool] = {}
        self._attributes: dict[tuple[int, str], bool] = {}
        self._returns: dict[int, bool] = {}
        self._global_names: set[str] | None = None
        self._flows: dict[int, dict[int, Arrays] | None] = {}
        self._candidates: dict[int, frozenset[str] | None] = {}
        self._possible: dict[int, tuple[frozenset[str], frozenset[int]] | None] = {}
        self._graphs: dict[int, cfg.Graph] = {}

    # ---- public -----------------------------------------------------------------------
    @cached_property
    def at_updates_in_text(self) -> bool:
        """Whether `.at[` appears in the module's text at all (most modules: no)."""
        return mentions_at(self.module.source.text)

    @cached_property
    def at_calls_in_text(self) -> bool:
        """Whether `.at[` appears in the text with any gap between its tokens (comments and line
        continuations too): without one, no step of the array domain shows a name to be an array."""
        return AT_CALL.search(self.module.source.text) is not None

    def is_array(self, expr: ast.AST, scope: Scope | None = None) -> bool:
        value = self.module.value(expr)
        if value is not None and value.ref:
            return False  # a Pallas reference: a kernel writes its results through it
        if scope is None:
            scope = self._scope_of(expr)
        return self._array(expr, scope, 0)

    def array_in(self, expr: ast.AST, scope: Scope, arrays: Arrays) -> bool:
        """`is_array`, with `arrays` the names of `scope` known to be arrays at this point."""
        return self._array(expr, scope, 0, (scope, arrays))

    def jax_on_some_path(self, expr: ast.AST) -> bool:
        """A name that some path reaching its read binds to a JAX array and another does not
        (`array_flow.SOME_PATHS`), read in its own scope."""
        if not isinstance(expr, ast.Name):
            return False
        owner = self.names.lookup(expr.id, self._scope_of(expr))
        if owner is None or expr.id in self._declared_global_or_nonlocal():
            return False
        candidates = self._may_hold_arrays(owner)
        if candidates is not None and expr.id not in candidates:
            return False
        if self.names.read_scope.get(id(expr)) is owner:
            possible = self._possible_arrays(owner)
            if possible is not None and expr.id not in possible[0] and id(expr) not in possible[1]:
                return False  # no state of the solve holds it as a JAX array: nor on some paths
        at = self._state_at(expr, owner)
        return at is not None and (expr.id, SOME_PATHS) in at

    def numpy_array(self, expr: ast.AST) -> bool:
        """A new NumPy array, made in place (`np.arange(n)`) or held by a name
        (`table = np.array([...])`): a host array."""
        if isinstance(expr, ast.Call):
            return self._numpy_array(expr, self._scope_of(expr))
        return self._holds(expr, NUMPY, self._numpy_array, array_api.NUMPY_ARRAY_CONSTRUCTORS)

    def read_only_view(self, expr: ast.AST) -> bool:
        """A name holding `np.asarray(<JAX array>)`: a read-only NumPy view of JAX's buffer."""
        if not self._views_in_text:
            return False
        return self._holds(expr, VIEW, self._view, array_api.NUMPY_VIEWS)

    @cached_property
    def _views_in_text(self) -> bool:
        """Whether the text names a function that makes a view (`asarray`, `asanyarray`): every
        way to call one (`np.asarray`, an import of it, an alias) spells its name."""
        text = self.module.source.text
        return any(name.rsplit(".", 1)[-1] in text for name in array_api.NUMPY_VIEWS)

    def may_show_at(self, name: str) -> bool:
        """Whether some `name.at[...]` call may show `name` to be a JAX array (the text decides)."""
        if not self.at_calls_in_text:
            return False
        shown = self._at_updated_names
        return shown is None or name in shown

    def class_instance(self, value: ast.AST, scope: Scope) -> bool:
        """`value` calls a class of this module or of the project: it makes an instance of that
        class, not a JAX array, whatever `.at` the class offers. A class of another library is
        not seen (the call is opaque)."""
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(self.names.definition(func, scope), ast.ClassDef):
            return True
        link = self.module.project
        name = self.names.qualname(func, scope)
        if link is None or name is None or name.split(".", 1)[0] in _NOT_THE_PROJECT:
            return False
        return link.defines_class(name)

    def unpacks_to_arrays(self, value: ast.AST, scope: Scope, arrays: Arrays) -> bool:
        """Unpacking `value` gives JAX arrays: it is one (its rows are), or a call that returns a
        sequence of them (`jnp.split(x, 2)`, `jnp.linalg.qr(a)`)."""
        if isinstance(value, ast.Call) and self.names.qualname(value.func, scope) in array_api.SEQUENCE_OF_ARRAYS:
            return True
        return self._array(value, scope, 0, (scope, arrays))

    def kinds_in(self, value: ast.AST, scope: Scope, arrays: Arrays) -> tuple[str, ...]:
        """The kinds of array `value` is (`JAX`; `NUMPY`, perhaps also `VIEW`), with `arrays`
        the (name, kind) pairs of `scope` true at this point."""
        local = (scope, arrays)
        if self._array(value, scope, 0, local):
            return (JAX,)
        if self._numpy_array(value, scope):
            return (NUMPY, VIEW) if self._view(value, scope, local) else (NUMPY,)
        items = _items_of(value)
        if items and all(self._array(item, scope, 1, local) for item in items):
            return (ITEMS,)
        return ()

    def _numpy_array(self, value: ast.AST, scope: Scope) -> bool:
        return isinstance(value, ast.Call) and self.names.qualname(value.func, scope) in array_api.NUMPY_ARRAY_CONSTRUCTORS

    def _view(self, value: ast.AST, scope: Scope, local: _Local | None = None) -> bool:
        return (
            isinstance(value, ast.Call)
            and self.names.qualname(value.func, scope) in array_api.NUMPY_VIEWS
            and len(value.args) == 1
            and not value.keywords
            and self._array(value.args[0], scope, 1, local)
        )

    def _holds(self, expr: ast.AST, kind: str, accepts: Callable[[ast.AST, Scope], bool], makers: frozenset) -> bool:
        """`expr` is a name that holds an array of this kind where it is read (in its own scope),
        or that every binding in its scope gives one (read from a nested function). Only a call
        of one of `makers` gives one: a name never bound to such a call is answered at once."""
        if not isinstance(expr, ast.Name):
            return False
        owner = self.names.lookup(expr.id, self._scope_of(expr))
        if owner is None or expr.id in self._declared_global_or_nonlocal():
            return False
        if not any(
            isinstance(b, ast.Call) and self.names.qualname(b.func, owner) in makers
            for b in self._scope_bindings(owner).get(expr.id, ())
        ):
            return False
        at = self._state_at(expr, owner)
        if at is not None:
            return (expr.id, kind) in at
        return self._bound_only_to(expr, owner, accepts)

    def _bound_only_to(self, expr: ast.Name, owner: Scope, accepts: Callable[[ast.AST, Scope], bool]) -> bool:
        """Every value bound to the name in its scope `accepts`."""
        bindings = self._scope_bindings(owner).get(expr.id, [])
        return bool(bindings) and all(b is not UNKNOWN and b is not ARRAY and accepts(b, owner) for b in bindings)

    # ---- expressions --------------------------------------------------------------------
    def _scope_of(self, expr: ast.AST) -> Scope:
        node = expr
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            node = node.func if isinstance(node, ast.Call) else node.value
        if isinstance(node, ast.Name):
            return self.names.read_scope.get(id(node), self.names.module)
        return self.names.module

    def _array(self, expr: ast.AST, scope: Scope, depth: int, local: _Local | None = None) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            return self._name(expr, scope, depth, local)
        if isinstance(expr, ast.Call):
            func = expr.func
            name = self.names.qualname(func, scope)
            if array_api.one_array_call(name, expr):
                return True
            if name in array_api.KIND_KEEPING_FUNCTIONS and expr.args and not isinstance(expr.args[0], ast.Starred):
                return self._array(expr.args[0], scope, depth + 1, local)  # `einops.rearrange(x, ...)`
            if name in jax_api.BRANCHING:
                return self._branches_return_arrays(expr, name, scope, depth)
            if isinstance(func, (ast.Name, ast.Attribute)) and (
                self._returns_array(func, scope, depth) or self._project_returns_array(name, depth)
            ):
                return True
            if isinstance(func, ast.Call) and self.names.qualname(func.func, scope) in array_api.ARRAY_LAYERS:
                return True  # `nn.Dense(4)(x)`: a layer applied to an input
            if isinstance(func, ast.Call) and self._transformed_array(func, scope, depth):
                return True
            if isinstance(func, ast.Attribute):
                if func.attr in array_api.AT_UPDATE_METHODS and is_at_index(func.value):
                    return True
                if func.attr in array_api.ARRAY_RETURNING_METHODS:
                    if self._array(func.value, scope, depth + 1, local):
                        return True
                    if self._equality_with_array(func.value, scope, depth, local):
                        return True  # `(a != b).astype(int)`: the bool it may be has no such method
                    # a traced value with a method only arrays have is an array (a dict has no
                    # `.reshape`; it has a `.copy`, and a list a `.sort`)
                    return func.attr not in _CONTAINER_METHODS and self.module.is_traced(func.value)
            return False
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.left, (ast.Constant, ast.JoinedStr)) and isinstance(expr.op, ast.Mod):
                return False
            if self.module.is_traced(expr) and (
                not isinstance(expr.op, (ast.Add, ast.Mult)) or _float(expr.left) or _float(expr.right)
            ):
                return True  # arithmetic on a tracer yields an array (`+` and `*` also join sequences)
            return self._array(expr.left, scope, depth + 1, local) or self._array(expr.right, scope, depth + 1, local)
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
            # An ordering against a JAX array is an array of booleans; so is an equality with a
            # number or another array (against None or a string, Python answers with a bool).
            left, right = expr.left, expr.comparators[0]
            if isinstance(expr.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
                return self._array(left, scope, depth + 1, local) or self._array(right, scope, depth + 1, local)
            if isinstance(expr.ops[0], (ast.Eq, ast.NotEq)):
                for one, other in ((left, right), (right, left)):
                    if (_number(other) or self._array(other, scope, depth + 1, local)) and self._array(
                        one, scope, depth + 1, local
                    ):
                        return True
            return False
        if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
            if self.module.is_traced(expr):
                return True
            return self._array(expr.operand, scope, depth + 1, local)
        if isinstance(expr, ast.Subscript):
            if isinstance(expr.value, ast.Name) and not _slicing(expr.slice) and self._items(expr.value, scope, local):
                return True  # an item of a list of JAX arrays
            return self._array(expr.value, scope, depth + 1, local)
        if isinstance(expr, ast.IfExp):
            return self._array(expr.body, scope, depth + 1, local) and self._array(expr.orelse, scope, depth + 1, local)
        if isinstance(expr, ast.Attribute):
            if expr.attr in array_api.ARRAY_VIEW_ATTRIBUTES:
                return self._array(expr.value, scope, depth + 1, local)
            return self._attribute(expr, scope, depth)
        return False

    def _branches_return_arrays(self, call: ast.Call, callee: str, scope: Scope, depth: int) -> bool:
        """`lax.cond(p, f, g, ...)`, `lax.switch(i, [f, g], ...)`: JAX makes every leaf the
        branches return a JAX array, so where each branch returns one array (a lambda or a
        function of the module whose every `return` gives one, not a container of them), the
        call returns one."""
        given = [branch for _, branch in jax_api.passed_callables(call, callee, self.names.sequence_items)]
        for branch in given:
            if isinstance(branch, ast.Lambda):
                if not self._array(branch.body, self.names.scopes.get(id(branch), scope), depth + 1):
                    return False
            elif not (isinstance(branch, (ast.Name, ast.Attribute)) and self._returns_array(branch, scope, depth)):
                return False
        return bool(given)

    def _equality_with_array(self, expr: ast.AST, scope: Scope, depth: int, local: _Local | None) -> bool:
        """`a == b` or `a != b` with a JAX array on one side: a JAX array of booleans, or a bool where
        the other side is None or a string."""
        if not (isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], (ast.Eq, ast.NotEq))):
            return False
        return any(self._array(side, scope, depth + 1, local) for side in (expr.left, expr.comparators[0]))

    def _name(self, node: ast.Name, scope: Scope, depth: int, local: _Local | None) -> bool:
        name = node.id
        owner = self.names.lookup(name, scope)
        if owner is None or name in self._declared_global_or_nonlocal():
            return False
        if local is not None and owner is local[0]:
            return (name, JAX) in local[1]
        if name in owner.imports:
            return self._imported_array(name, owner)
        candidates = self._may_hold_arrays(owner)
        if candidates is not None and name not in candidates:
            return False  # decided without solving the scope: nothing there can make it an array
        if self.names.read_scope.get(id(node)) is owner:
            possible = self._possible_arrays(owner)
            if possible is not None and name not in possible[0] and id(node) not in possible[1]:
                return False  # a read some step records: no state of the solve holds the name
        at = self._state_at(node, owner)
        if at is not None:
            return (name, JAX) in at
        # Read from a nested function (or where the flow does not reach): the read may happen
        # at any time, so every binding of the name in its scope must be an array.
        key = (id(owner.node), name)
        known = self._names.get(key)
        if known is not None:
            return known
        self._names[key] = True  # optimistic while in progress: `x = x * 2` keeps x an array
        bindings = self._scope_bindings(owner).get(name, [])
        result = bool(bindings) and all(
            b is not UNKNOWN and (b is ARRAY or self._array(b, owner, depth + 1)) for b in bindings
        )
        self._names[key] = result
        return result

    def _imported_array(self, name: str, owner: Scope) -> bool:
        """A name imported from another module of the project that binds it once, at module
        level, to a call of a function that returns one JAX array (`TEXTURE =
        jnp.rot90(load(...))`): what that module binds it to."""
        key = (id(owner.node), name)
        known = self._names.get(key)
        if known is None:
            known = self._names[key] = self._bound_elsewhere_to_array(owner.imports[name])
        return known

    def _bound_elsewhere_to_array(self, qualname: str) -> bool:
        link = self.module.project
        if link is None or "." not in qualname or qualname.split(".", 1)[0] in _NOT_THE_PROJECT:
            return False
        found = link.module_value(qualname)
        if found is None:
            return False
        other, bound = found
        single = single_value(other, bound, other.module)
        value = single[1] if single is not None else None
        return isinstance(value, ast.Call) and array_api.one_array_call(other.qualname(value.func, other.module), value)

    def _items(self, node: ast.Name, scope: Scope, local: _Local | None) -> bool:
        """The name holds a sequence of JAX arrays where it is read (`array_flow.ITEMS`)."""
        owner = self.names.lookup(node.id, scope)
        if owner is None or node.id in self._declared_global_or_nonlocal():
            return False
        if local is not None and owner is local[0]:
            return (node.id, ITEMS) in local[1]
        candidates = self._may_hold_arrays(owner)
        if candidates is not None and node.id not in candidates:
            return False
        at = self._state_at(node, owner)
        return at is not None and (node.id, ITEMS) in at

    def _state_at(self, node: ast.Name, owner: Scope) -> Arrays | None:
        """What the array domain says where `node` is read, if `node` is read in `owner`'s own code."""
        reads = self._reads(owner)
        return reads.get(id(node)) if reads is not None else None

    def _reads(self, scope: Scope) -> dict[int, Arrays] | None:
        """For each read of a name in a function's (or the module's) own code, the names of that
        scope that hold arrays there; None while that scope is being solved, or for a class or lambda."""
        node = scope.node
        if isinstance(node, (ast.Lambda, ast.ClassDef)):
            return None
        key = id(node)
        if key in self._flows:
            return self._flows[key]
        self._flows[key] = None  # in progress
        reads = solve_scope(self, scope, self._graph(node))
        self._flows[key] = reads
        return reads

    def _graph(self, node: ast.AST) -> cfg.Graph:
        graph = self._graphs.get(id(node))
        if graph is None:
            graph = self._graphs[id(node)] = cfg.build(node)
        return graph

    def _possible_arrays(self, scope: Scope) -> tuple[frozenset[str], frozenset[int]] | None:
        """`array_flow.possible_arrays` of a function or the module (None while being found)."""
        node = scope.node
        key = id(node)
        if key in self._possible:
            return self._possible[key]
        if isinstance(node, (ast.Lambda, ast.ClassDef)):
            return None
        candidates = self._may_hold_arrays(scope)
        if candidates is None:
            return None
        self._possible[key] = None  # in progress
        found = self._possible[key] = possible_arrays(self, scope, self._graph(node), candidates)
        return found

    def _may_hold_arrays(self, scope: Scope) -> frozenset[str] | None:
        """The names of `scope` that could ever hold a JAX array there: a superset of every way
        the domain of `array_flow.py` (and the bindings read from nested code) makes one an
        array. A name bound only to values that are never arrays (`{}`, `[]`, `np.zeros(n)`),
        or only otherwise (a plain parameter, an import, a `with` target), never is one.
        None: any name may be."""
        key = id(scope.node)
        if key in self._candidates:
            return self._candidates[key]
        node = scope.node
        shown = self._at_updated_names  # `x.at[i].get()` shows `x` to be one
        if shown is None:
            self._candidates[key] = None
            return None
        names: set[str] = set(shown)
        if isinstance(node, FUNCTION_TYPES):
            args = node.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if arg is not None and arg.annotation is not None:
                    names.add(arg.arg)
        if not isinstance(node, ast.Lambda):
            for stmt in own_statements(node.body):
                cls = stmt.__class__
                if cls is ast.Assign:
                    for target in stmt.targets:
                        self._bound_arrays(target, stmt.value, scope, names)
                elif cls is ast.AnnAssign and (stmt.value is None or self._may_be_array(stmt.value, scope)):
                    names.update(target_names(stmt.target))
                elif (cls is ast.For or cls is ast.AsyncFor) and (
                    isinstance(stmt.iter, ast.Call) or self._may_be_array(stmt.iter, scope)
                ):
                    names.update(target_names(stmt.target))
        found = self._candidates[key] = frozenset(names)
        return found

    def _bound_arrays(self, target: ast.AST, value: ast.AST, scope: Scope, names: set[str]) -> None:
        """The names `target = value` could bind to a JAX array (`_may_hold_arrays`)."""
        if parallel(target, value):
            for part, item in zip(target.elts, value.elts):
                self._bound_arrays(part, item, scope, names)
        elif isinstance(target, ast.Name):
            items = _items_of(value)
            if self._may_be_array(value, scope) or items and all(self._may_be_array(i, scope) for i in items):
                names.add(target.id)
        elif isinstance(value, ast.Call) or self._may_be_array(value, scope):
            names.update(target_names(target))  # unpacking: a call may return a sequence of arrays

    def _may_be_array(self, expr: ast.AST, scope: Scope) -> bool:
        """Whether `_array` could answer yes for `expr` in some state: what it decides from the
        syntax alone is decided here, whatever it would look up (a name, a helper) is a maybe."""
        cls = expr.__class__
        if cls is ast.Call:
            func = expr.func
            if isinstance(func, ast.Name):
                # `_array` answers yes for an array function or a plain function of the module
                name = self.names.qualname(func, scope)
                if array_api.one_array_call(name, expr) or name in jax_api.BRANCHING:
                    return True
                return self._returning(func) is not None or self._of_the_project(name)
            if isinstance(func, ast.Call):  # `nn.Dense(4)(x)`, `jax.vmap(f)(x)`
                name = self.names.qualname(func.func, scope)
                return name in array_api.ARRAY_LAYERS or name in jax_api.OUTPUT_PRESERVING_TRANSFORMS
            if isinstance(func, ast.Attribute) and (
                func.attr in array_api.AT_UPDATE_METHODS or func.attr in array_api.ARRAY_RETURNING_METHODS
            ):
                return True
            name = self.names.qualname(func, scope)
            if array_api.one_array_call(name, expr) or name in jax_api.BRANCHING:
                return True
            # a static method of a class of the module (`Ops.place(...)`), a project module's function
            return isinstance(func, ast.Attribute) and (self._returning(func) is not None or self._of_the_project(name))
        if cls is ast.UnaryOp:
            return not isinstance(expr.op, ast.Not)
        return cls in _MAYBE_ARRAY_SYNTAX

    @cached_property
    def _at_updated_names(self) -> frozenset[str] | None:
        """Every name the text shows before `.at[`: a superset of the `x` of every
        `x.at[i].get()`; None (any name) where a comment lies between a name and its `.at[`."""
        return names_before_at(self.module.source.text)

    def _returning(self, func: ast.Name | ast.Attribute) -> ast.FunctionDef | ast.Lambda | None:
        """The def or lambda of the module whose `return`s a call of `func` gives, as the module's
        resolver answers (decorated only so that calls run it as written, `jax.jit` included,
        which gives back what the function returns, as JAX arrays); None for anything else."""
        target = module_callees(self.names).target(func)
        if target is None or target.implicit or not isinstance(target.function, (ast.FunctionDef, ast.Lambda)):
            return None
        return target.function

    def _transformed_array(self, transformed: ast.Call, scope: Scope, depth: int) -> bool:
        """`jax.vmap(f)` (`jit`, `pmap`, ...) of a lambda or function of this module that returns a
        JAX array: called, even eagerly, it returns a JAX array too."""
        if self.names.qualname(transformed.func, scope) not in jax_api.OUTPUT_PRESERVING_TRANSFORMS:
            return False
        function = transformed.args[0] if transformed.args else None
        if isinstance(function, ast.Lambda):
            own = self.names.scopes.get(id(function))
            return own is not None and self._array(function.body, own, depth + 1)
        return isinstance(function, (ast.Name, ast.Attribute)) and self._returns_array(function, scope, depth)

    def _of_the_project(self, qualname: str | None) -> bool:
        """Whether a qualified name may be one of another module of the project."""
        return (
            self.module.project is not None and qualname is not None and "." in qualname
            and qualname.split(".", 1)[0] not in _NOT_THE_PROJECT
        )

    def _project_returns_array(self, qualname: str | None, depth: int) -> bool:
        """A call to a plain function another module of the project defines (`from .grid import
        room`), every `return` of which gives a JAX array, as that module's facts say."""
        if not self._of_the_project(qualname):
            return False
        found = self.module.project.target(qualname)
        if found is None or found[1] or found[0].owner is not None:
            return False
        there = getattr(found[0].facts, "arrays", None)
        return there is not None and there is not self and there.returns_array(found[0].node, depth + 1)

    def returns_array(self, definition: ast.FunctionDef, depth: int = 0) -> bool:
        """Whether every `return` of a def of this module (no `yield`) gives a JAX array."""
        return self._every_return_an_array(definition, depth)

    def _returns_array(self, func: ast.Name | ast.Attribute, scope: Scope, depth: int) -> bool:
        """A call to a function of this module (`_returning`: by its name, or as a static method
        of its class, `Ops.place(...)`; no `yield`) every `return` of which gives a JAX array."""
        definition = self._returning(func)
        if definition is None or isinstance(func, ast.Name) and self.names.rebinding(func, scope) is not None:
            return False
        return self._every_return_an_array(definition, depth)

    def _every_return_an_array(self, definition, depth: int) -> bool:
        if depth > _MAX_DEPTH:
            return False
        key = id(definition)
        known = self._returns.get(key)
        if known is not None:
            return known
        self._returns[key] = False  # recursion: not known while in progress
        own = self.names.scopes.get(key)
        returns = []
        result = own is not None
        if result:
            if isinstance(definition, ast.Lambda):
                returns.append(definition.body)
            else:
                returns.extend(stmt.value for stmt in own_statements(definition.body) if isinstance(stmt, ast.Return))
            result = bool(returns) and not _generator(definition) and all(
                value is not None and self._array(value, own, depth + 1) for value in returns
            )
        self._returns[key] = result
        return result

    def _attribute(self, expr: ast.Attribute, scope: Scope, depth: int) -> bool:
        """`self.attr` inside a method, when every store of `.attr` in the module is an array;
        `param.attr` of a parameter annotated with a class of the module that declares the
        field a JAX array (`v1: jax.Array`), while the function rebinds the parameter only to
        what a callee is declared to return of that class (`_declared_instance`), or with a
        class of another module of the project that does, never rebound, or with a
        framework's class that does (`array_api.DECLARED_ARRAY_FIELDS`), never rebound."""
        base = expr.value
        if not isinstance(base, ast.Name) or scope.kind != "function":
            return False
        if self._annotated_field(expr, base, scope):
            return True
        method = scope.node
        cls = self.names.parent_class.get(id(method))
        if cls is None or first_param(method) != base.id or self.names.lookup(base.id, scope) is not scope:
            return False
        key = (id(cls), expr.attr)
        known = self._attributes.get(key)
        if known is not None:
            return known
        self._attributes[key] = False
        stores = self.effects.attribute_stores.get(expr.attr, [])
        in_class = False
        result = bool(stores)
        for store in stores:
            if store.kind == "augmented":
                continue  # `self.x += ...` keeps what x is
            if store.kind == "unpacked" or store.value is None:
                result = False
                break
            function = store.function
            where = self.names.scope_of(function) if function is not None else self.names.module
            if not self._array(store.value, where, depth + 1):
                result = False
                break
            if function is not None and self.names.parent_class.get(id(function)) is cls:
                in_class = True
        result = result and in_class
        self._attributes[key] = result
        return result

    def _annotated_field(self, expr: ast.Attribute, base: ast.Name, scope: Scope) -> bool:
        fn = scope.node
        if isinstance(fn, ast.Lambda) or self.names.lookup(base.id, scope) is not scope:
            return False
        if base.id in scope.other:
            return False
        param = named_parameter(fn, base.id)
        if param is None or param.annotation is None:
            return False
        annotated = self.names.qualname(param.annotation, self.names.enclosing_scope(fn))
        declared = array_api.DECLARED_ARRAY_FIELDS.get(annotated)
        if declared is not None:  # a framework's class: the parameter must keep what it was given
            return expr.attr in declared and not scope.assigned.get(base.id)
        cls = self.names.definition(param.annotation, self.names.enclosing_scope(fn))
        if isinstance(cls, ast.ClassDef):
            if not all(self._declared_instance(value, cls, scope) for value in scope.assigned.get(base.id, ())):
                return False  # rebound to something else
            return self._declares_array_field(cls, self.names, expr.attr)
        link = self.module.project
        if link is None or scope.assigned.get(base.id) or not isinstance(param.annotation, (ast.Name, ast.Attribute)):
            return False
        found = link.class_of(annotated) if annotated else None  # a class of another module of the project
        return found is not None and self._declares_array_field(found[1], found[0], expr.attr)

    def _declares_array_field(self, cls: ast.ClassDef, names: Names, attr: str) -> bool:
        """Whether the class body declares the field a JAX array, with no default."""
        where = names.scopes[id(cls)]
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
                return stmt.value is None and self.array_annotation(stmt.annotation, where, names)
        return False

    def _declared_instance(self, value: ast.AST, cls: ast.ClassDef, scope: Scope) -> bool:
        """A call its callee is declared to return an instance of `cls` from: a function annotated
        `-> cls`, or a parameter (of this function or one around it) annotated `Callable[..., cls]`
        (also optional: `Optional[Callable[..., cls]]`), as a state callback is."""
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return False
        name = value.func.id
        owner = self.names.lookup(name, scope)
        if owner is None:
            return False
        declared = self.names.definition(value.func, scope)
        if isinstance(declared, (ast.FunctionDef, ast.AsyncFunctionDef)):
            returned = declared.returns
        elif name in owner.params and isinstance(owner.node, FUNCTION_TYPES) and not isinstance(owner.node, ast.Lambda):
            args = owner.node.args
            param = next(a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                         if a is not None and a.arg == name)
            returned = _callable_result(param.annotation)
        else:
            return False
        return isinstance(returned, ast.Name) and self.names.definition(returned, owner) is cls

    # ---- bindings -------------------------------------------------------------------------
    def _declared_global_or_nonlocal(self) -> set[str]:
        if self._global_names is None:
            found: set[str] = set()
            for scope in self.names.scopes.values():
                found.update(scope.globals)
                found.update(scope.nonlocals)
            self._global_names = found
        return self._global_names

    def _scope_bindings(self, scope: Scope) -> dict[str, list[object]]:
        """Every binding of every name in one scope (`array_flow.scope_bindings`), found once."""
        cached = self._bindings.get(id(scope.node))
        if cached is None:
            cached = self._bindings[id(scope.node)] = scope_bindings(self, scope)
        return cached

    def items_annotation(self, annotation: ast.expr | None, scope: Scope) -> bool:
        """A mapping or sequence of JAX arrays (`Dict[str, jnp.ndarray]`, `Sequence[jax.Array]`), or a
        name the module binds once to one (`ArrayDict = Dict[str, jnp.ndarray]`)."""
        for _ in range(ALIAS_DEPTH):
            if not isinstance(annotation, ast.Name) or self.names.qualname(annotation, scope) is not None:
                break
            annotation = aliased(annotation, self.names)
        if not isinstance(annotation, ast.Subscript):
            return False
        name = self.names.qualname(annotation.value, scope)
        member = _mapping_or_sequence(annotation, name) if name is not None else None
        return member is not None and self.array_annotation(member, scope)

    def array_annotation(self, annotation: ast.expr | None, scope: Scope, names: Names | None = None) -> bool:
        """Whether the annotation, read in `scope` (of `names`, by default the module's), declares a JAX array."""
        if annotation is None:
            return False
        names = names or self.names
        target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
        name = type_name(target, names, scope)
        if name is None:
            return False
        if name in jax_api.ARRAY_ANNOTATIONS and name not in jax_api.ARRAY_LIKE_ANNOTATIONS:
            return True
        return name.startswith("jaxtyping.") and name.rsplit(".", 1)[-1] in jax_api.JAXTYPING_DTYPES and isinstance(
            annotation, ast.Subscript
        ) and _jaxtyping_array(annotation, names, scope)


def _mapping_or_sequence(annotation: ast.Subscript, name: str) -> ast.expr | None:
    """The type of every value of a mapping (`Dict[str, X]`) or item of a sequence (`list[X]`,
    `tuple[X, ...]`) an annotation declares."""
    inner = annotation.slice
    members = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    if name in _MAPPINGS:
        return members[1] if len(members) == 2 else None
    if name in ("builtins.tuple", "typing.Tuple"):
        ellipsis = len(members) == 2 and isinstance(members[1], ast.Constant) and members[1].value is Ellipsis
        return members[0] if ellipsis else None
    return members[0] if name in SEQUENCE_TYPES and len(members) == 1 else None


_MAPPINGS = frozenset({
    "builtins.dict", "typing.Dict", "typing.Mapping", "typing.MutableMapping", "collections.abc.Mapping",
    "collections.abc.MutableMapping",
})


def _callable_result(annotation: ast.AST | None) -> ast.AST | None:
    """What `Callable[[...], R]` returns (`R`), through `Optional[...]` and `... | None`."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        for side in (annotation.left, annotation.right):
            if not (isinstance(side, ast.Constant) and side.value is None):
                return _callable_result(side)
        return None
    if not isinstance(annotation, ast.Subscript):
        return None
    head = annotation.value.attr if isinstance(annotation.value, ast.Attribute) else getattr(annotation.value, "id", None)
    if head == "Optional":
        return _callable_result(annotation.slice)
    if head == "Callable" and isinstance(annotation.slice, ast.Tuple) and len(annotation.slice.elts) == 2:
        return annotation.slice.elts[1]
    return None


def _items_of(value: ast.AST) -> list[ast.expr]:
    """The items a list or tuple literal (without `*`) or a list comprehension holds."""
    if isinstance(value, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in value.elts):
        return list(value.elts)
    if isinstance(value, ast.ListComp):
        return [value.elt]
    return []


def _slicing(index: ast.AST) -> bool:
    """`xs[1:]`, `xs[::2]`: a shorter sequence, not an item."""
    return isinstance(index, (ast.Slice, ast.Tuple))


def _jaxtyping_array(annotation: ast.Subscript, names: Names, scope: Scope) -> bool:
    """`Float[Array, "b d"]` is a JAX array; `Float[np.ndarray, ...]` or `Float[ArrayLike, ...]` is not."""
    inner = annotation.slice
    first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
    return names.qualname(first, scope) in ("jax.Array", "jaxtyping.Array")


def _float(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, float)


def _number(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float, complex, bool)


def is_at_index(expr: ast.AST) -> bool:
    """`x.at[i]`: the index expression of a functional update."""
    return isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "at"


def _generator(function: ast.FunctionDef | ast.Lambda) -> bool:
    return contains(children(function), _YIELDS, _SCOPES)


_YIELDS = frozenset({ast.Yield, ast.YieldFrom})
_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})

