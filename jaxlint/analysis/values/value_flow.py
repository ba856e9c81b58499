"""The statement level of the value analysis: a dataflow domain over a function's control-flow graph.

A state maps the function's local names to their values.  Each step evaluates its
expressions through the function run (which records every expression's value) and
binds what the statement binds.  A branch whose test is decided by what the state knows
(`m is None` for an `m` known not to be None, `while True`, a module constant such as
`_USE_EAGER = False`, a comparison of known numbers such as `len(args) == 1` where the
call passed two) is pruned: its body is never evaluated in that context.  A branch
that is taken narrows what its test shows: past `if x is None: return`, `x` is not None;
inside `if isinstance(x, np.ndarray):`, `x` holds no tracer (`type_tests.concrete`).  Such a
branch is not pruned where `x` is traced: a traced value may be a join of paths, one of them
a Python or NumPy value that does take it.  Inside `if isinstance(x, jax.core.Tracer) or x:`,
an `x` the analysis took for a constant or does not know may be a tracer, and is taken for one
(`type_tests.may_be_tracers`); where `x` is a traced array, the test holds, and its other edge
is pruned (`type_tests.tracer_tested`). Where the value tested is a traced array (`x[0]` of a
traced list), `isinstance(x[0], np.ndarray)` fails, and its true edge is pruned
(`type_tests.concrete_tested`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Dict, Optional, Protocol

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.bindings import Bindings
from jaxlint.analysis.engine.dataflow import Domain
from jaxlint.analysis.engine.lattice import STATIC, TRACED_ARRAY, UNKNOWN, Trace, Value, element_of, join, widen
from jaxlint.analysis.engine.names import LIST_GROWERS
from jaxlint.analysis.knowledge.random_api import key_named
from jaxlint.analysis.tracing import type_tests
from jaxlint.analysis.values.nullness import narrowed

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import FunctionNode, Names, Scope
    from jaxlint.analysis.values.value_env import Env

State = Bindings


class FunctionRun(Protocol):
    """What the statement level asks of the analysis of one function in one context
    (`values._FunctionRun`): it evaluates expressions and binds targets."""

    analysis: Any  # the `ValueAnalysis` running it: the module's constants
    names: Names
    fn: FunctionNode
    scope: Scope
    env: Env

    def eval(self, node: ast.AST, env: Env) -> Value: ...

    def bind(self, target: ast.AST, value: Value, env: Env) -> None: ...

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value: ...

    def define(self, node: FunctionNode, env: Env) -> None: ...

    def decorated(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Value: ...

    def run_at_definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None: ...


class ValueFlow(Domain[State]):
    def __init__(self, run: FunctionRun, outer: Env | None):
        self.env_class = run.env.__class__  # `values.Env`, which imports this module
        self.run = run
        self.outer = outer
        self.returned: Optional[Value] = None
        self.elements: Dict[int, Value] = {}  # id(for loop) -> what its iterable yields
        # id(test) -> its value where it was last evaluated: the block that evaluates a test
        # ends with it, so its edges are followed from that state.
        self.tests: Dict[int, Value] = {}

    # ---- lattice ---------------------------------------------------------------------
    def copy(self, state: State) -> State:
        return state.copy()

    def join(self, a: State, b: State) -> State:
        return a.join(b)

    def widen(self, old: State, new: State) -> State:
        return Bindings({name: value if old.get(name) == value else widen(value) for name, value in new.items()})

    # ---- steps -----------------------------------------------------------------------
    def transfer(self, step: cfg.Step, state: State) -> State:
        env = self.env_class(state, self.outer, self.run.fn)
        run = self.run
        node = step.node
        kind = step.kind
        if kind == cfg.STMT:
            self.statement(node, env)
        elif kind == cfg.TEST:
            self.tests[id(node.test)] = run.eval(node.test, env)
        elif kind == cfg.ITER:
            element = element_of(run.eval(node.iter, env))
            old = self.elements.get(id(node))
            self.elements[id(node)] = element if old is None else join(old, element)
        elif kind == cfg.TARGET:
            run.bind(node.target, self.elements.get(id(node), UNKNOWN), env)
        elif kind == cfg.WITH:
            run.eval(node.context_expr, env)
            if node.optional_vars is not None:
                run.bind(node.optional_vars, UNKNOWN, env)
        elif kind == cfg.HANDLER:
            if node.name:
                env.vars[node.name] = STATIC
        elif kind == cfg.SUBJECT:
            run.eval(node.subject, env)
        elif kind == cfg.CASE and node.guard is not None:
            run.eval(node.guard, env)
        return env.vars

    def statement(self, node: ast.stmt, env: "Env") -> None:
        run = self.run
        if isinstance(node, ast.Assign):
            value = run.eval(node.value, env)
            if not value.not_none and _rebinds_key(node, env):
                value = value.but(not_none=True)
            for target in node.targets:
                run.bind(target, value, env)
        elif isinstance(node, ast.AugAssign):
            value = run.eval(node.value, env)
            current = run.eval(node.target, env)
            run.bind(node.target, run.binop(node.op, current, value, node), env)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                run.bind(node.target, run.eval(node.value, env), env)
        elif isinstance(node, ast.Expr):
            if not self._grows(node.value, env):
                run.eval(node.value, env)
        elif isinstance(node, ast.Return):
            value = run.eval(node.value, env) if node.value else STATIC
            self.returned = value if self.returned is None else join(self.returned, value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            run.define(node, env)
            env.vars[node.name] = run.decorated(node)
            run.run_at_definition(node)
        elif isinstance(node, ast.ClassDef):
            env.vars[node.name] = STATIC
        elif isinstance(node, ast.Assert):
            run.eval(node.test, env)
            if node.msg is not None:
                run.eval(node.msg, env)
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                run.eval(node.exc, env)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    env.vars.pop(target.id, None)
        # import, global, nonlocal, pass, break, continue: nothing to evaluate

    def _grows(self, call: ast.expr, env: "Env") -> bool:
        """`xs.append(v)`, `xs.insert(i, v)`, `xs.extend(vs)` on a list this function holds:
        its elements are then what they were or what was added (`losses.append(loss)` in a
        loop, then `jnp.stack(losses)`). Whether it did."""
        if not (
            isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in LIST_GROWERS
            and isinstance(call.func.value, ast.Name) and not call.keywords
            and len(call.args) == LIST_GROWERS[call.func.attr] and not isinstance(call.args[-1], ast.Starred)
        ):
            return False
        name = call.func.value.id
        held = env.vars.get(name)
        if held is None or (held.items is None and held.element is None) or held.array or held.record is not None:
            return False  # not a list of this function's own (an array has no `append`)
        run = self.run
        for arg in call.args[:-1]:
            run.eval(arg, env)
        added = run.eval(call.args[-1], env)
        if call.func.attr == "extend":
            added = element_of(added)
        element = join(element_of(held), added) if held.items or held.element is not None else added
        env.vars[name] = Value(max(held.trace, element.trace), element=element, not_none=True)
        return True

    # ---- branches --------------------------------------------------------------------
    def assume(self, edge: cfg.Edge, state: State) -> Optional[State]:
        test = edge.test
        truth = self.truth(test, state)
        if truth is not None and truth != edge.outcome:
            return None
        narrowed_state = None
        for name in narrowed(test, edge.outcome):
            value = self.lookup(name, state)
            if value is not None and value.none is None:
                narrowed_state = narrowed_state or state.copy()
                narrowed_state[name] = value.unless_none or value.but(not_none=True)
        state = narrowed_state or state
        concrete = None
        for name in type_tests.concrete(test, edge.outcome, self.run.names, self.run.scope):
            if concrete is None:
                concrete = state.copy()
            concrete[name] = Value(STATIC.trace, not_none=True)
        state = state if concrete is None else concrete
        tracers = None
        for name in type_tests.may_be_tracers(test, edge.outcome, self.run.names, self.run.scope):
            value = self.lookup(name, state)
            # What the analysis has not seen bound (a closure of code it does not analyse, taken
            # for a constant) or does not know: the code's own test says it may be a tracer.
            if value is None or (value.trace is Trace.UNKNOWN and not value.ref and value.function is None):
                tracers = tracers or state.copy()
                tracers[name] = TRACED_ARRAY
        return state if tracers is None else tracers

    def truth(self, test: ast.expr, state: State) -> Optional[bool]:
        """The truth of a test decided by known constants: literals, names bound to them, `is None`."""
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if isinstance(test, ast.Name):
            value = self.known(test, state)
            return None if value is None else value.truth
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand, state)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [self.truth(v, state) for v in test.values]
            decisive = isinstance(test.op, ast.Or)  # `or` is decided by a true part, `and` by a false one
            if decisive in parts:
                return decisive
            return None if None in parts else not decisive
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
            and isinstance(test.left, ast.Name)
        ):
            value = self.known(test.left, state)
            none = None if value is None else value.none
            return None if none is None else none == isinstance(test.ops[0], ast.Is)
        if isinstance(test, ast.Compare):  # numbers the analysis knows (`len(args) == 1`)
            value = self.tests.get(id(test))
            return None if value is None else value.truth
        if isinstance(test, ast.Call):
            env = self.env_class(state, self.outer, self.run.fn)
            return type_tests.traced_array_outcome(test, self.run.names, self.run.scope, lambda e: self.run.eval(e, env))
        return None

    def known(self, name: ast.Name, state: State) -> Optional[Value]:
        """A name's value: a local or closed-over binding, else a module constant's literal."""
        value = self.lookup(name.id, state)
        if value is None:
            value = self.run.analysis.constants.value(name, self.run.scope)
        return value

    def lookup(self, name: str, state: State) -> Optional[Value]:
        value = state.get(name)
        if value is None and self.outer is not None:
            value = self.outer.get(name)
        return value


def _rebinds_key(node: ast.Assign, env: "Env") -> bool:
    """`rng = bind_to_device(rng, ...)`: a name that says it is a PRNG key, not None here, handed
    to a call whose result it is bound to again. Whatever code the call runs, seen or not, what
    comes back under the key's name is the key the code goes on drawing from, not None (the key
    analysis takes it for a key just so)."""
    call = node.value
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name) or not isinstance(call, ast.Call):
        return False
    name = node.targets[0].id
    if not key_named(name):
        return False
    handed = any(isinstance(a, ast.Name) and a.id == name for a in (*call.args, *(k.value for k in call.keywords)))
    current = env.vars.get(name)
    return handed and current is not None and current.not_none
