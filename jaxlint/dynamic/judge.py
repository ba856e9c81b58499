"""Deciding, from one run, whether JAX misbehaved at a finding's line for the finding's reason."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field

from jaxlint.dynamic.locate import Source, header_span
from jaxlint.dynamic.runs import Failure, Run, unwrap_codes

CONFIRMED, NOT_REPRODUCED, INCONCLUSIVE = "confirmed", "not-reproduced", "inconclusive"
TRACER_ERRORS = {
    "ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
    "TracerArrayConversionError", "NonConcreteBooleanIndexError", "UnexpectedTracerError",
}
TRACER_WORDS = re.compile(r"Traced<|tracer|concrete value|abstract value", re.I)
JIT_ARG_WORDS = re.compile(r"static_arg|argnums|argnames|hashable|abstract array|not a valid JAX type", re.I)
MIN_RECOMPILES = 3  # fewer compiles than this never count as a recompilation problem
UNROLL = 50  # executions of a line within one trace that count as a huge unrolled loop


@dataclass
class Verdict:
    status: str
    detail: str
    needs_reference: bool = False  # a run without jit would decide it


@dataclass
class Target:
    """A finding as the judges see it."""

    code: str
    row: int
    span: set[int]  # rows that count as the finding's place
    declared: set[tuple[str, int]]  # functions the finding's line defines or wraps
    writes_state: bool
    source: Source
    notes: list[str] = field(default_factory=list)

    @property
    def category(self) -> int:
        return int(self.code[3])

    @property
    def declared_names(self) -> set[str]:
        return {name for name, _ in self.declared if name != "<lambda>"}


def judge(t: Target, run: Run, ref: Run | None = None) -> Verdict:
    """The verdict one run (with its jit-less reference, when there is one) gives a finding."""
    if run.setup:
        return Verdict(INCONCLUSIVE, f"{run.doing}: {run.setup}")
    decide = {1: _tracing, 2: _randomness, 3: _jit_arguments, 4: _purity, 5: _recompilation}[t.category]
    return decide(t, run, ref) or _fallback(t, run)


# -- per category ---------------------------------------------------------------------------


def _tracing(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    f = run.failure
    if f and _is_tracer_error(f) and f.innermost_lines() & t.span:
        return _confirmed(f"JAX raised {f.type} at line {t.row} {run.doing}: {f.message}")
    traced = _most(run.rec.traced, t.span)
    if traced and not (f and f.line in t.span):
        return Verdict(NOT_REPRODUCED, f"line {t.row} ran {_times(traced)} under a JAX trace {run.doing} without error")
    return None


def _randomness(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    f = run.failure
    if f and "KeyReuseError" in f.classes and _key_reuse_lines(f) & t.span:
        return _confirmed(f"JAX's key-reuse checker raised KeyReuseError {f.where()} {run.doing}: {f.message}")
    made = _constant_key(t, run)
    if made:
        return _confirmed(made)
    effect = _side_effect(t, run, ref, ("rng",))
    if effect is not None and (effect.status == CONFIRMED or effect.needs_reference):
        return effect
    ran = _most(run.rec.lines, t.span)
    if ran and not (f and f.line in t.span) and (run.faithful or run.transformed or _most(run.rec.traced, t.span)):
        return Verdict(NOT_REPRODUCED, f"line {t.row} ran {_times(ran)} {run.doing} with JAX's key-reuse "
                                       f"checker on; no key was reused there")
    return None


def _jit_arguments(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    f = run.failure
    if f and f.type in ("ValueError", "TypeError") and JIT_ARG_WORDS.search(f.message):
        synthesized_value = not run.faithful and "hashable" in f.message
        if not synthesized_value and _failure_is_about(t, run, f):
            return _confirmed(f"JAX raised {f.type} {f.where()} {run.doing}: {f.message}")
    if f and "has been deleted" in f.message and (f.line in t.span or _donated_here(t, f)):
        return _confirmed(f"a donated buffer was used after the call: {f.type} {f.where()} {run.doing}: {f.message}")
    if any("donated buffers were not usable" in w for w in run.rec.warnings):
        return Verdict(INCONCLUSIVE, f"the backend did not donate the buffers {run.doing} (donation is "
                                     f"ignored there), so reuse after donation cannot be observed")
    return _recompiles(t, run)


def _purity(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    f = run.failure
    if f and f.line in t.span:
        if f.type == "TypeError" and re.search(r"item assignment|immutable", f.message):
            return _confirmed(f"JAX raised TypeError at line {t.row} {run.doing}: {f.message}")
        if "UnexpectedTracerError" in f.classes or "Leaked trace" in f.text:
            return _confirmed(f"JAX raised {f.type} at line {t.row} {run.doing}: {f.message}")
    if f and "UnexpectedTracerError" in f.classes:
        created = {int(m) for m in re.findall(re.escape(t.source.path) + r":(\d+)", f.text)}
        if created & t.span:
            return _confirmed(f"a tracer from line {t.row} escaped its trace: {f.type} {f.where()} {run.doing}")
    return _side_effect(t, run, ref, ("io", "state"))


def _recompilation(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    verdict = _recompiles(t, run)
    if verdict is not None and verdict.status == CONFIRMED:
        return verdict
    sessions = set().union(*(run.rec.sessions.get(line, set()) for line in t.span))
    traced = _most(run.rec.traced, t.span)
    if sessions and traced / len(sessions) >= UNROLL:
        per = traced // len(sessions)
        return _confirmed(f"line {t.row} ran {per} times within a single trace {run.doing}: "
                          f"the Python loop is unrolled into the compiled program")
    return verdict


def _fallback(t: Target, run: Run) -> Verdict:
    """No evidence either way: say how far the run got."""
    f = run.failure
    ran = _most(run.rec.lines, t.span)
    if f and f.line in t.span:
        return Verdict(INCONCLUSIVE, f"{run.doing} raised {f.type} at line {t.row} for another reason: {f.message}")
    if not ran:
        if f:
            return Verdict(INCONCLUSIVE, f"{run.doing} stopped with {f.type} {f.where()} before line {t.row} "
                                         f"ran: {f.message}")
        return Verdict(INCONCLUSIVE, f"line {t.row} never ran {run.doing}")
    if not _most(run.rec.traced, t.span):
        if run.faithful and t.category in (1, 4):
            return Verdict(NOT_REPRODUCED, f"line {t.row} ran {_times(ran)} {run.doing}, never under a JAX "
                                           f"trace, so Python saw concrete values")
        return Verdict(INCONCLUSIVE, f"line {t.row} ran only outside JAX transformations {run.doing}")
    return Verdict(INCONCLUSIVE, f"line {t.row} ran {run.doing} but showed nothing to judge by")


# -- evidence -------------------------------------------------------------------------------


def _side_effect(t: Target, run: Run, ref: Run | None, kinds: tuple[str, ...]) -> Verdict | None:
    """A Python side effect that happens while tracing only, so later (cached) calls skip it."""
    rec = run.rec
    if run.eager or not _most(rec.traced, t.span):
        return None
    witness = []
    if "io" in kinds and _most(rec.effects["io"], t.span):
        witness.append("it wrote output or logged while tracing")
    if "state" in kinds and t.writes_state:
        witness.append("it writes state that outlives the call")
    if "rng" in kinds and _most(rec.effects["rng"], t.span):
        witness.append("it drew from a stateful random generator while tracing")
    if "rng" in kinds and ref is not None and _frozen(run, ref):
        witness.append("the compiled function returned the same 'random' values on every call")
    only, how = _trace_only(t, run, ref)
    if not witness:
        if "rng" in kinds:
            return None  # randomness findings are also about keys: let the key evidence speak
        return Verdict(NOT_REPRODUCED, f"line {t.row} ran under a JAX trace {run.doing} but did nothing outside "
                                       f"the traced computation (no output, logging or outside write)")
    if only is None:
        return Verdict(INCONCLUSIVE, f"line {t.row} ran while tracing {run.doing}; it was not called "
                                     f"often enough to tell", needs_reference=ref is None)
    if only:
        return _confirmed(f"line {t.row} ran only while JAX traced ({how}) {run.doing}, and {witness[0]}: "
                          f"the effect is skipped on cached calls")
    return Verdict(NOT_REPRODUCED, f"line {t.row} ran on every call ({how}) {run.doing}: JAX re-traced it "
                                   f"each time")


def _trace_only(t: Target, run: Run, ref: Run | None) -> tuple[bool | None, str]:
    rec = run.rec
    sessions = set().union(*(rec.sessions.get(line, set()) for line in t.span))
    sites: dict = {}
    for s in sessions:
        sites[rec.session_site[s]] = sites.get(rec.session_site[s], 0) + 1
    for site, traces in sites.items():
        calls = _site_calls(t, run, site)
        if traces < calls:
            return True, f"traced in {traces} of {calls} calls" + (f" from line {site}" if site else "")
    if ref is not None and not ref.setup:
        jit_runs, eager_runs = _most(rec.lines, t.span), _most(ref.rec.lines, t.span)
        if eager_runs > jit_runs:
            return True, f"{_times(jit_runs)} with jit, {_times(eager_runs)} without"
        if not ref.failure:
            return False, f"{_times(jit_runs)} with and without jit"
    return None, ""


def _recompiles(t: Target, run: Run) -> Verdict | None:
    """The compile count of a jitted function called from (or declared at) the finding's line."""
    if not run.faithful:
        return None
    groups = [
        (name, site, n) for (name, site), n in run.rec.compiles.items()
        if (site is not None and site in t.span) or name in t.declared_names
    ]
    seen = []
    for name, site, n in sorted(groups, key=lambda g: -g[2]):
        calls = _site_calls(t, run, site)
        where = f"in {calls} calls from line {site}" if site else f"in {calls} calls"
        if n >= MIN_RECOMPILES and 2 * n > calls:
            return _confirmed(f"JAX compiled {name} {_times(n)} {where} {run.doing}")
        seen.append(f"{name} {_times(n)} {where}")
    if not seen:
        if t.declared_names and run.failure is None:
            return Verdict(INCONCLUSIVE, f"{', '.join(sorted(t.declared_names))} was never compiled {run.doing}")
        return None
    stopped = f", then it stopped with {run.failure.type} {run.failure.where()}" if run.failure else ""
    return Verdict(NOT_REPRODUCED, f"JAX compiled {'; '.join(seen[:2])} {run.doing}{stopped}")


