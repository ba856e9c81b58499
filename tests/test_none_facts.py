"""Whether a value is None: an `if x is None:` fallback that JAX never traces stays quiet.

Each quiet case runs under JAX too (when installed), which shows it traces without error;
each reported variant is one JAX rejects the way the finding says.
"""

from __future__ import annotations

import ast
import textwrap

import pytest
from quiet_and_reported import case_tests

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.values.closure_nullness import closed_not_none
from jaxlint.analysis.engine.lattice import STATIC, TRACED, TRACED_ARRAY, Trace, Value, constant, join
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING
from jaxlint.analysis.values.nullness import excludes_none, narrowed, not_none_parameters
from jaxlint.analysis.project.project import value_from_json, value_to_json

# A static argument annotated `int` (a type that excludes None) fills a helper's None default.
STATIC_INT_FILLS_THE_DEFAULT = """
import jax
import jax.numpy as jnp
from functools import partial

def draw(key, log_w, count=None):
    if count is None:
        count = int(jnp.exp(log_w).sum())
    return jax.random.categorical(key, log_w, shape=(count,))

@partial(jax.jit, static_argnames=["num"])
def resample(key, log_w, num: int):
    return draw(key, log_w, count=num)

def demo():
    return resample(jax.random.key(0), jnp.zeros(4), 5)
"""

OPTIONAL_STATIC_LEFT_OUT = STATIC_INT_FILLS_THE_DEFAULT.replace(
    "num: int):", "num: Optional[int] = None):"
).replace("import jax\n", "from typing import Optional\nimport jax\n", 1).replace(
    "jnp.zeros(4), 5)", "jnp.zeros(4))"
)

# `if n is None: raise` narrows `n` for the rest of the function.
NARROWED_BY_RAISE = """
import jax
import jax.numpy as jnp
from functools import partial

def pad(x, n=None):
    if n is None:
        n = int(x.max())
    return jnp.pad(x, (0, n))

@partial(jax.jit, static_argnames=["n"])
def padded(x, n=None):
    if n is None:
        raise ValueError("give n under jit")
    return pad(x, n)

def demo():
    return padded(jnp.ones(3), n=2)
"""

NOT_NARROWED = NARROWED_BY_RAISE.replace(
    '    if n is None:\n        raise ValueError("give n under jit")\n', ""
).replace("padded(jnp.ones(3), n=2)", "padded(jnp.ones(3))")

# The body `lax.cond` traces reads a name of the eager function around it, which a test there
# (through a plain copy of it) has shown is not None where the body is traced.
CLOSURE_NARROWED_AT_THE_COND = """
import jax.numpy as jnp
import numpy as np
from jax import lax

def make_update(threshold):
    def update(x, state=None):
        def rebuild(x):
            if state is None:
                scale = float(np.asarray(x).max())
                return x / scale
            return x + state

        current = state
        if current is None:
            return rebuild(x)
        return lax.cond(jnp.any(x > threshold), rebuild, lambda x: x, x)

    return update

def demo():
    update = make_update(0.5)
    return update(jnp.ones(3)), update(jnp.ones(3), jnp.ones(3))
"""

CLOSURE_NOT_NARROWED = CLOSURE_NARROWED_AT_THE_COND.replace(
    "        current = state\n        if current is None:\n            return rebuild(x)\n", ""
)

# The same in a traced function: the body reads the name as it is at the `lax.cond`.
TRACED_CLOSURE_NARROWED_AT_THE_COND = """
import jax
import jax.numpy as jnp
from jax import lax

@jax.jit
def update(x, state=None):
    def rebuild(x):
        if state is None:
            return x * int(x.sum())
        return x + state

    if state is None:
        return x
    return lax.cond(x.sum() > 0, rebuild, lambda x: x, x)

def demo():
    return update(jnp.ones(3)), update(jnp.ones(3), jnp.ones(3))
"""

TRACED_CLOSURE_NOT_NARROWED = TRACED_CLOSURE_NARROWED_AT_THE_COND.replace(
    "    if state is None:\n        return x\n", ""
)

# `functools.partial` fixes a None-default parameter with a value read from an object.
PARTIAL_FIXES_A_FIELD = """
import types
import jax.numpy as jnp
from functools import partial
from jax import lax

def keep(x, capacity=None):
    if capacity is None:
        capacity = int(jnp.sum(x > 0))
    return x[:capacity]

def step(pred, x, plan):
    return lax.cond(pred, partial(keep, capacity=plan.capacity), lambda x: x[:plan.capacity], x)

def demo():
    return step(True, jnp.arange(5.0), types.SimpleNamespace(capacity=3))
"""

