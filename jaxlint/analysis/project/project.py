"""The project's own modules: which files form the project, and traced calls followed into them.

Which files: the folder that holds a linted file's top-level package (the folder Python
would put on `sys.path` to import it; a folder without `__init__.py` inside a package is a
namespace portion of it, so its modules' relative imports read that package; a folder whose
name is no identifier, `jax-aht/`, is no package), a namespace portion's own folder, and the
project root above it (the nearest folder with `pyproject.toml`, `setup.py`, `setup.cfg` or
`.git`), and the one nearest the module where that is below the top-level package's folder,
each with its `src/` folder; for a module
in a namespace package (a folder without `__init__.py` on the way up), also the folder above
the nearest folder named as the top-level package of an absolute import (`roots_for`). A
qualified name seen in a module (`pkg.util.clip`, whether written as an absolute import, a
relative one, `import pkg.util as u` or read through a re-export in an `__init__.py`)
resolves to the plain `def` it names in one of those files (`ModuleLink.defines_class` asks
the same of a `class`). Modules are found on the file
system when a name asks for them and parsed once per process.

Following: when traced code calls such a function with at least one traced argument (or an
unknown one for a parameter declared a JAX array, which is traced there), the callee is
analysed in its own module, in the caller's context and with the caller's argument values; so
is the `__call__` of a plain class of a project module (no framework module) whose instance
traced code calls (`instance=True`), and a static, class or plain method read through its
class (`Ops.clip(x)`: the class's own def or one a base of its module defines, as that module's
resolver finds it), bound as Python binds it (`Project.target`).
The call evaluates to the callee's return value, memoised per (function, argument values,
context), and is recorded as an `IncomingCall`. Linting the callee's
module with its incoming calls (`ModuleFacts(..., incoming=...)`) then reports what the
callee does wrong when it runs traced, and each finding there names the entry point that
traced it. Calls into anything else (other libraries, decorated functions, other methods,
callables assigned at module level, and the libraries `jax_api` describes, even when the
project is one of them) stay opaque: UNKNOWN. So do functions that test the
type of a parameter (`isinstance`, `hasattr`, `type`): they are written for Python values
as well as arrays, and the analysis does not tell which path a tracer takes.

For other facts (the PRNG key flow, for one): `ModuleFacts.project.callee(qualname)`
resolves a name to a `ProjectFunction`: the callee's own `ModuleFacts` (its `keys`,
`effects`, `analysis`, ...) and its `def` node (`instance_call` the `__call__` of a class).
`ModuleLink.summary(function)` answers, per parameter, bottom up, whether a traced argument
reaches the return value or a Python truth test, whether the function mutates it in place and
whether it is declared an array; top down, whether every call of the function in the project
passes a Python value. Computed once per function per run. Every module a resolution reads is added to
`ModuleLink.deps`, which the cache keys the file's results by: a fact computed from a
callee's module is re-computed when that module changes. So is every path looked at before
the module was found (or in vain) and missing: a module created there later takes the name.
"""

from __future__ import annotations

import ast
import gc
import keyword
import os
import re
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator

from jaxlint.analysis.engine.arguments import Receiver, implicit_count
from jaxlint.analysis.engine.names import Names, Scope
from jaxlint.analysis.engine.submodules import call_method
from jaxlint.analysis.engine.walk import own_nodes
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.analysis.knowledge.decorators import runs_as_written
from jaxlint.analysis.knowledge.testing_code import test_file
from jaxlint.analysis.tracing.array_annotations import jax_array_parameters, traced_where_declared
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.tracing.parameters import bind_arguments
from jaxlint.analysis.tracing.traced_functions import STAGED, Context
from jaxlint.analysis.project.project_instance_calls import untraced_arguments, untraced_parameters
from jaxlint.analysis.values.pytree_fields import one_array
from jaxlint.analysis.values.values import STATIC, TRACED, UNKNOWN, Trace, Value, ValueAnalysis
from jaxlint.source import Source, SourceError, decode

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_TYPE_TESTS = frozenset({"builtins.isinstance", "builtins.hasattr", "builtins.type", "builtins.issubclass"})
_SCANNED_KEPT = 4  # modules `scanned` keeps: those one search across the project reads again
# Packages whose classes the tables describe (`jax_api`), or Python's and NumPy's own: no class
# facts are read from their source, even in a project that is one of them.
_NO_PROJECT_CLASSES = frozenset({*jax_api.MODELLED_PACKAGES, "builtins", "typing", "typing_extensions", "numpy"})
_MAX_REEXPORTS = 8  # `__init__.py` re-exporting a re-export: deep enough for real packages, finite for cycles
_TOP_LEVEL_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.M)  # a module-level def, by name
# A module-level name bound by a plain or annotated assignment to a dotted name alone
# (`Array = jax.Array`, `GridState: TypeAlias = jax.Array`), by name.
_TOP_LEVEL_ALIAS = re.compile(
    r"^(\w+)[ \t]*(?::[^\n=]*)?=[ \t]*(?:[A-Za-z_][\w.]*|[bB]?\"[^\"\n]*\"|[bB]?'[^'\n]*')[ \t]*(?:#[^\n]*)?$", re.M
)
# A module-level def marked as making dataclasses (PEP 681): the def within a few lines of the
# mark (its arguments may span lines, other decorators may come between). A superset: the def
# found is read before anything is concluded.
_DATACLASS_MAKER = re.compile(r"^@[\w.]*dataclass_transform\b(?:[^\n]*\n){1,8}?def[ \t]+(\w+)", re.M)


