"""Which consumptions of a key draw numbers: a split draws only through its children.

Two consumptions of one key give dependent numbers only when both draw (JAX 0.10.2): two draws
share a prefix whatever their distributions and shapes, `fold_in(k, i)` is `split(k, n)[i]`, and
a draw from a split key is computed from the very words its children are made of
(`bits(k)[i] == k_i[0] ^ k_i[1]`). A split draws nothing of its own: it draws when one of its
children is drawn from. A split whose children nobody draws from (they are overwritten, deleted,
or only handed to code that keeps or discards them) leaves the key's numbers unused, so a second
use of the key repeats nothing, though JAX's checker (`jax_debug_key_reuse`) still counts the
split as a use.

`Draws` records, while one function is solved, what happens to the children of each split:
drawn from, split again, handed back by a `return` (where in the returned tuple), or read where
the analysis does not follow them. A split is undrawn only when every read of every name its
children are bound to (or copied into by `jnp.stack`, `.reshape`, ...) is one of those events and
none draws: a read anywhere else (an attribute store, a call's container argument the analysis
does not see into, a nested function) counts as a draw.
"""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING, Iterable

from jaxlint.analysis.effects.update_liveness import dead_updates
from jaxlint.analysis.engine.walk import own_nodes, target_names
from jaxlint.analysis.knowledge import random_api as api

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import Names
    from jaxlint.analysis.keys.key_state import Ref, Use


class Draws:
    """What one function's splits derive, and whether anything draws from it."""

    def __init__(self) -> None:
        self.children: dict[int, ast.Call] = {}  # value id of a child (or array of them) -> its split
        self.statements: dict[int, ast.stmt] = {}  # id(split call) -> the statement binding its children
        self.drawn: set[int] = set()  # id(split call): something draws from one of its children
        self.nested: dict[int, set[int]] = {}  # id(split call) -> the splits of its children
        self.returned: dict[int, set[tuple[int, ...]]] = {}  # id(split call) -> where `return` hands children back
        self.seen: set[int] = set()  # ids of the names read at those events
        self.consumers: dict[int, list[Use]] = {}  # value id -> the uses consuming it
        self.copies: dict[int, ast.stmt] = {}  # id(statement) of `b = jnp.stack(a)`-like copies of children

    # ---- events ------------------------------------------------------------------------
    def bound(self, vid: int, split: ast.Call, statement: ast.stmt | None) -> None:
        """Value `vid` is (an array of) the children of `split`, bound by `statement`."""
        self.children[vid] = split
        if statement is not None:
            self.statements.setdefault(id(split), statement)

    def consumed(self, ref: Ref, use: Use) -> None:
        root = ref if isinstance(ref, int) else ref.array
        self.consumers.setdefault(root, []).append(use)
        self.read(use.node)
        split = self.children.get(root)
        if split is None:
            return
        if use.kind == "split":
            self.nested.setdefault(id(split), set()).add(id(use.call))
        elif use.draws is not False:
            self.drawn.add(id(split))

    def copied(self, ref: object, node: ast.AST, statement: ast.stmt | None) -> None:
        """A child array copied into another value (`jnp.stack(children)`): the copy is a child too."""
        if isinstance(ref, int) and ref in self.children:
            self.read(node)
            if statement is not None:
                self.copies[id(statement)] = statement

    def handed_back(self, ref: Ref, node: ast.AST, position: tuple[int, ...]) -> None:
        root = ref if isinstance(ref, int) else ref.array
        split = self.children.get(root)
        if split is not None:
            self.read(node)
            self.returned.setdefault(id(split), set()).add(position)

    def read(self, node: ast.AST) -> None:
        self.seen.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Name))

    # ---- once the function is solved ---------------------------------------------------
    def undrawn(self, fn: ast.AST) -> dict[int, frozenset[tuple[int, ...]]]:
        """The splits of `fn` nothing here draws from, by id of the call, each with where its
        children are handed back (a caller that keeps them may draw from them)."""
        candidates = {split: statement for split, statement in self.statements.items() if split not in self.drawn}
        if not candidates:
            return {}
        loads = _loads(fn)
        found: dict[int, frozenset[tuple[int, ...]]] = {}
        for split_id, statement in candidates.items():
            returned = frozenset(self.returned.get(split_id, ()))
            if any(id(node) not in self.seen for node in self._reads_of(statement, loads)):
                continue
            found[split_id] = returned
        # A split of a child draws what that split's children draw.
        changed = True
        while changed:
            changed = False
            for split_id in list(found):
                if any(inner not in found or found[inner] for inner in self.nested.get(split_id, ())):
                    del found[split_id]
                    changed = True
        return found

    def _reads_of(self, statement: ast.stmt, loads: dict[str, list[ast.Name]]) -> Iterable[ast.Name]:
        names = set(_bound(statement))
        for copy in self.copies.values():
            if _reads(copy) & names:
                names.update(_bound(copy))
        for name in names:
            yield from loads.get(name, ())


