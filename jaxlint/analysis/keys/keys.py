"""Where PRNG keys flow: where each key is made, where it is consumed, and where it is consumed again.

A key is made by `jax.random.key`/`PRNGKey`/`split`/`fold_in`/`wrap_key_data`/`clone`, or
arrives as a parameter (or any other name) that the function uses as one (`key_names`).
Using a key in a sampler, in `split`, or by passing it to a function that uses it, consumes
it, as JAX's own checker (`jax_debug_key_reuse`) counts: `fold_in`, `clone`, `key_data`,
`jax.debug.print`, `.shape`, comparisons and returning a key do not.

Each function (and the module's own statements) is solved once over the key state domain
(`key_state` the states, `key_domain` the domain and its phases, `key_transfer` what each
step does) by the shared dataflow solver: branches join, loops run to a fixed point.  Calls
into functions of the same module are answered by a memoised summary per function (which
parameters it consumes, on every path or on some, and which it returns unchanged); calls
into plain functions of the project's other modules by that module's `exported` summary,
which follows every parameter as a key.

Calls into code the analysis cannot see follow one policy: they consume the keys passed to
them directly (as the checker's default for an unknown primitive), except a call whose
result is only tested (`assert is_key(key)`, `if valid(key):`), which looks at a key and
draws nothing.
"""

from __future__ import annotations

import ast
from collections import Counter
from contextlib import contextmanager
from functools import cached_property
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Collection, Mapping

from jaxlint.analysis.engine import arguments
from jaxlint.analysis.engine.call_index import calls_through, may_resolve_to
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names, function_in
from jaxlint.analysis.engine.walk import end_of, start_of
from jaxlint.analysis.keys.flax_runs import draw_paths
from jaxlint.analysis.tracing.linen_classes import linen_class
from jaxlint.analysis.keys.key_constructors import construction, constructor
from jaxlint.analysis.keys.key_consumers import handed_keys
from jaxlint.analysis.keys.key_domain import analyse
from jaxlint.analysis.keys.key_function_forms import (
    compared_flags, compared_parameters, is_abstract, keyless_tested, literal_defaults, rebound_only_when_keyless,
    setting_tests,
)
from jaxlint.analysis.keys.key_intent import (
    aligned_permutation, aligned_positions, aligned_reorders, compared, exclusive_masks,
)
from jaxlint.analysis.keys.key_names import KEY_WORDS, KeyNames, key_named
from jaxlint.analysis.keys.key_seed_parameters import DefaultedSeed, defaulted_seeds
from jaxlint.analysis.keys.key_seeds import Candidate, repeats, steps
from jaxlint.analysis.keys.key_state import DEFINITE, MAYBE, NO_KEYS, Helper, Summary, Use, container_members, helper_for
from jaxlint.analysis.keys.key_syntax import bind, bound_to
from jaxlint.analysis.keys.key_transfer import KeyTransfer
from jaxlint.analysis.knowledge.testing_code import base_label, test_file, test_functions, test_pattern
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge import random_api as api
from jaxlint.analysis.knowledge.spellings import attribute_spellings
from jaxlint.analysis.project.project import ProjectFunction
from jaxlint.analysis.tracing.callees import inherited, instance_parameter
from jaxlint.analysis.tracing.traced_functions import Discovery

if TYPE_CHECKING:
    from jaxlint.analysis.project.project import ModuleLink

# What the text of a module that annotates a parameter as a key holds (`random_api.KEY_ANNOTATIONS`).
_KEY_ANNOTATION_WORDS = ("PRNGKey", "KeyArray", "Key[")
# How many modules a chain of base classes is followed through to find an inherited method.
_MAX_BASE_MODULES = 8
_FORWARD_PASS_DEPTH = 3  # calls followed from a forward pass into the functions it runs


# ---- facts the rules read ----------------------------------------------------------------
@dataclass(frozen=True)
class Reuse:
    """A key consumed again.

    `loop` is None when both consumptions lie on one path; otherwise the loop (a `for`,
    `while` or comprehension node) across whose iterations the key is reused, or, for a key
    closed over by a `lax.scan`/`fori_loop`/`while_loop` body or a tree map's function, the
    primitive's call.  `guard` is set when the first consumption happened on only some paths:
    the condition of the branch that consumed it.
    """

    use: Use  # the second consumption, where it is reported
    first: Use | None  # the earlier one (None for a key closed over by a loop primitive)
    name: str
    loop: ast.AST | None = None
    primitive: str | None = None  # "jax.lax.scan" for a closed-over key
    guard: ast.AST | None = None
    # Whether both consumptions draw numbers, so that the second repeats the first's
    # (`key_draws`); otherwise the reuse is JAX207's: nothing repeats.
    dependent: bool = True
    # Where the second consumption is where the key is renewed (a split, or a call whose result
    # is bound back to the key's name: `rng, _rng = jax.random.split(rng)`), the names its
    # statement binds; None otherwise. Splitting there is what that line already does: the fix
    # belongs before the first consumption, under names that line does not use.
    renewal: tuple[str, ...] | None = None
    # Whether `first` is a function seen that draws from the key on some of its paths only, under
    # tests the caller does not decide (`key_state.Mark.partial`): the key is reused on those.
    partial: bool = False


@dataclass(frozen=True)
class ConstantSeed:
    """A key made from a constant seed where its draws repeat: in a loop, a loop body, a step function."""

    call: ast.Call  # `jax.random.key(0)`
    function: FunctionNode | None
    reason: str  # why the draws repeat, for the message


@dataclass(frozen=True)
class GlobalKey:
    """A module-level key consumed inside a jit-compiled function: a constant of every compiled call."""

    use: Use
    name: str
    function: FunctionNode


