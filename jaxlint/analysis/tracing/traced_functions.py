"""What discovery finds: the functions JAX traces (`TracedFunction`), the transformations
around each (`Transform`), the context each runs in (`Context`: abstract tracers, staged
once per compilation, or concrete values), and the arguments a `functools.partial` fixes
(`Bound`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from jaxlint.analysis.engine.names import FunctionNode
from jaxlint.analysis.knowledge import jax_api


@dataclass(frozen=True)
class Context:
    """How values behave inside a traced function.

    abstract: arguments are abstract tracers (a Python `if` on them raises).
    staged:   the body runs once per trace and is then cached (side effects happen at trace time only).
    """

    abstract: bool
    staged: bool

    def inside(self, outer: "Context | None") -> "Context":
        if outer is None:
            return self
        return Context(self.abstract or outer.abstract, self.staged or outer.staged)


EAGER = None
CONCRETE = Context(False, False)
ABSTRACT = Context(True, False)
STAGED = Context(True, True)


def context_of(transform: str) -> Context:
    if transform in jax_api.STAGING_TRANSFORMS or transform in jax_api.CONTROL_FLOW:
        return STAGED
    if transform in jax_api.ABSTRACT_TRANSFORMS:
        return ABSTRACT
    return CONCRETE


@dataclass
class Transform:
    """One transformation applied to a function: `jax.jit` with its keyword arguments."""

    name: str  # qualified name, e.g. "jax.jit"
    keywords: dict[str, ast.expr]
    node: ast.AST  # the decorator or the call that applies it


@dataclass
class TracedFunction:
    """A function run under one or more transformations (outermost first)."""

    node: FunctionNode
    transforms: list[Transform]
    context: Context
    static_params: frozenset[str] = frozenset()
    bound_name: str | None = None  # the name the transformed callable is bound to, if any
    site: ast.AST | None = None  # the decorator or wrapping call
    filtering: bool = False  # equinox-style: non-array arguments are static
    framework_method: bool = False
    # Arguments that reach the function as its caller gives them, unknown: those a framework
    # entry point's caller supplies, not the framework (keyword-only extras of an optax
    # `update`), and those every transformation passes as given (`as_given_positions`).
    caller_params: frozenset[str] = frozenset()
    bound_positional: int = 0  # leading parameters bound by functools.partial
    bound_keywords: frozenset[str] = frozenset()  # parameters bound by keyword in functools.partial
    bound_values: tuple[tuple[str, ast.expr], ...] = ()  # and the expressions bound to them
    # A custom_vjp's backward rule: the forward rule whose residuals it receives.
    residuals_from: FunctionNode | None = None
    kernel: bool = False  # a Pallas kernel: its positional parameters are references
    ref_trees: bool = False  # ... or pytrees of references
    # `jax.jit(f, static_argnames=...)` naming a parameter `f` lacks: JAX raises `ValueError`
    # when it wraps `f`, so nothing is traced, and which parameters were meant static is unclear.
    unknown_static_names: bool = False

    @property
    def static_transform(self) -> Transform | None:
        """The transformation whose static arguments the function receives as Python values."""
        for t in self.transforms:
            if t.name in jax_api.STATIC_ARG_TRANSFORMS:
                return t
        return None

    @property
    def jit(self) -> Transform | None:
        """The compiling transformation that takes static arguments (`jax.jit`, not a checkpoint)."""
        for t in self.transforms:
            if t.name in jax_api.STATIC_ARG_TRANSFORMS and t.name not in jax_api.CHECKPOINTS:
                return t
        return None


@dataclass(frozen=True)
class Bound:
    """Arguments fixed by `functools.partial` (or `self` of a bound method): not traced."""

    positional: int
    keywords: frozenset[str]
    values: tuple[tuple[str, ast.expr], ...] = ()  # the keyword arguments' expressions
    # Parameters after those that a control-flow primitive passes a Python callable to (the
    # function a `lax.custom_root` solver solves for): static, like the bound ones.
    given_functions: int = 0


NOTHING_BOUND = Bound(0, frozenset())
ANY_KEYWORD = "**"  # partial(f, **kwargs): any keyword may be bound


@dataclass
class Discovery:
    roots: list[TracedFunction] = field(default_factory=list)
    # bodies passed to control-flow primitives, with the call that passes them
    bodies: list[tuple[FunctionNode, ast.Call, str]] = field(default_factory=list)
    # (id(body), id(call)) -> the arguments `functools.partial` fixed in the body passed
    body_bound: dict[tuple[int, int], Bound] = field(default_factory=dict)
    # id(custom_jvp/custom_vjp function) -> the rules it registers: they run when the function is
    # differentiated, so they are traced only where the function itself is called from traced code
    derivative_rules: dict[int, list[TracedFunction]] = field(default_factory=dict)
    # id(control-flow call in `bodies` made under `with jax.disable_jit():`) -> the node of the
    # scope that makes it: from eager code, it runs its bodies in Python on concrete values
    eager: dict[int, ast.AST] = field(default_factory=dict)

    def traces_itself(self, fn: FunctionNode) -> bool:
        """Whether a transformation or a control-flow primitive traces `fn` (a trace of its own,
        nested in any trace around the call), not only the code that calls it."""
        return any(root.node is fn for root in self.roots) or any(body is fn for body, _, _ in self.bodies)
