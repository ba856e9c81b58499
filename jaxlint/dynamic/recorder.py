"""Instrumentation of one file while JAX runs it: which lines ran, which ran while tracing, what they did."""

from __future__ import annotations

import functools
import io
import logging
import os
import random
import re
import sys
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from jaxlint.dynamic.writes import Watched, Writes

TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
NUMPY_SAMPLERS = (
    "random rand randn randint random_integers random_sample ranf sample choice bytes shuffle "
    "permutation uniform normal standard_normal beta binomial chisquare dirichlet exponential f "
    "gamma geometric gumbel hypergeometric laplace logistic lognormal logseries multinomial "
    "multivariate_normal negative_binomial noncentral_chisquare noncentral_f pareto poisson power "
    "rayleigh standard_cauchy standard_exponential standard_gamma standard_t triangular vonmises "
    "wald weibull zipf"
).split()
PY_SAMPLERS = (
    "random uniform randint choice choices gauss normalvariate shuffle sample randrange betavariate "
    "expovariate gammavariate lognormvariate triangular vonmisesvariate paretovariate "
    "weibullvariate getrandbits"
).split()
LOG_METHODS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log")
STAGED_TRACER = re.compile(r"Traced<|JitTracer\(|DynamicJaxprTracer|JaxprTracer")  # how jit tracers print

KEY_READERS = {"key_data", "key_impl"}  # jax.random functions that look at a key without drawing from it
# jax.random functions that take a key without consuming it, so JAX's key-reuse checker never
# checks their key: `fold_in` derives a new key and leaves its input as it was
UNCHECKED_KEY_USES = {"fold_in"}

# traces in which the code sees abstract values (a jit, scan or other staging trace; vmap's
# batching): Python's `if`, `int()` or NumPy on a traced value fail there, where under
# `jax.grad` alone the values stay concrete
ABSTRACT_TRACES = frozenset({"DynamicJaxprTrace", "BatchTrace"})
CACHE_MISS = re.compile(r"TRACING CACHE MISS at .*?\n(?P<reason>.*)", re.S)

ACTIVE: Recorder | None = None
ROUTE_KEYS = [False]  # route legacy jax.random.PRNGKey to typed keys, which the reuse checker tracks
JAX_LOGGING = [0]  # > 0 while JAX's own logging runs: its output is not the program's


@dataclass
class _Frame:
    traced: bool
    abstract: bool  # the trace gives the code abstract values
    session: int | None
    site: tuple | None  # (code, line) of the untraced caller that started the trace session
    line: int = 0  # the line the frame ran last


@dataclass
class Compile:
    """One compilation JAX reported outside any trace: of what, from where, and which code of the
    file its trace ran."""

    fun_name: str | None
    site: tuple | None  # (code, line) of the innermost frame of the file on the stack
    stack: tuple  # (code, line) of every frame of the file on the stack, innermost first
    sessions: tuple  # trace sessions of the file's code that JAX traced for it
    reason: str | None = None  # JAX's explanation of the cache miss that led to it, when it gave one

    def mine(self, names: set[str]) -> bool:
        """Whether it compiled the file's own code (or a function named as one of the file's)."""
        return bool(self.sessions) or self.fun_name in names


@dataclass
class _SiteWork:
    """What traced code did at one call site since JAX last traced there: its trace sessions, and
    the lines whose key uses JAX's key-reuse checker sees only once the trace is checked."""

    sessions: list = field(default_factory=list)
    key_lines: list = field(default_factory=list)
    reason: str | None = None


@dataclass
class KeyMade:
    """One call of `jax.random.key`/`PRNGKey` from the file."""

    line: int
    seed: int | None
    session: int | None