# A name may forward an optional argument's None.
PARTIAL_FORWARDS_A_NAME = """
import jax.numpy as jnp
from functools import partial
from jax import lax

def keep(x, capacity=None):
    if capacity is None:
        capacity = int(jnp.sum(x > 0))
    return x[:capacity]

def step(pred, x, capacity=None):
    return lax.cond(pred, partial(keep, capacity=capacity), lambda x: x[:3], x)

def demo():
    return step(True, jnp.arange(5.0))
"""

DEFAULT_LEFT_OUT = """
import jax

@jax.jit
def scale(x, n=None):
    if n is None:
        n = int(x.sum())
    return x * n

def demo():
    return scale(jax.numpy.ones(3))
"""

FORWARDED_TO_A_JIT = DEFAULT_LEFT_OUT.replace(
    "def demo():\n    return scale(jax.numpy.ones(3))",
    "def outer(x, n=None):\n    return scale(x, n=n)\n\ndef demo():\n    return outer(jax.numpy.ones(3))",
)

# `x == None` is `x is None`: a JAX array returns NotImplemented for None and Python falls back
# to identity, so the test is a Python bool whether `scale` is None, a tracer or a number.
COMPARED_WITH_NONE = """
import jax
import jax.numpy as jnp

@jax.jit
def add(left, right, scale=None):
    if scale == None:  # noqa: E711
        return left + right
    if None != scale:  # noqa: E711
        return left + scale * right
    return left

@jax.jit
def sub(left, right):
    return add(left, right, -1)

def demo():
    x = jnp.ones(2)
    return add(x, x), sub(x, x), add(x, x, jnp.array(3.0))
"""

COMPARED_WITH_ZERO = COMPARED_WITH_NONE.replace("if scale == None:", "if scale == 0:")

QUIET = {
    "compared-with-none": COMPARED_WITH_NONE,
    "static-int-fills-the-default": STATIC_INT_FILLS_THE_DEFAULT,
    "narrowed-by-raise": NARROWED_BY_RAISE,
    "closure-narrowed-at-the-cond": CLOSURE_NARROWED_AT_THE_COND,
    "partial-fixes-a-field": PARTIAL_FIXES_A_FIELD,
    "traced-closure-narrowed-at-the-cond": TRACED_CLOSURE_NARROWED_AT_THE_COND,
}
REPORTED = {
    "compared-with-zero": (COMPARED_WITH_ZERO, "JAX101", "TracerBoolConversionError"),
    "optional-static-left-out": (OPTIONAL_STATIC_LEFT_OUT, "JAX105", "ConcretizationTypeError"),
    "not-narrowed": (NOT_NARROWED, "JAX105", "ConcretizationTypeError"),
    "closure-not-narrowed": (CLOSURE_NOT_NARROWED, "JAX107", "TracerArrayConversionError"),
    "traced-closure-not-narrowed": (TRACED_CLOSURE_NOT_NARROWED, "JAX105", "ConcretizationTypeError"),
    "partial-forwards-a-name": (PARTIAL_FORWARDS_A_NAME, "JAX105", "ConcretizationTypeError"),
    "default-left-out": (DEFAULT_LEFT_OUT, "JAX105", "ConcretizationTypeError"),
    "forwarded-to-a-jit": (FORWARDED_TO_A_JIT, "JAX105", "ConcretizationTypeError"),
}


(
    test_a_none_branch_jax_never_traces_stays_quiet,
    test_a_none_branch_jax_traces_is_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)


# ---- across modules, and through the cache -------------------------------------------------------
def test_a_typed_static_argument_reaches_a_helper_in_another_module(cli, make_files):
    make_files({
        "pkg/__init__.py": "",
        "pkg/draws.py": """
            import jax
            import jax.numpy as jnp

            def draw(key, log_w, count=None):
                if count is None:
                    count = int(jnp.exp(log_w).sum())
                return jax.random.categorical(key, log_w, shape=(count,))
            """,
        "pkg/api.py": """
            import jax
            from functools import partial
            from pkg.draws import draw

            @partial(jax.jit, static_argnames=["num"])
            def resample(key, log_w, num: int):
                return draw(key, log_w, count=num)
            """,
    })
    for _ in range(2):  # the second run reads the calls into `draws.py` back from the cache
        assert cli("check", "--output-format", "json", "pkg").json == []


def test_whether_a_value_is_none_survives_the_cache_format():
    for value in (Value(Trace.STATIC, not_none=True), TRACED, TRACED_ARRAY):
        assert value_from_json(value_to_json(value)) == value