@dataclass(frozen=True)
class IncomingCall:
    """A traced call into a project function, to be analysed in the callee's module."""

    path: str  # the callee's file
    function: str  # its name in that module (`Class.__call__` for an instance's call)
    params: tuple[tuple[str, Value], ...]  # the values its parameters receive
    context: Context
    entry: str  # the transformed function that traces it, as `module.function`
    # Not a traced call: one made again and again outside any trace (in a loop, or in a function
    # itself called so) of a function that builds a jit anew on each call (`repeated_builders`).
    # The callee's module reports the build, where the same loop in that module shows it.
    repeats: bool = False


@dataclass
class ProjectFunction:
    """A plain module-level function of a project module, or the `__call__` of one of its classes."""

    facts: Any  # its module's facts, as the project builds them (`Project.facts`)
    node: ast.FunctionDef | ast.AsyncFunctionDef
    owner: str | None = None  # the class whose method it is

    @property
    def path(self) -> str:
        return self.facts.project.path

    @property
    def name(self) -> str:
        """Its name in its module: `function`, or `Class.method`."""
        return self.node.name if self.owner is None else f"{self.owner}.{self.node.name}"


@dataclass(frozen=True)
class ParameterSummary:
    """What a function does with one parameter traced (the others static), and what it is given."""

    reaches_return: bool  # the return value is traced
    truth_tested: bool  # it decides an `if`, `while`, `assert` or boolean operator
    mutated: bool  # item or attribute stores into it, or a mutating method call on it
    array: bool  # declared an array type (not a sequence of arrays): an array wherever it is traced
    python: bool  # every call of the function in the project passes a Python value (a shape, a literal)


@dataclass
class _Frame:
    """What one followed call records: the calls it makes in turn, and the modules it reads."""

    calls: set[IncomingCall] = field(default_factory=set)
    deps: set[str] = field(default_factory=set)


def _alias(names: Names, scope: Scope, name: str) -> str | None:
    """What a module-level name bound once, and to nothing else, to another name
    (`TrainState = managers.VQGANTrainState`) stands for: its qualified name."""
    values = scope.assigned.get(name)
    if not values or len(values) != 1 or name in scope.defs or name in scope.imports or name in scope.other:
        return None
    value = values[0]
    return names.qualname(value, scope) if isinstance(value, (ast.Name, ast.Attribute)) else None


