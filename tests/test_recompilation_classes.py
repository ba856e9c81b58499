"""Recompilation as users meet it: each class with its clean twin, checked by jaxlint and by JAX.

Each pair is a bug and the look-alike JAX compiles once (or twice: the last, smaller batch of
an epoch). jaxlint reports the lines marked `# JAX5nn` in the bug and nothing in the twin; run
under JAX, `run()` compiles on (nearly) every iteration of the bug and once in the twin.
"""

from __future__ import annotations

import sys
import textwrap
import types

import pytest

from compile_counts import counting_compiles
from jaxlint.linter import lint_source
from jaxlint.rules import all_rules
from marks import family_marks

RECOMPILATION = {code for code in all_rules() if code.startswith("JAX5")}
marked = family_marks(r"JAX5\d\d")

PAIRS = {
    # Data-dependent shapes: videos of different lengths handed one by one, through a helper that
    # preprocesses them, to a jit of a function the analysis does not see into.
    "videos_of_each_length": (
        """
        import flax.linen as nn
        import jax
        import jax.numpy as jnp
        import numpy as np

        model = nn.Dense(2)
        params = model.init(jax.random.key(0), jnp.zeros((1, 3)))
        model_apply = jax.jit(model.apply)

        def inference(frames):
            frames = frames.astype(np.float32) / 255 * 2 - 1
            return model_apply(params, frames)

        def run():
            rng = np.random.default_rng(0)
            videos = [rng.integers(0, 255, size=(n, 3)) for n in (24, 31, 40, 27)]
            for video in videos:
                inference(video)  # JAX501
        """,
        """
        import flax.linen as nn
        import jax
        import jax.numpy as jnp
        import numpy as np

        model = nn.Dense(2)
        params = model.init(jax.random.key(0), jnp.zeros((1, 3)))
        model_apply = jax.jit(model.apply)

        def inference(frames):
            frames = frames.astype(np.float32) / 255 * 2 - 1
            return model_apply(params, frames)

        def run():
            frames = np.random.default_rng(0).integers(0, 255, size=(90, 3))
            for i in range(0, len(frames), 32):
                inference(frames[i:i + 32])  # the last, smaller batch: a second shape, once
        """,
    ),
    # Sizes taken from data, one by one; the twin pads them to one bucket.
    "sizes_from_data": (
        """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def solve(a):
            return jnp.linalg.solve(a, jnp.ones(a.shape[0]))

        def run():
            sizes = np.asarray([9, 7, 12, 9, 10])
            for i, n in enumerate(sizes):
                n = int(n)
                a = jnp.eye(n) + 0.01 * jnp.asarray(np.random.default_rng(i).uniform(size=(n, n)))
                solve(a)  # JAX501
        """,
        """
        import jax
        import jax.numpy as jnp
        import numpy as np

        MAX = 16

        @jax.jit
        def solve(a):
            return jnp.linalg.solve(a, jnp.ones(a.shape[0]))

        def run():
            sizes = np.asarray([9, 7, 12, 9, 10])
            for i, n in enumerate(sizes):
                n = int(n)
                block = jnp.eye(n) + 0.01 * jnp.asarray(np.random.default_rng(i).uniform(size=(n, n)))
                solve(jnp.eye(MAX).at[:n, :n].set(block))  # padded: one shape
        """,
    ),
    # A Python loop over a static bound that a caller's loop changes, through a method.
    "static_bound_per_call": (
        """
        from functools import partial

        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames="steps")
        def refine(x, steps):
            for _ in range(steps):  # JAX503
                x = x - 0.1 * jnp.tanh(x)
            return x

        class Solver:
            def solve(self, x, steps):
                return refine(x, steps)

        def run():
            solver = Solver()
            for steps in (2, 4, 8):
                solver.solve(jnp.ones(3), steps)
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def refine(x, steps):
            return jax.lax.fori_loop(0, steps, lambda i, x: x - 0.1 * jnp.tanh(x), x)

        class Solver:
            def solve(self, x, steps):
                return refine(x, steps)

        def run():
            solver = Solver()
            for steps in (2, 4, 8):
                solver.solve(jnp.ones(3), steps)
        """,
    ),
    # A Python int field of an Equinox module, incremented by the step and fed back.
    "counter_in_a_module": (
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class State(eqx.Module):
            step: int
            w: jax.Array

        @eqx.filter_jit
        def update(state, x):
            return State(step=state.step + 1, w=state.w - 0.1 * x)  # JAX504

        def run():
            state = State(step=0, w=jnp.zeros(3))
            for _ in range(4):
                state = update(state, jnp.ones(3))
        """,
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class State(eqx.Module):
            step: jax.Array
            w: jax.Array

        @eqx.filter_jit
        def update(state, x):
            return State(step=state.step + 1, w=state.w - 0.1 * x)

        def run():
            state = State(step=jnp.asarray(0), w=jnp.zeros(3))
            for _ in range(4):
                state = update(state, jnp.ones(3))
        """,
    ),
    # A tolerance declared static in a Flax struct, halved by the step and fed back.
    "static_field_swept": (
        """
        import dataclasses

        import jax
        import jax.numpy as jnp
        from flax import struct

        @struct.dataclass
        class State:
            w: jax.Array
            tol: float = struct.field(pytree_node=False)

        @jax.jit
        def refine(state):
            return dataclasses.replace(state, w=state.w * 0.5, tol=state.tol * 0.5)  # JAX504

        def run():
            state = State(w=jnp.ones(3), tol=1.0)
            for _ in range(4):
                state = refine(state)
        """,
        """
        import dataclasses

        import jax
        import jax.numpy as jnp
        from flax import struct

        @struct.dataclass
        class State:
            w: jax.Array
            tol: float  # a leaf: traced

        @jax.jit
        def refine(state):
            return dataclasses.replace(state, w=state.w * 0.5, tol=state.tol * 0.5)

        def run():
            state = State(w=jnp.ones(3), tol=jnp.asarray(1.0))
            for _ in range(4):
                state = refine(state)
        """,
    ),
    # A tolerance in an options dict, halved every iteration, under `eqx.filter_jit`.
    "tolerance_in_options": (
        """
        import equinox as eqx
        import jax.numpy as jnp

        @eqx.filter_jit
        def refine(x, options):
            return x - options["tol"] * jnp.tanh(x)

        def run():
            x, tol = jnp.ones(3), 1e-1
            for _ in range(4):
                x = refine(x, {"tol": tol})  # JAX504
                tol *= 0.5
        """,
        """
        import equinox as eqx
        import jax.numpy as jnp

        @eqx.filter_jit
        def refine(x, options):
            return x - options["tol"] * jnp.tanh(x)

        def run():
            x, tol = jnp.ones(3), jnp.asarray(1e-1)
            for _ in range(4):
                x = refine(x, {"tol": tol})  # an array leaf: traced
                tol *= 0.5
        """,
    ),
    # A partial that binds by keyword what the other calls pass by position.
    "partial_by_keyword": (
        """
        import jax
        import jax.numpy as jnp
        from jax.tree_util import Partial

        @jax.jit
        def scaled(x, scale):
            return x * scale

        def run():
            x = jnp.ones(3)
            scaled(x, 2.0)
            times_two = Partial(scaled, scale=2.0)  # JAX505
            times_two(x)
            scaled(x, 3.0)
        """,
        """
        import jax
        import jax.numpy as jnp
        from jax.tree_util import Partial

        @jax.jit
        def scaled(x, scale):
            return x * scale

        def run():
            x = jnp.ones(3)
            scaled(x, scale=2.0)
            times_two = Partial(scaled, scale=2.0)  # by keyword, as the call
            times_two(x)
            scaled(x, scale=3.0)
        """,
    ),
    # A loop carry that starts as a Python number and comes back as an array.
    "scalar_carry": (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def accumulate(total, x):
            return total + jnp.sum(x ** 2)

        def run():
            total = 0.0
            for i in range(4):
                total = accumulate(total, jnp.full(3, i, jnp.float32))  # JAX505
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def accumulate(total, x):
            return total + jnp.sum(x ** 2)

        def run():
            total = jnp.zeros((), jnp.float32)
            for i in range(4):
                total = accumulate(total, jnp.full(3, i, jnp.float32))
        """,
    ),
}

# Per pair: the jitted function whose compilations are counted, how many the bug makes at
# least, and how many the twin makes at most.
COMPILES = {
    "videos_of_each_length": ("jit(apply)", 4, 2),
    "sizes_from_data": ("jit(solve)", 4, 1),
    "static_bound_per_call": ("jit(refine)", 3, 1),
    "counter_in_a_module": ("jit(update)", 4, 1),
    "static_field_swept": ("jit(refine)", 4, 1),
    "tolerance_in_options": ("jit(refine)", 4, 1),
    "partial_by_keyword": ("jit(scaled)", 2, 1),
    "scalar_carry": ("jit(accumulate)", 2, 1),
}

CASES = [pytest.param(name, twin, id=f"{name}-{twin}") for name in PAIRS for twin in ("bug", "clean")]


def _source(name: str, twin: str) -> str:
    return textwrap.dedent(PAIRS[name][0 if twin == "bug" else 1])


@pytest.mark.parametrize("name, twin", CASES)
def test_jaxlint_reports_the_bug_only(name, twin):
    source = _source(name, twin)
    got = {(f.start.row, f.code) for f in lint_source(source, "case.py", RECOMPILATION)}
    assert got == marked(source)
    assert bool(got) == (twin == "bug")


@pytest.mark.parametrize("name, twin", CASES)
def test_jax_compiles_again_in_the_bug_only(name, twin, monkeypatch):
    jax = pytest.importorskip("jax")
    for module in ("flax", "equinox"):
        if module in PAIRS[name][0]:
            pytest.importorskip(module)
    module = types.ModuleType(f"recompilation_{name}_{twin}")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look their module up
    exec(compile(_source(name, twin), f"<{name}-{twin}>", "exec"), module.__dict__)
    with counting_compiles(jax) as compiles:
        module.run()
    function, at_least, at_most = COMPILES[name]
    count = compiles.count(function)
    assert count >= at_least if twin == "bug" else count <= at_most, compiles
