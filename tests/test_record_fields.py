"""Fields of NamedTuples and dataclasses that traced code constructs: each keeps what was passed for it.

Reading `state.field` back gives the value the constructor (or a copy with `_replace`,
`.replace`, `dataclasses.replace`) put there: traced when a tracer was passed, a Python value
when a constant or a default was. Each case runs under JAX too.
"""

from __future__ import annotations

import ast
import textwrap

from quiet_and_reported import case_tests

from jaxlint.analysis.engine.lattice import (
    STATIC,
    TRACED_ARRAY,
    Record,
    Trace,
    as_traced,
    constant,
    join,
    record_value,
)
from jaxlint.analysis.module import ModuleFacts
from jaxlint.source import Source

# A NamedTuple carried through a Python `while` under vmap: the first test reads a concrete
# array, the second the field the body computed from the batched argument.
WHILE_ON_A_FIELD_SET_IN_THE_BODY = """
from typing import NamedTuple

import jax
import jax.numpy as jnp

class _Walk(NamedTuple):
    depth: jax.Array
    is_continuing: jax.Array

def walk(x):
    def cond_fun(state):
        return state.is_continuing

    def body_fun(state):
        depth = state.depth + 1
        return _Walk(depth=depth, is_continuing=jnp.logical_and(depth < 3, x > 0))

    state = _Walk(depth=jnp.zeros((), jnp.int32), is_continuing=jnp.array(True))
    while cond_fun(state):
        state = body_fun(state)
    return state.depth

def demo():
    return jax.vmap(walk)(jnp.arange(3.0))
"""

# The same loop with its counter a Python int: a field that only ever holds Python values.
WHILE_ON_A_PYTHON_FIELD = """
from typing import NamedTuple

import jax
import jax.numpy as jnp

class _Sum(NamedTuple):
    steps: int
    total: jax.Array

@jax.jit
def f(x):
    state = _Sum(steps=0, total=jnp.zeros(()))
    while state.steps < 3:
        state = _Sum(steps=state.steps + 1, total=state.total + x.sum())
    return state.total

def demo():
    return f(jnp.ones(3))
"""

STATS = """
from typing import NamedTuple
import dataclasses

import jax
import jax.numpy as jnp

class Stats(NamedTuple):
    total: jax.Array
    count: int = 1

    def positive(self):
        return self.total > 0

    def many(self):
        return self.count > 2

@dataclasses.dataclass
class Summary:
    total: jax.Array
    count: int = 1
"""

IF_ON_A_TRACED_FIELD = STATS + """
@jax.jit
def f(x):
    stats = Stats(jnp.sum(x), x.shape[0])
    if stats.total > 0:
        return x / stats.count
    return x

def demo():
    return f(jnp.ones(3))
"""

IF_ON_A_TRACED_DATACLASS_FIELD = STATS + """
@jax.jit
def f(x):
    summary = Summary(total=jnp.sum(x))
    if summary.total > 0:
        return x / summary.count
    return x

def demo():
    return f(jnp.ones(3))
"""

IF_ON_A_PYTHON_FIELD = STATS + """
@jax.jit
def f(x):
    stats = Stats(total=jnp.sum(x), count=x.shape[0])
    summary = Summary(jnp.max(x))
    if stats.count > 2 and summary.count == 1:
        return x / stats.total
    return x

def demo():
    return f(jnp.ones(3))
"""

REPLACED_BY_A_TRACER = STATS + """
@jax.jit
def f(x):
    stats = Stats(total=0.0)._replace(total=jnp.sum(x))
    if stats.total > 0:
        return x / stats.total
    return x

def demo():
    return f(jnp.ones(3))
"""

DATACLASS_REPLACED_BY_A_TRACER = STATS + """
@jax.jit
def f(x):
    summary = dataclasses.replace(Summary(total=0.0), total=jnp.sum(x))
    if summary.total > 0:
        return x / summary.total
    return x

def demo():
    return f(jnp.ones(3))
"""