def _constant_key(t: Target, run: Run) -> str | None:
    """A key made from the same constant seed on repeated calls of the program."""
    if not run.faithful:
        return None
    made = [k for k in run.rec.keys if k.line in t.span and k.seed is not None]
    eager: dict[int, int] = {}
    for k in made:
        if k.session is None:
            eager[k.seed] = eager.get(k.seed, 0) + 1
    for seed, n in eager.items():
        if n >= 2:
            return f"line {t.row} made the same PRNG key (seed {seed}) {n} times {run.doing}: each call draws the same numbers"
    for k in made:
        if k.session is not None:
            site = run.rec.session_site[k.session]
            calls = _site_calls(t, run, site)
            if calls >= 2 and calls > len({m.session for m in made if m.session is not None}):
                return (f"line {t.row} made a PRNG key from constant seed {k.seed} while tracing {run.doing}; the "
                        f"compiled function reuses that key on all {calls} calls")
    return None


def _key_reuse_lines(f: Failure) -> set[int]:
    """Lines a KeyReuseError points at: the innermost frame, the operation's source (under jit),
    and callers that handed the very same key object down to it."""
    lines = set(f.innermost_lines())
    for cause in f.causes:
        lines.update(cause)
    if f.frames:
        keys = _key_ids(f.frames[-1][1])
        for line, frame in reversed(f.frames[:-1]):
            if not keys & _key_ids(frame):
                break
            lines.add(line)
    return lines