# ---- the lattice ----------------------------------------------------------------------------------
def test_not_none_holds_after_a_join_only_when_both_paths_know_it():
    typed = Value(Trace.STATIC, not_none=True)
    assert join(typed, TRACED_ARRAY).none is False
    assert join(typed, constant(3)).none is False
    assert join(typed, constant(None)).none is None
    assert join(typed, STATIC).none is None
    assert constant(None).none is True and constant(0).none is False and TRACED.none is None


# ---- annotations -----------------------------------------------------------------------------------
def _annotated(source: str) -> frozenset[str]:
    tree = ast.parse(textwrap.dedent(source))
    names = Names(tree, spelling=SPELLING)
    fn = next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    return not_none_parameters(fn, names)


def test_parameters_typed_to_exclude_none():
    assert _annotated("""
        import typing
        from typing import Annotated, Any, Hashable, Optional, TypeVar, Union
        import jax
        from jaxtyping import PyTree
        Maybe = Optional[int]
        Size = int
        T = TypeVar("T")
        class Box: ...
        def f(a: int, b: "jax.Array", c: list[int], d: Union[int, float], e: Box, f: Size, g: Annotated[int, "n"],
              h: int = 3,
              n1: Optional[int] = 3, n2: int | None = 3, n3: "int | None" = 3, n4: Any = 3, n5: object = 3,
              n6: Union[int, None] = 3, n7: Maybe = 3, n8: T = 3, n9: int = None, n10: typing.Optional[int] = 3,
              n11=3, n12: Hashable = 3, n13: PyTree = 3, n14: PyTree[int] = 3): ...
    """) == {"a", "b", "c", "d", "e", "f", "g", "h"}


def test_excludes_none_reads_string_annotations():
    tree = ast.parse("x = 1")
    names = Names(tree, spelling=SPELLING)
    assert excludes_none(ast.Constant("int"), names, names.module)
    assert not excludes_none(ast.Constant("int | None"), names, names.module)
    assert not excludes_none(ast.Constant("not a type ("), names, names.module)


# ---- branch tests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("test, outcome, names", [
    ("x is None", False, ["x"]),
    ("x is None", True, []),
    ("x is not None", True, ["x"]),
    ("not (x is None)", True, ["x"]),
    ("x is not None and y is not None", True, ["x", "y"]),
    ("x is not None and y is not None", False, []),
    ("x is None or y is None", False, ["x", "y"]),
    ("x", True, ["x"]),
    ("x", False, []),
    ("x.y is not None", True, []),
])
def test_which_names_a_branch_shows_are_not_none(test, outcome, names):
    assert list(narrowed(ast.parse(test, mode="eval").body, outcome)) == names


# ---- names closed over by a control-flow body ------------------------------------------------------
def _closed(source: str) -> frozenset[str]:
    tree = ast.parse(textwrap.dedent(source))
    names = Names(tree, spelling=SPELLING)
    body = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "body")
    calls = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == "body" for a in node.args)
    ]
    return closed_not_none(body, cfg.build, calls, names)


def test_a_copy_narrows_the_name_it_copies_until_either_is_rebound():
    assert _closed("""
        def outer(x, a=None, b=None):
            def body(x):
                if a is None or b is None:
                    return x
                return x + a + b
            c = a
            if c is None:
                return x
            assert b is not None
            return cond(x, body, x)
    """) == {"a", "b"}
    assert _closed("""
        def outer(x, a=None):
            def body(x):
                if a is None:
                    return x
                return x + a
            c = a
            c = make()
            if c is None:
                return x
            return cond(x, body, x)
    """) == frozenset()


def test_a_name_rebound_or_narrowed_on_one_path_only_is_not_shown():
    assert _closed("""
        def outer(x, a=None, flag=False):
            def body(x):
                if a is None:
                    return x
                return x + a
            if flag:
                if a is None:
                    return x
            return cond(x, body, x)
    """) == frozenset()
    assert _closed("""
        def outer(x, a=None):
            def body(x):
                if a is None:
                    return x
                return x + a
            if a is None:
                return x
            a = lookup()
            return cond(x, body, x)
    """) == frozenset()


def test_every_call_that_traces_the_body_must_show_it():
    assert _closed("""
        def outer(x, a=None):
            def body(x):
                if a is None:
                    return x
                return x + a
            y = cond(x, body, x)
            if a is None:
                return y
            return cond(y, body, y)
    """) == frozenset()


def test_a_name_a_nested_function_rebinds_is_not_shown():
    assert _closed("""
        def outer(x, a=None):
            def body(x):
                if a is None:
                    return x
                return x + a
            def reset():
                nonlocal a
                a = None
            if a is None:
                return x
            reset()
            return cond(x, body, x)
    """) == frozenset()
