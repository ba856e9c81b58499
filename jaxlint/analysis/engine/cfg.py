"""Control-flow graphs of function bodies: basic blocks of steps joined by edges.

A step is one thing the program does in order: a simple statement, or the part of a
compound statement that runs at that point (an `if` test, a `for` loop binding its
target, a `with` item, an `except` clause binding its name, a `match` case).  Edges
leaving a test carry the test and the outcome they stand for, so an analysis can prune
a branch it knows is not taken.  The builder keeps its own stack instead of recursing,
so a 500-branch `elif` chain or a nest of 50 loops costs no Python stack.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Generator, List, Optional

# Step kinds.  "stmt": a simple statement; "test": an if/while test; "iter": a for loop's
# iterable, evaluated once; "target": a for loop binding its target; "with": a with item;
# "handler": an except clause; "subject": a match subject; "case": a match case's pattern.
STMT, TEST, ITER, TARGET, WITH, HANDLER, SUBJECT, CASE = (
    "stmt", "test", "iter", "target", "with", "handler", "subject", "case",
)


# Hashable, not frozen: a frozen dataclass's __init__ pays a call per field. Never changed.
@dataclass(unsafe_hash=True)
class Step:
    kind: str
    node: ast.AST


@dataclass(unsafe_hash=True)
class Edge:
    target: "Block"
    test: Optional[ast.expr] = None  # the branch test this edge assumes, if any
    outcome: bool = True


@dataclass(eq=False)
class Block:
    index: int
    steps: List[Step] = field(default_factory=list)
    edges: List[Edge] = field(default_factory=list)
    loop: Optional[ast.stmt] = None  # the innermost loop whose iterations run this block
    heads: Optional[ast.stmt] = None  # the loop this block is the header of
    meets: Optional[ast.AST] = None  # the statement (or except clause) whose paths join here


@dataclass
class Graph:
    entry: Block
    blocks: List[Block]

    def order(self) -> List[Block]:
        """Blocks in reverse postorder from the entry (unreachable ones left out).

        Successors are explored last edge first, so a loop's body (its header's first edge)
        finishes last and comes right after the header: the solver settles each loop before
        it moves past it, and sequential loops cost linear time."""
        seen = {self.entry.index}
        post: List[Block] = []
        stack = [(self.entry, reversed(self.entry.edges))]
        while stack:
            block, edges = stack[-1]
            for edge in edges:
                if edge.target.index not in seen:
                    seen.add(edge.target.index)
                    stack.append((edge.target, reversed(edge.target.edges)))
                    break
            else:
                stack.pop()
                post.append(block)
        post.reverse()
        return post


_Body = Generator[tuple, Optional[Block], Optional[Block]]


class _Builder:
    def __init__(self) -> None:
        self.blocks: List[Block] = []
        self.loops: List[tuple[Block, Block]] = []  # (continue target, break target)
        self.loop_nodes: List[ast.stmt] = []  # the loops whose bodies are being built
        self.handlers: List[List[Block]] = []  # entries of the enclosing except clauses

    def new(self) -> Block:
        block = Block(len(self.blocks), loop=self.loop_nodes[-1] if self.loop_nodes else None)
        self.blocks.append(block)
        return block

    def enter_loop(self, stmt: ast.stmt, header: Block, body: Block, after: Block) -> None:
        header.loop = body.loop = header.heads = after.meets = stmt
        self.loops.append((header, after))
        self.loop_nodes.append(stmt)

    def leave_loop(self) -> None:
        self.loops.pop()
        self.loop_nodes.pop()

    def link(self, source: Optional[Block], target: Block, test=None, outcome: bool = True) -> None:
        if source is not None:
            source.edges.append(Edge(target, test, outcome))

    def run(self, body: list, entry: Block) -> Optional[Block]:
        """Build `body` from `entry`; returns the block control falls out of (None: it never does)."""
        stack = [self.body(body, entry)]
        value: Optional[Block] = None
        while stack:
            try:
                request = stack[-1].send(value)
            except StopIteration as stop:
                stack.pop()
                value = stop.value
                continue
            stack.append(self.body(*request))
            value = None
        return value

    def body(self, stmts: list, current: Optional[Block]) -> _Body:
        for stmt in stmts:
            if current is None:
                current = self.new()  # unreachable code: a block nothing leads to
            current = yield from self.statement(stmt, current)
        return current

    def statement(self, stmt: ast.stmt, current: Block) -> _Body:
        if isinstance(stmt, ast.If):
            current.steps.append(Step(TEST, stmt))
            then, other = self.new(), self.new()
            self.link(current, then, stmt.test, True)
            self.link(current, other, stmt.test, False)
            then_end = yield (stmt.body, then)
            other_end = yield (stmt.orelse, other)
            return self.merge(stmt, then_end, other_end)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            current.steps.append(Step(ITER, stmt))
            header, body, after = self.new(), self.new(), self.new()
            self.link(current, header)
            self.link(header, body)
            body.steps.append(Step(TARGET, stmt))
            self.enter_loop(stmt, header, body, after)
            end = yield (stmt.body, body)
            self.leave_loop()
            self.link(end, header)
            orelse = self.new()
            self.link(header, orelse)
            self.link((yield (stmt.orelse, orelse)), after)
            return after
        if isinstance(stmt, ast.While):
            header, body, after, orelse = self.new(), self.new(), self.new(), self.new()
            self.link(current, header)
            header.steps.append(Step(TEST, stmt))
            self.link(header, body, stmt.test, True)
            self.link(header, orelse, stmt.test, False)
            self.enter_loop(stmt, header, body, after)
            end = yield (stmt.body, body)
            self.leave_loop()
            self.link(end, header)
            self.link((yield (stmt.orelse, orelse)), after)
            return after
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                current.steps.append(Step(WITH, item))
            return (yield (stmt.body, current))
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            return (yield from self.try_statement(stmt, current))
        if type(stmt).__name__ == "Match":
            current.steps.append(Step(SUBJECT, stmt))
            ends = []
            for case in stmt.cases:
                branch = self.new()
                self.link(current, branch)
                branch.steps.append(Step(CASE, case))
                ends.append((yield (case.body, branch)))
            ends.append(current)  # no case matched
            return self.merge(stmt, *ends)
        current.steps.append(Step(STMT, stmt))
        if isinstance(stmt, ast.Return):
            return None
        if isinstance(stmt, ast.Raise):
            for entry in self.handlers[-1] if self.handlers else ():
                self.link(current, entry)
            return None
        if isinstance(stmt, (ast.Break, ast.Continue)) and self.loops:
            header, after = self.loops[-1]
            self.link(current, after if isinstance(stmt, ast.Break) else header)
            return None
        return current

    def try_statement(self, stmt, current: Block) -> _Body:
        entries = [self.new() for _ in stmt.handlers]
        for entry, handler in zip(entries, stmt.handlers):
            entry.steps.append(Step(HANDLER, handler))
            entry.meets = handler
        body = self.new()
        self.link(current, body)
        for entry in entries:
            self.link(current, entry)
        first = len(self.blocks)
        self.handlers.append(entries)
        end = yield (stmt.body, body)
        self.handlers.pop()
        # Any statement of the body may raise: what each block of it leaves reaches the handlers.
        for block in [body, *self.blocks[first:]]:
            for entry in entries:
                if all(e.target is not entry for e in block.edges):
                    self.link(block, entry)
        ends = []
        orelse = self.new()
        self.link(end, orelse)
        ends.append((yield (stmt.orelse, orelse)))
        for entry, handler in zip(entries, stmt.handlers):
            ends.append((yield (handler.body, entry)))
        end = self.merge(stmt, *ends)
        if stmt.finalbody:
            final = self.new()
            self.link(end, final)
            return (yield (stmt.finalbody, final))
        return end

    def merge(self, stmt: ast.stmt, *ends: Optional[Block]) -> Optional[Block]:
        live = [e for e in ends if e is not None]
        if not live:
            return None
        if len(live) == 1:
            return live[0]
        join = self.new()
        join.meets = stmt
        for end in live:
            self.link(end, join)
        return join


def build(function: ast.AST) -> Graph:
    """The control-flow graph of a def's body (a lambda's body is one expression: no graph)."""
    builder = _Builder()
    entry = builder.new()
    builder.run(function.body, entry)
    return Graph(entry, builder.blocks)


def evaluated(step: Step) -> List[ast.AST]:
    """The expressions (or simple statement) a step evaluates, in the scope that runs it."""
    node = step.node
    kind = step.kind
    if kind == STMT:
        return [node]
    if kind == TEST:
        return [node.test]
    if kind == ITER:
        return [node.iter]
    if kind == TARGET:
        return [node.target]
    if kind == WITH:
        return [node]
    if kind == HANDLER:
        return [node.type] if node.type is not None else []
    if kind == SUBJECT:
        return [node.subject]
    if kind == CASE:
        return [node.guard] if node.guard is not None else []
    return []