REPLACED_BY_A_CONSTANT = STATS + """
@jax.jit
def f(x):
    stats = Stats(total=jnp.sum(x), count=x.shape[0])
    stats = stats._replace(total=0.0)
    summary = dataclasses.replace(Summary(total=jnp.sum(x)), total=1.0)
    if stats.total == 0.0 and summary.total:
        return x / stats.count
    return x

def demo():
    return f(jnp.ones(3))
"""

METHOD_READING_A_TRACED_FIELD = STATS + """
@jax.jit
def f(x):
    if Stats(jnp.sum(x)).positive():
        return x
    return -x

def demo():
    return f(jnp.ones(3))
"""

METHOD_READING_A_PYTHON_FIELD = METHOD_READING_A_TRACED_FIELD.replace(".positive()", ".many()")

UNPACKED_AND_INDEXED = STATS + """
@jax.jit
def f(x):
    stats = Stats(jnp.sum(x), 3)
    total, count = stats
    if count > 2 and stats[1] == 3:
        return x * total
    return x

def demo():
    return f(jnp.ones(3))
"""

UNPACKED_TRACED_ITEM = STATS + """
@jax.jit
def f(x):
    stats = Stats(jnp.sum(x), 3)
    if stats[0] > 2:
        return x
    return -x

def demo():
    return f(jnp.ones(3))
"""

# A field the class declares static stays a Python value in a loop carry: it is aux data,
# not a leaf that the loop traces.
STATIC_FIELD_OF_A_CARRY = """
import dataclasses

import jax
import jax.numpy as jnp

@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Carry:
    value: jax.Array
    scale: float = dataclasses.field(default=1.0, metadata=dict(static=True))

@jax.jit
def f(x):
    def body(i, carry):
        if carry.scale > 1.0:
            return Carry(carry.value * carry.scale, carry.scale)
        return Carry(carry.value + i, carry.scale)
    return jax.lax.fori_loop(0, 3, body, Carry(x, 2.0)).value

def demo():
    return f(jnp.ones(3))
"""

LEAF_FIELD_OF_A_CARRY = STATIC_FIELD_OF_A_CARRY.replace("if carry.scale > 1.0:", "if carry.value.sum() > 1.0:")
STATIC_FIELD_OF_A_COND_OPERAND = STATIC_FIELD_OF_A_CARRY.replace("""    def body(i, carry):
        if carry.scale > 1.0:
            return Carry(carry.value * carry.scale, carry.scale)
        return Carry(carry.value + i, carry.scale)
    return jax.lax.fori_loop(0, 3, body, Carry(x, 2.0)).value""", """    def scaled(carry):
        if carry.scale > 1.0:
            return carry.value * carry.scale
        return carry.value
    return jax.lax.cond(x.sum() > 0, scaled, lambda carry: carry.value, Carry(x, 2.0))""")
LEAF_FIELD_OF_A_COND_OPERAND = STATIC_FIELD_OF_A_COND_OPERAND.replace(
    "if carry.scale > 1.0:", "if carry.value.sum() > 1.0:"
)
UNMARKED_FIELD_OF_A_CARRY = STATIC_FIELD_OF_A_CARRY.replace(", metadata=dict(static=True)", "")

# A field of an annotated dataclass-pytree parameter, read by a function nested in the jitted
# one (a vmapped member) through its closure: the parameter's annotation says the class there too.
FIELD_READ_THROUGH_A_CLOSURE = """
import jax
import jax.numpy as jnp
from flax import struct

@struct.dataclass
class Params:
    elitism: bool
    mode: int = struct.field(pytree_node=False, default=0)

@jax.jit
def ask(keys, best, params: Params):
    def member(k):
        a = jax.random.uniform(k)
        if params.mode > 0:
            a = a * 2
        return best if params.elitism else a

    return jax.vmap(member)(keys)

def demo():
    return ask(jax.random.split(jax.random.key(0), 2), jnp.float32(0.5), Params(True))
"""
STATIC_FIELD_READ_THROUGH_A_CLOSURE = FIELD_READ_THROUGH_A_CLOSURE.replace(
    "return best if params.elitism else a", "return a"
)

