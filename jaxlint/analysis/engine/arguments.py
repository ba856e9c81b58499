"""Argument binding: which parameter of a function each argument of a call reaches.

One answer for every analysis, as Python binds a call: the parameters bound implicitly by how
the function is reached (`self` of `obj.method(x)`, `cls` of a class method, nothing for a
static method or for `Cls.method(obj, x)`, which passes the instance itself), then positional
arguments in order, keywords by name, the surplus collected by `*args` and `**kwargs`. A `*xs`
or `**kw` argument whose contents are not written out leaves every parameter it may fill
without a known argument: `spread` names them, and an analysis treats them as unknown.

The mapping is computed on argument *kinds* (`bind_kinds`), so the binder of expressions
(`bind`) and of abstract values (an analysis's own) are one algorithm, as mypy's
`map_actuals_to_formals` serves every check of a call.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field
from typing import Sequence

from jaxlint.analysis.engine.names import FunctionNode, Names


class Receiver(enum.Enum):
    """How a call reaches the function it runs."""

    FUNCTION = "function"  # `f(x)`: a plain name, a lambda, a function value
    INSTANCE = "instance"  # `obj.method(x)`, `self.method(x)`: the instance is bound
    CLASS = "class"  # `Cls.method(x)`: only a class method binds (the class)


def decorated_as(function: FunctionNode, name: str) -> bool:
    """Whether a def carries `@staticmethod`/`@classmethod`/... by that plain name."""
    return not isinstance(function, ast.Lambda) and any(
        (isinstance(d, ast.Name) and d.id == name) or (isinstance(d, ast.Attribute) and d.attr == name)
        for d in function.decorator_list
    )


def implicit_count(function: FunctionNode, receiver: Receiver) -> int:
    """How many leading parameters a call binds without an argument: the instance of a method
    called through one, the class of a class method, none of a static method."""
    if receiver is Receiver.FUNCTION or decorated_as(function, "staticmethod"):
        return 0
    if decorated_as(function, "classmethod"):
        return 1
    return 1 if receiver is Receiver.INSTANCE else 0


def receiver(func: ast.expr, function: FunctionNode, names: Names) -> Receiver:
    """How a call whose callee is written `func` reaches `function` (a def of the module `names`
    describes): through a class of the module (`Cls.method`), through an instance
    (`obj.method`, for a def of a class), or as a plain function (`f`, `helpers.f`)."""
    if not isinstance(func, ast.Attribute) or id(function) not in names.parent_class:
        return Receiver.FUNCTION
    if isinstance(func.value, ast.Name) and isinstance(names.definition(func.value), ast.ClassDef):
        return Receiver.CLASS
    return Receiver.INSTANCE


def positional_parameters(function: FunctionNode) -> list[ast.arg]:
    return [*function.args.posonlyargs, *function.args.args]


def named_parameters(function: FunctionNode) -> list[ast.arg]:
    """The parameters a call can name: positional-only, positional and keyword-only."""
    a = function.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def named_parameter(function: FunctionNode, name: str) -> ast.arg | None:
    """The parameter `name` of `function` (not its `*args` or `**kwargs`), if it has one."""
    return next((p for p in named_parameters(function) if p.arg == name), None)


POSITIONAL, STAR, NAMED, STAR_STAR = "positional", "star", "named", "star_star"


@dataclass
class KindBinding:
    """Which actual argument (by index) reaches each parameter."""

    given: dict[str, int] = field(default_factory=dict)  # parameter -> the argument bound to it
    collected: list[int] = field(default_factory=list)  # arguments `*args` collects, in order
    collected_names: dict[str, int] = field(default_factory=dict)  # keyword -> argument `**kwargs` collects
    spread: set[str] = field(default_factory=set)  # parameters a `*`/`**` argument may fill
    vararg: str | None = None
    kwarg: str | None = None


def bind_kinds(function: FunctionNode, kinds: Sequence[tuple[str, str | None]], implicit: int = 0) -> KindBinding:
    """The binding of actual arguments, given as (kind, keyword name) in call order, to the
    parameters of `function` after its first `implicit` ones."""
    a = function.args
    positional = [p.arg for p in positional_parameters(function)][implicit:]
    positional_only = {p.arg for p in a.posonlyargs}
    keyword_names = [p.arg for p in (*a.args, *a.kwonlyargs) if p.arg not in positional_only]
    result = KindBinding(vararg=a.vararg.arg if a.vararg else None, kwarg=a.kwarg.arg if a.kwarg else None)
    index, spreading = 0, False
    for i, (kind, name) in enumerate(kinds):
        if kind == POSITIONAL and not spreading:
            if index < len(positional):
                result.given[positional[index]] = i
            elif result.vararg is not None:
                result.collected.append(i)
            index += 1
        elif kind in (POSITIONAL, STAR):
            # After a `*xs` of unknown length no later positional argument has a known place.
            spreading = True
            result.spread.update(positional[index:])
            if result.vararg is not None:
                result.spread.add(result.vararg)
        elif kind == NAMED:
            if name in keyword_names and name not in result.given:
                result.given[name] = i
            elif result.kwarg is not None:
                result.collected_names[name] = i
        elif kind == STAR_STAR:
            result.spread.update(p for p in keyword_names if p not in result.given)
            if result.kwarg is not None:
                result.spread.add(result.kwarg)
    result.spread -= set(result.given)
    return result


def call_kinds(call: ast.Call) -> tuple[list[ast.expr], list[tuple[str, str | None]]]:
    """A call's actual arguments and their kinds, in the order Python binds them. A `*` of a
    tuple or list written out (`*(a, b)`) is its items, one positional argument each."""
    actuals: list[ast.expr] = []
    kinds: list[tuple[str, str | None]] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            if isinstance(arg.value, (ast.Tuple, ast.List)) and not any(
                isinstance(e, ast.Starred) for e in arg.value.elts
            ):
                for element in arg.value.elts:
                    actuals.append(element)
                    kinds.append((POSITIONAL, None))
                continue
            actuals.append(arg)
            kinds.append((STAR, None))
        else:
            actuals.append(arg)
            kinds.append((POSITIONAL, None))
    for keyword in call.keywords:
        actuals.append(keyword.value)
        kinds.append((STAR_STAR, None) if keyword.arg is None else (NAMED, keyword.arg))
    return actuals, kinds


@dataclass
class Binding:
    """What each parameter of a function receives from one call."""

    arguments: dict[str, ast.expr]  # parameter -> the expression passed to it
    collected: list[ast.expr]  # what `*args` collects, in order
    collected_names: dict[str, ast.expr]  # what `**kwargs` collects, by keyword
    spread: frozenset[str]  # parameters a `*xs`/`**kw` argument whose contents are unknown may fill
    vararg: str | None
    kwarg: str | None

    def pairs(self) -> list[tuple[ast.expr, str]]:
        """(argument, parameter) for the arguments bound to a named parameter, in call order."""
        return [(arg, param) for param, arg in self.arguments.items()]

    def collected_pairs(self) -> list[tuple[ast.expr, str]]:
        """(argument, `*args` or `**kwargs`) for each argument such a parameter collects."""
        pairs = [(arg, self.vararg) for arg in self.collected] if self.vararg else []
        if self.kwarg:
            pairs.extend((arg, self.kwarg) for arg in self.collected_names.values())
        return pairs

    def argument(self, param: str) -> ast.expr | None:
        return self.arguments.get(param)


def bind(function: FunctionNode, call: ast.Call, implicit: int = 0) -> Binding:
    """The binding of `call`'s arguments to the parameters of `function`, after its first
    `implicit` ones (`implicit_count`)."""
    actuals, kinds = call_kinds(call)
    found = bind_kinds(function, kinds, implicit)
    return Binding(
        {param: actuals[i] for param, i in found.given.items()},
        [actuals[i] for i in found.collected],
        {name: actuals[i] for name, i in found.collected_names.items()},
        frozenset(found.spread),
        found.vararg,
        found.kwarg,
    )


def forwarded_call(function: FunctionNode) -> tuple[ast.Call, int] | None:
    """The call a function makes when all it does is hand its own arguments on, as received
    (`def f(*args, **kwargs): return g(*args, **kwargs)`, `def m(self, x, *a): return
    self._m(x, *a)`), with how many of its leading parameters it keeps (the `self` it calls
    through): a call that binds exactly those implicitly binds to the forwarded call's callee
    as it would to `function`. None for anything else, a decorated function included."""
    if isinstance(function, ast.Lambda):
        body: list[ast.stmt] = [ast.Return(function.body)]
    else:
        if any(not (isinstance(d, ast.Name) and d.id == "staticmethod") for d in function.decorator_list):
            return None
        body = function.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body = body[1:]
    if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)) or not isinstance(body[0].value, ast.Call):
        return None
    call = body[0].value
    a = function.args
    if a.vararg is None and a.kwarg is None:
        return None  # a wrapper with named parameters only: an analysis follows its body
    positional = [p.arg for p in positional_parameters(function)]
    kept = 1 if positional and _through(call, positional[0]) else 0
    expected = positional[kept:]
    args = call.args
    if [x.id if isinstance(x, ast.Name) else None for x in args[: len(expected)]] != expected:
        return None
    rest = args[len(expected):]
    if a.vararg is not None:
        if len(rest) != 1 or not _names(rest[0], ast.Starred, a.vararg.arg):
            return None
    elif rest:
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    for param in a.kwonlyargs:
        if not _names(keywords.pop(param.arg, None), None, param.arg):
            return None
    if a.kwarg is not None and not _names(keywords.pop(None, None), None, a.kwarg.arg):
        return None
    return (call, kept) if not keywords else None


def _names(node: ast.AST | None, wrapper: type | None, name: str) -> bool:
    if wrapper is not None:
        if not isinstance(node, wrapper):
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _through(call: ast.Call, first: str) -> bool:
    """`self._impl(...)`: the forwarding call goes through the first parameter, which it does
    not pass on."""
    return isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == first