class ProjectIndex:
    """Module names and files, learnt from the file system as questions come (once per run)."""

    def __init__(self) -> None:
        self.is_package = lru_cache(maxsize=None)(self._is_package)
        self.module_name = lru_cache(maxsize=None)(self._module_name)
        self.project_root = lru_cache(maxsize=None)(self._project_root)
        self.find_module = lru_cache(maxsize=None)(self._find_module)
        self.namespace_root = lru_cache(maxsize=None)(self._namespace_root)
        self.import_roots = lru_cache(maxsize=None)(self._import_roots)  # asked at each name resolved

    @staticmethod
    def _is_package(directory: str) -> bool:
        return os.path.isfile(os.path.join(directory, "__init__.py"))

    def _module_name(self, path: str) -> tuple[str, str, str]:
        """(dotted module name, its package, the folder its top-level package is in). A folder
        without `__init__.py` inside a package is a namespace portion of it, as Python imports
        it (`xminigrid/envs/minigrid/empty.py` under `xminigrid/envs/__init__.py` is
        `xminigrid.envs.minigrid.empty`, whose `from ...core import grid` reads `xminigrid.core`)."""
        directory, filename = os.path.split(os.path.abspath(path))
        stem = filename.split(".", 1)[0]
        parts = [] if stem == "__init__" else [stem]
        while self.is_package(directory) or self.is_package(os.path.dirname(directory)):
            above, name = os.path.split(directory)
            if not name.isidentifier() or keyword.iskeyword(name):
                break  # no import can name the folder (`jax-aht/`, `class/`, the root): it is no package
            directory = above
            parts.insert(0, name)
        name = ".".join(parts)
        package = name if stem == "__init__" else name.rpartition(".")[0]
        return name, package, directory

    def _project_root(self, directory: str) -> str | None:
        """The nearest folder at or above `directory` with a project marker."""
        if any(os.path.exists(os.path.join(directory, marker)) for marker in MARKERS):
            return directory
        parent = os.path.dirname(directory)
        return None if parent == directory else self.project_root(parent)

    def search_roots(self, path: str) -> tuple[str, ...]:
        """The folders a module's absolute imports are looked up in, nearest first: its top-level
        package's, then, for a module of a namespace portion (a folder without `__init__.py`),
        its own (run as a script, or by pytest, it imports its neighbours by name)."""
        _, _, top = self.module_name(path)
        own = os.path.dirname(os.path.abspath(path))
        roots = [top] if self.is_package(own) else [top, own]
        # The project root above the top-level package, and the one nearest the module where that
        # is below it (a checkout holding an `__init__.py` of its own, run from its root).
        for root in dict.fromkeys((self.project_root(top), self.project_root(own))):
            if root is not None:
                roots += [root, os.path.join(root, "src")]
        return tuple(dict.fromkeys(r for r in roots if os.path.isdir(r)))

    def _import_roots(self, path: str, package: str) -> tuple[str, ...]:
        """The folders an absolute import of top-level package `package` in the module at `path`
        is looked up in: `search_roots`, then, where the module sits in a folder of that name, the
        folder above it (a namespace package's modules import each other by absolute names)."""
        roots = self.search_roots(path)
        found = self.namespace_root(os.path.dirname(os.path.abspath(path)), package)
        return roots if found is None or found in roots else (*roots, found)

    def _namespace_root(self, directory: str, package: str) -> str | None:
        """The folder above the nearest folder at or above `directory` named `package`: where the
        top-level package of a module in a namespace package (a folder without `__init__.py` on the
        way up) sits, found from the package's name in the module's own absolute imports."""
        while True:
            parent, name = os.path.split(directory)
            # A folder of that name inside a regular package (`jax/_src/numpy`) is a subpackage
            # of it: `import numpy` there still means the library.
            if name == package and not self.is_package(parent):
                return parent
            if parent == directory:
                return None
            directory = parent

    def _find_module(self, name: str, roots: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
        """The file of module `name` under one of `roots` (None if none), and the paths looked at
        before it that do not exist: creating one of them would change the answer."""
        parts = name.split(".")
        if not all(part.isidentifier() for part in parts):
            return None, ()
        absent: list[str] = []
        for root in roots:
            base = os.path.join(root, *parts)
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.isfile(candidate):
                    return candidate, tuple(dict.fromkeys(absent))
                absent.append(_first_missing(root, candidate))
        return None, tuple(dict.fromkeys(absent))


def _first_missing(root: str, path: str) -> str:
    """The outermost folder or file on the way from `root` to `path` that does not exist: the one
    whose creation comes first when `path` appears (one entry stands for a whole missing package)."""
    current = root
    for part in os.path.relpath(path, root).split(os.sep):
        current = os.path.join(current, part)
        if not os.path.exists(current):
            return current
    return path


class ModuleLink:
    """One module's place in the project: its name, and what following its calls recorded."""

    def __init__(self, project: "Project", path: str):
        self.project = project
        self.path = path
        self.name, self.package, _ = project.index.module_name(path)
        self.roots = project.index.search_roots(path)
        self.entry = ""  # the entry point being analysed when a call is followed
        self.calls: set[IncomingCall] = set()
        self.deps: set[str] = set()
        self._tests = test_file(path, project.options)

    def hand(self, calls: Iterable[IncomingCall]) -> None:
        """Calls this module's code makes into other modules, handed to them. A test file hands
        none, as it traces none of their functions (`TracedModule._trace_imported`): what it runs
        traced, or again and again, it shows they survive (it passes, or already fails on the
        bug); what they do is their own modules' to say."""
        if not self._tests:
            self.calls.update(calls)

    def follow(
        self, callee: str, args: list[Value], kwargs: dict[str, Value], ctx: Context, depth: int, spread: bool = False,
        instance: bool = False,
    ) -> Value:
        """The value of a call of an imported name inside traced code (the value analysis' hook);
        `instance`: a call of an instance of the class the name stands for."""
        return self.project.follow(self, callee, args, kwargs, ctx, depth, spread, instance)

    def roots_for(self, package: str) -> tuple[str, ...]:
        """The folders an absolute import of top-level package `package` is looked up in
        (`ProjectIndex.import_roots`)."""
        return self.project.index.import_roots(self.path, package)

    def callee(self, qualname: str) -> ProjectFunction | None:
        """The project function a qualified name seen in this module stands for, if any."""
        return self.project.resolve(self, qualname)

    def target(self, qualname: str) -> tuple[ProjectFunction, int] | None:
        """`Project.target`: what a call of the name runs, and the parameters it binds implicitly."""
        return self.project.target(self, qualname)

    def defined_without(self, qualname: str, words: tuple[str, ...]) -> bool:
        """`Project.defined_without`, for a qualified name seen in this module."""
        return self.project.defined_without(self, qualname, words)

    def summary(self, function: ProjectFunction) -> tuple[ParameterSummary, ...]:
        """`Project.summary` of a function this module reaches, its modules read as this module's dependencies."""
        return self.project.summary(function, self)

    def instance_call(self, qualname: str) -> ProjectFunction | None:
        """The `__call__` an instance of the project class a qualified name stands for runs, if any."""
        return self.project.instance_call(self, qualname)

    def class_of(self, qualname: str) -> tuple[Names, ast.ClassDef] | None:
        """The names of the project module that defines the class a qualified name stands for, and its statement."""
        found = self.class_facts(qualname)
        return (found[0].names, found[1]) if found is not None else None

    def class_facts(self, qualname: str) -> tuple[Any, ast.ClassDef] | None:
        """`class_of`, with the facts of the module that defines the class."""
        if qualname.split(".", 1)[0] in _NO_PROJECT_CLASSES:
            return None
        found = self.project.definition(self, qualname)
        return found if found is not None and isinstance(found[1], ast.ClassDef) else None

    def may_bind_plainly(self, qualname: str) -> bool:
        """`Project.may_bind_plainly`, for a qualified name seen in this module."""
        return self.project.may_bind_plainly(self, qualname)

    def may_make_dataclasses(self, qualname: str) -> bool:
        """`Project.may_make_dataclasses`, for a qualified name seen in this module."""
        return self.project.may_make_dataclasses(self, qualname)

    def definition(self, qualname: str) -> tuple[Names, ast.AST] | None:
        """The names of the project module that defines what a qualified name seen in this
        module stands for, and its statement."""
        found = self.project.definition(self, qualname)
        return (found[0].names, found[1]) if found is not None else None

    def module_value(self, qualname: str) -> tuple[Names, str] | None:
        """The names of the project module a qualified name seen in this module lies in, and the
        name it binds there (a module-level name; re-exports followed)."""
        return self.project.module_name_of(self, qualname)

    def star_names(self, module: str) -> dict[str, str] | None:
        """`Project.star_names`: what `from module import *` binds here, if `module` is the project's."""
        return self.project.star_names(self, module)

    def defines_class(self, qualname: str) -> bool:
        """Whether a qualified name seen in this module stands for a class of a project module."""
        found = self.definition(qualname)
        return found is not None and isinstance(found[1], ast.ClassDef)


class Project:
    """Follows calls across the project's modules; one per process, shared by every file it lints."""

    def __init__(
        self, options: dict[str, Any] | None = None, *, facts: Callable[..., Any], texts: dict[str, bytes] | None = None
    ):
        # How a module's facts are built (`ModuleFacts`): called as `facts(source, options, link,
        # path=path, reported=False)`, with `names=` too where they are built already.
        self._facts = facts
        self.texts = texts or {}  # contents that stand in for files' own (an editor's unsaved buffer)
        self.index = ProjectIndex()
        self.options = options or {}
        self._modules: dict[str, Any] = {}
        self._scanned: OrderedDict[str, Any] = OrderedDict()  # read by `scanned`, newest last
        self._evicted: list[Any] = []  # read by `scanned`, no longer kept, released after the search
        self._searches = 0  # searches under way (`search`)
        self._memo: dict[tuple, tuple[Value, frozenset[IncomingCall], frozenset[str]]] = {}
        self._active: set[tuple] = set()
        self._frames: list[_Frame] = []
        self._summaries: dict[int, tuple[tuple[ParameterSummary, ...], frozenset[str]]] = {}
        # (qualified name, search roots) -> its definition, and the paths read to find it
        self._definitions: dict[tuple, tuple[tuple[Any, ast.AST] | None, frozenset[str]]] = {}
        self._type_testing: dict[int, bool] = {}
        self.key_flows_building: set[str] = set()  # modules whose key flow is being built (import cycles)
        self.values_building: set[str] = set()  # modules whose value analysis is being built (`inherited_calls`)
        self._linting: tuple[str, Source, Callable[[], Names]] | None = None  # see `linting`
        # (path, words) -> the module-level defs of a module whose text holds none of the words
        # (None where it holds one): `defined_without`, read once per module.
        self._wordless_defs: dict[tuple[str, tuple[str, ...]], frozenset[str] | None] = {}
        # Per path, what its text shows at module level: the names bound plainly
        # (`may_bind_plainly`), and the defs marked as making dataclasses (`may_make_dataclasses`).
        self._text_names: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._binding_stars: set[str] = set()  # modules whose star imports are being bound (`star_names`)

    def link(self, path: str) -> ModuleLink:
        return ModuleLink(self, path)

    def loaded(self, path: str) -> Any:
        """The module of a file already loaded to follow calls into it: its tree and names are reused."""
        return self._modules.get(path)

    def module(self, path: str) -> Any:
        """The facts of a project module (None if it cannot be read or parsed), loaded once."""
        if path in self._modules:
            return self._modules[path]
        facts = self._scanned.pop(path) if path in self._scanned else self._read(path)
        self._modules[path] = facts
        return facts

    def scanned(self, path: str) -> Any:
        """The facts of a project module read only to look something up in it (the calls a search
        across the project reads). Unlike `module`, only the last few read are kept: one search
        reads the same modules for the classes of one module, and a project's every module held at
        once would cost the memory of all their trees."""
        if path in self._modules:
            return self._modules[path]
        if path in self._scanned:
            self._scanned.move_to_end(path)
            return self._scanned[path]
        facts = self._scanned[path] = self._read(path)
        if len(self._scanned) > _SCANNED_KEPT:
            self._evicted.append(self._scanned.popitem(last=False)[1])
            if self._searches <= 1:  # only the search reading `facts` holds modules now
                self._release_evicted()
        return facts

    @contextmanager
    def search(self) -> Iterator[None]:
        """A search across the project's modules (`scanned`). A module it read and no longer keeps
        is released at once, or, where one search runs inside another (a module read asks about
        its own classes), when the outermost ends: the outer one may still hold what it read."""
        self._searches += 1
        try:
            yield
        finally:
            self._searches -= 1
            if not self._searches:
                self._release_evicted()

    def _release_evicted(self) -> None:
        if not self._evicted:
            return
        for facts in self._evicted:
            if facts is not None:
                facts.release()
        self._evicted.clear()
        # Their trees are still held by cycles (scopes and their parents), and the runner collects
        # only after each file: the young objects are freed now, not once the file is done.
        gc.collect(0)

    @contextmanager
    def linting(self, path: str, source: Source, names: Callable[[], Names]) -> Iterator[None]:
        """While the module at `path` is linted from `source` (`names` gives its names): a name
        that leads back into the module (a re-export of its own functions) reads that tree and
        those names, not the file a second time."""
        outer, self._linting = self._linting, (path, source, names)
        try:
            yield
        finally:
            self._linting = outer

    def _read(self, path: str) -> Any:
        """A module's facts from its text (`_text`)."""
        text = self._text(path)
        if text is None:
            return None
        try:
            linting = self._linting
            if linting is not None and linting[0] == path and linting[1].text == text:
                return self._facts(linting[1], self.options, self.link(path), names=linting[2](), path=path, reported=False)
            return self._facts(Source.parse(text, path), self.options, self.link(path), path=path, reported=False)
        except (SourceError, RecursionError, ValueError):
            return None

    # ---- resolving names ---------------------------------------------------------------------
    def defined_without(self, link: ModuleLink, qualname: str, words: tuple[str, ...]) -> bool:
        """Whether the module that a qualified name's last part is looked up in (`pkg.mod` of
        `pkg.mod.f`) defines it as a module-level `def` and its text holds none of `words`:
        whatever an analysis needs those words to find is not in that function, which is known
        without parsing the module. The paths looked at are `link`'s dependencies."""
        found = self._holding_module(link, qualname)
        if found is None:
            return False
        path, name = found
        if path in self._modules:
            return False  # read already: the question costs nothing there
        key = (path, words)
        if key not in self._wordless_defs:
            text = self._text(path)
            self._wordless_defs[key] = (
                frozenset(_TOP_LEVEL_DEF.findall(text)) if text is not None and not any(w in text for w in words) else None
            )
        defs = self._wordless_defs[key]
        return defs is not None and name in defs

    def _holding_module(self, link: ModuleLink, qualname: str) -> tuple[str, str] | None:
        """The path of the project module a qualified name's last part is looked up in (`pkg.mod`
        of `pkg.mod.f`), and that part; the paths looked at are `link`'s dependencies."""
        module, _, name = qualname.rpartition(".")
        if not module:
            return None
        path, absent = self.index.find_module(module, link.roots_for(module.split(".", 1)[0]))
        self._record((), absent, link)
        if path is None:
            return None
        self._record((), (path,), link)
        return path, name

    def may_bind_plainly(self, link: ModuleLink, qualname: str) -> bool:
        """Whether the module a qualified name's last part is looked up in may bind it, at module
        level, to a dotted name or a string alone (`GridState: TypeAlias = jax.Array`,
        `MODE = "train"`): its text has such a line. Known without parsing the module, and the
        same whether it was read already or not (a re-export is not followed)."""
        found = self._holding_module(link, qualname)
        return found is not None and found[1] in self._names_in_text(found[0])[0]

    def may_make_dataclasses(self, link: ModuleLink, qualname: str) -> bool:
        """Whether the module a qualified name's last part is looked up in may define it as a
        decorator that makes dataclasses (`@dataclass_transform` above its `def`: a copy of
        `flax.struct.dataclass` kept in the project). Known without parsing the module."""
        found = self._holding_module(link, qualname)
        return found is not None and found[1] in self._names_in_text(found[0])[1]

    def _names_in_text(self, path: str) -> tuple[frozenset[str], frozenset[str]]:
        known = self._text_names.get(path)
        if known is None:
            text = self._text(path) or ""
            known = self._text_names[path] = (
                frozenset(_TOP_LEVEL_ALIAS.findall(text)), frozenset(_DATACLASS_MAKER.findall(text))
            )
        return known

    def _text(self, path: str) -> str | None:
        """A module's text: the editor's or stdin's where one stands in for the file."""
        try:
            data = self.texts.get(path)
            if data is None:
                with open(path, "rb") as handle:
                    data = handle.read()
            return decode(data)
        except (OSError, SourceError, ValueError):
            return None

    def resolve(self, link: ModuleLink, qualname: str) -> ProjectFunction | None:
        """The plain module-level function a qualified name seen in `link`'s module names (no
        decorator but those that leave its calls as they were, `runs_as_written`)."""
        found = self.definition(link, qualname)
        if found is None:
            return None
        facts, node = found
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not runs_as_written(node, facts.names):
            return None  # a decorator may replace the function: opaque
        return ProjectFunction(facts, node)

    def target(self, link: ModuleLink, qualname: str) -> tuple[ProjectFunction, int] | None:
        """What a call of a qualified name seen in `link`'s module runs, and how many leading
        parameters it binds without an argument: a plain module-level function (none), or a def
        of a project class read through the class (`Model.create(...)`: a class method binds the
        class, a static method nothing, a plain function nothing, its instance passed first), as
        the module's own resolver binds `Ops.step` (`engine.arguments.implicit_count`)."""
        function = self.resolve(link, qualname)
        if function is not None:
            return function, 0
        owner, _, attr = qualname.rpartition(".")
        located = self.definition(link, owner) if owner else None
        if located is None or not isinstance(located[1], ast.ClassDef):
            return None
        facts, cls = located
        method = module_callees(facts.names).method(cls, attr)  # the class's own def, or a base's of its module
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if not runs_as_written(method, facts.names):
            return None  # another decorator may replace the function: opaque
        return ProjectFunction(facts, method, cls.name), implicit_count(method, Receiver.CLASS)

    def instance_call(self, link: ModuleLink, qualname: str, plain: bool = False) -> ProjectFunction | None:
        """The `__call__` an instance of the project class a qualified name seen in `link`'s module
        stands for runs: its own undecorated one; with `plain`, None for a framework module's,
        which the framework runs, a traced root decided by its callers."""
        found = self.definition(link, qualname)
        if found is None or not isinstance(found[1], ast.ClassDef):
            return None
        facts, cls = found
        method = call_method(cls)
        outer = facts.names.enclosing_scope(cls)
        if method is None or plain and any(facts.names.qualname(b, outer) in jax_api.MODULE_BASES for b in cls.bases):
            return None
        return ProjectFunction(facts, method, cls.name)

    def definition(self, link: ModuleLink, qualname: str, depth: int = 0) -> tuple[Any, ast.AST] | None:
        """The module-level `def` or `class` statement a qualified name seen in `link`'s module
        names in a project module, with that module's facts. Found once per name and search
        roots; the paths it reads are recorded for every module that asks."""
        key = (qualname, link.roots_for(qualname.split(".", 1)[0]))
        known = self._definitions.get(key)
        if known is None:
            read = _Frame()
            self._frames.append(read)
            try:
                found = self._definition(link, qualname, depth)
            finally:
                self._frames.pop()
            known = self._definitions[key] = (found, frozenset(read.deps))
        self._record((), known[1], link)
        return known[0]

    def _definition(self, link: ModuleLink, qualname: str, depth: int) -> tuple[Any, ast.AST] | None:
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path, absent = self.index.find_module(".".join(parts[:cut]), link.roots_for(parts[0]))
            self._record((), absent, link)  # a module created there later resolves the name anew
            if path is None:
                continue
            facts = self.module(path)
            self._record((), (path,), link)
            if facts is None:
                return None
            return self._member(facts, parts[cut:], depth)
        return None

    def module_name_of(self, link: ModuleLink, qualname: str, depth: int = 0) -> tuple[Names, str] | None:
        """`ModuleLink.module_value`: a module-level name of a project module, and that module's names."""
        module, _, name = qualname.rpartition(".")
        path, absent = self.index.find_module(module, link.roots)
        self._record((), absent, link)
        if path is None:
            return None
        facts = self.module(path)
        self._record((), (path,), link)
        if facts is None:
            return None
        scope: Scope = facts.names.module
        if name in scope.imports and depth < _MAX_REEXPORTS:  # `from .flags import OLD` in `__init__.py`
            return self.module_name_of(link, scope.imports[name], depth + 1)
        return facts.names, name

    def star_names(self, link: ModuleLink, module: str) -> dict[str, str] | None:
        """What `from module import *` binds in `link`'s module, if `module` is a module of the
        project: the names its `__all__` lists (a literal list or tuple), else its module-level
        names not starting with `_`, each as the qualified name it stands for (an import there:
        what it imports; a def, class or assignment: `module.name`). A module whose names are
        being bound already (two modules star-importing each other) gives None."""
        path, absent = self.index.find_module(module, link.roots_for(module.split(".", 1)[0]))
        self._record((), absent, link)
        if path is None or path in self._binding_stars:
            return None
        self._record((), (path,), link)
        self._binding_stars.add(path)
        try:
            facts = self.module(path)
            names = facts.names if facts is not None else None
        finally:
            self._binding_stars.discard(path)
        if names is None:
            return None
        scope: Scope = names.module
        bound = {name: f"{module}.{name}" for name in (*scope.defs, *scope.assigned)}
        bound.update(scope.imports)
        listed = _listed_names(scope)
        if listed is not None:
            return {name: bound[name] for name in listed if name in bound}
        return {name: qualname for name, qualname in bound.items() if not name.startswith("_")}

    def _member(self, facts: Any, attrs: list[str], depth: int) -> tuple[Any, ast.AST] | None:
        scope: Scope = facts.names.module
        name = attrs[0]
        rebound = name in scope.assigned or name in scope.defs
        if name in scope.imports and not rebound and depth < _MAX_REEXPORTS:
            # A re-export (`from .impl import clip` in `__init__.py`) or a submodule import.
            target = ".".join([scope.imports[name], *attrs[1:]])
            return self.definition(facts.project, target, depth + 1)
        aliased = _alias(facts.names, scope, name) if depth < _MAX_REEXPORTS else None
        if aliased is not None:  # `TrainState = managers.VQGANTrainState`: that class
            return self.definition(facts.project, ".".join([aliased, *attrs[1:]]), depth + 1)
        node = scope.defs.get(name)
        if len(attrs) != 1 or name in scope.assigned or node is None:
            return None
        return facts, node

    # ---- following traced calls --------------------------------------------------------------
    def follow(
        self, link: ModuleLink, callee: str, args: list[Value], kwargs: dict[str, Value], ctx: Context, depth: int,
        spread: bool = False, instance: bool = False,
    ) -> Value:
        if opaque(callee):
            return UNKNOWN
        if instance:
            target, implicit = self.instance_call(link, callee, plain=True), 1
        else:
            target, implicit = self.target(link, callee) or (None, 0)
        if target is None or self._tests_types(target):
            return UNKNOWN
        params = bind_arguments(
            target.node, [portable(a) for a in args], {k: portable(v) for k, v in kwargs.items()},
            STATIC if implicit else None, spread=spread,
        )
        # An unknown value given to a parameter declared a JAX array is traced there too.
        params = traced_where_declared(params, jax_array_parameters(target.node, target.facts.names))
        values = tuple(sorted(params.items(), key=lambda kv: kv[0]))
        key = (target.path, target.name, values, ctx)
        memo = self._memo.get(key)
        if memo is None:
            if key in self._active:
                return UNKNOWN  # a recursive call: its value is not known yet
            self._active.add(key)
            frame = _Frame()
            self._frames.append(frame)
            try:
                there = target.facts.project
                analysis = ValueAnalysis(target.facts.names, there.follow, classes=there.class_of)
                result = portable(analysis.analyze(target.node, dict(params), ctx, None, depth + 1))
            finally:
                self._frames.pop()
                self._active.discard(key)
            memo = self._memo[key] = (result, frozenset(frame.calls), frozenset(frame.deps))
        result, calls, deps = memo
        call = IncomingCall(target.path, target.name, values, ctx, "")
        self._record((call, *calls), deps, link)
        return result

    def _tests_types(self, function: ProjectFunction) -> bool:
        """Whether the function, or a function of its module it calls, tests the type of a parameter
        (`isinstance(x, ...)`, `hasattr(x, ...)`, `type(x)`): such code is written for Python values
        as well as arrays, takes a path for each, and the analysis does not narrow on the test."""
        return _type_testing(function.node, function.facts.names, self._type_testing, set())

    def _record(self, calls: Iterable[IncomingCall], deps: Iterable[str], link: ModuleLink) -> None:
        if self._frames:
            frame = self._frames[-1]
            frame.calls.update(calls)
            frame.deps.update(deps)
            return
        link.hand(replace(call, entry=link.entry) for call in calls)
        link.deps.update(deps)

    # ---- summaries ---------------------------------------------------------------------------
    def summary(self, function: ProjectFunction, asker: ModuleLink | None = None) -> tuple[ParameterSummary, ...]:
        """Per positional or keyword parameter, in order (a method's instance aside): what the
        function does with it traced, bottom up, and what the project's calls of it pass, top
        down (`project_instance_calls`: every module naming it read once per run). Computed once
        per function and kept; the modules read are dependencies of `asker`, the module asking."""
        cached = self._summaries.get(id(function.node))
        if cached is not None:
            summary, deps = cached
            if asker is not None:
                asker.deps.update(deps)
            return summary
        node = function.node
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)][1 if function.owner else 0:]
        names = function.facts.names
        read = _Frame()  # collects the modules the search reads
        if function.owner is None:
            python = untraced_arguments(function.facts, node, frozenset(params), read)
        else:
            cls = names.parent_class.get(id(node))
            python = untraced_parameters(function.facts, cls, node, frozenset(params), read) if cls is not None else {}
        body = own_nodes(node)
        tests = [n.test for n in body if isinstance(n, (ast.If, ast.While, ast.Assert, ast.IfExp))]
        tests += [v for n in body if isinstance(n, ast.BoolOp) for v in n.values]
        out = []
        for name in params:
            analysis = ValueAnalysis(function.facts.names)
            values = {p: (TRACED if p == name else STATIC) for p in params}
            result = analysis.analyze(node, values, STAGED)
            annotation = next(p.annotation for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if p.arg == name)
            out.append(ParameterSummary(
                reaches_return=result.traced,
                truth_tested=any(analysis.value(t) is not None and analysis.value(t).traced for t in tests),
                mutated=any(_mutates(n, name) for n in body),
                array=annotation is not None and one_array(annotation, names),
                python=python.get(name) or False,
            ))
        summary = tuple(out)
        self._summaries[id(node)] = (summary, frozenset(read.deps))
        if asker is not None:
            asker.deps.update(read.deps)
        return summary


