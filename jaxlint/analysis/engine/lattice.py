"""The value lattice: what the analysis knows about one Python value inside traced code.

TRACED (a tracer, or a container holding tracers) > UNKNOWN > STATIC (a Python value or
concrete array at trace time).  A value may also know it is an array, has a boolean
dtype, is a tuple of known items, what iterating it yields, which function it is,
whether it is None (a known None literal, or known not to be None on every path that
reaches it), and, for an instance the analysed code constructs of a NamedTuple or dataclass
of the module, each field's value (`Record`).  `join` is the least upper bound of two
paths' values.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import IntEnum
from typing import Iterable, Optional

from jaxlint.analysis.engine.names import FunctionNode


class Trace(IntEnum):
    """Ordered so that the join of two paths is their maximum."""

    STATIC = 0
    UNKNOWN = 1
    TRACED = 2


# The members read on hot paths, as module names: an attribute of an enum class is a slow lookup.
_STATIC_TRACE, _TRACED_TRACE = Trace.STATIC, Trace.TRACED


# Hashable but not frozen: a frozen dataclass's __init__ pays a call per field, and values are
# built for nearly every expression evaluated. No code changes one: `but` makes a changed copy.
@dataclass(unsafe_hash=True)
class Value:
    trace: Trace
    array: bool = False  # known to be a JAX array (not a Python container or pytree)
    boolean: bool = False  # known to have a boolean dtype
    items: tuple["Value", ...] | None = None  # a tuple/list of known length
    element: "Value | None" = None  # what iterating it yields, when known
    function: "FunctionValue | None" = None
    known: tuple = ()  # (the Python constant,) when the value is a known literal
    # A NamedTuple: every field is a pytree child, so a traced one has only traced fields.
    fields: bool = False
    # A Pallas reference (a kernel's operand): not a tracer itself, but what is loaded from it
    # (`ref[...]`, `ref[i]`) is a traced array.
    ref: bool = False
    # Known not to be None (an array, a parameter annotated with a type that excludes None, a
    # name on the far side of an `is None` test); a known literal says it through `known`.
    not_none: bool = False
    record: "Record | None" = None  # an instance built here of a record class: its fields' values
    # An instance of a plain class of the module that the traced code itself constructs: it
    # lives and dies within the trace, so what its methods store on it stays there.
    made_here: bool = False
    # A dict built here from a literal whose keys are constants: each key and what it holds
    # (`{"w": x, "n": 3}["n"]` is the Python int, whatever the other entries are).
    entries: tuple[tuple[object, "Value"], ...] | None = None
    # What the value is where it is not None, when that is known and it may be None (a pytree
    # field declared `Optional[int]`: None stays None, a number is a traced leaf). An operation
    # None does not support (arithmetic, an ordering, `-x`) shows it is not None there.
    unless_none: "Value | None" = None

    def __eq__(self, other: object) -> bool:
        # Every field, stopping at the first that differs (the generated method builds two tuples).
        if self is other:
            return True
        if other.__class__ is not Value:
            return NotImplemented
        return (
            self.trace is other.trace and self.array == other.array and self.boolean == other.boolean
            and self.known == other.known and self.not_none == other.not_none and self.fields == other.fields
            and self.ref == other.ref and self.items == other.items and self.element == other.element
            and self.function == other.function and self.record == other.record
            and self.made_here == other.made_here and self.entries == other.entries
            and self.unless_none == other.unless_none
        )

    def but(self, **changes) -> "Value":
        """A copy with `changes`: `dataclasses.replace` without its generic walk over the fields."""
        copy = object.__new__(Value)
        copy.__dict__.update(self.__dict__, **changes)
        return copy

    @property
    def none(self) -> Optional[bool]:
        """Whether the value is None, when that is known."""
        if self.known:
            return self.known[0] is None
        return False if self.not_none else None

    @property
    def truth(self) -> Optional[bool]:
        """The value's truth when it is a known constant, else None."""
        return bool(self.known[0]) if self.known else None

    @property
    def traced(self) -> bool:
        return self.trace is _TRACED_TRACE


@dataclass(frozen=True)
class Named:
    """A value that is the object a qualified name refers to: an imported module or a member of
    one (`numpy`, `numpy.stack`), kept in `Value.known` so that a parameter defaulting to a
    module (`xnp=np`) still names it where the call leaves the default."""

    qualname: str