def _key_ids(frame) -> set[int]:
    import jax

    ids = set()
    for value in frame.f_locals.values():
        dtype = getattr(value, "dtype", None)
        try:
            if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
                ids.add(id(value))
        except TypeError:
            continue
    return ids


def _failure_is_about(t: Target, run: Run, f: Failure) -> bool:
    """The failure is at the finding's line, or at a call of a function the finding's line declares."""
    if f.line in t.span:
        return True
    if not f.frames:
        return run.entry_key in t.declared
    line, frame = f.frames[-1]
    for call in t.source.calls_at(line):
        callee = _resolve(call.func, frame)
        for code in unwrap_codes(callee):
            if code.co_filename == t.source.path and (code.co_name, code.co_firstlineno) in t.declared:
                return True
    return False


def _donated_here(t: Target, f: Failure) -> bool:
    """A deleted array in the failing frame was passed to a call on the finding's line."""
    if not f.frames:
        return False
    frame = f.frames[-1][1]
    deleted = {name for name, v in frame.f_locals.items() if _is_deleted(v)}
    for row in t.span:
        for call in t.source.calls_at(row):
            if any(isinstance(a, ast.Name) and a.id in deleted for a in call.args):
                return True
    return False


def _is_deleted(value) -> bool:
    try:
        return bool(value.is_deleted())
    except Exception:  # not a jax array
        return False


def _resolve(expr: ast.AST, frame):
    """Evaluate a dotted name in a frame without running arbitrary code."""
    if isinstance(expr, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
            if expr.id in scope:
                return scope[expr.id]
        return None
    if isinstance(expr, ast.Attribute):
        base = _resolve(expr.value, frame)
        try:
            return getattr(base, expr.attr, None) if base is not None else None
        except Exception:  # hostile descriptors
            return None
    return None


def _frozen(run: Run, ref: Run) -> bool:
    import numpy as np

    def same(a, b):
        return len(a) == len(b) and all(
            np.array_equal(x, y) if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) else x == y
            for x, y in zip(a, b)
        )

    return (len(run.outputs) >= 2 and same(run.outputs[0], run.outputs[1])
            and len(ref.outputs) >= 2 and not same(ref.outputs[0], ref.outputs[1]))


def _site_calls(t: Target, run: Run, site: int | None) -> int:
    """How often the statement at a call site ran (the probe's own calls when site is None)."""
    if site is None:
        return run.calls
    stmt = t.source.statement_at(site)
    lo, hi = header_span(stmt) if stmt is not None else (site, site)
    return max(run.rec.lines.get(line, 0) for line in range(lo, hi + 1))


def _is_tracer_error(f: Failure) -> bool:
    if TRACER_ERRORS & set(f.classes):
        return True
    return f.type in ("IndexError", "TypeError", "ValueError") and bool(
        TRACER_WORDS.search(f.message) or "Shapes must be 1D sequences of concrete values" in f.message
    )


def _most(counter, lines) -> int:
    return max((counter.get(line, 0) for line in lines), default=0)


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _confirmed(detail: str) -> Verdict:
    return Verdict(CONFIRMED, detail)
