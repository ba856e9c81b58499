"""What a driven run showed that no static finding covers: events reported as findings of the
matching rule, with the confirmation status "observed".

- a key the key-reuse checker caught (JAX201), at the innermost linted line of the error, unless
  the key came down from code outside the linted files (a test calling one function twice with
  one key, to check it is deterministic);
- a tracer error raised by an `if`, `while` or `assert` on a traced value (JAX101, JAX102, JAX104),
  by `int()`/`float()`/`bool()`/`complex()` (JAX105) or `.item()`/`.tolist()` (JAX106), and the
  TypeError of item assignment on an array (JAX401);
- a leaked tracer (`jax_check_tracer_leaks`) (JAX407), at the statement of the traced function
  that writes outer state, else at the function;
- output showing a jit tracer while tracing (JAX404 for `print`, JAX405 for logging);
- a call site whose jitted callee missed JAX's cache on most of its calls and at least
  MIN_RECOMPILES times, by JAX's own reason (misses.py): new input shapes or dtypes (JAX501), a
  function object made anew each time (JAX502), a different static argument (JAX303), a changed
  static leaf of a pytree argument (JAX504); and one that JAX traced again only because an argument
  came as a weakly typed Python scalar, then as an array (JAX505: one extra compilation is the whole
  bug). Except for a function made anew, within one call into the linted code, so a test trying
  several shapes of a function is not a recompilation bug of that function.

An event is dropped when a static finding of the same category already sits on one of its lines,
and a recompilation when the compile counts a static recompilation finding is judged by include
its call site (a JAX503 loop over a static bound is the same bug as the JAX303 its calls show).
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter

from jaxlint.dynamic import misses
from jaxlint.dynamic.judge import MIN_RECOMPILES, is_tracer_error, statement_runs
from jaxlint.dynamic.locate import FUNCS, OUTPUT_CALLS, first_line

KEY_REUSE, LEAK, PRINT, LOGGING = "JAX201", "JAX407", "JAX404", "JAX405"
# the rule of each kind of cache miss JAX explains, and how it reads in a verdict
MISS_RULES = {
    misses.SHAPES: ("JAX501", "the argument shapes or dtypes changed"),
    misses.REBUILT: ("JAX502", "a new function object on every call"),
    misses.STATIC: ("JAX303", "a static argument changed"),
    misses.STATIC_LEAF: ("JAX504", "a static leaf of a pytree argument changed"),
    misses.WEAK_TYPE: ("JAX505", "an argument came as a weakly typed Python scalar, then as an array"),
}
RECOMPILATION_RULES = frozenset({"JAX303", "JAX501", "JAX502", "JAX503", "JAX504", "JAX505"})
TRACED_FUNCTION = re.compile(r"while tracing the function \S+ at (?P<path>.+?):(?P<line>\d+)")
TRACER_STATEMENTS = {ast.If: "JAX101", ast.While: "JAX102", ast.Assert: "JAX104"}
CONVERSIONS = {"int", "float", "bool", "complex"}
ITEM_ASSIGNMENT = re.compile(r"does not support item assignment|immutable")


def observed_events(sources, runs, failures, cache_misses, staged, static, covered) -> list[dict]:
    """Events of one run. `runs` are per linted file (real path); `failures` (real path, failure,
    linted places of its traceback, whether a reused key came from outside the linted files) per
    exception; `cache_misses` the jit cache misses at linted call sites;
    `staged` output lines that showed a tracer; `static` the (real path, row, category) of every
    static finding; `covered` the (real path, row) of call sites a static recompilation finding's
    compile counts include."""
    events = []
    for real, failure, places, handed_in in failures:
        for f in failure.all():
            if "KeyReuseError" in f.classes and f.frames and f is failure and not handed_in:
                if not any((path, row, 2) in static for path, row in places):
                    events.append(_event(KEY_REUSE, real, f.line, f"JAX's key-reuse checker raised "
                                                                  f"KeyReuseError at line {f.line}: {f.message}"))
            if "Leaked trace" in f.text or "UnexpectedTracerError" in f.classes:
                events += _leak(sources, f, static)
            elif f is failure and f.frames:
                code = _raising_rule(sources[real], f)
                if code and not any((path, row, int(code[3])) in static for path, row in places):
                    events.append(_event(code, real, f.line, f"JAX raised {f.type} at line {f.line}: "
                                                             f"{f.message}"))
    for (real, row), n in staged.items():
        code = _output_code(sources[real], row)
        if code and (real, row, 4) not in static:
            events.append(_event(code, real, row, f"line {row} wrote a jit tracer instead of a value while "
                                                  f"JAX traced ({_times(n)}): it runs when the function is "
                                                  f"compiled, not when it is called"))
    events += _recompiles(sources, runs, cache_misses, static, covered)
    return _unique(events)


def _leak(sources, f, static) -> list[dict]:
    m = TRACED_FUNCTION.search(f.text)
    if not m:
        return []
    real = os.path.realpath(m.group("path"))
    source = sources.get(real)
    if source is None:
        return []
    func = next((n for n in ast.walk(source.tree) if isinstance(n, FUNCS)
                 and first_line(n) <= int(m.group("line")) <= n.lineno), None)
    if func is None:
        return []
    rows = range(first_line(func), func.end_lineno + 1)
    if any((real, row, 4) in static for row in rows):
        return []
    writes = [row for row in range(func.lineno + 1, func.end_lineno + 1) if source.writes_outer_state(row)]
    row = writes[0] if writes else func.lineno
    where = f"line {row} stored it outside the function" if writes else f"it escaped {func.name}"
    return [_event(LEAK, real, row, f"a tracer of {func.name} outlived its trace ({where}): JAX's "
                                    f"leak checker raised {f.type}: {f.message.rstrip(':')}")]


def _recompiles(sources, runs, cache_misses, static, covered) -> list[dict]:
    by_site: dict[tuple, list[dict]] = {}
    for miss in cache_misses:
        by_site.setdefault((miss["path"], miss["row"], miss["code"]), []).append(miss)
    events = []
    for (real, row, code_object), site_misses in by_site.items():
        reason = site_misses[-1]["reason"]
        kind = misses.kind(reason)
        if kind not in MISS_RULES or (real, row) in covered:
            continue
        code, why = MISS_RULES[kind]
        n = len(site_misses)
        if kind != misses.REBUILT:
            # new shapes or static values come from the arguments: they count only when the linted
            # code itself makes the calls, within one call into it (not a test trying three shapes)
            entries = Counter(id(m["entry"]) for m in site_misses)
            n = max(entries.values())
        run = runs.get(real)
        calls = statement_runs(run.rec, sources[real], (code_object, row)) if run is not None else 0
        if kind == misses.WEAK_TYPE:
            if n < 2:  # the first trace, then the one for the array
                continue
        elif n < MIN_RECOMPILES or 2 * n <= calls:
            continue
        if (real, row, int(code[3])) in static:
            continue  # reported at the call
        events.append(_event(code, real, row, f"JAX compiled the function called at line {row} {n} times in "
                                              f"{calls} calls: {why} (JAX: {misses.summary(reason)})"))
    return events


def _raising_rule(source, f) -> str | None:
    """The rule whose bug JAX's error at the failing line is: a tracer error raised by a Python
    `if`/`while`/`assert`, or by `int()`/`float()`/`bool()`/`complex()` or `.item()`/`.tolist()`;
    item assignment on an array."""
    stmt = source.statement_at(f.line)
    if is_tracer_error(f):
        if type(stmt) in TRACER_STATEMENTS:
            return TRACER_STATEMENTS[type(stmt)]
        for call in source.calls_at(f.line):
            func = call.func
            if isinstance(func, ast.Name) and func.id in CONVERSIONS:
                return "JAX105"
            if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist"):
                return "JAX106"
        return None
    if f.type == "TypeError" and ITEM_ASSIGNMENT.search(f.message) and isinstance(stmt, (ast.Assign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(isinstance(t, ast.Subscript) for t in targets):
            return "JAX401"
    return None


def _output_code(source, row: int) -> str | None:
    for call in source.calls_at(row):
        func = call.func
        if isinstance(func, ast.Name) and func.id == "print":
            return PRINT
        if isinstance(func, ast.Attribute) and func.attr in OUTPUT_CALLS - {"print"}:
            return LOGGING
    return None


def _event(code: str, path: str, row: int, detail: str) -> dict:
    return {"code": code, "path": path, "row": row, "detail": detail}


def _unique(events: list[dict]) -> list[dict]:
    seen, out = set(), []
    for e in events:
        if (e["code"], e["path"], e["row"]) not in seen:
            seen.add((e["code"], e["path"], e["row"]))
            out.append(e)
    return out


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"