def _bound(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.Assign):
        return [n for t in statement.targets for n in target_names(t)]
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return list(target_names(statement.target))
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return list(target_names(statement.target))
    return []


def _reads(statement: ast.stmt) -> set[str]:
    value = getattr(statement, "value", None)
    if value is None:
        return set()
    return {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}


def _loads(fn: ast.AST) -> dict[str, list[ast.Name]]:
    """Every read of a name in the function, nested functions included (they may run any time)."""
    found: dict[str, list[ast.Name]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.setdefault(node.id, []).append(node)
    return found


def dropped(call: ast.Call, positions: frozenset[tuple[int, ...]], fn: ast.AST, names: Names) -> bool:
    """Whether the caller drops what a call hands back at `positions` (indices into nested
    tuples): the names its assignment binds there are never read before they are bound again."""
    if not positions:
        return True
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    statement = names.parents.get(id(call))
    if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1):
        return False
    bound = set()
    for position in positions:
        target = statement.targets[0]
        for index in position:
            if not isinstance(target, (ast.Tuple, ast.List)) or index >= len(target.elts):
                return False
            if any(isinstance(element, ast.Starred) for element in target.elts):
                return False
            target = target.elts[index]
        if not isinstance(target, ast.Name):
            return False
        bound.add(target.id)
    own = names.scope_of(fn)

    def outer(node: ast.Name) -> bool:
        return names.lookup(node.id, names.read_scope.get(id(node), own)) is own

    return id(statement) in dead_updates(fn, {id(statement): frozenset(bound)}, outer)


def only_example_inputs(call: ast.Call, fn: ast.AST, names: Names) -> bool:
    """Whether a draw's numbers serve only as example inputs of an `init` (Flax linen's
    `Module.init`, Haiku's `Transformed.init`, a replay buffer's `init`): what it builds depends
    on the inputs' shapes, not their values, so the numbers decide nothing. Handed to the `init`
    directly, bound to a name (or unpacked into names) handed so wherever it is not only read
    for its shape (`traj.obs.shape[-1]`), mapped over by a tree map whose result is
    (`jax.tree.map(lambda x: x[:, 0], traj)`), or scanned over (`xs=`) by a `lax.scan` body that
    hands its slice so."""
    return _example_input(call, fn, names, 0)


_MAX_DEPTH = 3  # names and scan bodies followed from the draw to the `init` it feeds


def _example_input(node: ast.AST, fn: ast.AST, names: Names, depth: int) -> bool:
    parent = names.parents.get(id(node))
    if isinstance(parent, ast.keyword):
        holder = names.parents.get(id(parent))
        if isinstance(holder, ast.Call) and _is_init(holder.func, names) and parent.arg not in api.KEY_KEYWORDS:
            return True
        if isinstance(holder, ast.Call) and parent.arg == "xs":
            return _scanned_into_init(holder, names, depth)
        return False
    if isinstance(parent, ast.Call):
        # A module's `init(key, *inputs)` takes its example after the key; one given nothing but
        # the example (a replay buffer's `init(timestep)`) takes it first.
        example = parent.args[1:] if len(parent.args) + len(parent.keywords) > 1 else parent.args
        if node in example and _is_init(parent.func, names):
            return True
        if len(parent.args) > 2 and parent.args[2] is node:
            return _scanned_into_init(parent, names, depth)
        if node in parent.args[1:] and depth < _MAX_DEPTH and names.qualname(parent.func) in api.TREE_MAPS:
            return _example_input(parent, fn, names, depth + 1)  # a tree shaped by this one's leaves
        return False
    if isinstance(parent, ast.Assign) and depth < _MAX_DEPTH and len(parent.targets) == 1:
        bound = _unpacked_names(parent.targets[0])
        reads = [read for name in bound or () for read in _reads_in(names, fn, name)]
        # A read of its shape decides nothing either way; what is read only so feeds no `init`
        # (`print(out.shape)` of a result is no example input).
        used = [read for read in reads if not _read_for_shape(read, names)]
        return bool(used) and all(_example_input(read, fn, names, depth + 1) for read in used)
    return False