class Recorder:
    """Counts line executions of one file under `sys.settrace`, grouping traced ones by trace session.

    A trace session starts when a function of the file begins running under a JAX trace called
    from code that is not itself traced; its site is (code, line) of that untraced caller (None
    when the probe called it directly). Lines are also counted per code object, so a call site's
    count is not inflated by a lambda defined on the same line.
    """

    def __init__(self, path: str, trace_clean, function_names: set[str], watched: dict[int, Watched] | None = None):
        self.path = path
        self._clean = trace_clean
        self._abstract = getattr(trace_clean, "abstract", None)
        self.names = function_names  # names JAX reports for the file's functions when it traces them
        self.lines: Counter = Counter()
        self.code_lines: Counter = Counter()  # (code, line) -> executions
        self.back: Counter = Counter()  # (code, line, from_line) -> jumps back to line from a later one
        self.traced: Counter = Counter()
        # lines run where the trace gave them abstract values; None where this JAX does not tell
        self.abstract: Counter | None = Counter() if self._abstract is not None else None
        self.writes = Writes(watched or {}, trace_clean)
        self.sessions: dict[int, set] = defaultdict(set)
        self.session_site: dict[int, tuple | None] = {}
        # "staged" counts output that showed a jit tracer instead of a value
        self.effects: dict[str, Counter] = {"io": Counter(), "rng": Counter(), "staged": Counter()}
        self.compiled: list[Compile] = []
        self.session_root: dict[int, tuple[str, int]] = {}  # session -> (co_name, co_firstlineno) it began in
        self.keys: list[KeyMade] = []
        # keys handed to jax.random while each line ran: typed ones, which JAX's key-reuse checker
        # tracks; of those, the ones it checked (at once outside a trace, else once the jit trace
        # they were used in finished and was checked); legacy uint32 ones, which it cannot see; and
        # uses it never checks (UNCHECKED_KEY_USES), by function name
        self.key_uses: dict[str, Counter] = {"typed": Counter(), "checked": Counter(), "legacy": Counter()}
        self.unchecked_uses: dict[int, set[str]] = defaultdict(set)
        self.routing = ROUTE_KEYS[0]  # legacy `jax.random.PRNGKey` made typed keys during the run
        self.warnings: list[str] = []
        self._frames: dict[int, _Frame] = {}
        self._next_session = 0
        self._open: dict[tuple | None, _SiteWork] = {}  # per call site, since JAX last traced there
        self._traced: dict[tuple | None, _SiteWork] = {}  # per call site, of the trace JAX just finished
        self._trace_names: dict[tuple | None, str | None] = {}
        self._files: dict[str, bool] = {}

    def __enter__(self) -> Recorder:
        global ACTIVE
        ACTIVE = self
        self.routing |= ROUTE_KEYS[0]
        sys.settrace(self._on_call)
        threading.settrace(self._on_call)  # threads the user's code starts meanwhile
        return self

    def __exit__(self, *exc) -> None:
        global ACTIVE
        sys.settrace(None)
        threading.settrace(None)
        ACTIVE = None
        self.settle()
        self._frames.clear()

    def settle(self) -> None:
        """Look at what the watched statements left behind, where no trace is in progress."""
        if self.writes.pending and self._clean(None):
            self.writes.settle()

    # -- settrace callbacks ------------------------------------------------------------------

    def mine(self, filename: str) -> bool:
        """Whether code of `filename` is the file's (imported by another path to it, too)."""
        known = self._files.get(filename)
        if known is None:
            known = self._files[filename] = filename == self.path or (
                os.path.realpath(filename) == os.path.realpath(self.path))
        return known

    def _user_caller(self, frame):
        caller = frame.f_back
        while caller is not None and not self.mine(caller.f_code.co_filename):
            caller = caller.f_back
        return caller

    def _on_call(self, frame, event, arg):
        if not self.mine(frame.f_code.co_filename):
            return None
        caller = self._user_caller(frame)
        traced = not self._clean(frame)
        abstract = traced and self._abstract is not None and self._abstract()
        session = site = None
        if traced:
            up = self._frames.get(id(caller)) if caller is not None else None
            if up is not None and up.traced:
                session, site = up.session, up.site
            else:
                site = (caller.f_code, caller.f_lineno) if caller is not None else None
                self._next_session += 1
                session = self._next_session
                self.session_site[session] = site
                self.session_root[session] = (frame.f_code.co_name, frame.f_code.co_firstlineno)
                self._open.setdefault(site, _SiteWork()).sessions.append(session)
        self._frames[id(frame)] = _Frame(traced, abstract, session, site)
        return self._on_event

    def _on_event(self, frame, event, arg):
        if event == "line":
            line = frame.f_lineno
            self.lines[line] += 1
            self.code_lines[(frame.f_code, line)] += 1
            info = self._frames.get(id(frame))
            if info is not None:
                if info.line > line:
                    self.back[(frame.f_code, line, info.line)] += 1
                self._left(frame, info, line)
                info.line = line
                if info.traced:
                    self.traced[line] += 1
                    self.sessions[line].add(info.session)
                    if info.abstract:
                        self.abstract[line] += 1
                elif self.writes.pending:
                    self.settle()
        elif event == "return":
            info = self._frames.pop(id(frame), None)
            if info is not None:
                self._left(frame, info, None)
                if not info.traced and self.writes.pending:
                    self.settle()
        return self._on_event

    def _left(self, frame, info: _Frame, line: int | None) -> None:
        """The frame moves on to `line` (None: it returns): a watched statement it ran while JAX
        traced is done."""
        watched = self.writes.watched.get(info.line)
        if watched is not None and info.traced and line not in watched.lines:
            self.writes.ran(frame, info.line)

    # -- hooks -------------------------------------------------------------------------------

    def _user_frames(self):
        frame = sys._getframe(1)
        while frame is not None:
            if self.mine(frame.f_code.co_filename):
                yield frame
            frame = frame.f_back

    def _site(self) -> tuple | None:
        """(code, line) of the innermost frame of the file on the stack: where JAX was called from."""
        frame = next(self._user_frames(), None)
        return (frame.f_code, frame.f_lineno) if frame is not None else None

    def note_effect(self, kind: str, staged: bool = False) -> None:
        """A Python side effect (output, logging, stateful RNG) happened; credit traced lines on the stack."""
        if JAX_LOGGING[0] or self._clean(None):
            return
        for frame in self._user_frames():
            info = self._frames.get(id(frame))
            if info is not None and info.traced:
                self.effects[kind][frame.f_lineno] += 1
                if staged:
                    self.effects["staged"][frame.f_lineno] += 1

    def note_key(self, seed) -> None:
        frame = next(self._user_frames(), None)
        if frame is None:
            return
        info = self._frames.get(id(frame))
        try:
            value = int(seed)
        except Exception:  # a tracer or an array: not a constant seed
            value = None
        self.keys.append(KeyMade(frame.f_lineno, value, info.session if info and info.traced else None))

    def note_key_use(self, function: str, typed: bool) -> None:
        """jax.random's `function` took a key: credit every line of the file on the stack (the call
        that led there). A typed key used outside any trace is checked at once; one used while JAX
        traces, only once that trace is done and checked (note_key_check)."""
        lines = {frame.f_lineno for frame in self._user_frames()}
        if function in UNCHECKED_KEY_USES:
            for line in lines:
                self.unchecked_uses[line].add(function)
            return
        for line in lines:
            self.key_uses["typed" if typed else "legacy"][line] += 1
        if not typed:
            return
        if not getattr(self._clean, "exact", False):
            return  # cannot tell a traced use from an eager one: none counts as checked
        if self._clean(None):
            for line in lines:
                self.key_uses["checked"][line] += 1
        else:
            frame = next(self._user_frames(), None)
            info = self._frames.get(id(frame)) if frame is not None else None
            site = info.site if info is not None and info.traced else self._site()
            self._open.setdefault(site, _SiteWork()).key_lines.append(lines)

    def note_trace_start(self) -> None:
        """JAX begins tracing a jit-compiled function outside any trace: what it traced at this
        site before is not what it will check or compile next."""
        self._traced.pop(self._site(), None)

    def note_trace(self, fun_name: str | None) -> None:
        """JAX finished (or gave up) tracing a jit-compiled function outside any trace: what ran
        traced from this site since its last trace belongs to this one."""
        site = self._site()
        self._traced[site] = self._open.pop(site, None) or _SiteWork()
        self._trace_names[site] = fun_name
        self.settle()

    def note_miss(self, reason: str) -> None:
        """JAX explained a cache miss of a jit-compiled function called outside any trace (as it
        finishes tracing it again): the reason of the trace, and of the compilation that follows."""
        self._open.setdefault(self._site(), _SiteWork()).reason = reason

    def note_key_check(self) -> None:
        """JAX's key-reuse checker checked a jaxpr without error: outside any trace, the jaxpr of
        the trace just finished at this site."""
        if not (getattr(self._clean, "exact", False) and self._clean(None)):
            return
        for lines in self._traced.get(self._site(), _SiteWork()).key_lines:
            for line in lines:
                self.key_uses["checked"][line] += 1

    def note_compile(self) -> None:
        """JAX compiled what it traced last at this site (outside any trace)."""
        frames = list(self._user_frames())
        site = (frames[0].f_code, frames[0].f_lineno) if frames else None
        work = self._traced.pop(site, None) or _SiteWork()
        name = self._trace_names.get(site)
        if name is None and work.sessions:  # JAX versions that do not name the function
            name = self.session_root[work.sessions[0]][0]
        stack = tuple((f.f_code, f.f_lineno) for f in frames)
        self.compiled.append(Compile(name, site, stack, tuple(work.sessions), work.reason))