def named(qualname: str) -> "Value":
    return Value(Trace.STATIC, known=(Named(qualname),), not_none=True)


def named_of(value: "Value | None") -> Optional[str]:
    """The qualified name a value is known to refer to, if any."""
    if value is not None and value.known and value.known[0].__class__ is Named:
        return value.known[0].qualname
    return None


@dataclass(unsafe_hash=True)  # not frozen, for speed, as Value
class FunctionValue:
    """A callable the analysis can follow: a def or lambda, possibly transformed or partially applied."""

    node: FunctionNode
    transforms: tuple[str, ...] = ()
    static_params: frozenset[str] = frozenset()
    bound: tuple[Value, ...] = ()  # leading positional arguments fixed by `functools.partial`
    keywords: tuple[tuple[str, Value], ...] = ()  # keyword arguments fixed by `functools.partial`
    method_self: Value | None = None
    # Positions whose arguments reach the function as the caller gives them (`as_given_positions`:
    # a vmap's `in_axes=None`, what a differentiation leaves out of `argnums`).
    as_given: frozenset[int] = frozenset()


@dataclass(unsafe_hash=True)  # not frozen, for speed, as Value
class Record:
    """The fields of an instance of a NamedTuple or dataclass defined in the module, as constructed."""

    cls: ast.ClassDef
    names: tuple[str, ...]
    values: tuple[Value, ...]
    named_tuple: bool = False
    # Every field not in `static` is a pytree child (a NamedTuple, a Flax, chex or Equinox
    # dataclass); False for a plain dataclass, which a registration elsewhere may flatten otherwise.
    leaves_known: bool = False
    static: frozenset[str] = frozenset()  # fields declared static: never pytree children

    def field(self, name: str) -> Optional[Value]:
        for field_name, value in zip(self.names, self.values):
            if field_name == name:
                return value
        return None

    def with_values(self, values: tuple[Value, ...]) -> "Record":
        return Record(self.cls, self.names, values, self.named_tuple, self.leaves_known, self.static)


def record_value(record: Record) -> Value:
    """The value of an instance: traced when a field is (a container of tracers); a NamedTuple
    also knows its items."""
    return Value(
        join_all(record.values).trace,
        items=record.values if record.named_tuple else None,
        fields=record.named_tuple,
        not_none=True,
        record=record,
    )


STATIC = Value(Trace.STATIC)
UNKNOWN = Value(Trace.UNKNOWN)
TRACED = Value(Trace.TRACED)
TRACED_ARRAY = Value(Trace.TRACED, array=True, not_none=True)
TRACED_BOOL = Value(Trace.TRACED, array=True, boolean=True, not_none=True)
TRACED_OR_NONE = Value(Trace.UNKNOWN, unless_none=TRACED_ARRAY)  # a traced array, or None
REF = Value(Trace.UNKNOWN, ref=True)
# The `self` of a method called on an object the traced code made (see `Value.made_here`): its
# attributes are Python state to the analysis, as any instance's.
MADE_SELF = Value(Trace.STATIC, not_none=True, made_here=True)
REF_TREE = Value(Trace.UNKNOWN, element=REF)  # a pytree of references: its items (one level down) are references


def join(a: Value, b: Value) -> Value:
    if a is b or a == b:
        return a
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    element = None
    if a.element is not None and b.element is not None:
        element = join(a.element, b.element)
    array, boolean, fields = a.array and b.array, a.boolean and b.boolean, a.fields and b.fields
    if a.trace is not b.trace and _STATIC_TRACE in (a.trace, b.trace):
        # What a value is known to be when it is traced: a Python value on the other path
        # (`done = False`, then `done = x > 0`) holds no tracer and takes nothing away.
        traced = a if a.trace > b.trace else b
        array, boolean, fields = traced.array, traced.boolean, traced.fields
    known = a.known if a.known == b.known else ()
    record = _join_records(a.record, b.record)
    if record is None and a.trace is not b.trace and _STATIC_TRACE in (a.trace, b.trace):
        record = (a if a.trace > b.trace else b).record
    return Value(
        max(a.trace, b.trace),
        array=array,
        boolean=boolean,
        items=items,
        element=element,
        function=a.function if a.function == b.function else None,
        known=known,
        fields=fields,
        ref=a.ref and b.ref,
        # Not None on either path (a literal kept in `known` says it already).
        not_none=not known and _not_none(a) and _not_none(b),
        record=record,
        made_here=a.made_here and b.made_here,
        entries=_join_entries(a.entries, b.entries),
        unless_none=join(a.unless_none, b.unless_none) if a.unless_none and b.unless_none else None,
    )


