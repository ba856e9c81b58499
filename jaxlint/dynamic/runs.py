"""Running user code under instrumentation: importing the module, probing one callable, running the entry point."""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.util
import itertools
import os
import signal
import sys
import time
import types
from dataclasses import dataclass, field
from types import FrameType

from jaxlint.dynamic import recorder as rec_mod
from jaxlint.dynamic.arguments import Synthesizer, Unbuildable, annotations_of, from_factory
from jaxlint.dynamic.locate import FUNCS, Source, code_key, module_text

_unique = itertools.count()


class RunTimeout(BaseException):
    """The time given to one run of user code ran out (a BaseException, so user code cannot swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float, message: str):
    """Interrupt the code in the block with RunTimeout(message) after `seconds` (main thread only)."""

    def expire(signum, frame):
        raise RunTimeout(message)

    if not hasattr(signal, "setitimer"):  # no interval timers (Windows): the runner's limit still holds
        yield
        return
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(0.05, seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Failure:
    """An exception raised by user code, reduced to what the judges need."""

    type: str
    classes: tuple[str, ...]  # the exception class and its bases, by name
    message: str  # the first line
    text: str  # the whole message, truncated
    frames: list[tuple[int, FrameType]]  # this file's frames in the traceback, outermost first
    chain: list[Failure]  # the exceptions it was raised from or during, nearest first

    @property
    def causes(self) -> list[list[int]]:
        """This file's lines in each chained exception's traceback."""
        return [[line for line, _ in c.frames] for c in self.chain]

    def all(self) -> list[Failure]:
        return [self, *self.chain]

    @property
    def line(self) -> int | None:
        return self.frames[-1][0] if self.frames else None

    def innermost_lines(self) -> set[int]:
        lines = {self.line} if self.frames else set()
        lines.update(c[-1] for c in self.causes if c)
        return lines

    def where(self) -> str:
        return f"at line {self.line}" if self.frames else "when called"

    def said(self) -> str:
        """The failure in words: its type, where, and its message (which names what was missing)."""
        return f"{self.type} {self.where()}" + (f": {self.message}" if self.message else "")


@dataclass
class Run:
    """What happened when some user code ran: the recorder's counts plus how it ended."""

    label: str  # how the code was run, e.g. "running main()"
    faithful: bool  # the user's own program (import, entry point), not a synthesized call
    transformed: bool = False  # the probed callable is itself a JAX transformation
    eager: bool = False  # under jax.disable_jit()
    rec: rec_mod.Recorder | None = None
    failure: Failure | None = None
    setup: str | None = None  # why the code could not be run at all
    calls: int = 0  # calls the probe made
    outputs: list = field(default_factory=list)
    entry_key: tuple | None = None  # (co_name, co_firstlineno) of the probed function
    backend: str = ""
    returned: object = None  # what the probe's first call returned, when callable
    error: BaseException | None = None  # the exception behind `failure`, for the other files it passed through

    @property
    def doing(self) -> str:
        return self.label + (" under jax.disable_jit()" if self.eager else "") + f" on {self.backend}"


@dataclass
class Entry:
    """A callable to probe: a module-level function or wrapper, or a method of a constructed instance."""

    callee: str  # how the call reads, e.g. "step()" or "Model.apply()"
    name: str  # module global (function, wrapper or class)
    node: ast.AST  # the def whose signature and annotations describe the arguments
    static: set[str]
    transformed: bool
    source: Source  # the file the def is in
    method: str | None = None
    factory_names: list[str] = field(default_factory=list)
    made: object = None  # a callable some probe returned (a factory's product) to call directly
    module: str | None = None  # the module to import it from, when not the file's own

    @property
    def label(self) -> str:
        on = f" on a synthesized {self.name}" if self.method and self.made is None else ""
        return f"calling {self.callee}{on} with synthesized arguments"


