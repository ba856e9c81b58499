"""Python closures bind late: a nested function reads the names of the function around it as
they are when it is called, not when it is defined.

Each case runs under JAX too (when installed): the quiet ones trace, the reported ones raise.
"""

from __future__ import annotations

import ast
import textwrap

from quiet_and_reported import case_tests

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING

BOUND_AFTER_THE_DEF = """
import jax
import jax.numpy as jnp
from jax import lax

@jax.jit
def flip(x, pred):
    def branch(z):
        return -z if scale > 0 else z
    scale = x.sum()
    return lax.cond(pred, branch, lambda z: z, x)

def demo():
    return flip(jnp.ones(3), True)
"""

REBOUND_AFTER_THE_DEF = """
import jax
import jax.numpy as jnp

@jax.jit
def flip(x):
    scale = 1.0
    def branch(z):
        if scale > 0:
            return -z
        return z
    scale = x.sum()
    return branch(x)

def demo():
    return flip(jnp.ones(3))
"""

REBOUND_TO_A_PYTHON_VALUE = """
import jax
import jax.numpy as jnp

@jax.jit
def flip(x):
    scale = x.sum()
    def branch(z):
        if scale > 0:
            return -z
        return z
    scale = 1.0
    return branch(x)

def demo():
    return flip(jnp.ones(3))
"""

REBOUND_TO_A_PYTHON_VALUE_BEFORE_THE_COND = """
import jax
import jax.numpy as jnp
from jax import lax

@jax.jit
def flip(x, pred):
    scale = x.sum()
    def branch(z):
        return -z if scale > 0 else z
    scale = 1.0
    return lax.cond(pred, branch, lambda z: z, x)

def demo():
    return flip(jnp.ones(3), True)
"""

# The same function called twice with the same argument, around a rebinding of what it reads:
# two analyses, not one remembered for both.
CALLED_AGAIN_AFTER_A_REBINDING = """
import jax
import jax.numpy as jnp

@jax.jit
def flip(x):
    scale = 1.0
    def branch(z):
        if scale > 0:
            return -z
        return z
    y = branch(x)
    scale = x.sum()
    return branch(x) + y

def demo():
    return flip(jnp.ones(3))
"""

THROUGH_A_TRANSFORM = """
import jax
import jax.numpy as jnp

@jax.jit
def flip(x):
    def branch(z):
        if scale > 0:
            return -z
        return z
    scale = x.sum()
    return jax.vmap(branch)(x)

def demo():
    return flip(jnp.ones(3))
"""

THROUGH_PARTIAL = """
import jax
import jax.numpy as jnp
from functools import partial
from jax import lax

@jax.jit
def flip(x, pred):
    def branch(sign, z):
        return sign * z if scale > 0 else z
    scale = x.sum()
    return lax.cond(pred, partial(branch, -1.0), lambda z: z, x)

def demo():
    return flip(jnp.ones(3), True)
"""

# `apply` runs while `flip` does, so `branch`, called from it, reads `flip`'s names at that call.
CALLED_FROM_A_SIBLING = """
import jax
import jax.numpy as jnp

@jax.jit
def flip(x):
    def branch(z):
        if scale > 0:
            return -z
        return z
    def apply(z):
        return branch(z)
    scale = x.sum()
    return apply(x)

def demo():
    return flip(jnp.ones(3))
"""

# A closure made elsewhere sees the names of the function that made it, not its caller's.
RETURNED_AND_CALLED_ELSEWHERE = """
import jax
import jax.numpy as jnp

def make_branch(scale):
    def branch(z):
        if scale > 0:
            return -z
        return z
    return branch

@jax.jit
def flip(x):
    scale = x.sum()
    branch = make_branch(1.0)
    return branch(x) + scale

def demo():
    return flip(jnp.ones(3))
"""

# A module-level body reads the module's names, not those of the function that hands it over.
MODULE_FUNCTION_HANDED_OVER = """
import jax
import jax.numpy as jnp
from jax import lax

scale = 1.0

def branch(z):
    return -z if scale > 0 else z

@jax.jit
def flip(x, pred):
    scale = x.sum()
    return lax.cond(pred, branch, lambda z: z, x) + scale

def demo():
    return flip(jnp.ones(3), True)
"""

QUIET = {
    "rebound-to-a-python-value": REBOUND_TO_A_PYTHON_VALUE,
    "rebound-to-a-python-value-before-the-cond": REBOUND_TO_A_PYTHON_VALUE_BEFORE_THE_COND,
    "returned-and-called-elsewhere": RETURNED_AND_CALLED_ELSEWHERE,
    "module-function-handed-over": MODULE_FUNCTION_HANDED_OVER,
}
REPORTED = {
    "bound-after-the-def": (BOUND_AFTER_THE_DEF, "JAX101", "TracerBoolConversionError"),
    "rebound-after-the-def": (REBOUND_AFTER_THE_DEF, "JAX101", "TracerBoolConversionError"),
    "called-again-after-a-rebinding": (CALLED_AGAIN_AFTER_A_REBINDING, "JAX101", "TracerBoolConversionError"),
    "through-a-transform": (THROUGH_A_TRANSFORM, "JAX101", "TracerBoolConversionError"),
    "through-partial": (THROUGH_PARTIAL, "JAX101", "TracerBoolConversionError"),
    "called-from-a-sibling": (CALLED_FROM_A_SIBLING, "JAX101", "TracerBoolConversionError"),
}


(
    test_a_closure_static_where_it_is_called_stays_quiet,
    test_a_closure_traced_where_it_is_called_is_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)


def test_the_finding_is_at_the_test_in_the_nested_function(cli, make_files):
    make_files({"m.py": REBOUND_AFTER_THE_DEF})
    found = cli("check", "--no-cache", "--output-format", "json", "m.py").json
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JAX101", 9)]


# ---- units ---------------------------------------------------------------------------------------
def _functions(source: str) -> tuple[Names, dict[str, ast.AST]]:
    tree = ast.parse(textwrap.dedent(source))
    names = Names(tree, spelling=SPELLING)
    return names, {getattr(fn, "name", "<lambda>"): fn for fn in names.functions}


def test_closed_over_names_are_those_read_from_functions_around():
    names, fns = _functions("""
    G = 1
    def outer(a, b):
        c = 2
        def inner(d):
            e = a + d + G
            def innermost():
                return b + e
            return innermost
        unused = c
        return inner
    """)
    assert names.closed_over(fns["inner"]) == ("a", "b")  # `e` is its own, `G` the module's
    assert names.closed_over(fns["innermost"]) == ("b", "e")
    assert names.closed_over(fns["outer"]) == ()

