"""The key state as a domain of the dataflow solver: one function's keys, to a fixed point.

A state maps each *phase* to a `KeyState`.  A phase says, for each enclosing loop whose
back edge the path has taken since it entered it (outermost first), which iteration it is
on: the second, or the third and later (`_ITERATIONS`).  A key a later iteration finds
consumed was consumed on every path through the iteration before (the "consumed since the
loop head" fact), which one joined state at the loop head would blur with the state the
loop was entered with; counting to the third iteration also sees a key that comes back
through a second name (`b = a` at the end of the body).  Leaving a loop drops it from the
phase (the phases meet again); a `for` over a non-empty literal or `range(n)` and a `while True` are never left
after zero iterations.  Paths join per phase where they meet, with the branch test as the
condition of what one branch consumed.

The solver runs the transfer function (`key_transfer.KeyTransfer`) block by block; what a
block reports is kept per phase and replaced when the block runs again, so what remains
comes from each block's final state (a block's last run is from its fixed point).  A phase
entered with the state of its previous run is not run again.  The reports are then made in
the order an interpreter walking the code would (statements in order, a loop's later
iterations after its first), so the first report of each use is the one kept.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Optional, Tuple

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.dataflow import Domain, solve
from jaxlint.analysis.engine.names import FUNCTION_TYPES
from jaxlint.analysis.engine.reachability import never_completes
from jaxlint.analysis.engine.walk import own_nodes
from jaxlint.analysis.keys.key_state import DEFINITE, MAYBE, NONE, UNUSED, Elem, KeyState, Mark, Summary, join_levels
from jaxlint.analysis.keys.key_transfer import KeyTransfer, known_truth

if TYPE_CHECKING:
    from jaxlint.analysis.keys.key_state import ModuleKeys

Phase = Tuple[Tuple[ast.stmt, int], ...]  # () or ((loop, iteration),): the outermost loop past its first
States = Dict[Phase, KeyState]
_ITERATIONS = 3  # iterations told apart; the later ones share one state
_Context = Tuple[Tuple[ast.AST, ...], Tuple[ast.AST, ...]]  # (enclosing loops, enclosing conditions)


def analyse(
    flow: ModuleKeys, fn: ast.AST, keynames: frozenset[str], quiet: bool = False, flags: Optional[dict[str, bool]] = None,
) -> Summary:
    """Solve one function (or the module's statements), report what it reuses, summarise it.

    `flags`: what a caller decides about tests on its parameters (`KeyFlow._literal_flags`): the
    truth of `train` or of `key is None`; a branch on one (`if not deterministic:`,
    `if key is not None:`) goes the way the call decides."""
    run = KeyTransfer(flow, fn, keynames, quiet, flags)
    state = run.entry()
    exits: list[tuple[KeyState, frozenset[str]]] = []
    reports: list = []
    try:
        if isinstance(fn, ast.Lambda):
            run.carry(fn.body, state)
            run.expr(fn.body, state)
            exits.append((state, run.returns_params(fn.body, state)))
            reports = [report for found in run.reports.values() for report in found]
        else:
            if _straight(fn.body):  # one block: a single pass is the fixed point
                exits = _run_straight(run, fn.body, state)
                reports = [report for found in run.reports.values() for report in found]
            else:
                graph = cfg.build(fn)
                domain = KeyDomain(run, fn, graph)
                solution = solve(graph, domain, {(): state})
                exits, reports = domain.results(graph, solution.entry_states)
        run.undrawn = run.draws.undrawn(fn)
    except RecursionError:
        return Summary({}, frozenset(run.params))
    finally:
        # A report holds the run that made it, and the run its reports and the solver's `locate`,
        # which holds the run again: both dropped once the reports are made, the run and the
        # module's facts it reaches die by reference counting, not by the collector.
        run.reports.clear()
        for _, report in sorted(reports, key=lambda r: r[0]):
            report()
        run.locate = None
    consumed: dict[str, int] = {}
    looped: set[str] = set()
    for name, vid in run.params.items():
        # A key only Flax runs consumed is summarised by `_flax_runs`.
        marks = [UNUSED if _by_flax(s.mark(vid)) else s.mark(vid) for s, _ in exits]
        consumed[name] = join_levels(_looped(m, fn) for m in marks) if marks else NONE
        if consumed[name] == DEFINITE and any(m.level == MAYBE for m in marks):
            looped.add(name)
    free: dict[str, int] = {}
    free_uses: dict[str, ast.AST] = {}
    for name, vid in run.free.items():
        levels = [s.mark(vid).level for s, _ in exits]
        free[name] = join_levels(levels) if levels else NONE
        used = next((s.mark(vid).first for s, _ in exits if s.mark(vid).first is not None), None)
        if used is not None:
            free_uses[name] = used.node
    returns = frozenset.intersection(*(r for _, r in exits)) if exits else frozenset()
    summary = Summary(consumed, frozenset(run.params), returns, free, _flax_runs(run.params, exits), _undrawn(run))
    summary.free_uses = free_uses
    summary.looped = frozenset(looped)
    summary.returned_from = _returned_from(fn, frozenset(run.params))
    summary.elements = _elements(run.params, [s for s, _ in exits])
    summary.chooses_keys = run.chooses_keys
    if run.ties and not run.fell_off:
        summary.tied = tuple(sorted(frozenset.intersection(*run.ties)))
    return summary


def _elements(params: dict[str, int], exits: list) -> dict[str, dict[int, int]]:
    """Per parameter, the level at which each element of a constant index is consumed
    (`Summary.elements`), for the elements some path consumes; one only Flax runs consume is
    summarised by `_flax_runs`, as a parameter is."""
    found: dict[str, dict[int, int]] = {}
    for name, vid in params.items():
        indices = {
            slot.index for state in exits for slot in state.used
            if isinstance(slot, Elem) and slot.array == vid and slot.index is not None
        }
        levels = {
            index: join_levels(NONE if _by_flax(state.mark(Elem(vid, index))) else state.mark(Elem(vid, index)).level for state in exits)
            for index in sorted(indices)
        }
        if any(level != NONE for level in levels.values()):
            found[name] = levels
    return found


def _returned_from(fn: ast.AST, params: frozenset[str]) -> frozenset[str]:
    """The parameters a `return` of the function (a lambda's body) mentions: what it hands back
    may be the key, or computed from it (`return key.reshape(n, -1)`)."""
    if isinstance(fn, ast.Lambda):
        values = [fn.body]
    else:
        values = [n.value for n in own_nodes(fn) if isinstance(n, ast.Return) and n.value is not None]
    return frozenset(n.id for v in values for n in ast.walk(v) if isinstance(n, ast.Name) and n.id in params)


def _undrawn(run: KeyTransfer) -> dict[str, frozenset[tuple[int, ...]]]:
    """The parameters the function consumes only by splits nothing draws from, each with where the
    children come back in what it returns (`Summary.undrawn`)."""
    found: dict[str, frozenset[tuple[int, ...]]] = {}
    for name, vid in run.params.items():
        uses = run.draws.consumers.get(vid)
        if uses and all(use.kind == "split" and id(use.call) in run.undrawn for use in uses):
            found[name] = frozenset().union(*(run.undrawn[id(use.call)] for use in uses))
    return found


def _looped(mark: Mark, fn: ast.AST) -> int:
    """A mark's level, where a key consumed in a loop's body, under no test, counts as consumed:
    only a loop that never runs (over no data, no batch) leaves it whole, which is not what the
    loop is for. A key consumed under a test stays MAYBE, as does one handed to a function seen
    that draws on some of its paths (`partial`)."""
    if mark.level == MAYBE and mark.guard is None and not mark.partial and mark.first is not None:
        return DEFINITE if _in_loop_body(fn, mark.first.call) else MAYBE
    return mark.level


def _in_loop_body(fn: ast.AST, node: ast.AST) -> bool:
    """Whether `node` runs in the body of a loop of `fn`, under no `if`, `match` or handler."""
    where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    body, looped = getattr(fn, "body", None), False
    while isinstance(body, list):
        stmt = next((s for s in body if (s.lineno, s.col_offset) <= where <= (s.end_lineno, s.end_col_offset)), None)
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            in_body = bool(stmt.body) and (stmt.body[0].lineno, stmt.body[0].col_offset) <= where
            looped, body = looped or in_body, stmt.body if in_body else None
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            body = stmt.body
        elif isinstance(stmt, ast.Try):
            body = next((b for b in (stmt.body, stmt.orelse, stmt.finalbody) if _spans(b, where)), None)
        else:
            return looped and stmt is not None and not isinstance(stmt, (ast.If, *FUNCTION_TYPES, ast.ClassDef))
    return False


def _spans(body: list, where: tuple) -> bool:
    return bool(body) and (body[0].lineno, body[0].col_offset) <= where <= (body[-1].end_lineno, body[-1].end_col_offset)


def _by_flax(mark) -> bool:
    return mark.first is not None and mark.first.kind == "flax"


def _flax_runs(params: dict[str, int], exits: list) -> dict[str, tuple[tuple[str, bool, int], ...]]:
    """Per parameter, the Flax modules it is handed to (`flax_runs`), whether to build them, and how surely."""
    found: dict[str, tuple[tuple[str, bool, int], ...]] = {}
    for name, vid in params.items():
        runs: dict[str, tuple[bool, list[int]]] = {}
        for state, _ in exits:
            for slot, mark in state.used.items():
                if isinstance(slot, tuple) and len(slot) == 3 and slot[0] == "flax" and slot[1] == vid:
                    init = mark.first.init if mark.first is not None else False
                    runs.setdefault(slot[2], (init, []))[1].append(mark.level)
        if runs:
            found[name] = tuple(
                (module, init, join_levels(levels + [NONE] * (len(exits) - len(levels))))
                for module, (init, levels) in runs.items()
            )
    return found


class KeyDomain(Domain[States]):
    def __init__(self, run: KeyTransfer, fn: ast.AST, graph: cfg.Graph):
        self.run = run
        self.flags = run.flags  # what the call being summarised decides
        self.context: dict[int, _Context] = {}
        self.parent: dict[int, Optional[ast.stmt]] = {}  # id(loop) -> the loop around it
        # id(loop) -> for each `continue` of its body, the condition under which an iteration
        # passes it: the test of the `if` around it, negated (None: no `if` around it)
        self.continues: dict[int, list[Optional[ast.AST]]] = {}
        self._chains: dict[int, Phase] = {}
        run.locate = self.locate
        self._first = {id(b.steps[0]): b for b in graph.blocks if b.steps}
        self._last = {id(b.steps[-1]) for b in graph.blocks if b.steps}
        self._falls_off = {
            b.index for b in graph.blocks
            if not b.edges and not (b.steps and isinstance(b.steps[-1].node, (ast.Return, ast.Raise)))
        }
        # Per (block, phase): the last run's entry and exit states, its reports and its exits.
        self._memo: dict[tuple, tuple[KeyState, KeyState]] = {}
        self._exits: dict[tuple, list] = {}
        self._steps: dict[int, tuple[list, list]] = {}
        self._crossings: dict[tuple[int, int], tuple[tuple, Optional[ast.stmt]]] = {}
        self._block = -1
        self._skip: set[Phase] = set()
        self._inputs: dict[Phase, KeyState] = {}

    # ---- lattice ---------------------------------------------------------------------
    def copy(self, state: States) -> States:
        return {phase: s.copy() for phase, s in state.items()}

    def join(self, a: States, b: States) -> States:
        return self._merge(a, b, ("join",), None)

    def join_at(self, block: cfg.Block, a: States, b: States) -> States:
        meets = block.meets
        guard = meets.test if isinstance(meets, ast.If) else getattr(meets, "subject", None)
        if block.heads is not None:
            # An iteration that took the loop's one `continue` meets, at the head, one that ran
            # the rest of the body: the `if` around the `continue` split them, as an `if` around
            # the rest would have (`if not k: continue` then a draw is `if k:` around the draw),
            # the rest running where its test fails.
            if not self.context:
                self._walk(self.run.fn)
            tests = self.continues.get(id(block.heads), ())
            guard = tests[0] if len(tests) == 1 else None
        return self._merge(a, b, ("block", block.index), guard)

    def widen(self, old: States, new: States) -> States:
        return new  # marks and values are finite: the joins alone reach the fixed point

    def _merge(self, a: States, b: States, anchor: tuple, guard: Optional[ast.AST]) -> States:
        merged = dict(a)
        for phase, s in b.items():
            mine = merged.get(phase)
            if mine is None:
                merged[phase] = s
            elif mine != s:
                merged[phase] = self.run.join([mine, s], anchor, guard)
        return merged

    # ---- edges: into a loop's later iterations, out of loops ---------------------------
    def follow(self, source: cfg.Block, edge: cfg.Edge, state: States) -> Optional[States]:
        if edge.test is not None and known_truth(edge.test, self.flags) is (not edge.outcome):
            return None  # the branch a literal test, or the caller's literal, rules out
        target = edge.target
        if source.heads is not None and target.loop is source.heads and _trips(source.heads, self.flags) == 0:
            return None  # `range(0)`, or a count the call gives as 0: the body is never entered
        crossing = self._crossings.get((source.index, target.index))
        if crossing is None:
            inside = self._chain(source)
            exited = tuple(loop for loop in inside if loop not in self._chain(target))
            back = target.heads if target.heads is not None and target.heads in inside else None
            crossing = self._crossings[(source.index, target.index)] = (exited, back)
        exited, back = crossing
        if not exited and back is None:
            return state
        out: States = {}
        for phase, s in state.items():
            if exited:
                if not phase and source.heads in exited and _trips(source.heads, self.flags) == 1:
                    continue  # the loop runs at least once: it is never left from its first head
                if phase and phase[0][0] in exited:
                    phase = ()
            if back is not None and (not phase or phase[0][0] is back):
                phase = ((back, min(phase[0][1] + 1, _ITERATIONS) if phase else 2),)
            mine = out.get(phase)
            out[phase] = s if mine is None else self.run.join([mine, s], ("exit", target.index))
        return out or None

    def _chain(self, block: cfg.Block) -> Phase:
        """The loops whose iterations run `block`, outermost first."""
        if block.loop is None:
            return ()
        cached = self._chains.get(block.index)
        if cached is None:
            if not self.context:
                self._walk(self.run.fn)
            loops = []
            loop = block.loop
            while loop is not None:
                loops.append(loop)
                loop = self.parent.get(id(loop))
            cached = self._chains[block.index] = tuple(reversed(loops))
        return cached

    # ---- steps -----------------------------------------------------------------------
    def transfer(self, step: cfg.Step, state: States) -> States:
        run = self.run
        block = self._first.get(id(step))
        if block is not None:
            self._enter(block, state)
        returns = step.kind == cfg.STMT and isinstance(step.node, ast.Return)
        yielded = _yielded(step.node) if step.kind == cfg.STMT and not returns else None
        for phase, s in state.items():
            if phase in self._skip:
                continue
            run.carried = phase[0][0] if phase else None
            run.at = (self._block, phase, step)
            run._around = None
            run.step(step, s)
            if returns:
                self._exits.setdefault((self._block, phase), []).append((s, run.returns_params(step.node.value, s)))
            elif yielded is not None:
                # A generator hands control back at each `yield`: what it has consumed by then is
                # what its caller sees, though its loop may never end (`while True: ... yield`).
                self._exits.setdefault((self._block, phase), []).append((s.copy(), run.returns_params(yielded.value, s)))
        if id(step) in self._last:
            self._leave(state)
        return state

    def _enter(self, block: cfg.Block, state: States) -> None:
        """The first step of a block: what its last run in each phase found is dropped, except
        where a phase in a loop comes with the same state as then (it is not run again)."""
        index = self._block = block.index
        self._skip = set()
        self._inputs = {}
        for phase, s in state.items():
            key = (index, phase)
            memo = self._memo.get(key)
            if memo is not None and memo[0] == s:
                state[phase] = memo[1].copy()
                self._skip.add(phase)
                continue
            if block.loop is not None:
                self._inputs[phase] = s.copy()
            self.run.reports.pop(key, None)
            self._exits.pop(key, None)

    def _leave(self, state: States) -> None:
        index = self._block
        for phase, s in state.items():
            if phase in self._skip:
                continue
            if phase in self._inputs:
                self._memo[(index, phase)] = (self._inputs[phase], s.copy())
            if index in self._falls_off:
                self.run.fell_off = True
                self._exits.setdefault((index, phase), []).append((s.copy(), frozenset()))

    def results(self, graph: cfg.Graph, entry_states: dict[int, States]) -> tuple[list, list]:
        """The states every exit leaves with, and the reports of each block's last run."""
        exits = [exit for found in self._exits.values() for exit in found]
        for index in self._falls_off:
            block = graph.blocks[index]
            if not block.steps and index in entry_states:  # an empty last block: its entry state
                self.run.fell_off = True
                exits.extend((s, frozenset()) for s in entry_states[index].values())
        return exits, [report for found in self.run.reports.values() for report in found]

    def locate(self, step: cfg.Step) -> tuple[list, list]:
        """The loops and conditions around a step (lists the comprehensions push onto and pop)."""
        known = self._steps.get(id(step))
        if known is None:
            if not self.context:
                self._walk(self.run.fn)
            node = step.node
            loops, guards = self.context.get(id(node), ((), ()))
            if (step.kind == cfg.TEST and isinstance(node, ast.While)) or step.kind == cfg.TARGET:
                loops = (*loops, node)  # evaluated on every iteration
            known = self._steps[id(step)] = (list(loops), list(guards))
        return known

    def _walk(self, fn: ast.AST) -> None:
        """The loops and branch conditions around every statement of the body."""
        stack: list[tuple[list, tuple, tuple]] = [(list(getattr(fn, "body", [])), (), ())]
        while stack:
            body, loops, guards = stack.pop()
            for stmt in body:
                self.context[id(stmt)] = (loops, guards)
                if isinstance(stmt, FUNCTION_TYPES) or isinstance(stmt, ast.ClassDef):
                    continue
                if isinstance(stmt, ast.Continue) and loops:
                    inside = self.context.get(id(loops[-1]), ((), ()))[1]  # the tests around the loop
                    test = guards[-1] if len(guards) > len(inside) else None
                    passed = ast.copy_location(ast.UnaryOp(ast.Not(), test), test) if test is not None else None
                    self.continues.setdefault(id(loops[-1]), []).append(passed)
                if isinstance(stmt, ast.If):
                    stack.append((stmt.body + stmt.orelse, loops, (*guards, stmt.test)))
                    if any(never_completes(s) for s in stmt.body + stmt.orelse):
                        # An arm that returns, raises or leaves the loop: what follows runs only
                        # when the test took the other arm (`if not restored: return`).
                        guards = (*guards, stmt.test)
                elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
                    self.parent[id(stmt)] = loops[-1] if loops else None
                    stack.append((stmt.body, (*loops, stmt), guards))
                    stack.append((stmt.orelse, loops, guards))
                elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                    for item in stmt.items:
                        self.context[id(item)] = (loops, guards)
                    stack.append((stmt.body, loops, guards))
                elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                    inner = stmt.body + stmt.orelse + stmt.finalbody
                    inner += [s for handler in stmt.handlers for s in handler.body]
                    stack.append((inner, loops, guards))
                elif type(stmt).__name__ == "Match":
                    for case in stmt.cases:
                        stack.append((case.body, loops, (*guards, stmt.subject)))


def _straight(body: list) -> bool:
    """Simple statements only, none leaving early: the graph would be one block."""
    last = len(body) - 1
    return all(
        isinstance(stmt, _SIMPLE) and (i == last or not isinstance(stmt, (ast.Return, ast.Raise)))
        for i, stmt in enumerate(body)
    )


def _yielded(stmt: ast.AST) -> ast.Yield | ast.YieldFrom | None:
    """The `yield` a statement is (`yield sub`, `x = yield sub`), if it is one."""
    value = getattr(stmt, "value", None) if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    return value if isinstance(value, (ast.Yield, ast.YieldFrom)) else None


def _run_straight(run: KeyTransfer, body: list, state: KeyState) -> list[tuple[KeyState, frozenset[str]]]:
    """The transfer of a one-block body, step by step; the state it leaves with."""
    run.locate = lambda step: ([], [])
    for stmt in body:
        step = cfg.Step(cfg.STMT, stmt)
        run.at = (0, (), step)
        run._around = None
        run.step(step, state)
    last = body[-1] if body else None
    if isinstance(last, ast.Raise):
        return []
    if isinstance(last, ast.Return):
        return [(state, run.returns_params(last.value, state))]
    run.fell_off = True
    return [(state, frozenset())]


_SIMPLE = (
    ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return, ast.Raise, ast.Assert, ast.Pass,
    ast.Delete, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.FunctionDef,
    ast.AsyncFunctionDef, ast.ClassDef,
)


def _trips(loop: ast.stmt, flags: dict[str, bool]) -> int | None:
    """How often a loop runs, as far as its header says: 0 (never: a `for` over an empty literal,
    `range(n)` with a literal `n` of at most 0), 1 (at least once: a non-empty literal, a positive
    `n`, `while True`), None (not known). A parameter `n` counts as the literal the call gives it
    (`flags`)."""
    if isinstance(loop, ast.While):
        return 1 if isinstance(loop.test, ast.Constant) and bool(loop.test.value) else None
    it = loop.iter
    if isinstance(it, (ast.Tuple, ast.List)):
        return 1 if it.elts else 0
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and len(it.args) == 1):
        return None
    count = it.args[0]
    if isinstance(count, ast.Name):
        return 1 if flags.get(f"{count.id} > 0") else 0 if flags.get(f"{count.id} <= 0") else None
    if isinstance(count, ast.Constant) and isinstance(count.value, int):
        return 1 if count.value > 0 else 0
    return None