class KeyFlow:
    """The key flow of one module: reuses, constant seeds and baked-in keys, found once for every rule."""

    def __init__(
        self, names: Names, discovery: Discovery, text: str, options: Mapping[str, Any] | None = None,
        project: "ModuleLink | None" = None, path: str = "", deferred: bool = False,
    ):
        """`deferred`: the module is read to follow calls into it, not reported on: its functions
        are analysed when a caller elsewhere first asks what one does (`exported`)."""
        self.names = names
        self.project = project
        self.discovery = discovery
        self.reuses: list[Reuse] = []
        self.constant_seeds: list[ConstantSeed] = []
        self.global_keys: list[GlobalKey] = []
        self.loop_bodies: dict[int, tuple[ast.Call, str]] = {}
        # id(function) -> every call that runs it as the body of a `lax` loop (`loop_bodies` keeps the first)
        self.loop_calls: dict[int, list[ast.Call]] = {}
        self.compiled: set[int] = set()
        # id(function) -> the name of the forward pass (`__call__` of a Flax, Equinox, Haiku
        # module) that runs it: the pass itself, or a function of the module it calls
        self.forward_passes: dict[int, str] = {}
        self.module_keys: set[str] = set()
        # id(use.node) -> the node, kept alive: a use named at a node made for it (a key a dict or a
        # nested function holds) must not lend its id to a later one
        self._reported: dict[int, ast.AST] = {}
        self._reused_firsts: dict[int, ast.AST] = {}  # id(first.node) -> the node, kept alive as above
        self._globals_seen: set[tuple[int, str]] = set()
        self._summaries: dict[int, Summary] = {}
        self.linen: dict[int, frozenset[str]] = {}  # id(function) -> the modules it runs with `rngs=`
        self.stores: dict[int, dict[str, list[tuple[int, int]]]] = {}  # id(function) -> where it binds each name
        self.init_streams: dict[int, bool] = {}  # id(dict of streams) -> `flax_runs.streams_for_init`
        self.branch_calls: dict[tuple[int, int], ast.Call] = {}  # (id(lax.cond call), branch) -> that branch called
        self._exported: dict[object, Summary] = {}  # id(function), or with the flags a call decides
        self._links: dict[int, ModuleLink] = {}  # id(names) of a module `definition_of` found -> its link
        self._flax_paths: dict[tuple[int, int], frozenset[str] | None] = {}  # (id(call), id(module)) -> `flax_paths`
        self._keyless_tested: dict[int, frozenset[str]] = {}  # id(function) -> `keyless_tested`
        self._compared: dict[int, list] = {}  # id(function) -> `compared_parameters`
        self._settings: dict[int, frozenset[str]] = {}  # id(function) -> `setting_tests`
        self._rebound: dict[tuple[int, str, bool], bool] = {}  # `_rebound_only_when_keyless`
        self._by_flags: dict[tuple, Summary] = {}  # (id(function), literal flags) -> its summary for them
        self._active: set[int] = set()
        self._relevant: set[int] = set()
        self._candidates: list[Candidate] = []
        self._consumed: set[int] = set()
        self._seed_index: dict[int, int] = {}
        self.keynames = KeyNames(names, project)
        self.tests: set[int] = set()
        self._shape_only: set[int] = set()  # functions only traced for shapes (`jax.eval_shape`)
        self._text = text
        self._options = options or {}
        self._path = path
        self._bodies_pending = False  # loop bodies and compiled functions, not yet looked for
        # Its own analyses (a test file's, a module's read only to follow calls) wait for `exported`.
        self._deferred = False
        if not any(word in text for word in KEY_WORDS):
            return  # no key is made, drawn from or declared here, nor handed to an interface (`_abstract_keys`)
        with self._building():
            self._relevant = self._key_functions()
            # Without a function to analyse here, only a caller elsewhere (`exported`) may ask
            # for the loop bodies, and nothing is reported from test functions.
            self._bodies_pending = True
            if not self._relevant:
                return
            if test_file(path, options or {}):
                # Nothing is reported from a test file: what its analyses find matters only to a
                # caller in another module, whose first question (`exported`) runs them.
                self.tests = {id(fn) for fn in names.functions} | {id(names.module.node)}
                self._deferred = True
                return
            self.tests = test_functions(names, test_pattern(options or {}))
            self._shape_only = self._traced_for_shapes()
            if deferred:
                self._deferred = True
                return
            self._analyse_all()

    @contextmanager
    def _building(self):
        """The module is marked as having its key flow built (a call into it meanwhile is opaque)."""
        project = self.project
        building = project.project.key_flows_building if project is not None else set()
        building.add(project.path if project is not None else "")
        try:
            yield
        finally:
            building.discard(project.path if project is not None else "")

    def _analyse_all(self) -> None:
        """Every function that touches keys, and the module's own statements, in order."""
        names = self.names
        self._find_bodies()
        if id(names.module.node) in self._relevant:
            self._analyse(names.module.node)
        for fn in names.functions:
            if id(fn) in self._relevant:
                self.summary(fn)
        self._judge_constant_seeds()

    # ---- what the interpreter asks -----------------------------------------------------
    def resolve(self, func: ast.AST) -> FunctionNode | None:
        return self.keynames.resolve(func)

    def helper(self, call: ast.Call, exported: bool = False, keyed: Collection[ast.expr] = ()) -> Helper | None:
        """The summary of the function a call runs, when the analysis can see it.

        Every question about a callee's keys goes through here: the functions of this module,
        and plain functions of the project's own modules (`exported`: the summary a caller in
        another module reads, asked while computing one). `keyed`: the arguments (or members of
        list, tuple and dict arguments) that hold keys.
        """
        target = self.keynames.target(call.func)
        if target is None:
            cls = self.names.definition(call.func) if isinstance(call.func, ast.Name) else None
            init = constructor(cls) if isinstance(cls, ast.ClassDef) else None
            if init is not None:
                made = construction(cls, init, self.exported(init))
                return helper_for(cls.name, made, bind(init, call, 1))
            return self._project_helper(call)
        callee = target.function
        binding = target.bind(call)
        bound = binding.pairs()
        summary = self.exported(callee) if exported else self.summary(callee)
        flags = self.deciding_flags(callee, bound, summary)
        if flags:
            summary = self.exported(callee, flags) if exported else self._for_flags(callee, flags)
        if MAYBE in summary.params.values():
            summary = self._under_settings(callee, summary, flags, exported)
        uncovered = _parameters_of(keyed, bound) - summary.key_params
        if uncovered and not exported:
            # A key handed to a parameter the function does not take as one is followed as a
            # caller in another module follows it (`exported`): into a Flax run or code not seen.
            summary = summary.covering(self.exported(callee, flags or None), uncovered)
        name = getattr(target.forwarder or callee, "name", "the lambda")
        collected = binding.collected_pairs()
        if collected and not exported:
            # What `*args` and `**kwargs` collect is followed as a caller elsewhere follows it:
            # into the calls the function hands them on to, seen or not.
            shown = self.exported(callee).params
            summary = summary.with_params({p: shown[p] for _, p in collected if p in shown})
        bound = bound + collected
        if isinstance(call.func, ast.Attribute) and call.func.attr != name:
            return helper_for(f"self.{call.func.attr}", summary, bound, submodule=True)
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if isinstance(receiver, ast.Name) and receiver.id not in ("self", "cls"):
            name = f"{receiver.id}.{name}"  # as the call spells it: `env.reset`, `Ops.step`
        elif isinstance(call.func, ast.Name):
            name = call.func.id  # `policy(obs, key)` of a name a factory bound, not the def it made
        return helper_for(name, summary, bound)

    def _under_settings(self, fn: FunctionNode, summary: Summary, flags: dict[str, bool], exported: bool) -> Summary:
        """A function that draws from a key parameter under a setting of the code around it
        (`setting_tests`), on one side of it, draws from it on every call while the setting is on
        that side: the parameter is consumed (DEFINITE), as a submodule's key is whichever of
        its paths the instance's fields pick. A test its caller decides stays a MAYBE."""
        tests = self._settings.get(id(fn))
        if tests is None:
            tests = self._settings[id(fn)] = setting_tests(fn, self.names.scope_of(fn))
        if not tests:
            return summary
        drawn: dict[str, int] = {}
        for side in (True, False):
            decided = {**flags, **{test: side for test in tests}}
            under = self.exported(fn, decided) if exported else self._for_flags(fn, decided)
            drawn.update(
                (param, DEFINITE) for param, level in summary.params.items()
                if level == MAYBE and under.params.get(param) == DEFINITE
            )
        return summary.with_params(drawn) if drawn else summary

    def deciding_flags(self, fn: FunctionNode, bound: list, summary: Summary) -> dict[str, bool]:
        """What a call decides about tests on the parameters of `fn` (`_literal_flags`) that may
        change what `summary` says it consumes; empty when nothing can."""
        if all(level == DEFINITE for level in summary.params.values()) and not summary.looped:
            return {}
        flags = self._literal_flags(fn, bound, summary.key_params)
        if MAYBE not in summary.params.values() and not summary.chooses_keys and not summary.looped:
            # Only a key parameter the call shows not None can change what it consumes: the
            # branch that finds it None, and may rebind it, is not taken.
            flags = {
                flag: False for p in summary.key_params for flag in (f"{p} is None", f"{p} is an int")
                if flags.get(flag) is False
            }
        return flags

    def _literal_flags(self, fn: FunctionNode, bound: list, keys: frozenset[str] = frozenset()) -> dict[str, bool]:
        """What the call decides about tests on the function's parameters: the truth of each
        parameter it gives a literal (or leaves to a literal default), where the function never
        rebinds it (`train`), whether such a parameter is None (`key is None`), a positive int
        (`range(n)` runs) or an int of at most 0 (it never does); a parameter
        it gives a value other than the literal None is not None, and one it leaves to a default of
        None is None, where the function rebinds it only in the branch that finds it None
        (`if key is None: key = ...`); a key parameter (of `keys`) given a value other than a
        literal is no int either (`if isinstance(key, int): key = jax.random.key(key)`)."""
        if isinstance(fn, ast.Lambda):
            return {}
        given = {param: arg for arg, param in bound}
        literals = {**literal_defaults(fn), **{p: a for p, a in given.items() if isinstance(a, ast.Constant)}}
        literals = {p: a for p, a in literals.items() if p not in given or given[p] is a}
        scope = self.names.scope_of(fn)
        flags: dict[str, bool] = {}
        for param, arg in literals.items():
            if param not in scope.assigned and param not in scope.other:
                flags[param] = bool(arg.value)
                flags[f"{param} is None"] = arg.value is None
                flags[f"{param} is an int"] = type(arg.value) is int
                # `for _ in range(n)` runs for a positive `n`: a key split in it is consumed.
                flags[f"{param} > 0"] = type(arg.value) is int and arg.value > 0
                flags[f"{param} <= 0"] = type(arg.value) is int and arg.value <= 0
        for param, arg in given.items():
            keyed = param in keys
            if param not in literals and param not in scope.other and self._rebound_only_when_keyless(fn, param, keyed):
                flags[f"{param} is None"] = False
                if keyed:
                    flags[f"{param} is an int"] = False  # given a key
        compared = self._compared.get(id(fn))
        if compared is None:
            compared = self._compared[id(fn)] = compared_parameters(fn)
        if compared:  # `if alpha > 0:` where the call gives `alpha` a number
            fixed = {p: a.value for p, a in literals.items() if p not in scope.assigned and p not in scope.other}
            flags.update(compared_flags(compared, fixed))
        for param, arg in literals.items():
            # Left to a default of None that the function replaces only when it is None: it is None.
            if (
                param not in given and arg.value is None and param not in scope.other
                and self._rebound_only_when_keyless(fn, param)
            ):
                flags[f"{param} is None"] = True
                flags[f"{param} is an int"] = False
        return flags

    def _rebound_only_when_keyless(self, fn: FunctionNode, param: str, keyed: bool = False) -> bool:
        """`key_function_forms.rebound_only_when_keyless`, asked once per function, parameter and
        kind (`keyed`: a key parameter), and only of a parameter the function tests against None."""
        tested = self._keyless_tested.get(id(fn))
        if tested is None:
            tested = self._keyless_tested[id(fn)] = keyless_tested(fn)
        if param not in tested:
            return False
        memo = (id(fn), param, keyed)
        known = self._rebound.get(memo)
        if known is None:
            known = self._rebound[memo] = rebound_only_when_keyless(fn, param, keyed)
        return known

    def _for_flags(self, fn: FunctionNode, flags: dict[str, bool]) -> Summary:
        """What the function does to its keys when these flags hold (memoised)."""
        key = (id(fn), tuple(sorted(flags.items())))
        cached = self._by_flags.get(key)
        if cached is not None:
            return cached
        if id(fn) in self._active:
            return self.summary(fn)
        self._active.add(id(fn))
        try:
            summary = analyse(self, fn, self.keynames.of(fn), quiet=True, flags=flags)
        finally:
            self._active.discard(id(fn))
        self._by_flags[key] = summary
        return summary

    def _project_helper(self, call: ast.Call) -> Helper | None:
        """A call into a function of another module of the project: what it does to the keys passed in.

        Its module's key flow answers, parameter by parameter (`exported`); a module whose key
        flow is still being built (an import cycle) leaves the call opaque.
        """
        if self.project is None:
            return None
        qualname = self.names.qualname(call.func)
        skip = 0
        target = None
        made = False  # a class constructed: its `__init__` runs
        if qualname is None:
            target = self._inherited_method(call.func)
            if target is not None:
                skip = 1
            else:
                # A submodule (`self.stem(x, key=key)`) of a class another module defines.
                named = self.keynames.submodule_class(call.func)
                qualname = self.names.qualname(named) if named is not None else None
                skip = 1
        owner = False
        if target is None:
            if qualname is None or qualname.split(".", 1)[0] in jax_api.MODELLED_PACKAGES:
                return None
            if skip:
                target = self.project.instance_call(qualname)
            else:
                found = self.project.target(qualname)  # a function, or a def read through its class
                if found is not None:
                    target, skip = found
                    owner = target.owner is not None
            if target is None and not skip:
                target, made = self._constructed(qualname), True
                skip = 1
        if target is None or target.path in self.project.project.key_flows_building:
            return None
        link = target.facts.project
        keys = target.facts.keys
        summary = keys.exported(target.node)
        binding = arguments.bind(target.node, call, skip)
        bound = binding.pairs()
        flags = keys.deciding_flags(target.node, bound, summary)
        if flags:
            summary = keys.exported(target.node, flags)
        bound = bound + binding.collected_pairs()  # a key `*args` or `**kwargs` collects
        if made:
            cls = target.facts.names.parent_class[id(target.node)]
            summary = construction(cls, target.node, summary)
            self.project.deps.update(link.deps)
            return helper_for(f"{link.name}.{cls.name}", summary, bound)
        self.project.deps.update(link.deps)  # what the callee's summary read, for the cache
        name = f"{link.name}.{qualname.split('.')[-2] + '.' if owner else ''}{target.node.name}"
        if skip and isinstance(call.func, ast.Attribute) and not owner:
            return helper_for(f"self.{call.func.attr}", summary, bound, submodule=True)
        return helper_for(name, summary, bound)

    def _constructed(self, qualname: str) -> ProjectFunction | None:
        """The `__init__` constructing the class a qualified name stands for in another project
        module runs (`key_constructors.constructor`)."""
        located = self.project.project.definition(self.project, qualname)
        if located is None or not isinstance(located[1], ast.ClassDef):
            return None
        init = constructor(located[1])
        return ProjectFunction(located[0], init) if init is not None else None

    def flax_paths(self, call: ast.AST, module: ast.expr | None = None) -> frozenset[str] | None:
        """Where the Flax Linen module whose `init` a call runs draws parameters (`flax_runs.draw_paths`),
        when the module is an instance of a class the project defines (`critic = Critic(...)`):
        `module`, or the one the call's method is read from (`critic.init`)."""
        memo = (id(call), id(module))
        if memo in self._flax_paths:
            return self._flax_paths[memo]
        found = None
        if module is None:
            func = call.func if isinstance(call, ast.Call) else None
            module = func.value if isinstance(func, ast.Attribute) else None
        if isinstance(module, ast.Name):
            values = self.names.assignments(module)
            module = values[0] if len(values) == 1 else None
        located = self.class_of(module.func, self.names) if isinstance(module, ast.Call) else None
        if located is not None and linen_class(located[1], located[0]):
            found = draw_paths(located[0], located[1], self.class_of)
        self._flax_paths[memo] = found
        return found

    def draws_from(self, call: ast.Call, arg: ast.expr) -> bool:
        """Whether a call draws from (or splits) the key given as `arg`: what the function it runs
        does to that parameter, outside a Flax run; code not seen does."""
        helper = self.helper(call)
        param = helper.parameters.get(id(arg)) if helper is not None else None
        if helper is None or param is None:
            return True
        return helper.summary.consumes(param)

    def definition_of(self, expr: ast.expr, names: Names) -> tuple[Names, ast.AST] | None:
        """The `def` or `class` a name stands for, in its module or another of the project: a name
        seen in this module, or in a module found this way (a Flax module's submodule class,
        imported there from a third module)."""
        definition = names.definition(expr)
        if definition is not None:
            return names, definition
        link = self.project if names is self.names else self._links.get(id(names))
        if link is None:
            return None
        qualname = names.qualname(expr)
        if qualname is None or qualname.split(".", 1)[0] in jax_api.MODELLED_PACKAGES:
            return None
        located = link.project.definition(link, qualname)
        if link is not self.project:
            self.project.deps.update(link.deps)  # what the lookup read there, for this module's cache
        if located is None:
            return None
        self._links[id(located[0].names)] = located[0].project  # the project keeps its modules
        return located[0].names, located[1]

    def class_of(self, expr: ast.expr, names: Names) -> tuple[Names, ast.ClassDef] | None:
        """The class a name stands for, in its module or (seen in this module) another of the project."""
        located = self.definition_of(expr, names)
        return located if located is not None and isinstance(located[1], ast.ClassDef) else None  # type: ignore[return-value]

    def _inherited_method(self, func: ast.AST) -> ProjectFunction | None:
        """The method `self.<attr>(...)` runs when the class inherits it from a class another
        module of the project defines (`class Optimizer(misc.Finalizable)`), found through the
        chain of bases, module by module."""
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return None
        scope = self.names.read_scope.get(id(func.value))
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        if scope is None or func.attr in scope.defs:
            return None
        names, cls, link = self.names, scope.node, self.project
        for _ in range(_MAX_BASE_MODULES):
            found = inherited(names, cls, func.attr)
            if not isinstance(found, str) or found.split(".", 1)[0] in jax_api.MODELLED_PACKAGES:
                return None  # defined here (`resolve` has answered), outside the project, or nowhere
            located = link.project.definition(link, found)
            if located is None or not isinstance(located[1], ast.ClassDef):
                return None
            facts, cls = located
            names, link = facts.names, facts.project
            method = names.scopes[id(cls)].defs.get(func.attr)
            if method is None:
                method = inherited(names, cls, func.attr)
                if isinstance(method, str):
                    continue  # from a base of a further module
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.decorator_list:
                return None
            return ProjectFunction(facts, method)
        return None

    def exported(self, fn: FunctionNode, flags: dict[str, bool] | None = None) -> Summary:
        """What a function does to a key passed in any of its parameters, for callers elsewhere
        (with `flags`: for a call that decides these tests, `deciding_flags`).

        Every parameter is followed as a key (the caller knows it passes one), except one the
        function shows to be an object that keeps a generator's state (`KeyNames.objects`): no
        key can be one.  Nothing is reported on the way: the function's own findings come from
        `summary`.
        """
        memo = (id(fn), tuple(sorted(flags.items()))) if flags else id(fn)
        cached = self._exported.get(memo)
        if cached is not None:
            return cached
        if self._deferred:
            self._deferred = False
            with self._building():
                self._analyse_all()  # as a module that is not a test file runs it when built
        if id(fn) in self._active:
            return NO_KEYS
        if self._bodies_pending:
            self._find_bodies()
        a = fn.args
        params = frozenset(
            p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None
        ) - self.keynames.objects(fn)
        if self._abstract(fn):  # every parameter but the instance is a key the caller passes
            params -= {instance_parameter(fn)}
            self._exported[memo] = summary = Summary({name: DEFINITE for name in params}, params)
            return summary
        self._active.add(id(fn))
        try:
            summary = analyse(self, fn, self.keynames.of(fn) | params, quiet=True, flags=flags)
        finally:
            self._active.discard(id(fn))
        self._exported[memo] = summary
        return summary

    def analysed(self, fn: FunctionNode) -> bool:
        """Whether the module's key flow analyses `fn`: it touches keys (`_key_functions`)."""
        return id(fn) in self._relevant

    def summary(self, fn: FunctionNode) -> Summary:
        """What a function of this module does to its key parameters (memoised)."""
        cached = self._summaries.get(id(fn))
        if cached is not None:
            return cached
        if id(fn) in self._active or id(fn) not in self._relevant:
            return NO_KEYS
        return self._analyse(fn)

    def report_reuse(
        self, run: KeyTransfer, use: Use, first: Use | None, loop: ast.AST | None,
        primitive: str | None = None, guard: ast.AST | None = None, other: Use | None = None,
        partial: bool = False,
    ) -> None:
        if run.quiet or id(use.node) in self._reported or id(run.fn) in self.tests or id(run.fn) in self._shape_only:
            return
        dependent = _repeats(run, first, use)
        if not dependent and other is not None and other.node is not use.node and _repeats(run, other, use):
            first, dependent = other, True  # an earlier draw this one repeats
        if loop is not None and first is not None and id(first.node) in self._reused_firsts:
            return  # already reported as reused within one iteration
        if first is not None and compared(self.keynames, run.fn, first, use):
            return  # two computations fed one key on purpose, to check that they agree
        if loop is None and first is not None and (
            aligned_reorders(self.keynames, first, use) or aligned_positions(self.keynames, first, use)
        ):
            return  # one order (or crop) for several arrays: rows kept aligned
        if first is not None and exclusive_masks(self.keynames, run.fn, first, use):
            return  # masks that keep at most one of the draws
        if loop is not None and aligned_permutation(self.keynames, run.fn, use):
            return  # one order for every array the loop goes through: rows kept aligned
        self._reported[id(use.node)] = use.node
        written = getattr(use.node, "written", None)
        if written is not None and first is not None and start_of(written) > end_of(first.call):
            # A key put in a dict of streams, or read by a nested function, after its first use is
            # used again where it is written (`rngs = {"dropout": rng}` after splitting `rng`),
            # not where the dict is handed on or the function called.
            use = replace(use, node=written)
        if loop is None and first is not None:
            self._reused_firsts[id(first.node)] = first.node
        # A record's field read back (`ts.rng`) is named as the key put there (`rng`): a frozen
        # record cannot take the split a message suggests for the field.
        name = _expr_name(run.field_reads.get(id(use.node), use.node))
        renewal = _renewal(self.names, use, name)
        self.reuses.append(Reuse(use, first, name, loop, primitive, guard, dependent, renewal, partial))

    def report_global(self, fn: ast.AST, name: str, use: Use) -> None:
        if (id(fn), name) in self._globals_seen or id(fn) in self.tests:
            return
        self._globals_seen.add((id(fn), name))
        self.global_keys.append(GlobalKey(use, name, fn))

    def seed_candidate(self, call: ast.Call, fn: ast.AST, loops: list[ast.AST]) -> int | None:
        if id(fn) in self.tests:
            return None
        index = self._seed_index.get(id(call))
        if index is None:
            index = self._seed_index[id(call)] = len(self._candidates)
            function = fn if isinstance(fn, FUNCTION_TYPES) else None
            loop = next((l for l in reversed(loops) if steps(l, self.names)), None)
            self._candidates.append(Candidate(call, function, loop))
        return index

    def seed_consumed(self, index: int) -> None:
        self._consumed.add(index)

    # ---- which functions to run ----------------------------------------------------------
    def _find_bodies(self) -> None:
        self._bodies_pending = False
        for fn, call, callee in self.discovery.bodies:
            if callee in api.LOOP_PRIMITIVES:
                self.loop_bodies.setdefault(id(fn), (call, callee))
                self.loop_calls.setdefault(id(fn), []).append(call)
        # Haiku's and NNX's loops are named through an import of `haiku` or `flax.nnx`.
        lifted = calls_through(self.names, _LIFTED_NAMES) if "haiku" in self._text or "nnx" in self._text else ()
        for call, _ in lifted:
            callee = self.names.qualname(call.func)
            lax = api.LIFTED_LOOPS.get(callee) if callee is not None else None
            for index, keyword in jax_api.CONTROL_FLOW[lax].callables if lax is not None else ():
                body = call.args[index] if index < len(call.args) else next(
                    (k.value for k in call.keywords if k.arg == keyword), None
                )
                fn = self.keynames.function_of(body) if body is not None else None
                if fn is not None:
                    self.loop_bodies.setdefault(id(fn), (call, callee))
        for call, _ in calls_through(self.names, _BATCHING_NAMES):
            callee = self.names.qualname(call.func)
            fn = self.keynames.function_of(call.args[0]) if call.args and callee in api.BATCHING else None
            if fn is not None:
                self.loop_bodies.setdefault(id(fn), (call, callee))
        # Every spelling of a tree map (`jax.tree.map`, `tree_util.tree_map`, an import of
        # one) names a tree in the text.
        tree_calls = self.names.calls if "tree" in self._text else ()
        for call, scope in tree_calls:
            func = call.func
            if call.args and may_resolve_to(self.names, func, _TREE_MAP_ATTRIBUTES) and self.names.qualname(func) in api.TREE_MAPS:
                fn = self.keynames.function_of(call.args[0])
                if fn is not None:
                    self.loop_bodies.setdefault(id(fn), (call, "jax.tree_util.tree_map"))
        self.compiled = {id(root.node) for root in self.discovery.roots if root.jit is not None}
        self.forward_passes = self._run_by_forward_passes(
            [root.node for root in self.discovery.roots if root.framework_method]
        )
        for stmt in self.names.module.node.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Call):
                if api.public(self.names.qualname(stmt.value.func)) in api.KEY_MAKERS:
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    self.module_keys.update(t.id for t in targets if isinstance(t, ast.Name))

    def _run_by_forward_passes(self, passes: list[FunctionNode]) -> dict[int, str]:
        """The forward passes (`__call__` of Flax, Equinox, Haiku modules) and the functions of
        the module they call, through `self.method(...)` or by name, a few calls deep: each of
        them runs on every step the forward pass runs. Each is mapped to the pass's name."""
        found = {id(fn): getattr(fn, "name", "__call__") for fn in passes}
        if not found:
            return found
        calls_in: dict[int, list[ast.Call]] = {}
        for call, scope in self.names.calls:
            function = function_in(scope)
            if function is not None:
                calls_in.setdefault(id(function), []).append(call)
        frontier = dict(found)
        for _ in range(_FORWARD_PASS_DEPTH):
            reached: dict[int, str] = {}
            for fn, name in frontier.items():
                for call in calls_in.get(fn, ()):
                    target = self.keynames.target(call.func)
                    if target is not None and not isinstance(target.function, ast.Lambda) and id(target.function) not in found:
                        reached.setdefault(id(target.function), name)
            found.update(reached)
            frontier = reached
        return found

    def _key_functions(self) -> set[int]:
        """Functions (and the module) that touch `jax.random` directly, or call one that does.

        Only these are analysed: a cheap filter on the calls `Names` already lists, by the
        last name of the callee, before any qualified name is resolved.
        """
        names = self.names
        relevant: set[int] = set()
        random_api, public = api.RANDOM_API, api.public
        for call, scope in calls_through(names, api.RANDOM_NAMES):
            if public(names.qualname(call.func)) in random_api:
                relevant.add(id(scope.node))
        relevant.update(id(fn) for fn in names.functions if self._declared_keys(fn))
        # Both hand on a key-named name, which the module's words (`Names.words`) then hold.
        if any(key_named(word) for word in names.words):
            relevant.update(self._feeding_consumers())
        relevant.update(self._handing_on(relevant))
        if any(word in self._text for word in _KEY_ANNOTATION_WORDS):
            relevant.update(id(fn) for fn in names.functions if self._declares_key(fn))
        if not relevant:
            return relevant
        for fn in names.functions:
            if id(fn) not in relevant and (
                self.keynames.key_parameters(fn) or self.keynames.unpacked_keys(fn) or self.keynames.keys_passed_in(fn)
                or self.keynames.enclosing_keys(fn)
            ):
                relevant.add(id(fn))
        callables = {getattr(fn, "name", None) for fn in names.functions if id(fn) in relevant}
        callables.update(names.call_targets.values())
        # Only a call by one of these names can ever join: a relevant function's or a call result's.
        possible = callables | {fn.name for fn in names.functions if not isinstance(fn, ast.Lambda)}
        others = [(call, scope, base_label(call.func)) for call, scope in calls_through(names, possible)]
        callees: dict[int, FunctionNode | None] = {}
        changed = True
        while changed:
            changed = False
            for call, scope, last in others:
                if last not in callables or id(scope.node) in relevant:
                    continue
                callee = callees.get(id(call), False)
                if callee is False:
                    callee = callees[id(call)] = self.resolve(call.func)
                if callee is not None and id(callee) in relevant:
                    relevant.add(id(scope.node))
                    if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        callables.add(scope.node.name)
                    changed = True
        return relevant

    def _feeding_consumers(self) -> set[int]:
        """The functions that hand a key-named value to code outside `jax.random` that draws from
        it (`key_consumers`)."""
        found: set[int] = set()
        for call, scope in self.names.calls:
            if id(scope.node) in found or not isinstance(scope.node, FUNCTION_TYPES):
                continue
            # A consumer takes a key as its first argument or a keyword (a Flax run, in `rngs=`):
            # a call handing none of these needs no resolving.
            first = call.args[0] if call.args else None
            if not (isinstance(first, ast.Name) and key_named(first.id)) and not any(
                k.arg == "rngs" or isinstance(k.value, ast.Name) and key_named(k.value.id) for k in call.keywords
            ):
                continue
            for arg in handed_keys(call, self.names):
                if isinstance(arg, ast.Name) and key_named(arg.id):
                    found.add(id(scope.node))
        return found

    def _handing_on(self, relevant: set[int]) -> set[int]:
        """The functions (other than those already `relevant`) that hand a value to a function of
        another project module that draws from it: one its module analyses for keys, whose summary
        consumes that parameter. Only a key-named value, or one the function hands to two such
        calls (what a reuse looks like), is asked about."""
        found: set[int] = set()
        if self.project is None:
            return found
        # The names some scope imports from outside the libraries modelled: a call is tested
        # only where its callee starts with one.
        imported = {
            name for scope in self.names.scopes.values() for name, qualname in scope.imports.items()
            if qualname.split(".", 1)[0] not in jax_api.MODELLED_PACKAGES
        }
        if not imported:
            return found
        by_function: dict[int, list[tuple[ast.Call, list[ast.Name]]]] = {}
        for call, scope in self.names.calls:
            root = call.func
            while root.__class__ is ast.Attribute:
                root = root.value
            if root.__class__ is not ast.Name or root.id not in imported:
                continue  # the cheap half of `_may_be_project_call`, for every call of the module
            fn = scope.node
            if not isinstance(fn, FUNCTION_TYPES) or id(fn) in relevant:
                continue
            if not _may_be_project_call(call, self.names, imported):
                continue
            names = _handed_names(call)  # a call handing no name hands no key: not resolved
            if names:
                by_function.setdefault(id(fn), []).append((call, names))
        for fn_id, calls in by_function.items():
            counts = Counter(x.id for _, names in calls for x in names)
            for call, names in calls:
                handed = [x for x in names if key_named(x.id) or counts[x.id] > 1]
                if handed and self._drawn_elsewhere(call, handed):
                    found.add(fn_id)
                    break
        return found

    def _drawn_elsewhere(self, call: ast.Call, handed: list[ast.Name]) -> bool:
        """Whether a call runs a function of another project module, analysed there for keys,
        that draws from (or hands to a Flax run) a parameter one of `handed` is passed to."""
        return any(arg in handed for arg in self.keynames.handed_elsewhere(call, flax=True))

    def _traced_for_shapes(self) -> set[int]:
        """The functions of the module handed to `jax.eval_shape` or `jax.make_jaxpr`: traced
        for shapes or the program only, they draw no numbers, and a reuse in them is none. Not a
        function the module also names elsewhere (`pjit(init, ...)`, `init(key, x)`): that one
        may run for real."""
        found: set[int] = set()
        handed: dict[int, list[ast.expr]] = {}
        for call, _ in calls_through(self.names, {name.rsplit(".", 1)[-1] for name in api.SHAPE_ONLY}):
            if call.args and api.public(self.names.qualname(call.func)) in api.SHAPE_ONLY:
                fn = self.keynames.function_of(call.args[0])
                if fn is not None:
                    handed.setdefault(id(fn), []).append(call.args[0])
                    found.add(id(fn))
        for fn_id, shown in handed.items():
            if any(self._named_elsewhere(arg, shown) for arg in shown):
                found.discard(fn_id)
        return found

    def _named_elsewhere(self, arg: ast.expr, shown: list[ast.expr]) -> bool:
        """Whether the function the name `arg` denotes is named anywhere but at `shown`."""
        fn = self.keynames.function_of(arg) if isinstance(arg, ast.Name) else None
        if fn is None:
            return False
        return any(
            isinstance(node, ast.Name) and node.id == arg.id and isinstance(node.ctx, ast.Load)
            and all(node is not s for s in shown) and self.keynames.function_of(node) is fn
            for node in ast.walk(self.names.enclosing_scope(fn).node)
        )

    def _declares_key(self, fn: FunctionNode) -> bool:
        """A function with a parameter annotated as a PRNG key (`key: chex.PRNGKey`): a key,
        whether or not the module draws from one with `jax.random` itself."""
        if isinstance(fn, ast.Lambda):
            return False
        scope = self.names.enclosing_scope(fn)
        for param in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs):
            annotation = param.annotation
            if isinstance(annotation, ast.Subscript):
                annotation = annotation.value  # `Key[Array, ""]`
            if annotation is not None and api.public(self.names.qualname(annotation, scope)) in api.KEY_ANNOTATIONS:
                return True
        return False

    def _abstract(self, fn: FunctionNode) -> bool:
        """An abstract method: its body only raises `NotImplementedError`, or is `...`/`pass` under
        `@abstractmethod` or in a `Protocol`. What runs is an implementation not seen here, so the
        interface is taken at its word: a key handed to it is drawn from, as implementations do
        (`step_env(key, ...)` then `reset_env(key, ...)` reuses the key)."""
        return (
            isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(fn) in self.names.parent_class
            and is_abstract(fn, self.names)
        )

    def _declared_keys(self, fn: FunctionNode) -> Summary | None:
        """What an abstract method does to the parameters it names as keys (None: no such method or parameter)."""
        if not self._abstract(fn):
            return None
        params = frozenset(self.keynames.key_parameters(fn))
        return Summary({name: DEFINITE for name in params}, params) if params else None

    def _analyse(self, fn: ast.AST) -> Summary:
        declared = self._declared_keys(fn) if isinstance(fn, FUNCTION_TYPES) else None
        if declared is not None:
            self._summaries[id(fn)] = declared
            return declared
        keynames = self.keynames.of(fn)
        if not keynames and id(fn) not in self.keynames.makes_keys and not self.keynames.reads_module_key(fn, self.module_keys):
            summary = Summary({}, frozenset())
        else:
            self._active.add(id(fn))
            try:
                summary = analyse(self, fn, keynames)
            finally:
                self._active.discard(id(fn))
        if isinstance(fn, FUNCTION_TYPES):
            self._summaries[id(fn)] = summary
        return summary

    # ---- constant seeds ----------------------------------------------------------------
    @cached_property
    def defaulted_seeds(self) -> list[DefaultedSeed]:
        """Seeds left to a constant default by callers with a seed of their own (`key_seed_parameters`)."""
        if "seed" not in self._text or test_file(self._path, self._options):
            return []
        tests = test_functions(self.names, test_pattern(self._options))
        return [found for found in defaulted_seeds(self.names, self.definition_of) if id(found.function) not in tests]

    def _judge_constant_seeds(self) -> None:
        for index, candidate in enumerate(self._candidates):
            if index not in self._consumed:
                continue
            reason = repeats(self, candidate)
            if reason is not None:
                self.constant_seeds.append(ConstantSeed(candidate.call, candidate.function, reason))


