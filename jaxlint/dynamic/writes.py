"""What a watched statement of traced code wrote, seen by running it.

After the statement ran while JAX traced, the objects its stores reached (`env.unwrapped.sys =
...` reaches the object `env.unwrapped` is; `seen.append(x)` the list) are looked up in its frame
and kept: strongly when reached from a global or a closure's variable (they live outside the call
anyway), else by weak reference, so that keeping them changes nothing. Once no trace is in
progress, each is looked at: still alive and holding a tracer is a leaked tracer; alive without
one, a write that outlived the trace; gone while the trace was still running, a write that stayed
inside it. A store whose object could not be found or kept (a property, an item of a value that
cannot be weakly referenced, a `nonlocal` cell), or that was gone by the time no trace was in
progress, is unseen: the check says nothing about it.

Its output calls are resolved in the same frame: `print`, `jax.debug.print`, Python's `logging`
(and absl's, built on it) and writes to the recorder's own streams go where the recorder listens;
anything else (an experiment tracker, a file) does not.
"""

from __future__ import annotations

import ast
import builtins
import gc
import itertools
import logging
import weakref
from collections import Counter, defaultdict, deque
from dataclasses import dataclass

from jaxlint.dynamic.locate import Source

SCAN = 256  # items of a container looked at for a tracer
CONTAINERS = (list, dict, set, deque)  # whose items can be read without running the program's code
MISSING = object()


@dataclass(frozen=True)
class Watched:
    """A statement whose writes are observed: its header lines, stores and output callees."""

    lines: frozenset[int]
    stores: tuple
    outputs: tuple


def watch(source: Source, rows) -> dict[int, Watched]:
    """The statements at `rows` (findings' rows) that write or output, by each line of their header."""
    out: dict[int, Watched] = {}
    for row in rows:
        stmt = source.statement_at(row)
        if stmt is None or row in out:
            continue
        stores, outputs = tuple(source.stores_at(row)), tuple(source.output_calls_at(row))
        if stores or outputs:
            lines = frozenset(source.span(row))
            for line in lines:
                out[line] = Watched(lines, stores, outputs)
    return out


@dataclass
class _Pending:
    row: int
    ref: object  # the object, or a weak reference to it
    weak: bool
    read: object  # callable(holder) -> the value the store put there
    what: str  # how the object is named in a verdict
    died_in_trace: bool = False


class Writes:
    """Per watched row: stores that leaked a tracer, outlived the trace, stayed inside it, or went
    unseen (with why), and whether its output calls go where the recorder listens."""

    def __init__(self, watched: dict[int, Watched], clean):
        self.watched = watched
        self._clean = clean  # callable(None): no JAX trace is in progress
        self.leaked: dict[int, str] = {}
        self.outlived: dict[int, str] = {}
        self.inside: Counter = Counter()
        self.unseen: dict[int, str] = {}
        self.channels: dict[int, set[str]] = defaultdict(set)  # "heard" / "unheard"
        self.pending: list[_Pending] = []

    def ran(self, frame, row: int) -> None:
        """The watched statement at `row` finished in `frame`, while JAX traced."""
        w = self.watched[row]
        row = min(w.lines)
        for kind, base, attr in w.stores:
            self._keep(frame, row, kind, base, attr)
        for callee in w.outputs:
            self.channels[row].add("heard" if _heard(resolve(callee, frame)) else "unheard")

    def _keep(self, frame, row: int, kind: str, base, attr) -> None:
        if kind == "nonlocal":
            self.unseen.setdefault(row, f"its write to the nonlocal `{base}` cannot be followed")
            return
        if kind == "global":
            holder, outer, what = frame.f_globals, True, "the module's globals"
            read = lambda g, name=base: g.get(name, MISSING)  # noqa: E731
        else:
            holder, outer = resolve(base, frame), _outer_root(base, frame)
            if holder is None:
                self.unseen.setdefault(row, "the object it writes to could not be looked up")
                return
            what = f"a {type(holder).__name__}"
            if kind == "attribute":
                read = lambda h, name=attr: _attribute(h, name)  # noqa: E731
                what = f"{what} (as its `{attr}`)"
            elif isinstance(holder, CONTAINERS):
                read = _items
            else:
                self.unseen.setdefault(row, f"its write into a {type(holder).__name__} cannot be followed")
                return
        if outer:
            self.pending.append(_Pending(row, holder, False, read, what))
            return
        pending = _Pending(row, None, True, read, what)
        try:
            pending.ref = weakref.ref(holder, lambda _, p=pending: self._died(p))
        except TypeError:  # a value that cannot be weakly referenced, reached from a local
            self.unseen.setdefault(row, f"the {type(holder).__name__} it writes to cannot be followed")
            return
        self.pending.append(pending)

    def _died(self, pending: _Pending) -> None:
        pending.died_in_trace = not self._clean(None)

    def settle(self) -> None:
        """No trace is in progress: look at what each kept store left behind."""
        pending, self.pending = self.pending, []
        suspects = []
        for p in pending:
            holder = p.ref() if p.weak else p.ref
            if holder is None:
                if p.died_in_trace:
                    self.inside[p.row] += 1
                else:
                    self.unseen.setdefault(p.row, "the object it wrote to was gone before it could be looked at")
                continue
            value = _read(p.read, holder)
            if value is MISSING:
                self.unseen.setdefault(p.row, f"its write did not land in {p.what}'s own namespace")
                continue
            found = _tracer_in(value)
            if found is None:
                self.outlived.setdefault(p.row, p.what)
            else:
                suspects.append((p, found))
        if suspects and any(p.weak for p, _ in suspects):
            gc.collect()  # an object kept alive only by a reference cycle is not outliving anything
        for p, found in suspects:
            if p.weak and p.ref() is None:
                self.inside[p.row] += 1
            else:
                self.leaked.setdefault(p.row, f"{found} in {p.what}")