# A tuple carry handed over by eager code: its items are what its literal shows, every leaf
# traced (a `jnp.zeros(..., bool)` or a number an array, a nested tuple a tuple, None stays None).
TUPLE_CARRY_FROM_EAGER_CODE = """
import jax
import jax.numpy as jnp

def sample(x):
    def body(arg):
        done, w, count, extra = arg
        if extra is None:
            w = w + 1.0
        return done | (w > 3), w, count + 1, extra

    def cond(arg):
        done, w, count, extra = arg
        return jnp.any(~done) & (count < 100)

    return jax.lax.while_loop(cond, body, (jnp.zeros((), dtype=jnp.bool_), x, 0, None))[1]

def demo():
    return sample(jnp.float32(0.0))
"""
TRUTH_OF_A_TUPLE_CARRY_ITEM = TUPLE_CARRY_FROM_EAGER_CODE.replace(
    "if extra is None:\n            w = w + 1.0", "w = w if done else w + 1.0"
)
COUNT_OF_A_TUPLE_CARRY = TUPLE_CARRY_FROM_EAGER_CODE.replace(
    "if extra is None:\n            w = w + 1.0", "if count > 50:\n            w = w + 1.0"
)

QUIET = {
    "tuple-carry-from-eager-code": TUPLE_CARRY_FROM_EAGER_CODE,
    "static-field-read-through-a-closure": STATIC_FIELD_READ_THROUGH_A_CLOSURE,
    "while-on-a-python-field": WHILE_ON_A_PYTHON_FIELD,
    "if-on-a-python-field": IF_ON_A_PYTHON_FIELD,
    "replaced-by-a-constant": REPLACED_BY_A_CONSTANT,
    "unpacked-and-indexed": UNPACKED_AND_INDEXED,
    "static-field-of-a-carry": STATIC_FIELD_OF_A_CARRY,
    "static-field-of-a-cond-operand": STATIC_FIELD_OF_A_COND_OPERAND,
    "method-reading-a-python-field": METHOD_READING_A_PYTHON_FIELD,
}
REPORTED = {
    "truth-of-a-tuple-carry-item": (TRUTH_OF_A_TUPLE_CARRY_ITEM, "JAX101", "TracerBoolConversionError"),
    "count-in-a-tuple-carry": (COUNT_OF_A_TUPLE_CARRY, "JAX101", "TracerBoolConversionError"),
    "field-read-through-a-closure": (FIELD_READ_THROUGH_A_CLOSURE, "JAX101", "TracerBoolConversionError"),
    "while-on-a-field-set-in-the-body": (WHILE_ON_A_FIELD_SET_IN_THE_BODY, "JAX102", "TracerBoolConversionError"),
    "if-on-a-traced-field": (IF_ON_A_TRACED_FIELD, "JAX101", "TracerBoolConversionError"),
    "if-on-a-traced-dataclass-field": (IF_ON_A_TRACED_DATACLASS_FIELD, "JAX101", "TracerBoolConversionError"),
    "replaced-by-a-tracer": (REPLACED_BY_A_TRACER, "JAX101", "TracerBoolConversionError"),
    "dataclass-replaced-by-a-tracer": (DATACLASS_REPLACED_BY_A_TRACER, "JAX101", "TracerBoolConversionError"),
    "method-reading-a-traced-field": (METHOD_READING_A_TRACED_FIELD, "JAX101", "TracerBoolConversionError"),
    "indexed-traced-item": (UNPACKED_TRACED_ITEM, "JAX101", "TracerBoolConversionError"),
    "leaf-field-of-a-carry": (LEAF_FIELD_OF_A_CARRY, "JAX101", "TracerBoolConversionError"),
    "leaf-field-of-a-cond-operand": (LEAF_FIELD_OF_A_COND_OPERAND, "JAX101", "TracerBoolConversionError"),
    "unmarked-field-of-a-carry": (UNMARKED_FIELD_OF_A_CARRY, "JAX101", "TracerBoolConversionError"),
}