def _join_entries(a, b):
    """Key by key for two dicts with the same keys; nothing is known of two dicts' keys else."""
    if a is None or b is None or [k for k, _ in a] != [k for k, _ in b]:
        return None
    return tuple((k, join(x, y)) for (k, x), (_, y) in zip(a, b))


def _join_records(a: Optional[Record], b: Optional[Record]) -> Optional[Record]:
    """Field by field for two instances of the same class; nothing is known of two classes' fields."""
    if a is None or b is None or a.cls is not b.cls or a.names != b.names:
        return None
    if a == b:
        return a
    return a.with_values(tuple(join(x, y) for x, y in zip(a.values, b.values)))


def _not_none(value: Value) -> bool:
    return value.not_none or bool(value.known) and value.known[0] is not None


def join_all(values: Iterable[Value], empty: Value = STATIC) -> Value:
    result = None
    for v in values:
        result = v if result is None else join(result, v)
    return empty if result is None else result


def element_of(value: Value) -> Value:
    """What iterating over a value binds."""
    if value.element is not None:
        return value.element
    if value.items is not None:
        return join_all(value.items)
    if value.traced:
        return TRACED_ARRAY if value.array else UNKNOWN
    return value if value.trace is Trace.STATIC else UNKNOWN


def strip(value: Value) -> Value:
    """The same trace, without structure (for results derived from a value)."""
    return Value(value.trace)


def widen(value: Value) -> Value:
    """The value without the structure that can grow without bound around a loop."""
    return Value(
        value.trace, array=value.array, boolean=value.boolean, known=value.known, ref=value.ref, not_none=value.not_none
    )


def constant(value: object) -> Value:
    """The value of a Python constant (small literals are remembered, to decide tests on them)."""
    if value is None or isinstance(value, (bool, int, float)):
        shared = _CONSTANTS.get((value.__class__, value))
        return shared if shared is not None else Value(Trace.STATIC, known=(value,))
    return STATIC


# The most common literals, built once: a value is never changed, so one instance serves every use.
_CONSTANTS = {(v.__class__, v): Value(Trace.STATIC, known=(v,)) for v in (None, True, False, *range(-8, 257))}


def arrays_traced(value: Value) -> Value:
    """The value across a boundary that traces arrays only (Equinox's filtering transformations,
    a custom_vjp's residuals): its arrays and tracers traced, its Python values as they are."""
    if value.items is not None:
        items = tuple(arrays_traced(item) for item in value.items)
        return Value(join_all(items).trace, items=items, not_none=True)
    if value.traced or value.array:
        return Value(Trace.TRACED, array=value.array, boolean=value.boolean, not_none=value.array or value.not_none)
    return value


def as_traced(value: Value) -> Value:
    """The value a loop body receives for this initial carry: the same structure, every leaf
    traced (a Python number becomes a traced scalar array; a record's static fields stay)."""
    record = value.record
    if record is not None and record.leaves_known:
        return record_value(record.with_values(tuple(
            v if name in record.static else as_traced(v) for name, v in zip(record.names, record.values)
        ))).but(trace=Trace.TRACED)
    if value.items is not None:
        return Value(Trace.TRACED, items=tuple(as_traced(item) for item in value.items), not_none=True)
    if value.array or value.known and value.known[0] is not None:
        boolean = value.boolean or isinstance(value.known[0] if value.known else None, bool)
        return Value(Trace.TRACED, array=True, boolean=boolean, not_none=True)
    if value.element is not None and value.element.array:
        return Value(Trace.TRACED, element=as_traced(value.element), not_none=value.not_none)  # a list of arrays
    return Value(Trace.TRACED, fields=value.fields, not_none=value.not_none)
