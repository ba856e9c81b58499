"""Calls made again and again of a function of another project module that builds a jit (or runs
a `lax` loop outside a trace over a body it makes) anew on every call and does not keep it.

The function's module says what it builds on each of its calls (`RebuiltJits.per_call_of`, a
summary of that function alone); this module says where the calls repeat: in a loop or a
comprehension, or in a function of this module that is itself called again and again. Each
such call is handed to the function's module as an incoming call (`IncomingCall.repeats`),
which reports the build where the same loop in that module shows it: moving a helper to
another module does not move its finding. A call that passes, on each iteration, a different
value written out in the code (`for scheme in ("euler", "rk4")`) may build a different
function each time, and is left alone.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from jaxlint.analysis.engine.walk import walk
from jaxlint.analysis.knowledge import jax_api, shape_api
from jaxlint.analysis.project.project import IncomingCall
from jaxlint.analysis.shapes.jit_variants import JitVariants
from jaxlint.analysis.shapes.repeated_calls import RepeatedCalls
from jaxlint.analysis.tracing.traced_functions import CONCRETE

if TYPE_CHECKING:
    from jaxlint.analysis.project.traced_module import TracedModule

# The last parts of what builds a cache: a callee whose body names none of them builds nothing.
_BUILDERS = frozenset(
    name.rsplit(".", 1)[-1] for name in (*shape_api.CACHING_TRANSFORMS, *shape_api.EAGER_COMPILED_LOOPS)
)


class RepeatedBuild(NamedTuple):
    call: ast.Call  # the call made again and again, in this module
    function: str  # the function called, by its name in its module (`Class.method` for a method)
    path: str  # its file


class RepeatedBuilders:
    def __init__(self, module: TracedModule, repeated: RepeatedCalls, variants: JitVariants):
        self.module = module
        self.names = module.names
        self.repeated = repeated
        self.variants = variants
        self._builders: dict[int, bool] = {}

    def record(self) -> None:
        """Hand each call made again and again of a function that rebuilds on every call to the
        function's module (`ModuleLink.hand`), named by the function of this module making it."""
        link = self.module.project
        for repeat in self.find():
            caller = self.repeated.function_of(repeat.call)
            entry = self.module.entry_name(caller) if caller is not None else link.name
            link.hand((IncomingCall(repeat.path, repeat.function, (), CONCRETE, entry, repeats=True),))

    def find(self) -> list[RepeatedBuild]:
        link = self.module.project
        if link is None:
            return []
        found = []
        repeated = self.repeated
        for call, _ in self.names.calls:
            named = self._named(call)
            if named is None:
                continue
            caller = repeated.function_of(call)
            looped = repeated.in_loop(call, caller) is not None or repeated.in_comprehension(call, caller)
            if not looped and (caller is None or repeated.called_repeatedly(caller) is None):
                continue  # made once: whatever it builds is built once
            target = self._callee(call, *named)
            if target is None or repeated.may_be_traced(caller):
                continue  # traced code runs once per trace
            if self.variants.per_iteration(call, call, caller) if looped else self.variants.per_call(call, caller):
                continue  # each iteration passes another value written in the code
            facts, node, name = target
            if facts.shapes.rebuilt_per_call(node):
                found.append(RepeatedBuild(call, name, facts.project.path))
        return found

    @cached_property
    def _project_imports(self) -> frozenset[str]:
        """The names the module imports from the project's own modules (found on the file system,
        not read): only a call through one of them can reach another module's function."""
        link = self.module.project
        index = link.project.index
        found = set()
        for scope in self.names.scopes.values():
            for alias, qualname in scope.imports.items():
                if not _maybe_project(qualname):
                    continue
                parts = qualname.split(".")
                if any(index.find_module(".".join(parts[:cut]), link.roots)[0] for cut in range(len(parts), 0, -1)):
                    found.add(alias)
        return frozenset(found)

    @cached_property
    def _instances(self) -> frozenset[str]:
        """The names some scope assigns a call through a project import: the receivers `_named`
        looks up are among them (`Names.assignments` answers with one scope's values)."""
        imported = self._project_imports
        return frozenset(
            name for scope in self.names.scopes.values() for name, values in scope.assigned.items()
            if any(isinstance(v, ast.Call) and _root(v.func) in imported for v in values)
        )

    def _named(self, call: ast.Call) -> tuple[str, bool] | None:
        """What a call may call in another module, before anything is resolved: the qualified name
        of a function, or of the class whose instance's method it calls (then True)."""
        imported = self._project_imports
        func = call.func
        root = _root(func)
        if not imported or root is None:
            return None
        if root in imported:
            qualname = self.names.qualname(func)
            if qualname is not None:
                return (qualname, False) if _maybe_project(qualname) else None
        if not (func.__class__ is ast.Attribute and func.value.__class__ is ast.Name):
            return None
        if func.value.id not in self._instances:
            return None
        values = self.names.assignments(func.value)
        if not any(isinstance(v, ast.Call) and _root(v.func) in imported for v in values):
            return None
        if not values or not all(isinstance(v, ast.Call) for v in values):
            return None
        classes = {self.names.qualname(v.func) for v in values}
        if len(classes) != 1 or None in classes:
            return None
        qualname = classes.pop()
        return (qualname, True) if _maybe_project(qualname) else None

    def _callee(self, call: ast.Call, qualname: str, method: bool):
        """(its module's facts, its `def`, its name there) for a call of a plain function or of a method
        of an instance of a class that another module of the project defines, when its body
        names something that builds a cache; else None."""
        link = self.module.project
        if not method:
            found = link.callee(qualname)
            if found is None or found.path == link.path or not self._names_a_builder(found.node):
                return None
            return found.facts, found.node, found.name
        func = call.func
        located = link.project.definition(link, qualname)
        if located is None or not isinstance(located[1], ast.ClassDef) or located[0].project.path == link.path:
            return None
        facts, cls = located
        method = facts.shapes.method_of(cls, func.attr)
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not self._names_a_builder(method):
            return None
        return facts, method, f"{cls.name}.{method.name}"

    def _names_a_builder(self, function: ast.AST) -> bool:
        """A cheap test before the callee's module is analysed: its body names `jit`, `scan`, ..."""
        known = self._builders.get(id(function))
        if known is None:
            known = self._builders[id(function)] = any(
                isinstance(node, ast.Attribute) and node.attr in _BUILDERS
                or isinstance(node, ast.Name) and node.id in _BUILDERS
                for node in walk(function)
            )
        return known


def _maybe_project(qualname: str) -> bool:
    """A qualified name that may name something of the project: not Python's, NumPy's or a
    library the analysis models."""
    return qualname.split(".", 1)[0] not in (*jax_api.MODELLED_PACKAGES, "builtins", "numpy")


def _root(expr: ast.expr) -> str | None:
    while expr.__class__ is ast.Attribute:
        expr = expr.value
    return expr.id if expr.__class__ is ast.Name else None