class _Sink(io.TextIOBase):
    """Stands in for sys.stdout/stderr: notes writes made while tracing, keeps nothing."""

    noted = True  # what is written here is noted (writes.py asks)

    def __init__(self, fd: int):
        self._fd = fd
        self.buffer = _ByteSink(self)

    @property
    def encoding(self):
        return "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        if ACTIVE is not None:
            ACTIVE.note_effect("io", bool(STAGED_TRACER.search(str(text))))
        return len(text)

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False


class _ByteSink(io.RawIOBase):
    """The `buffer` of a _Sink, for code that writes bytes to sys.stdout.buffer."""

    def __init__(self, text: _Sink):
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._text.write(bytes(data).decode("utf-8", "replace"))
        return len(data)


def _noting(kind: str, fn, tracer_type=None, text: bool = False):
    """Wrap `fn` to report each call as an effect (and whether it was handed a jit tracer, or, with
    `text`, a string showing one, as an f-string of a tracer does)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if ACTIVE is not None:
            staged = tracer_type is not None and any(
                (isinstance(a, tracer_type) and STAGED_TRACER.search(repr(a)))
                or (text and isinstance(a, str) and STAGED_TRACER.search(a))
                for a in (*args, *kwargs.values())
            )
            ACTIVE.note_effect(kind, staged)
        return fn(*args, **kwargs)

    return wrapper


def _logging(fn, tracer_type):
    """`_noting` for a `logging.Logger` method, but not for JAX's own loggers: what JAX logs (its
    cache-miss explanations among it), and what handlers write for it, is not the program's output."""
    noting = _noting("io", fn, tracer_type)

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if self.name != "jax" and not self.name.startswith("jax."):
            return noting(self, *args, **kwargs)
        JAX_LOGGING[0] += 1
        try:
            return fn(self, *args, **kwargs)
        finally:
            JAX_LOGGING[0] -= 1

    return wrapper


