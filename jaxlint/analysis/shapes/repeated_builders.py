"""Calls made again and again of a function of another project module that builds a jit (or runs
a `lax` loop outside a trace over a body it makes) anew on every call and does not keep it.

The function's module says what it builds on each of its calls (`RebuiltJits.per_call_of`, a
summary of that function alone); this module says where the calls repeat: in a loop or a
comprehension, or in a function of this module that is itself called again and again. The
finding is the repeating call: the one place that shows both halves. A call that passes, on
each iteration, a different value written out in the code (`for scheme in ("euler", "rk4")`)
may build a different function each time, and is left alone.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NamedTuple

from jaxlint.analysis.engine.walk import walk
from jaxlint.analysis.knowledge import jax_api, shape_api
from jaxlint.analysis.shapes.jit_variants import JitVariants
from jaxlint.analysis.shapes.rebuilt_jits import Rebuild
from jaxlint.analysis.shapes.repeated_calls import RepeatedCalls

if TYPE_CHECKING:
    from jaxlint.analysis.project.traced_module import TracedModule

# The last parts of what builds a cache: a callee whose body names none of them builds nothing.
_BUILDERS = frozenset(
    name.rsplit(".", 1)[-1] for name in (*shape_api.CACHING_TRANSFORMS, *shape_api.EAGER_COMPILED_LOOPS)
)


class RepeatedBuild(NamedTuple):
    call: ast.Call  # the call made again and again, in this module
    callee: str  # the function called, as `module.function`
    path: str  # its file
    rebuild: Rebuild  # what it builds on each call, in its own module
    where: str  # how the call repeats


class RepeatedBuilders:
    def __init__(self, module: TracedModule, repeated: RepeatedCalls, variants: JitVariants):
        self.module = module
        self.names = module.names
        self.repeated = repeated
        self.variants = variants
        self._builders: dict[int, bool] = {}

    def find(self) -> list[RepeatedBuild]:
        link = self.module.project
        if link is None:
            return []
        found = []
        repeated = self.repeated
        for call, _ in self.names.calls:
            target = self._callee(call)
            if target is None:
                continue
            caller = repeated.function_of(call)
            if repeated.may_be_traced(caller):
                continue  # traced code runs once per trace
            looped = repeated.in_loop(call, caller) is not None or repeated.in_comprehension(call, caller)
            if looped:
                if self.variants.per_iteration(call, call, caller):
                    continue  # each iteration passes another value written in the code
                where = "this loop calls it on every iteration"
            elif caller is not None and repeated.called_repeatedly(caller) is not None:
                if self.variants.per_call(call, caller):
                    continue
                where = f"`{getattr(caller, 'name', 'the function')}` calls it here and is itself called again and again"
            else:
                continue
            facts, node, label = target
            for rebuild in facts.shapes.rebuilt_per_call(node):
                found.append(RepeatedBuild(call, label, facts.project.path, rebuild, where))
                break
        return found

    def _callee(self, call: ast.Call):
        """(its module's facts, its `def`, its name) for a call of a plain function or of a method
        of an instance of a class that another module of the project defines, when its body
        names something that builds a cache; else None."""
        func = call.func
        link = self.module.project
        qualname = self.module.qualname(func)
        if qualname is not None:
            if qualname.split(".", 1)[0] in (*jax_api.MODELLED_PACKAGES, "builtins", "numpy"):
                return None
            found = link.callee(qualname)
            if found is None or found.path == link.path or not self._names_a_builder(found.node):
                return None
            return found.facts, found.node, f"{found.facts.project.name}.{found.node.name}"
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        values = self.names.assignments(func.value)
        classes = {self.module.qualname(v.func) for v in values if isinstance(v, ast.Call)}
        if not values or len(classes) != 1 or None in classes or not all(isinstance(v, ast.Call) for v in values):
            return None
        qualname = classes.pop()
        if qualname.split(".", 1)[0] in jax_api.MODELLED_PACKAGES:
            return None
        located = link.project.definition(link, qualname)
        if located is None or not isinstance(located[1], ast.ClassDef) or located[0].project.path == link.path:
            return None
        facts, cls = located
        method = facts.shapes.method_of(cls, func.attr)
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not self._names_a_builder(method):
            return None
        return facts, method, f"{facts.project.name}.{cls.name}.{method.name}"

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