def _listed_names(scope: Scope) -> list[str] | None:
    """The names a module's one `__all__ = [...]` (or tuple) of string literals lists; None without one."""
    values = scope.assigned.get("__all__")
    if values is None or len(values) != 1 or not isinstance(values[0], (ast.List, ast.Tuple)):
        return None
    elements = values[0].elts
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements):
        return None
    return [e.value for e in elements]


def opaque(qualname: str) -> bool:
    """Whether calls of a name are never followed: it lies in a library the tables describe
    (`jax_api`), even in a project that is one of them."""
    return qualname.split(".", 1)[0] in jax_api.MODELLED_PACKAGES


def _type_testing(fn: ast.AST, names: Names, memo: dict[int, bool], seen: set[int]) -> bool:
    known = memo.get(id(fn))
    if known is not None:
        return known
    seen.add(id(fn))
    found = False
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        if node.args and isinstance(node.args[0], ast.Name) and names.qualname(node.func) in _TYPE_TESTS:
            owner = names.lookup(node.args[0].id, names.read_scope.get(id(node.args[0]), names.module))
            if owner is not None and owner.kind == "function" and node.args[0].id in owner.params:
                found = True
                break
        callee = names.definition(node.func)
        if (
            isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef))
            and id(callee) not in seen
            and _type_testing(callee, names, memo, seen)
        ):
            found = True
            break
    memo[id(fn)] = found
    return found