def resolve(expr, frame):
    """A dotted name evaluated in a frame: names from its locals, globals and builtins, then
    attributes (which may run a property); None when it cannot be (another expression, a
    missing name, an attribute that raises)."""
    if isinstance(expr, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
            if expr.id in scope:
                return scope[expr.id]
        return None
    if isinstance(expr, ast.Attribute):
        base = resolve(expr.value, frame)
        try:
            return getattr(base, expr.attr, None) if base is not None else None
        except Exception:  # hostile descriptors
            return None
    return None


def _outer_root(expr, frame) -> bool:
    """The expression starts from a global or a closure's variable, which outlive the call."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return False
    code = frame.f_code
    return expr.id in code.co_freevars or expr.id not in (*code.co_varnames, *code.co_cellvars)


def _attribute(holder, name: str):
    """The attribute as stored in the object's own namespace (no property or __getattr__ runs)."""
    try:
        return vars(holder).get(name, MISSING)
    except TypeError:  # no __dict__ (slots)
        return MISSING


def _items(container) -> list:
    """The items last added to a container (a dict's values), at most SCAN of them."""
    values = container.values() if isinstance(container, dict) else container
    newest = values if isinstance(container, set) else reversed(values)
    return list(itertools.islice(newest, SCAN))


def _read(read, holder):
    try:
        return read(holder)
    except Exception:  # a container changed size while read, a hostile object
        return MISSING


def _tracer_in(value) -> str | None:
    """How a tracer in the value reads in a verdict ("a BatchTracer"), or None when it holds none."""
    import jax

    try:
        leaves = jax.tree_util.tree_leaves(value)
    except Exception:  # a pytree whose flattening fails
        return None
    tracer = next((leaf for leaf in leaves if isinstance(leaf, jax.core.Tracer)), None)
    if tracer is None:
        return None
    inside = f" of a {type(value).__name__}" if value is not tracer and not isinstance(value, list) else ""
    return f"a {type(tracer).__name__}{inside}"


def _heard(fn) -> bool:
    """Whether output through `fn` reaches what the recorder listens to: standard output and error
    (`print`, `jax.debug.print`, the recorder's own streams) and Python's logging."""
    import jax

    if fn is None:
        return False
    owner = getattr(fn, "__self__", None)
    return fn is builtins.print or fn is jax.debug.print or isinstance(owner, logging.Logger) \
        or getattr(owner, "noted", False) is True or getattr(fn, "__module__", None) in ("logging", "absl.logging")
