"""The values a transformation gives the parameters of a function it traces: static where it
names them static or binds them, traced where it traces them, what the annotation says where
a framework traces only arrays."""

from __future__ import annotations

import ast
from typing import Callable

from jaxlint.analysis.engine.lattice import (
    REF, REF_TREE, STATIC, TRACED, TRACED_ARRAY, TRACED_BOOL, UNKNOWN, Trace, Value
)
from jaxlint.analysis.engine.named_tuples import is_named_tuple, named_tuple_factory
from jaxlint.analysis.engine.names import FunctionNode, Names, annotation_name
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge.library_classes import library_class
from jaxlint.analysis.tracing.array_annotations import ALIAS_DEPTH, aliased, names_array
from jaxlint.analysis.tracing.dimension_parameters import dimension_parameters
from jaxlint.analysis.tracing.instance_calls import python_valued_parameters
from jaxlint.analysis.tracing.parameters import fixed_argument, has_default, kernel_parameters
from jaxlint.analysis.tracing.traced_functions import ANY_KEYWORD, Bound, TracedFunction


def root_parameters(
    root: TracedFunction, names: Names, roots: list[TracedFunction], passed: frozenset[str] = frozenset(),
    callers: Callable[[frozenset[str]], dict[str, bool | None]] | None = None,
    project_class: Callable[[str], bool] | None = None,
) -> dict[str, Value]:
    """The values a transformation gives a function's parameters (`roots`: all in the module;
    `passed`: parameters with a default that a call passes, traced like those without one;
    `callers`: for a framework module's `__call__`, which of the parameters asked about every
    call in the project passes a value that is not traced, True where always a Python value,
    None where some call passes one that may be traced, `project.project_instance_calls`; `project_class`: whether a qualified name stands for a class
    another module of the project defines)."""
    fn = root.node
    if root.kernel:
        bound = Bound(root.bound_positional, root.bound_keywords, root.bound_values)
        return kernel_parameters(fn, bound, REF_TREE if root.ref_trees else REF)
    a = fn.args
    positional = [*a.posonlyargs, *a.args][root.bound_positional:]
    params: dict[str, Value] = {p.arg: STATIC for p in [*a.posonlyargs, *a.args][: root.bound_positional]}
    for param in (*positional, *a.kwonlyargs):
        params[param.arg] = _parameter_value(root, fn, param, names, roots, param.arg in passed, project_class)
    traced = frozenset(name for name, value in params.items() if value.traced)
    decided = callers(traced) if traced and root.framework_method and callers is not None else {}
    for name, python in decided.items():
        if python is not None:
            params[name] = STATIC if python else UNKNOWN  # what every caller passes
    if root.framework_method:
        # One the method uses as a dimension (`np.arange(qlen)`) is a Python number wherever the
        # module runs: traced only where a call in view passes it a value that may be traced.
        for name in traced & dimension_parameters(fn, names):
            if name not in decided:
                params[name] = UNKNOWN
    if a.vararg is not None:
        params[a.vararg.arg] = UNKNOWN if root.framework_method else TRACED
    if a.kwarg is not None:
        params[a.kwarg.arg] = UNKNOWN
    return params


def _parameter_value(
    root: TracedFunction, fn: FunctionNode, param: ast.arg, names: Names, roots: list[TracedFunction],
    passed: bool = False, project_class: Callable[[str], bool] | None = None,
) -> Value:
    if param.arg in root.bound_keywords:
        fixed = dict(root.bound_values).get(param.arg)
        return STATIC if fixed is None else fixed_argument(fn, param.arg, fixed, STATIC)
    if ANY_KEYWORD in root.bound_keywords and param in fn.args.kwonlyargs:
        return UNKNOWN  # partial(f, **kwargs) may bind it
    if param.arg in root.static_params or param.arg in root.caller_params:
        return STATIC if param.arg in root.static_params else UNKNOWN
    if root.unknown_static_names:
        return UNKNOWN
    if root.framework_method and param.arg in python_valued_parameters(fn, names, roots):
        return STATIC  # every call of the module in view passes a Python value
    annotation = _annotation_kind(param.annotation, names)
    if annotation == "array":
        return TRACED_ARRAY
    if annotation == "booleans":  # jaxtyping's `Bool[Array, "n"]`: an array of booleans
        return TRACED_BOOL
    if not has_default(fn, param) and _names_named_tuple(param.annotation, names):
        return Value(Trace.TRACED, fields=True)
    if root.framework_method and annotation is None and not has_default(fn, param):
        if _may_hold_array(param.annotation, names, project_class):
            return TRACED
    if root.framework_method or root.filtering:
        # Framework methods and filtering jits: only arrays are traced.
        return STATIC if annotation == "python" else UNKNOWN
    if has_default(fn, param) and not passed:
        # Under jit, a default that the caller does not override stays a Python value.
        return UNKNOWN
    if _names_module_class(param.annotation, names, project_class):
        return TRACED  # a pytree of a class of the project: traced, but not an array
    if _names_sequence(param.annotation, names):
        return Value(Trace.TRACED, element=TRACED)  # a sequence of tracers: its truth is its length
    return TRACED_ARRAY if root.context.staged else TRACED