def _mutates(node: ast.AST, name: str) -> bool:
    """An item or attribute store into `name`, or a mutating method called on it."""
    if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return isinstance(node.value, ast.Name) and node.value.id == name
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        func = node.func
        return func.attr in array_api.MUTATING_METHODS and isinstance(func.value, ast.Name) and func.value.id == name
    return False


def portable(value: Value) -> Value:
    """A value without the callables it may hold: those are nodes of the module that made them."""
    if value.function is None and value.items is None and value.element is None:
        return value
    return Value(
        value.trace,
        array=value.array,
        boolean=value.boolean,
        items=None if value.items is None else tuple(portable(v) for v in value.items),
        element=None if value.element is None else portable(value.element),
        not_none=value.none is False,
    )


# ---- values and calls as JSON (the cache) ------------------------------------------------------
def value_to_json(value: Value) -> list:
    return [
        int(value.trace),
        value.array,
        value.boolean,
        None if value.items is None else [value_to_json(v) for v in value.items],
        None if value.element is None else value_to_json(value.element),
        value.none is False,
    ]


def value_from_json(data: list) -> Value:
    trace, array, boolean, items, element, not_none = data
    return Value(
        Trace(trace),
        array=bool(array),
        boolean=bool(boolean),
        items=None if items is None else tuple(value_from_json(v) for v in items),
        element=None if element is None else value_from_json(element),
        not_none=bool(not_none),
    )


def call_to_json(call: IncomingCall) -> list:
    return [
        call.path,
        call.function,
        [[name, value_to_json(value)] for name, value in call.params],
        [call.context.abstract, call.context.staged],
        call.entry,
        call.repeats,
    ]


def call_from_json(data: list) -> IncomingCall:
    path, function, params, context, entry, repeats = data
    return IncomingCall(
        str(path),
        str(function),
        tuple((str(name), value_from_json(value)) for name, value in params),
        Context(bool(context[0]), bool(context[1])),
        str(entry),
        bool(repeats),
    )
