"""Instrumentation of one file while JAX runs it: which lines ran, which ran while tracing, what they did."""

from __future__ import annotations

import functools
import io
import logging
import random
import re
import sys
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass

TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
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

ACTIVE: Recorder | None = None
ROUTE_KEYS = [False]  # route legacy jax.random.PRNGKey to typed keys, which the reuse checker tracks


@dataclass
class _Frame:
    traced: bool
    session: int | None
    site: tuple | None  # (code, line) of the untraced caller that started the trace session


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

    def __init__(self, path: str, trace_clean, function_names: set[str]):
        self.path = path
        self._clean = trace_clean
        self._names = function_names
        self.lines: Counter = Counter()
        self.code_lines: Counter = Counter()  # (code, line) -> executions
        self.traced: Counter = Counter()
        self.sessions: dict[int, set] = defaultdict(set)
        self.session_site: dict[int, tuple | None] = {}
        # "staged" counts output that showed a jit tracer instead of a value
        self.effects: dict[str, Counter] = {"io": Counter(), "rng": Counter(), "staged": Counter()}
        self.compiles: Counter = Counter()  # (fun_name, site) -> jit traces JAX reported
        self.roots: Counter = Counter()  # (co_name, co_firstlineno, site) -> trace sessions started
        self.keys: list[KeyMade] = []
        # keys handed to jax.random while each line ran: typed ones, which JAX's key-reuse checker
        # tracks, and legacy uint32 ones, which it cannot see
        self.key_uses: dict[str, Counter] = {"typed": Counter(), "legacy": Counter()}
        self.warnings: list[str] = []
        self._frames: dict[int, _Frame] = {}
        self._next_session = 0
        self._last_root: tuple | None = None  # (co_name, site) of the latest trace session

    def __enter__(self) -> Recorder:
        global ACTIVE
        ACTIVE = self
        sys.settrace(self._on_call)
        threading.settrace(self._on_call)  # threads the user's code starts meanwhile
        return self

    def __exit__(self, *exc) -> None:
        global ACTIVE
        sys.settrace(None)
        threading.settrace(None)
        ACTIVE = None
        self._frames.clear()

    # -- settrace callbacks ------------------------------------------------------------------

    def _user_caller(self, frame):
        caller = frame.f_back
        while caller is not None and caller.f_code.co_filename != self.path:
            caller = caller.f_back
        return caller

    def _on_call(self, frame, event, arg):
        if frame.f_code.co_filename != self.path:
            return None
        caller = self._user_caller(frame)
        traced = not self._clean(frame)
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
                self.roots[(frame.f_code.co_name, frame.f_code.co_firstlineno, site)] += 1
                self._last_root = (frame.f_code.co_name, site)
        self._frames[id(frame)] = _Frame(traced, session, site)
        return self._on_event

    def _on_event(self, frame, event, arg):
        if event == "line":
            line = frame.f_lineno
            self.lines[line] += 1
            self.code_lines[(frame.f_code, line)] += 1
            info = self._frames.get(id(frame))
            if info is not None and info.traced:
                self.traced[line] += 1
                self.sessions[line].add(info.session)
        elif event == "return":
            self._frames.pop(id(frame), None)
        return self._on_event

    # -- hooks -------------------------------------------------------------------------------

    def _user_frames(self):
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.path:
                yield frame
            frame = frame.f_back

    def note_effect(self, kind: str, staged: bool = False) -> None:
        """A Python side effect (output, logging, stateful RNG) happened; credit traced lines on the stack."""
        if self._clean(None):
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

    def note_key_use(self, typed: bool) -> None:
        """jax.random took a key: credit every line of the file on the stack (the call that led there)."""
        kind = "typed" if typed else "legacy"
        for line in {frame.f_lineno for frame in self._user_frames()}:
            self.key_uses[kind][line] += 1

    def note_trace(self, fun_name: str | None) -> None:
        """JAX finished tracing a jit-compiled function: count it against its untraced call site.

        JAX versions that do not name the function get the latest trace session's function."""
        frame = next(self._user_frames(), None)
        if frame is not None:
            info = self._frames.get(id(frame))
            if info is not None and info.traced:
                return  # a nested jit inside another trace
        site = (frame.f_code, frame.f_lineno) if frame is not None else None
        if fun_name is None and self._last_root is not None and self._last_root[1] == site:
            fun_name = self._last_root[0]
        if fun_name in self._names:
            self.compiles[(fun_name, site)] += 1


class _Sink(io.TextIOBase):
    """Stands in for sys.stdout/stderr: notes writes made while tracing, keeps nothing."""

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


def trace_clean_function():
    """A callable(frame) telling whether no JAX trace is in progress."""
    import jax

    try:
        from jax._src.core import trace_state_clean
    except ImportError:  # fall back to looking for tracers among the frame's locals
        tracer = jax.core.Tracer

        def clean(frame):
            if frame is None:
                return True
            return not any(isinstance(v, tracer) for v in frame.f_locals.values())

        return clean
    return lambda frame: trace_state_clean()


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
            ACTIVE.note_key_use(typed=not out[1])
        return out

    module._check_prng_key = checked


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
        setattr(logging.Logger, name, _noting("io", getattr(logging.Logger, name), jax.core.Tracer))
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
    _watch_key_checks()

    def on_event(event, duration, **kwargs):
        if event == TRACE_EVENT and ACTIVE is not None:
            name = kwargs.get("fun_name")
            ACTIVE.note_trace(None if name is None else str(name))

    jax.monitoring.register_event_duration_secs_listener(on_event)

    import warnings

    shown = warnings.showwarning

    def showwarning(message, *args, **kwargs):
        if ACTIVE is not None:
            ACTIVE.warnings.append(str(message))
        return shown(message, *args, **kwargs)

    warnings.showwarning = showwarning
