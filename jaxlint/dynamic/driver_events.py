"""What a driven run showed that no static finding covers: events reported as findings of the
matching rule, with the confirmation status "observed".

- a key the key-reuse checker caught (JAX201), at the innermost linted line of the error;
- a tracer error raised by an `if`, `while` or `assert` on a traced value (JAX101, JAX102, JAX104);
- a leaked tracer (`jax_check_tracer_leaks`) (JAX407), at the statement of the traced function
  that writes outer state, else at the function;
- output showing a jit tracer while tracing (JAX404 for `print`, JAX405 for logging);
- a call site whose jitted callee missed JAX's cache on most of its calls and at least
  MIN_RECOMPILES times, by JAX's own reason: new input shapes or dtypes (JAX501), a function
  object made anew each time (JAX502), a different static argument (JAX303).

An event is dropped when a static finding of the same category already sits on one of its lines.
"""

from __future__ import annotations

import ast
import os
import re

from jaxlint.dynamic.judge import MIN_RECOMPILES, is_tracer_error
from jaxlint.dynamic.locate import FUNCS, first_line

KEY_REUSE, LEAK, PRINT, LOGGING = "JAX201", "JAX407", "JAX404", "JAX405"
SHAPES, REBUILT, STATIC = "JAX501", "JAX502", "JAX303"
TRACED_FUNCTION = re.compile(r"while tracing the function \S+ at (?P<path>.+?):(?P<line>\d+)")
TRACER_STATEMENTS = {ast.If: "JAX101", ast.While: "JAX102", ast.Assert: "JAX104"}
DEFINED_AT = re.compile(r"defined at (?P<path>\S+?):(?P<line>\d+)")


def observed_events(sources, runs, failures, misses, staged, static) -> list[dict]:
    """Events of one run. `runs` are per linted file (real path); `failures` (real path, failure,
    linted places of its traceback) per exception; `misses` the jit cache misses at linted call sites;
    `staged` output lines that showed a tracer; `static` the (real path, row, category) of every
    static finding."""
    events = []
    for real, failure, places in failures:
        for f in failure.all():
            if "KeyReuseError" in f.classes and f.frames and f is failure:
                if not any((path, row, 2) in static for path, row in places):
                    events.append(_event(KEY_REUSE, real, f.line, f"JAX's key-reuse checker raised "
                                                                  f"KeyReuseError at line {f.line}: {f.message}"))
            if "Leaked trace" in f.text or "UnexpectedTracerError" in f.classes:
                events += _leak(sources, f, static)
            elif f is failure and f.frames and is_tracer_error(f):
                code = TRACER_STATEMENTS.get(type(sources[real].statement_at(f.line)))
                if code and not any((path, row, 1) in static for path, row in places):
                    events.append(_event(code, real, f.line, f"JAX raised {f.type} at line {f.line}: "
                                                             f"{f.message}"))
    for (real, row), n in staged.items():
        code = _output_code(sources[real], row)
        if code and (real, row, 4) not in static:
            events.append(_event(code, real, row, f"line {row} wrote a jit tracer instead of a value while "
                                                  f"JAX traced ({_times(n)}): it runs when the function is "
                                                  f"compiled, not when it is called"))
    events += _recompiles(runs, misses, static)
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


def _recompiles(runs, misses, static) -> list[dict]:
    by_site: dict[tuple, list[str]] = {}
    for miss in misses:
        by_site.setdefault((miss["path"], miss["row"], miss["code"]), []).append(miss["reason"])
    events = []
    for (real, row, code_object), reasons in by_site.items():
        run = runs.get(real)
        calls = run.rec.code_lines.get((code_object, row), 0) if run is not None else 0  # in the caller's frame
        if len(reasons) < MIN_RECOMPILES or 2 * len(reasons) <= calls:
            continue
        code, why = _miss_kind(reasons[-1])
        if code is None:
            continue
        category = int(code[3])
        d = DEFINED_AT.search(reasons[-1])
        defined = (os.path.realpath(d.group("path")), int(d.group("line"))) if d else None
        if (real, row, category) in static or (defined and (*defined, category) in static):
            continue  # reported at the call or at the jitted function's definition
        events.append(_event(code, real, row, f"JAX compiled the function called at line {row} "
                                              f"{len(reasons)} times in {calls} calls: {why}"))
    return events


def _miss_kind(reason: str) -> tuple[str | None, str]:
    """The rule a cache miss reason points at, and the reason in one line."""
    text = " ".join(line.strip() for line in reason.splitlines() if line.strip())
    if "never seen function" in text and "same line" in text:
        return REBUILT, "a new function object on every call (JAX: " + text[:160] + ")"
    if "Static(" in text or "static argument" in text:
        return STATIC, "a static argument changed (JAX: " + text[-160:] + ")"
    if "different input types" in text:
        return SHAPES, "the argument shapes or dtypes changed (JAX: " + text[-160:] + ")"
    return None, text


def _output_code(source, row: int) -> str | None:
    for call in source.calls_at(row):
        func = call.func
        if isinstance(func, ast.Name) and func.id == "print":
            return PRINT
        if isinstance(func, ast.Attribute) and func.attr in ("debug", "info", "warning", "warn", "error",
                                                             "exception", "critical", "fatal", "log"):
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