(
    test_python_fields_stay_quiet,
    test_traced_fields_are_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED)


# ---- the lattice ------------------------------------------------------------------------
def _facts(code: str) -> ModuleFacts:
    return ModuleFacts(Source.parse(textwrap.dedent(code)))


def _classes(code: str):
    return [node for node in ast.parse(code).body if isinstance(node, ast.ClassDef)]


def test_join_of_the_same_class_is_field_by_field_and_of_two_classes_forgets_the_fields():
    a_cls, b_cls = _classes("class A: pass\nclass B: pass\n")
    static = record_value(Record(a_cls, ("x", "n"), (constant(1), STATIC)))
    traced = record_value(Record(a_cls, ("x", "n"), (TRACED_ARRAY, STATIC)))
    joined = join(static, traced)
    assert joined.traced and joined.record is not None
    assert joined.record.values == (join(constant(1), TRACED_ARRAY), STATIC)
    other = record_value(Record(b_cls, ("x", "n"), (TRACED_ARRAY, STATIC)))
    assert join(traced, other).record is None and join(traced, other).trace is Trace.TRACED


def test_a_carry_traces_every_leaf_field_but_keeps_the_static_ones():
    (cls,) = _classes("class A: pass\n")
    built = Record(cls, ("x", "n"), (constant(1.0), constant(2)), leaves_known=True, static=frozenset({"n"}))
    carry = as_traced(record_value(built))
    assert carry.record.field("x").traced and carry.record.field("n") == constant(2)
    unknown_leaves = as_traced(record_value(Record(cls, ("x",), (constant(1.0),))))
    assert unknown_leaves.record is None  # a plain dataclass may be flattened otherwise elsewhere


def test_records_nested_without_bound_around_a_loop_reach_a_fixed_point():
    m = _facts("""
    from typing import NamedTuple
    import jax

    class Node(NamedTuple):
        child: object
        value: object

    @jax.jit
    def f(x):
        node = Node(None, x)
        for _ in range(10):
            node = Node(node, node.value + 1)
            while node.child is not None:
                node = node.child._replace(value=node)
        return node.value
    """)
    assert m.analysis.unconverged == [] and m.analysis.functions


def test_a_class_whose_constructor_does_more_than_store_its_arguments_is_not_followed():
    m = _facts("""
    import dataclasses
    import jax
    import jax.numpy as jnp

    @dataclasses.dataclass
    class Scaled:
        value: float

        def __post_init__(self):
            self.value = float(self.value)

    @dataclasses.dataclass
    class Converted:
        value: float = dataclasses.field(default=0.0, init=False)

    @jax.jit
    def f(x):
        a = Scaled(jnp.sum(x))
        b = Converted()
        return a.value, b.value
    """)
    values = {node.value.id: m.analysis.value(node) for node in ast.walk(m.source.tree) if _value_read(node)}
    assert values["a"].trace is Trace.UNKNOWN and values["b"].trace is Trace.UNKNOWN


def _value_read(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr == "value"


def test_what_a_builtin_makes_of_an_instance_is_not_the_instance():
    m = _facts("""
    from typing import NamedTuple
    import jax

    class Pair(NamedTuple):
        a: object
        b: object

    @jax.jit
    def f(x):
        pair = Pair(x, 1)
        return next(iter(pair)), tuple(pair), -pair
    """)
    returned = next(node for node in ast.walk(m.source.tree) if isinstance(node, ast.Return)).value
    built = next(node for node in ast.walk(m.source.tree) if isinstance(node, ast.Call) and _calls(node, "Pair"))
    assert m.analysis.value(built).record is not None
    assert [m.analysis.value(made).record for made in returned.elts] == [None, None, None]


def _calls(node: ast.Call, name: str) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == name