_SHAPE_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})


def _read_for_shape(node: ast.AST, names: Names) -> bool:
    """`traj.obs["agent"].shape[-1]`: a read of what a value's shape, rank or type is, through
    its fields and items, which its numbers do not change."""
    parent = names.parents.get(id(node))
    while isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
        if isinstance(parent, ast.Attribute) and parent.attr in _SHAPE_ATTRIBUTES:
            return True
        node, parent = parent, names.parents.get(id(parent))
    return False


def _unpacked_names(target: ast.expr) -> list[str] | None:
    """The names an assignment binds, a name or a flat tuple of names (`_, traj = ...`); None for
    any other target."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    return None


def _scanned_into_init(scan: ast.Call, names: Names, depth: int) -> bool:
    """`lax.scan(body, carry, xs)` whose body hands its slice of `xs` only to an `init`."""
    if depth >= _MAX_DEPTH or api.public(names.qualname(scan.func)) != "jax.lax.scan" or not scan.args:
        return False
    body = scan.args[0]
    definition = names.definition(body) if isinstance(body, ast.Name) else body if isinstance(body, ast.Lambda) else None
    if not isinstance(definition, (ast.FunctionDef, ast.Lambda)) or len(definition.args.args) != 2:
        return False
    sliced = definition.args.args[1].arg
    reads = _reads_in(names, definition, sliced)
    return bool(reads) and all(_example_input(read, definition, names, depth + 1) for read in reads)


def _is_init(func: ast.AST, names: Names, depth: int = 0) -> bool:
    """`m.init`, a name bound only to one (`init_fn = hk.transform(f).init`), or a name unpacked
    from what a function of the module returns, each of its returns giving one at that position
    (`embed_init, proj_init = init_fns()`, a factory of inits)."""
    if isinstance(func, ast.Attribute):
        return func.attr in api.MODULE_INITS
    if not isinstance(func, ast.Name):
        return False
    values = names.assignments(func)
    if values:
        return all(isinstance(v, ast.Attribute) and v.attr in api.MODULE_INITS for v in values)
    unpacked = _unpacked_from(func, names)
    if unpacked is None or depth >= _MAX_DEPTH:
        return False
    maker, index = unpacked
    returns = [n.value for n in own_nodes(maker) if isinstance(n, ast.Return)]
    return bool(returns) and all(
        isinstance(r, ast.Tuple) and index < len(r.elts) and not any(isinstance(e, ast.Starred) for e in r.elts)
        and _is_init(r.elts[index], names, depth + 1)
        for r in returns
    )


def _unpacked_from(name: ast.Name, names: Names) -> tuple[ast.FunctionDef, int] | None:
    """The function of the module, and the position, that the one statement binding `name`
    unpacks it from (`a, b = make()`); None for any other binding, or more than one."""
    scope = names.read_scope.get(id(name))
    owner = names.lookup(name.id, scope) if scope is not None else None
    if owner is None or owner.kind == "class":
        return None
    stores = [
        n for n in own_nodes(owner.node)
        if isinstance(n, ast.Name) and n.id == name.id and not isinstance(n.ctx, ast.Load)
    ]
    if len(stores) != 1:
        return None
    target = names.parents.get(id(stores[0]))
    statement = names.parents.get(id(target))
    if not (
        isinstance(target, ast.Tuple) and isinstance(statement, ast.Assign) and statement.targets == [target]
        and isinstance(statement.value, ast.Call)
    ):
        return None
    maker = names.definition(statement.value.func)
    return (maker, target.elts.index(stores[0])) if isinstance(maker, ast.FunctionDef) else None


# Per module, per function: the loads of each name in it, indexed on the first question (asked
# of every call that consumes a key where the module builds parameters).
_READS: "weakref.WeakKeyDictionary[Names, dict[int, dict[str, list[ast.Name]]]]" = weakref.WeakKeyDictionary()


def _reads_in(names: Names, fn: ast.AST, name: str) -> list[ast.Name]:
    """The loads of `name` in `fn`, nested functions included."""
    by_function = _READS.get(names)
    if by_function is None:
        by_function = _READS[names] = {}
    loads = by_function.get(id(fn))
    if loads is None:
        loads = by_function[id(fn)] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads.setdefault(node.id, []).append(node)
    return loads.get(name, [])
