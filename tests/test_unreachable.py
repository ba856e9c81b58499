"""Code that never runs traces nothing: a `lax.cond`, `jax.jit` or `lax.scan` after an
unconditional `return`, `raise`, `continue` or `break` is never called, so the function it
names is not traced by it. The quiet programs run under JAX (the functions such dead code
names are called eagerly, on concrete values); the look-alikes, where the same call can run,
raise JAX's tracer error.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING
from jaxlint.analysis.engine.reachability import dead_nodes
from quiet_and_reported import case_tests

QUIET = {
    "cond_after_return": """
        import jax.numpy as jnp
        from jax import lax

        def make_projector(limit):
            def proj(x):
                def shrink(a):
                    if jnp.sum(a) > limit:  # a Python branch: fine on a concrete array
                        return a / 2
                    return a

                return shrink(x)

                # left over from a planned `lax.cond` version
                x = lax.cond(jnp.sum(x) > 0, shrink, lambda v: v, x)
                return x

            return proj

        def demo():
            return make_projector(1.0)(jnp.ones(3))
        """,
    "cond_after_raise": """
        import jax.numpy as jnp
        from jax import lax

        def halve(a):
            if jnp.sum(a) > 1.0:
                return a / 2
            return a

        def solve(x):
            raise NotImplementedError
            return lax.cond(jnp.sum(x) > 0, halve, lambda v: v, x)

        def demo():
            try:
                solve(jnp.ones(3))
            except NotImplementedError:
                pass
            return halve(jnp.ones(3))
        """,
    "jit_after_raise": """
        import jax

        def step(x):
            if x > 0:
                return x
            return -x

        def compiled():
            raise NotImplementedError("no compiled version yet")
            return jax.jit(step)

        def demo():
            return step(1.0)
        """,
    "scan_after_continue": """
        import jax.numpy as jnp
        from jax import lax

        def body(carry, x):
            if x > 0:
                return carry + x, x
            return carry, x

        def totals(rows):
            out = []
            for row in rows:
                out.append(sum(body(0.0, x)[0] for x in row))
                continue
                out.append(lax.scan(body, 0.0, jnp.asarray(row)))
            return out

        def demo():
            return totals([[1.0, -2.0], [3.0]])
        """,
    "cond_after_if_else_that_both_leave": """
        import jax.numpy as jnp
        from jax import lax

        def halve(a):
            if jnp.sum(a) > 1.0:
                return a / 2
            return a

        def project(x, exact):
            if exact:
                return halve(x)
            else:
                raise ValueError("only the exact projection exists")
            return lax.cond(jnp.sum(x) > 0, halve, lambda v: v, x)

        def demo():
            return project(jnp.ones(3), True)
        """,
    "jitted_def_after_return": """
        import jax

        def make(compiled):
            def step(x):
                if x > 0:
                    return x
                return -x

            return step

            @jax.jit
            def fast(x):
                if x > 0:
                    return x
                return -x

        def demo():
            return make(False)(1.0)
        """,
    "branch_after_return_inside_jit": """
        import jax

        @jax.jit
        def double(x):
            return x * 2
            if x > 0:  # never runs
                x = -x
            return x

        def demo():
            return double(1.0)
        """,
}

REPORTED = {
    "cond_after_conditional_return": (
        """
        import jax.numpy as jnp
        from jax import lax

        def make_projector(limit):
            def proj(x, eager):
                def shrink(a):
                    if jnp.sum(a) > limit:
                        return a / 2
                    return a

                if eager:
                    return shrink(x)
                return lax.cond(jnp.sum(x) > 0, shrink, lambda v: v, x)

            return proj

        def demo():
            return make_projector(1.0)(jnp.ones(3), False)
        """,
        "JAX101",
        "TracerBoolConversionError",
    ),
    "jit_after_raise_in_a_branch": (
        """
        import jax

        def step(x):
            if x > 0:
                return x
            return -x

        def compiled(ready):
            if not ready:
                raise NotImplementedError
            return jax.jit(step)

        def demo():
            return compiled(True)(1.0)
        """,
        "JAX101",
        "TracerBoolConversionError",
    ),
    "jit_after_a_raise_a_context_manager_swallows": (
        """
        import contextlib
        import jax

        def step(x):
            if x > 0:
                return x
            return -x

        def compiled():
            with contextlib.suppress(NotImplementedError):
                raise NotImplementedError
            return jax.jit(step)

        def demo():
            return compiled()(1.0)
        """,
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_quiet_case_stays_quiet,
    test_reported_case_is_reported,
    test_jax_runs_the_quiet_case,
    test_jax_rejects_the_reported_case,
) = case_tests(QUIET, REPORTED)


def _dead_lines(source: str) -> list[int]:
    """The lines of the statements of the module's first def that never run."""
    function = ast.parse(textwrap.dedent(source)).body[0]
    dead = dead_nodes(function)
    return sorted({node.lineno for node in ast.walk(function) if isinstance(node, ast.stmt) and id(node) in dead})


def test_statements_after_an_end_of_their_block_are_dead():
    assert _dead_lines("""
        def f(x):
            for i in x:
                if i:
                    break
                    g(i)
                else:
                    continue
                h(i)
            try:
                raise ValueError
                g(x)
            except ValueError:
                return x
            finally:
                pass
            g(x)
        """) == [6, 9, 12]


def test_an_if_whose_branches_both_leave_ends_its_block():
    assert _dead_lines("""
        def f(x):
            if x:
                return 1
            elif x is None:
                raise ValueError
            else:
                return 2
            g(x)

            def inner():
                pass
        """) == [9, 11, 12]


@pytest.mark.parametrize(
    "source",
    [
        "def f(x):\n    if x:\n        return 1\n    g(x)\n",  # no else: the test may fail
        "def f(x):\n    with suppress(E):\n        raise E\n    g(x)\n",  # the manager may swallow it
        "def f(x):\n    while True:\n        return 1\n    g(x)\n",  # loops are not followed
        "def f(x):\n    try:\n        return 1\n    except E:\n        pass\n    g(x)\n",
    ],
)
def test_a_statement_that_may_complete_leaves_the_rest_alive(source):
    assert _dead_lines(source) == []


def test_a_call_in_a_def_that_never_runs_never_runs():
    """A scope is read on its own; a def in another's dead code makes everything in it dead."""
    tree = ast.parse(textwrap.dedent("""
        def make():
            return None

            def later(x):
                return cond(x)

        def alive(x):
            return cond(x)
        """))
    names = Names(tree, spelling=SPELLING)
    calls = {scope.node.name: call for call, scope in names.calls}
    scopes = {scope.node.name: scope for _, scope in names.calls}
    assert names.unreached(calls["later"], scopes["later"])
    assert not names.unreached(calls["alive"], scopes["alive"])