_TREE_MAP_ATTRIBUTES = attribute_spellings(api.TREE_MAPS)
_BATCHING_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in api.BATCHING)
_LIFTED_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in api.LIFTED_LOOPS)


def _repeats(run: KeyTransfer, first: Use | None, use: Use) -> bool:
    """Whether `use` repeats numbers `first` drew (or, with no `first`, its own of an earlier
    iteration): both draw (`key_draws`), and neither is a Flax run while the other is not (a run
    folds its module's path into the key: no use of the key itself repeats its numbers)."""
    if first is not None and (first.kind == "flax") != (use.kind == "flax"):
        return False
    return run.draws_numbers(use) and (first is None or run.draws_numbers(first))


def _renewal(names: Names, use: Use, name: str) -> tuple[str, ...] | None:
    """`Reuse.renewal`: the names the statement of a split, or of a call whose result rebinds the
    key `name`, binds; None for any other consumption (a draw, a return, a carry)."""
    if use.kind not in ("split", "call"):
        return None
    bound = bound_to(names.parents, use.call) or ()
    return bound if use.kind == "split" or name in bound else None


def _expr_name(node: ast.AST) -> str:
    return ast.unparse(node)


def _handed_names(call: ast.Call) -> list[ast.Name]:
    return [x for x in (*call.args, *(k.value for k in call.keywords)) if isinstance(x, ast.Name)]


def _may_be_project_call(call: ast.Call, names: Names, imported: set[str]) -> bool:
    """A call through an imported name that JAX or a library it models does not own: perhaps a
    function of another module of the project (the cheap test before asking the project).
    `imported`: the names some scope imports from outside those libraries, tested first."""
    func = call.func
    while isinstance(func, ast.Attribute):
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in imported:
        return False
    scope = names.read_scope.get(id(func))
    owner = names.lookup(func.id, scope) if scope is not None else None
    imported_as = owner.imports.get(func.id) if owner is not None else None
    return imported_as is not None and imported_as.split(".", 1)[0] not in jax_api.MODELLED_PACKAGES


def _parameters_of(args: Collection[ast.expr], bound: list[tuple[ast.expr, str]]) -> frozenset[str]:
    """The parameters `args` fill, each itself an argument or a member of a list, tuple or dict one."""
    wanted = {id(arg) for arg in args}
    found = set()
    for arg, param in bound:
        if param is not None and (id(arg) in wanted or any(id(m) in wanted for m in container_members(arg))):
            found.add(param)
    return frozenset(found)