def capture(exc: BaseException, path: str, chained: bool = True) -> Failure:
    """The failure, with the exceptions chained to it (JAX's "source of the operation" among them)."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            frames.append((tb.tb_lineno, tb.tb_frame))
        tb = tb.tb_next
    chain, seen = [], {id(exc)}
    link = (exc.__cause__ or exc.__context__) if chained else None
    while link is not None and id(link) not in seen and len(chain) < 5:
        seen.add(id(link))
        chain.append(capture(link, path, chained=False))
        link = link.__cause__ or link.__context__
    text = f"the code called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else str(exc).strip()
    message = text.splitlines()[0][:200] if text else ""
    classes = tuple(k.__name__ for k in type(exc).__mro__)
    return Failure(type(exc).__name__, classes, message, text[:4000], frames, chain)


def unwrap_codes(obj, limit: int = 8) -> list:
    """Code objects reached by unwrapping jit/grad/partial/bound-method layers of a callable."""
    codes = []
    for _ in range(limit):
        try:
            code = getattr(obj, "__code__", None)
            if code is not None:
                codes.append(code)
            nxt = getattr(obj, "__wrapped__", None) or getattr(obj, "__func__", None)
            if nxt is None and isinstance(obj, functools.partial):
                nxt = obj.func
        except Exception:  # user objects with hostile __getattr__
            break
        if nxt is None:
            break
        obj = nxt
    return codes


class Executor:
    """Loads the target file and runs parts of it, each under a fresh Recorder."""

    def __init__(self, path: str, source: Source, settings: dict, project_root: str, deadline: float,
                 backend: str, timeout: float):
        import jax

        self.jax = jax
        self.backend = backend
        self.timeout = timeout
        self.path = path
        self.source = source
        self.settings = settings
        self.root = project_root
        self.deadline = deadline
        self.clean = rec_mod.trace_clean_function()
        self.names = source.function_names()
        self.watched: dict = {}  # statements whose writes and output are observed (writes.watch)
        self.modules: dict[bool, object] = {}
        self.import_runs: dict[bool, Run] = {}
        self._probes: dict[tuple, Run] = {}
        self._entries: dict[tuple, Run] = {}

    def runs(self) -> list[Run]:
        """Every run made so far."""
        return [*self.import_runs.values(), *self._probes.values(), *self._entries.values()]

    def recorder(self) -> rec_mod.Recorder:
        return rec_mod.Recorder(self.path, self.clean, self.names, self.watched)

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def file_limit(self):
        """The rest of the file's time, for a run of the user's own program."""
        return time_limit(self.time_left(), f"the {self.timeout:g}s time limit for this file ran out")

    def probe_limit(self):
        """Enough time for a probe to compile and run, never the whole file's share."""
        seconds = max(2.0, min(self.time_left() / 2, 20.0))
        return time_limit(seconds, f"the call did not return within {seconds:.0f}s")

    @contextlib.contextmanager
    def mode(self, keys: bool, eager: bool):
        """Key-reuse checking (with legacy keys routed to typed ones) and jit on or off."""
        self.jax.config.update("jax_debug_key_reuse", keys)
        rec_mod.ROUTE_KEYS[0] = keys
        try:
            with self.jax.disable_jit() if eager else contextlib.nullcontext():
                yield
        finally:
            self.jax.config.update("jax_debug_key_reuse", False)
            rec_mod.ROUTE_KEYS[0] = False

    # -- loading -----------------------------------------------------------------------------

    def _load(self):
        """Execute the file as a fresh module under a unique name (never as __main__)."""
        package = _package_of(self.path, self.root)
        name = f"_jaxlint_dynamic_{next(_unique)}"
        if package:
            try:
                importlib.import_module(package)
                name = f"{package}.{name}"
            except BaseException:  # the package itself does not import: load the file alone
                pass
        if self.path.endswith(".ipynb"):  # a notebook runs as its cells, top to bottom, in one namespace
            module = types.ModuleType(name)
            module.__file__ = self.path
            sys.modules[name] = module
            exec(compile(module_text(self.path), self.path, "exec"), module.__dict__)
            return module
        spec = importlib.util.spec_from_file_location(name, self.path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    def module(self, keys: bool):
        """The module loaded with key checking on or off (None when the import failed)."""
        if keys not in self.import_runs:
            run = Run("importing the module", faithful=True, rec=self.recorder(), backend=self.backend)
            module = None
            with self.file_limit(), self.mode(keys, eager=False), run.rec:
                try:
                    module = self._load()
                except BaseException as exc:
                    _reraise_interrupt(exc)
                    run.failure, run.error = capture(exc, self.path), exc
            self.modules[keys], self.import_runs[keys] = module, run
        return self.modules[keys]

    # -- entry points --------------------------------------------------------------------------

    def entry_label(self) -> str | None:
        if self.source.main_block() is not None:
            return 'running the `if __name__ == "__main__":` block'
        if self.source.main_function() is not None:
            return "running main()"
        return None

    def entry_run(self, keys: bool, eager: bool) -> Run | None:
        """Run the program as its author does: a fresh import, then its __main__ block or main()."""
        label = self.entry_label()
        if label is None:
            return None
        if (keys, eager) in self._entries:
            return self._entries[(keys, eager)]
        run = Run(label, faithful=True, eager=eager, rec=self.recorder(), backend=self.backend)
        self._entries[(keys, eager)] = run
        if self.time_left() < 1:
            run.setup = "not run: the time limit was used up"
            return run
        block = self.source.main_block()
        with self.file_limit(), self.mode(keys, eager), run.rec:
            try:
                module = self._load()
                if block is not None:
                    code = compile(ast.Module(body=block.body, type_ignores=[]), self.path, "exec")
                    exec(code, module.__dict__)
                else:
                    module.main()
                self.jax.effects_barrier()
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    run.failure, run.error = capture(exc, self.path), exc
            except BaseException as exc:
                _reraise_interrupt(exc)
                run.failure, run.error = capture(exc, self.path), exc
        return run

    # -- probes ------------------------------------------------------------------------------

    def entries(self, row: int):
        """Callables whose call runs `row`: the enclosing definition (through its jit wrappers),
        then the module functions that call it."""
        top = self.source.top_level(row)
        module = self.modules.get(False) or self.modules.get(True)
        if module is None:
            return
        if top is None:
            lam = self.source.module_lambda(row)
            if lam is not None:
                yield from self._function_entries(module, lam)
            return
        if isinstance(top, ast.ClassDef):
            method = self.source.method_at(top, row)
            if method is not None and not self.source.decorator_options(method).opaque:
                yield self._method_entry(top, method)
            return
        if top is self.source.main_function():
            return  # the entry-point run covers it
        yield from self._function_entries(module, top)
        for caller in self.source.callers_of(top.name)[:2]:
            if caller is not self.source.main_function():
                yield from itertools.islice(self._function_entries(module, caller), 1)

    def _function_entries(self, module, node):
        key = (*code_key(node), self.path)
        found = []
        for name, value in list(vars(module).items()):
            if isinstance(value, type) or not callable(value):
                continue
            codes = unwrap_codes(value)
            if not any((c.co_name, c.co_firstlineno, c.co_filename) == key for c in codes):
                continue
            opts = self.source.jit_options(name)
            if not opts.opaque:
                params = _param_names(node)
                found.append(Entry(
                    callee=f"{name}()",
                    name=name,
                    node=node,
                    static=opts.static_names(params),
                    transformed=len(codes) > 1 or opts.is_jit or not isinstance(value, types.FunctionType),
                    source=self.source,
                    factory_names=self._factory_names(name, self.path),
                ))
        found.sort(key=lambda e: (not self.source.jit_options(e.name).is_jit, not e.transformed))
        yield from found

    def returned_entry(self, entry: Entry, run: Run, row: int) -> Entry | None:
        """The function a probed factory returned, when the finding's line lives inside it."""
        if run.returned is None:
            return None
        codes = unwrap_codes(run.returned)
        keys = {(c.co_name, c.co_firstlineno) for c in codes if c.co_filename == self.path}
        for node in self.source.scopes(row):
            if isinstance(node, FUNCS + (ast.Lambda,)) and node is not entry.node and code_key(node) in keys:
                opts = self.source.decorator_options(node)
                if opts.opaque:
                    return None
                return Entry(
                    callee=f"the function {entry.callee} returned",
                    name=entry.name,
                    node=node,
                    static=opts.static_names(_param_names(node)),
                    transformed=len(codes) > 1 or opts.is_jit or not isinstance(run.returned, types.FunctionType),
                    source=self.source,
                    made=run.returned,
                )
        return None

    def _method_entry(self, cls: ast.ClassDef, method: ast.AST, source: Source | None = None) -> Entry:
        source = source or self.source
        opts = source.decorator_options(method)
        return Entry(
            callee=f"{cls.name}.{method.name}()",
            name=cls.name,
            node=method,
            static=opts.static_names(_param_names(method)),
            transformed=opts.is_jit,
            source=source,
            method=method.name,
            factory_names=self._factory_names(f"{cls.name}.{method.name}", source.path),
        )

    def named_entry(self, qualified: str) -> Entry | None:
        """The entry point a finding names as tracing it (`pkg.module.function`, `pkg.module.Class.method`),
        to probe where it lives: its module is found on the import path (importing the packages
        above it), and only found, not imported, until the probe."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            try:
                with self.probe_limit():
                    spec = importlib.util.find_spec(".".join(parts[:cut]))
            except BaseException as exc:  # a package above it that does not import, or no such module
                _reraise_interrupt(exc)
                continue
            if spec is None or not (spec.origin or "").endswith(".py"):
                continue
            try:
                source = Source.parse(spec.origin)
            except (SyntaxError, ValueError, OSError):
                return None
            found = source.qualified_def(parts[cut:])
            if found is None:
                return None
            cls, node = found
            opts = source.decorator_options(node) if cls is not None else source.jit_options(node.name)
            if opts.opaque:
                return None
            entry = self._method_entry(cls, node, source) if cls is not None else Entry(
                callee="", name=node.name, node=node, static=opts.static_names(_param_names(node)),
                transformed=opts.is_jit, source=source, factory_names=self._factory_names(node.name, source.path))
            entry.callee, entry.module = f"{qualified}()", spec.name
            return entry
        return None

    def _factory_names(self, qualname: str, path: str) -> list[str]:
        rel = os.path.relpath(path, self.root)
        dotted = os.path.splitext(rel)[0].replace(os.sep, ".")
        stem = os.path.splitext(os.path.basename(path))[0]
        return [f"{dotted}:{qualname}", f"{stem}:{qualname}", f"{rel}:{qualname}"]

    def probe(self, entry: Entry, keys: bool, profile: int, eager: bool) -> Run:
        """Call the entry twice with synthesized arguments (the second call should hit jit's cache)."""
        cache_key = (entry.callee, keys, profile, eager)
        if cache_key in self._probes:
            return self._probes[cache_key]
        run = Run(entry.label, faithful=False,
                  transformed=entry.transformed, eager=eager, rec=self.recorder(),
                  entry_key=code_key(entry.node) if entry.source is self.source else None, backend=self.backend)
        self._probes[cache_key] = run
        module = self.module(keys)
        if module is None:
            run.setup = "the module did not import"
            return run
        if self.time_left() < 1:
            run.setup = "not run: the time limit was used up"
            return run
        synth = Synthesizer(profile, typed_keys=keys, resolve=entry.source.module_function)
        with self.probe_limit(), self.mode(keys, eager), run.rec:
            try:
                target, skip = self._target(module, entry, synth)
            except BaseException as exc:
                _reraise_interrupt(exc)
                what = f"construct a {entry.name}" if entry.method else f"import {entry.module or entry.name}"
                run.setup = f"could not {what}: {_describe(exc)}"
                return run
            for _ in range(2):
                try:
                    args, kwargs = from_factory(self.settings, entry.factory_names) or \
                        synth.for_def(entry.node, entry.static, skip)
                except BaseException as exc:
                    _reraise_interrupt(exc)
                    run.setup = f"arguments for {entry.callee} could not be built: {_describe(exc)}"
                    break
                run.calls += 1
                try:
                    out = target(*args, **kwargs)
                    self.jax.block_until_ready(out)
                    run.outputs.append(_snapshot(self.jax, out))
                    if callable(out) and run.returned is None:
                        run.returned = out
                except BaseException as exc:
                    _reraise_interrupt(exc)
                    run.failure, run.error = capture(exc, self.path), exc
                    break
            with contextlib.suppress(Exception):  # a failed callback was already reported by the call
                self.jax.effects_barrier()
        return run

    def _target(self, module, entry: Entry, synth: Synthesizer):
        """The callable to probe, and how many leading parameters of its def it binds itself."""
        if entry.made is not None:
            return entry.made, 0
        if entry.module is not None:
            module = importlib.import_module(entry.module)
        value = getattr(module, entry.name)
        if entry.method is None:
            return value, 0
        raw = value.__dict__.get(entry.method)
        if isinstance(raw, staticmethod):
            return getattr(value, entry.method), 0
        if isinstance(raw, classmethod):
            return getattr(value, entry.method), 1
        cls_node = entry.source.top_level(entry.node.lineno)
        made = from_factory(self.settings, self._factory_names(entry.name, entry.source.path))
        if made is None:
            init = next((n for n in cls_node.body if getattr(n, "name", None) == "__init__"), None)
            made = synth.for_def(init, set(), skip=1) if init is not None else \
                synth.for_signature(value, annotations_of(cls_node))
        instance = value(*made[0], **made[1])
        return getattr(instance, entry.method), 1


def _param_names(node: ast.AST) -> list[str]:
    a = node.args
    return [p.arg for p in a.posonlyargs + a.args]


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0][:150] if str(exc).strip() else ""
    return text if isinstance(exc, Unbuildable) else f"{type(exc).__name__}: {text}"


def _snapshot(jax, out):
    """Host copies of an output's array leaves, for comparing calls."""
    import numpy as np

    leaves = []
    for leaf in jax.tree_util.tree_leaves(out)[:16]:
        try:
            if jax.dtypes.issubdtype(getattr(leaf, "dtype", None), jax.dtypes.prng_key):
                leaf = jax.random.key_data(leaf)
            leaves.append(np.asarray(leaf))
        except Exception:  # a non-array leaf
            leaves.append(repr(leaf)[:100])
    return leaves


def _package_of(path: str, root: str) -> str:
    """The dotted package containing `path` (directories with __init__.py, up to the project root)."""
    parts = []
    directory = os.path.dirname(path)
    while os.path.isfile(os.path.join(directory, "__init__.py")) and directory.startswith(root):
        parts.append(os.path.basename(directory))
        if directory == root:
            break
        directory = os.path.dirname(directory)
    return ".".join(reversed(parts))


def _reraise_interrupt(exc: BaseException) -> None:
    if isinstance(exc, KeyboardInterrupt):
        raise exc