def _may_hold_array(annotation: ast.expr | None, names: Names, project_class: Callable[[str], bool] | None) -> bool:
    """Whether a parameter may be an array: it has no annotation, or `Any`, which says no more, or
    one that names an array type or a class of the project (a pytree). A type the analysis
    cannot read that names no array (a `Shape` or a mode type from another package) is not
    taken for one."""
    if annotation is None or annotation_name(annotation, names)[1] in _ANY:
        return True
    return names_array(annotation, names) or _names_module_class(annotation, names, project_class)


_ANY = frozenset({"typing.Any", "typing_extensions.Any"})


def _names_sequence(annotation: ast.expr | None, names: Names) -> bool:
    """Whether an annotation is a sequence type (`Sequence[jax.Array]`, `tuple`), or a union
    (`A | B`, `Union[A, B]`) of them."""
    annotation, qualified = annotation_name(annotation, names)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _names_sequence(annotation.left, names) and _names_sequence(annotation.right, names)
    if qualified == "typing.Union" and isinstance(annotation, ast.Subscript):
        members = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        return all(_names_sequence(m, names) for m in members)
    return qualified in jax_api.SEQUENCE_ANNOTATIONS


def _names_module_class(annotation: ast.expr | None, names: Names, project_class: Callable[[str], bool] | None) -> bool:
    """Whether an annotation is a class defined in this module (`state: State`) or in another
    module of the project (`batch: types.Transition`)."""
    annotation, qualified = annotation_name(annotation, names)
    if isinstance(annotation, ast.Name) and isinstance(names.definition(annotation), ast.ClassDef):
        return True
    if library_class(qualified) is not None:  # flax's `TrainState`: a pytree
        return True
    return (
        project_class is not None and isinstance(annotation, (ast.Name, ast.Attribute)) and qualified is not None
        and project_class(qualified)
    )


def _names_named_tuple(annotation: ast.expr | None, names: Names) -> bool:
    """Whether an annotation is a NamedTuple class of this module (a class statement, or a name
    bound once to `collections.namedtuple(...)`), or that or None."""
    annotation, qualified = annotation_name(annotation, names)
    if qualified == "typing.Optional" and isinstance(annotation, ast.Subscript):
        annotation = annotation.slice
    elif isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        rest = [side for side in sides if not (isinstance(side, ast.Constant) and side.value is None)]
        annotation = rest[0] if len(rest) == 1 else None
    return annotation is not None and (is_named_tuple(annotation, names) or named_tuple_factory(annotation, names))


def _annotation_kind(annotation: ast.expr | None, names: Names, depth: int = 0) -> str | None:
    annotation, name = annotation_name(annotation, names)
    if name is None:
        alias = aliased(annotation, names) if depth < ALIAS_DEPTH else None
        return None if alias is None else _annotation_kind(alias, names, depth + 1)
    if name in jax_api.ARRAY_ANNOTATIONS:
        return "array"
    if name == "jaxtyping.Bool" or name in jax_api.KAULDRON_BOOLEANS:
        return "booleans"
    if name.startswith("jaxtyping.") and name.rsplit(".", 1)[-1] in jax_api.JAXTYPING_DTYPES:
        return "array"
    if name in jax_api.KAULDRON_ARRAY_TYPES:
        return "array"
    if name in jax_api.PYTHON_ANNOTATIONS:
        return "python"
    return None
