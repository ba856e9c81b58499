"""A forward dataflow solver: a domain's facts propagated over a control-flow graph to a fixed point.

A domain says how to copy and join states, what each step does to a state, what a
branch edge's test rules out, and how to widen a state that keeps growing.  The solver
visits blocks in reverse postorder from a priority worklist, so a block is visited once
its predecessors are done except around loops; a loop header visited `widen_after` times
is widened, so every domain with a widening reaches its fixed point.  `max_visits` is a
safety net only: hitting it is reported in the result, never silent.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Dict, Generic, List, Optional, TypeVar

from jaxlint.analysis.engine.cfg import Block, Edge, Graph, Step

State = TypeVar("State")


class Domain(Generic[State]):
    """The facts one analysis tracks.  Subclasses implement `copy`, `join` and `transfer`."""

    def copy(self, state: State) -> State:
        raise NotImplementedError

    def join(self, a: State, b: State) -> State:
        raise NotImplementedError

    def transfer(self, step: Step, state: State) -> State:
        """The state after `step`; `state` is the solver's own copy and may be changed in place."""
        raise NotImplementedError

    def assume(self, edge: Edge, state: State) -> Optional[State]:
        """The state along a branch edge: None when its test rules the branch out, else `state`
        or a narrowed copy (never `state` changed in place: the other edges share it)."""
        return state

    def follow(self, source: Block, edge: Edge, state: State) -> Optional[State]:
        """The state carried along any edge (default: `assume` on branch edges, else `state`).
        A domain whose facts depend on where an edge goes (into or out of a loop) refines this."""
        return self.assume(edge, state) if edge.test is not None else state

    def join_at(self, block: Block, a: State, b: State) -> State:
        """The join where paths meet at `block` (default: `join`)."""
        return self.join(a, b)

    def widen(self, old: State, new: State) -> State:
        """A state above both that stops a loop from growing forever (default: the join)."""
        return self.join(old, new)


@dataclass
class Solution(Generic[State]):
    entry_states: Dict[int, State]  # block index -> state on entry
    converged: bool
    visits: int


def solve(graph: Graph, domain: Domain[State], initial: State,
          widen_after: int = 4, max_visits: int = 64) -> Solution[State]:
    order = graph.order()
    rank = {block.index: i for i, block in enumerate(order)}
    states: Dict[int, State] = {graph.entry.index: initial}
    counts: Dict[int, int] = {}
    queue: List[tuple] = [(0, graph.entry.index)]
    queued = {graph.entry.index}
    by_index = {block.index: block for block in order}
    visits = 0
    converged = True
    while queue:
        _, index = heapq.heappop(queue)
        queued.discard(index)
        block: Block = by_index[index]
        count = counts[index] = counts.get(index, 0) + 1
        if count > max_visits:
            converged = False
            continue
        visits += 1
        state = domain.copy(states[index])
        for step in block.steps:
            state = domain.transfer(step, state)
        for edge in block.edges:
            taken = domain.follow(block, edge, state)
            if taken is None:
                continue
            target = edge.target.index
            old: Optional[State] = states.get(target)
            if old is None:
                new = domain.copy(taken)
            else:
                new = domain.join_at(edge.target, old, taken)
                if counts.get(target, 0) >= widen_after:
                    new = domain.widen(old, new)
                if new == old:
                    continue
            states[target] = new
            if target not in queued:
                queued.add(target)
                heapq.heappush(queue, (rank[target], target))
    return Solution(states, converged, visits)


def replay(graph: Graph, domain: Domain[State], solution: Solution[State]) -> None:
    """Run every block once from its final entry state, so that a domain recording what it sees
    (the state where a name is read, say) records the fixed point only. A block the solution
    never reached is skipped."""
    for block in graph.order():
        state = solution.entry_states.get(block.index)
        if state is None:
            continue
        for step in block.steps:
            state = domain.transfer(step, state)