class _CacheMisses(logging.Handler):
    """Hands JAX's explanations of its jit cache misses (`jax_explain_cache_misses`) to ACTIVE."""

    def __init__(self):
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            m = CACHE_MISS.match(record.getMessage())
        except Exception:  # noqa: BLE001 - a record that cannot be formatted
            return
        if m and ACTIVE is not None:
            ACTIVE.note_miss(m.group("reason").strip())


def trace_clean_function():
    """A callable(frame) telling whether no JAX trace is in progress; its `exact` attribute says
    whether it knows (without a frame, the fallback answers True), its `abstract` attribute is a
    callable() telling whether the trace in progress gives the code abstract values (None where
    this JAX does not say)."""
    import jax

    try:
        from jax._src.core import trace_state_clean
    except ImportError:  # fall back to looking for tracers among the frame's locals
        tracer = jax.core.Tracer

        def clean(frame):
            if frame is None:
                return True
            return not any(isinstance(v, tracer) for v in frame.f_locals.values())

        clean.exact = False
        clean.abstract = None
        return clean

    def exact(frame):
        return trace_state_clean()

    exact.exact = True
    exact.abstract = _abstract_function()
    return exact


def _abstract_function():
    """A callable() telling whether one of the traces in progress is one of ABSTRACT_TRACES (JAX's
    current trace and the traces it was started in); None where this JAX keeps no such chain."""
    try:
        from jax._src.core import trace_ctx
    except ImportError:
        return None

    def abstract() -> bool:
        trace = trace_ctx.trace
        while trace is not None:
            if type(trace).__name__ in ABSTRACT_TRACES:
                return True
            trace = getattr(trace, "parent_trace", None)
        return False

    return abstract


def _watch_key_checks() -> None:
    """Note, for each key a jax.random function takes, whether it is a typed key. Every such
    function hands its key to one private check (jax._src.random, `_check_prng_key`), which says
    whether it had to wrap a legacy key; where this JAX has none, no key use is noted, and key
    findings are not called not-reproduced."""
    import importlib

    for name in ("jax._src.random.core", "jax._src.random"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        check = getattr(module, "_check_prng_key", None)
        if callable(check):
            break
    else:
        return

    @functools.wraps(check)
    def checked(name, key, *args, **kwargs):
        out = check(name, key, *args, **kwargs)
        if ACTIVE is not None and name not in KEY_READERS and isinstance(out, tuple) and len(out) == 2:
            ACTIVE.note_key_use(name, typed=not out[1])
        return out

    module._check_prng_key = checked


def _watch_key_reuse_checks() -> None:
    """Note each check of a finished jit trace by JAX's key-reuse checker (its private
    `check_key_reuse_jaxpr`, which jit looks up on every trace). Where this JAX has none, no traced
    key use counts as checked, and key findings on traced lines are not called not-reproduced."""
    try:
        from jax.experimental.key_reuse import _core as module
    except ImportError:
        return
    check = getattr(module, "check_key_reuse_jaxpr", None)
    if not callable(check):
        return

    @functools.wraps(check)
    def checked(*args, **kwargs):
        out = check(*args, **kwargs)
        if ACTIVE is not None:
            ACTIVE.note_key_check()
        return out

    module.check_key_reuse_jaxpr = checked


def install_hooks(sink_output: bool = True) -> None:
    """Patch output, logging, stateful RNGs, key constructors and trace events to report to ACTIVE.

    With `sink_output`, sys.stdout/stderr are replaced by sinks that note and drop writes; without
    it (where a test runner owns the streams), `print` itself reports and still prints."""
    import builtins

    import jax
    import numpy as np

    if sink_output:
        sys.stdout = _Sink(1)
        sys.stderr = _Sink(2)
    else:
        builtins.print = _noting("io", builtins.print, jax.core.Tracer, text=True)
    for name in LOG_METHODS:
        setattr(logging.Logger, name, _logging(getattr(logging.Logger, name), jax.core.Tracer))
    jax.config.update("jax_explain_cache_misses", True)
    logger = logging.getLogger("jax")
    logger.addHandler(_CacheMisses())
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)
    for name in NUMPY_SAMPLERS:
        if callable(getattr(np.random, name, None)):
            setattr(np.random, name, _noting("rng", getattr(np.random, name)))
    for name in PY_SAMPLERS:
        setattr(random, name, _noting("rng", getattr(random, name)))

    legacy, typed = jax.random.PRNGKey, jax.random.key

    @functools.wraps(legacy)
    def prng_key(seed, *args, **kwargs):
        if ACTIVE is not None:
            ACTIVE.note_key(seed)
        return (typed if ROUTE_KEYS[0] else legacy)(seed, *args, **kwargs)

    @functools.wraps(typed)
    def key(seed, *args, **kwargs):
        if ACTIVE is not None:
            ACTIVE.note_key(seed)
        return typed(seed, *args, **kwargs)

    jax.random.PRNGKey, jax.random.key = prng_key, key
    clean = trace_clean_function()
    _watch_key_checks()
    _watch_key_reuse_checks()

    # JAX reports each jit trace and compilation as events (a trace's start as a scalar, where
    # this JAX has scalar listeners); only those outside any trace count: a jit nested in traced
    # code is part of its caller's trace
    def on_start(event, value, **kwargs):
        if event == TRACE_EVENT and ACTIVE is not None and clean(None):
            ACTIVE.note_trace_start()

    def on_event(event, duration, **kwargs):
        if ACTIVE is None or not clean(None):
            return
        if event == TRACE_EVENT:
            name = kwargs.get("fun_name")
            ACTIVE.note_trace(None if name is None else str(name))
        elif event == COMPILE_EVENT:
            ACTIVE.note_compile()

    register_scalar = getattr(jax.monitoring, "register_scalar_listener", None)
    if register_scalar is not None:
        register_scalar(on_start)
    jax.monitoring.register_event_duration_secs_listener(on_event)

    import warnings

    shown = warnings.showwarning

    def showwarning(message, *args, **kwargs):
        if ACTIVE is not None:
            ACTIVE.warnings.append(str(message))
        return shown(message, *args, **kwargs)

    warnings.showwarning = showwarning
