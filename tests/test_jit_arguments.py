"""JAX3xx beyond the rules' own examples, each case also run under JAX.

A case is a module, marked inline where jaxlint reports, with a `run()` that exercises it and
what JAX does when `run()` executes: "ok", an exception class name, or "recompiles:N" (the
number of traces of the function named in the case).  So every quiet look-alike is one that
JAX accepts, and every report is one that JAX rejects or mishandles.
"""

from __future__ import annotations

import sys
import textwrap
import types
from dataclasses import dataclass

import pytest

from jaxlint.linter import lint_source
from jaxlint.rules import all_rules
from marks import cli_reports, family_marks

CODES = {code for code in all_rules() if code.startswith("JAX3")}
marked = family_marks(r"JAX3\d\d")


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    jax: str  # "ok", exception class names (alternatives joined by "|"), or "traces>=N"


# Reading a donated array: JAX raises `RuntimeError` (deleted array) when it sees the donation
# first, XLA a `ValueError` ("Buffer has been deleted or donated") when the read is dispatched first.
DONATED_READ = "RuntimeError|ValueError"


CASES = [
    Case("a vmap whose in_axes name more arguments than the function's own parameters", """
        import jax
        import jax.numpy as jnp

        def total(x, *rest):
            return x + sum(rest)

        def run():
            return jax.vmap(total, in_axes=(0, None, None))(jnp.ones(3), 1.0, 2.0)
        """, "ok"),
    Case("an argument the gradient leaves out of argnums, passed on as a static argument", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("n",))
        def head(params, x, n: int):
            return jnp.tile(x @ params, n)

        def loss(params, x, n):
            return head(params, x, n).sum()

        @partial(jax.jit, static_argnums=(2,))
        def update(params, x, n):
            return jax.value_and_grad(loss)(params, x, n)

        def run():
            return update(jnp.ones((3, 3)), jnp.ones(3), 2)
        """, "ok"),
    Case("a keyword argument of a gradient, passed on as a static argument", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("n",))
        def head(params, x, n: int):
            return jnp.tile(x @ params, n)

        def loss(params, x, *, n):
            return head(params, x, n).sum()

        @partial(jax.jit, static_argnames=("n",))
        def update(params, x, n):
            return jax.grad(loss)(params, x, n=n)

        def run():
            return update(jnp.ones((3, 3)), jnp.ones(3), n=2)
        """, "ok"),
    Case("an argument the gradient leaves out of argnums, traced by the caller, passed on as a static argument", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("n",))  # JAX302
        def head(params, x, n):
            return (x @ params).sum() * n

        def loss(params, x, n):
            return head(params, x, n)

        @jax.jit
        def update(params, x, n):
            return jax.value_and_grad(loss)(params, x, n)

        def run():
            return update(jnp.ones((3, 3)), jnp.ones(3), 2.0)
        """, "ValueError"),
    Case("a string to a traced parameter of a jitted method and of a jit applied in place", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        def scale(x, unit):
            return x * 2

        class Decoder:
            @partial(jax.jit, static_argnums=0)
            def decode(self, logits, mode):
                return jnp.argmax(logits, -1)

            def __call__(self, logits, step):
                jax.jit(scale)(logits, f"step {step}")  # JAX309
                return self.decode(logits, "greedy")  # JAX309

        def run():
            return Decoder()(jnp.ones((2, 3)), 1)
        """, "TypeError"),
    Case("a lambda to a traced parameter", """
        import jax
        import jax.numpy as jnp

        step = jax.jit(lambda x, f: x * 2, out_shardings=None)

        def run():
            return step(jnp.ones(2), lambda v: v)  # JAX309
        """, "TypeError"),
    Case("strings that reach only static parameters, None, and a same-named method of another object", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,), static_argnames=("mode",))
        def decode(logits, name, mode="argmax", offset=None):
            return jnp.argmax(logits, -1) if offset is None else logits + offset

        class Printer:
            def decode(self, logits, mode):
                return mode

        def run():
            mode = "sample"
            if jnp.ones(1).shape:
                mode = jnp.zeros(())
            Printer().decode(jnp.ones(2), "text")
            return decode(jnp.ones(2), "logits", mode="greedy", offset=None), decode(jnp.ones(2), "x", offset=mode)
        """, "ok"),
    Case("static argument reduced along an axis", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("labels",))  # JAX302
        def accuracy(logits, labels):
            return jnp.mean(logits.argmax(-1) == labels.argmax(axis=1))

        def run():
            return accuracy(jnp.ones((2, 3)), jnp.eye(2, 3))
        """, "ValueError"),
    Case("static argument split along an axis by a jax.numpy function", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("action_dim", "obs"))  # JAX302
        def minibatches(obs, action_dim, n):
            return jnp.array(jnp.split(obs, 2, axis=-1)) * action_dim

        def run():
            return minibatches(jnp.ones((2, 4)), 3, 2)
        """, "ValueError"),
    Case("static numbers given to jax.numpy functions that add the axis they are given", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("start", "scale"))
        def grid(x, start, scale):
            points = jnp.linspace(start, 1.0, 5, axis=0)
            return x * jnp.expand_dims(scale, axis=0) + jnp.sum(points, axis=None)

        def run():
            return grid(jnp.ones(5), 0.0, 2.0)
        """, "ok"),
    Case("static argument with an axis method that is a plain Python object's", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        class Grid:
            def count(self, axis):
                return 3 if axis == 0 else 2

        @partial(jax.jit, static_argnames=("grid",))
        def fill(x, grid):
            return x * grid.count(axis=0)

        def run():
            return fill(jnp.ones(2), Grid())
        """, "ok"),
    Case("static argument fed the output of another compiled function, in a loop", """
        import jax
        import jax.numpy as jnp

        def prefill(x):
            return x * 2, x + 1

        def sample(state, logits, *, n):
            return logits[0] * n + state

        def run():
            logits, cache = jax.jit(prefill)(jnp.ones(3))
            step = jax.jit(sample, static_argnames=("n", "logits"))  # JAX302
            extend = jax.jit(prefill, out_shardings=None)
            state = 0.0
            for _ in range(2):
                state = step(state, logits, n=2)
                logits, cache = extend(cache)
            return state
        """, "ValueError"),
    Case("static argument fed a Python value computed next to a compiled output", """
        import jax
        import jax.numpy as jnp

        def prefill(x):
            return x * 2, x + 1

        def sample(state, logits, *, n):
            return logits * n + state

        def run():
            logits, cache = jax.jit(prefill)(jnp.ones(3))
            n = int(cache.shape[0])
            step = jax.jit(sample, static_argnames=("n",), out_shardings=None)
            state = 0.0
            for _ in range(2):
                state = step(state, logits, n=n)
                n = len(cache)
            return state
        """, "ok"),
    Case("static array under JAX's own name for it", """
        from functools import partial
        import jax
        import jax.numpy as jnp
        from jax._src.typing import Array

        @partial(jax.jit, static_argnames=("table",))  # JAX302
        def lookup(i, table: Array):
            return table[i]

        def run():
            return lookup(0, jnp.arange(3))
        """, "ValueError"),
    Case("a method of the same name on another object", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        class Net:
            def initial_state(self, batch_size):
                return jnp.zeros((batch_size, 2))

        class Agent:
            def __init__(self):
                self._initial = jax.vmap(lambda n: Net().initial_state(2) * n)

            @partial(jax.jit, static_argnums=(0, 1))
            def initial_state(self, batch_size):
                return jnp.zeros((batch_size, 3))

        def run():
            return Agent().initial_state(2), Agent()._initial(jnp.ones(2))
        """, "ok"),
    Case("a base class's method called with self passed explicitly", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        class Base:
            def brightness(self, amp, unconvolved=False):
                out = amp * jnp.ones(3)
                return out if unconvolved else out * 0.5

        class Band(Base):
            def __hash__(self):
                return id(self)

            @partial(jax.jit, static_argnums=(0, 2))
            def brightness(self, amp, unconvolved=False):
                return Base.brightness(self, amp * 2.0, unconvolved=unconvolved)

        def run():
            return Band().brightness(jnp.float32(1.5), True)
        """, "ok"),
    Case("a jitted method delegating to objects it keeps", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        class Part:
            def update(self, param, scale):
                return param * scale

            def log_l(self, a, b, verbose=False):
                return jnp.sum(a * b)

        class Whole:
            def __init__(self, inner):
                self._parts = [Part(), Part()]
                self._other = Part()
                self._inner = inner

            def __hash__(self):
                return id(self)

            @partial(jax.jit, static_argnums=(0, 2))
            def update(self, param, band, scale):
                return self._parts[band].update(param[band], scale)

            @partial(jax.jit, static_argnums=(0, 2))
            def log_l(self, args, verbose=False):
                a, b = args
                return self._other.log_l(a, b, verbose=verbose) + self._inner.log_l(a, b, verbose)

        def run():
            w = Whole(Part())
            return w.update([jnp.float32(1.0), jnp.float32(2.0)], 1, jnp.float32(3.0)), w.log_l(
                (jnp.ones(3), jnp.arange(3.0)), True
            )
        """, "ok"),
    Case("a traced value to the static argument of an instance kept on self", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        class Table:
            def __hash__(self):
                return id(self)

            @partial(jax.jit, static_argnums=(0, 2))  # JAX302
            def lookup(self, x, band):
                return x * band

        class Model:
            def __init__(self):
                self.table = Table()

            def __hash__(self):
                return id(self)

            @partial(jax.jit, static_argnums=0)
            def predict(self, x):
                return self.table.lookup(x, x[0])

        def run():
            return Model().predict(jnp.ones(3))
        """, "ValueError"),
    Case("a private jit whose every caller passes a tuple despite its annotation", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(0, 1))
        def _observations(shapes: list[int], size: int):
            return jnp.zeros((size, len(shapes)), dtype=jnp.int32)

        def run():
            shapes = tuple(n for n in (3, 4))
            return _observations(tuple([3, 4]), 5), _observations(shapes, 2), _observations((3,), 1)
        """, "ok"),
    Case("a private jit one of whose callers passes a list", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(0, 1))  # JAX302
        def _observations(shapes: list[int], size: int):
            return jnp.zeros((size, len(shapes)), dtype=jnp.int32)

        def run():
            return _observations(tuple([3, 4]), 5), _observations([3, 4], 5)
        """, "ValueError"),
    Case("donated through a helper", """
        import jax
        import jax.numpy as jnp

        def _sgd(params, grads):
            return params - 0.1 * grads

        _apply = jax.jit(_sgd, donate_argnums=0)

        def apply_gradients(params, grads):
            return _apply(params, grads)

        def run():
            params = jnp.ones(3)
            new_params = apply_gradients(params, jnp.ones(3))
            return new_params + params  # JAX304
        """, DONATED_READ),
    Case("a helper that rebinds what it donates", """
        import jax
        import jax.numpy as jnp

        def _sgd(params, grads):
            return params - 0.1 * grads

        _apply = jax.jit(_sgd, donate_argnums=0)

        def apply_gradients(params, grads):
            params = params + 0.0  # a new array: the caller's stays alive
            return _apply(params, grads)

        def run():
            params = jnp.ones(3)
            new_params = apply_gradients(params, jnp.ones(3))
            return new_params + params
        """, "ok"),
    Case("static parameter mapped by vmap", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=1)  # JAX302
        def power(x, n):
            return x ** n

        def run():
            return jax.vmap(power)(jnp.ones(3), jnp.arange(3))
        """, "ValueError"),
    Case("static parameter a nested function hands to a vmap that maps it", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=1)  # JAX302
        def train(params, states):
            def loss_fn(p):
                return jax.vmap(lambda s: (s * p).sum())(states).mean()
            return jax.grad(loss_fn)(params)

        class Replay:  # what its `sample` returns is not known to the analysis
            def sample(self):
                return jnp.ones((4, 3))

        def run():
            return train(jnp.ones(3), Replay().sample())
        """, "ValueError"),
    Case("static parameter a vmap leaves unmapped, and a nested parameter of its name", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=1)
        def scale(params, n):
            def inner(n):
                return jax.vmap(lambda s: s * 2.0)(n)
            return jax.vmap(lambda p, k: p * k, in_axes=(0, None))(params, n) + inner(params)

        def run():
            return scale(jnp.ones(3), 2)
        """, "ok"),
    Case("static parameter given a tracer", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames="n")  # JAX302
        def power(x, n):
            return x ** n

        @jax.jit
        def outer(x, n):
            return power(x, n)

        def run():
            return outer(jnp.ones(3), 2)
        """, "ValueError"),
    Case("static parameter left unmapped and static", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=1)
        def power(x, n):
            return x ** n

        @partial(jax.jit, static_argnums=1)
        def outer(x, n):
            return power(x, n)

        def run():
            jax.vmap(power, in_axes=(0, None))(jnp.ones(3), 3)
            return outer(jnp.ones(3), 2)
        """, "ok"),
    Case("static self whose attribute changes", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        class Policy:
            def __init__(self, temperature):
                self.temperature = temperature

            @partial(jax.jit, static_argnames=("self",))  # JAX308
            def logits(self, x):
                return x / self.temperature

        def run():
            policy = Policy(1.0)
            policy.logits(jnp.ones(2))
            policy.temperature = 2.0
            assert float(policy.logits(jnp.ones(2))[0]) == 0.5
        """, "AssertionError"),
    Case("static self set once", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        class Policy:
            def __init__(self, temperature):
                self.temperature = temperature
                self.calls = 0

            @partial(jax.jit, static_argnums=0)
            def logits(self, x):
                return x / self.temperature

            def act(self, x):
                self.calls += 1  # not read by the jitted method
                return self.logits(x)

        class Built:
            def __init__(self):
                self._build(2.0)

            def _build(self, temperature):
                self.temperature = temperature  # only construction calls this

            @partial(jax.jit, static_argnums=0)
            def logits(self, x):
                return x / self.temperature

        def run():
            policy = Policy(2.0)
            policy.act(jnp.ones(2))
            assert float(Policy(4.0).act(jnp.ones(2))[0]) == 0.25
            assert float(Built().logits(jnp.ones(2))[0]) == 0.5
        """, "ok"),
    Case("argnames typo", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("is_training",))  # JAX301
        def f(x, train=False):
            return x * 2 if train else x

        def run():
            return f(jnp.ones(2), train=True)
        """, "ValueError"),
    Case("argnums past the parameters", """
        import jax
        import jax.numpy as jnp

        def f(x, n):
            return x * n

        g = jax.jit(f, static_argnums=(1, 2))  # JAX301

        def run():
            return g(jnp.ones(2), 3)
        """, "ValueError"),
    Case("argnames of positional-only", """
        import jax
        import jax.numpy as jnp

        def f(x, n, /):
            return x * n

        g = jax.jit(f, static_argnames="n")  # JAX301

        def run():
            return g(jnp.ones(2), 3)
        """, "ValueError"),
    Case("what JAX accepts", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1, 1), static_argnames=("n", "mode"))
        def f(x, n, *, mode="a"):
            return x * n if mode == "a" else x

        @partial(jax.jit, static_argnums=(2,))
        def g(x, *rest):
            return x + rest[0] if rest[1] > 0 else x

        @partial(jax.jit, static_argnames=("axis",))
        def h(x, **kw):
            return x.sum(axis=kw["axis"])

        def run():
            return f(jnp.ones(2), 2, mode="b"), g(jnp.ones(2), 1.0, 3), h(jnp.ones((2, 2)), axis=0)
        """, "ok"),
    Case("static list at the call", """
        import jax
        import jax.numpy as jnp

        def apply(x, sizes):
            for n in sizes:
                x = jnp.tanh(x[..., :n])
            return x

        apply_jit = jax.jit(apply, static_argnums=(1,))  # JAX302

        SIZES = [3, 2]

        def run():
            return apply_jit(jnp.ones((2, 4)), SIZES)
        """, "ValueError"),
    Case("static NamedTuple holding a list, rebound in the loop that calls", """
        import collections
        import jax
        import jax.numpy as jnp

        State = collections.namedtuple("State", ["packed", "tree_def"])

        def core(start, n, state):
            for i in range(n):
                state = State([p + start + i for p in state.packed], state.tree_def)
            return state

        core_jit = jax.jit(core, static_argnums=(1, 2))  # JAX302

        def run():
            state = State(packed=[jnp.zeros(3)], tree_def=None)
            for start in range(0, 10, 5):
                state = core_jit(start, 5, state)
            return state
        """, "ValueError"),
    Case("static NamedTuple of hashable fields, rebound in the loop that calls", """
        import collections
        import jax
        import jax.numpy as jnp

        Spec = collections.namedtuple("Spec", ["sizes", "name"])

        def apply(x, spec):
            return x[: spec.sizes[0]]

        apply_jit = jax.jit(apply, static_argnums=(1,))

        def run():
            spec = Spec(sizes=(2,), name="a")
            out = []
            for n in (1, 2):
                out.append(apply_jit(jnp.ones(3), spec))
                spec = Spec(sizes=(n,), name="b")
            return out
        """, "ok"),
    Case("static name assigned a list twice", """
        import functools
        import jax
        import jax.numpy as jnp

        @functools.partial(jax.jit, static_argnums=(0,))  # JAX302
        def add(dummy, x):
            return x + 1

        def run():
            arg = [0]
            add(arg, jnp.zeros(3))
            arg = [1]
            return add(arg, jnp.zeros(3))
        """, "ValueError"),
    Case("static frozen dataclass holding an array", """
        import dataclasses
        from typing import Any
        import jax
        import jax.numpy as jnp

        @dataclasses.dataclass(frozen=True)
        class Params:
            scale: Any

        def f(p, x):
            return x * p.scale

        f_jit = jax.jit(f, static_argnums=0)  # JAX302

        def run():
            return f_jit(Params(jnp.ones(1)), 2.0)
        """, "ValueError"),
    Case("static unsafe_hash dataclass holding a name bound to an array", """
        import dataclasses
        from typing import Any
        import jax

        @dataclasses.dataclass(unsafe_hash=True)
        class C:
            x: Any

        def f(c, x):
            return x * c.x

        f_jit = jax.jit(f, static_argnums=0)  # JAX302

        def run():
            x = jax.numpy.zeros([1])
            c = C(x)
            return f_jit(c, x)
        """, "ValueError"),
    Case("static frozen dataclass holding numbers", """
        import dataclasses
        import jax
        import jax.numpy as jnp

        @dataclasses.dataclass(frozen=True)
        class Params:
            scale: float

        def f(p, x):
            return x * p.scale

        f_jit = jax.jit(f, static_argnums=0)

        def run():
            return f_jit(Params(2.0), jnp.ones(1))
        """, "ok"),
    Case("static jnp scalar at the call", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("scale",))  # JAX302
        def f(x, scale):
            return x * scale

        def run():
            return f(jnp.ones(2), scale=jnp.float32(2.0))
        """, "ValueError"),
    Case("static argument passed a comparison of JAX arrays", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1, 0))  # JAX302
        def safe_mask(mask, fn, operand):
            return jnp.where(mask, fn(operand), 0.0)

        def energy(g):
            g2 = jnp.sum(g ** 2, axis=-1)
            mask = (g2 < 4.0) & (g2 > 1e-7)
            return safe_mask(mask, jnp.exp, g2)

        def run():
            return energy(jnp.ones((3, 2)))
        """, "ValueError"),
    Case("static argument passed a parameter annotated as an array", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1, 0))  # JAX302
        def extract(c, as_dict):
            return {"a": c[0]} if as_dict else c[0]

        def elements(c: jax.Array):
            return extract(c, True)

        def run():
            return elements(jnp.ones(3))
        """, "ValueError"),
    Case("static argument annotated as an array, used where JAX needs a Python int", """
        import jax
        import jax.numpy as jnp

        class Executor:
            def __init__(self):
                self.prepare = jax.jit(self._prepare, static_argnames=("chunk_size",))

            def _prepare(self, tokens: jax.Array, chunk_id: jax.Array, chunk_size: jax.Array):
                start = chunk_id * chunk_size
                return jax.lax.dynamic_slice_in_dim(tokens, start, chunk_size)

        def run():
            return Executor().prepare(jnp.arange(8), jnp.int32(1), chunk_size=4)
        """, "ok"),
    Case("static argument annotated as an array, rebound before it is used as a size", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("width",))  # JAX302
        def window(x, width: jax.Array):
            width = 2
            return jax.lax.dynamic_slice_in_dim(x, 0, width)

        def run():
            return window(jnp.arange(8), width=jnp.ones(2))
        """, "ValueError"),
    Case("static argument of a jitted function a factory returns, passed an array", """
        import functools
        import jax
        import jax.numpy as jnp

        def make_update():
            @functools.partial(jax.jit, static_argnames=("a",))  # JAX302
            def update(state, a, b):
                return state + jnp.atleast_2d(a).sum() + b

            return update

        step = make_update()

        def run():
            return step(jnp.zeros(()), jnp.ones(3), 1.0)
        """, "ValueError"),
    Case("static argument of a jitted function a factory returns, passed a number", """
        import functools
        import jax
        import jax.numpy as jnp

        def make_update():
            @functools.partial(jax.jit, static_argnames=("a",))
            def update(state, a, b):
                return state + a + b

            return update

        step = make_update()

        def run():
            return step(jnp.zeros(()), 3, 1.0)
        """, "ok"),
    Case("static argument of the jit a factory returns, passed an array", """
        import jax
        import jax.numpy as jnp

        def make_update():
            def update(state, a, b):
                return state + jnp.atleast_2d(a).sum() + b

            return jax.jit(update, static_argnames=("a",))  # JAX302

        step = make_update()

        def run():
            return step(jnp.zeros(()), jnp.ones(3), 1.0)
        """, "ValueError"),
    Case("static argument of the jit a factory returns, passed a number", """
        import jax
        import jax.numpy as jnp

        def make_update():
            def update(state, a, b):
                return state + a + b

            return jax.jit(update, static_argnames=("a",))

        step = make_update()

        def run():
            return step(jnp.zeros(()), 3, 1.0)
        """, "ok"),
    Case("static argument of the jit a factory returns, the loop index", """
        import jax
        import jax.numpy as jnp

        TRACES = {"f": 0}

        def make_step():
            def step(x, n):
                TRACES["f"] += 1
                return x * n

            return jax.jit(step, static_argnums=1)

        def run():
            step = make_step()
            x = jnp.ones(2)
            for i in range(4):
                x = step(x, i)  # JAX303
            return x
        """, "traces>=4"),
    Case("static argument of the jit a factory returns, one value in the loop", """
        import jax
        import jax.numpy as jnp

        TRACES = {"f": 0}

        def make_step():
            def step(x, n):
                TRACES["f"] += 1
                return x * n

            return jax.jit(step, static_argnums=1)

        def run():
            step = make_step()
            x = jnp.ones(2)
            for i in range(4):
                x = step(x, 3)
            return x
        """, "ok"),
    Case("static self of a dataclass that defines __eq__ with unsafe_hash", """
        import dataclasses
        import functools
        import jax
        import jax.numpy as jnp

        @dataclasses.dataclass(unsafe_hash=True, eq=False)
        class Model:
            scale: int = 2

            def __eq__(self, other):
                return isinstance(other, Model) and self.scale == other.scale

            @functools.partial(jax.jit, static_argnums=(0,))
            def predict(self, x):
                return x * self.scale

        def run():
            return Model().predict(jnp.ones(3))
        """, "ok"),
    Case("static argument passed an optax state", """
        from functools import partial
        import jax
        import jax.numpy as jnp
        import optax

        @partial(jax.jit, static_argnums=(1,))  # JAX302
        def scaled(params, opt_state):
            return params * 2.0

        def run():
            opt = optax.adam(1e-2)
            opt_state = opt.init(jnp.ones(3))
            return scaled(jnp.ones(3), opt_state)
        """, "ValueError"),
    Case("static argument passed an optax update function", """
        from functools import partial
        import jax
        import jax.numpy as jnp
        import optax

        @partial(jax.jit, static_argnums=(1,))
        def step(params, update_fn, opt_state):
            updates, opt_state = update_fn(params, opt_state)
            return optax.apply_updates(params, updates), opt_state

        def run():
            opt = optax.sgd(1e-2)
            opt_state = opt.init(jnp.ones(3))
            return step(jnp.ones(3), opt.update, opt_state)
        """, "ok"),
    Case("static argument passed a comparison of shapes", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))
        def pick(x, wide):
            return x * 2 if wide else x

        def run():
            x = jnp.ones((3, 5))
            return pick(x, x.shape[1] > 4), pick(x, x.ndim == 2)
        """, "ok"),
    Case("static tuple holding a list", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))  # JAX302
        def f(x, spec):
            return x * len(spec[0])

        def run():
            return f(jnp.ones(2), ([1, 2], 3))
        """, "ValueError"),
    Case("static ArrayLike parameter", """
        from functools import partial
        import jax
        import jax.numpy as jnp
        from jax.typing import ArrayLike

        @partial(jax.jit, static_argnames=("a",))  # JAX302
        def det(a: ArrayLike) -> jax.Array:
            return jnp.linalg.det(a)

        def run():
            return det(jnp.eye(2))
        """, "ValueError"),
    Case("static union of array types", """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit(static_argnames=("table",))  # JAX302
        def lookup(i, table: "jax.Array | np.ndarray"):
            return table[i]

        def run():
            return lookup(1, np.arange(3))
        """, "ValueError"),
    Case("static array parameter of a jit wrapped in custom_jvp", """
        from functools import partial
        import jax
        import jax.numpy as jnp
        from jax.typing import ArrayLike

        @jax.custom_jvp
        @partial(jax.jit, static_argnames=("x",))  # JAX302
        def relu(x: ArrayLike) -> jax.Array:
            return jnp.maximum(x, 0)

        relu.defjvps(lambda g, ans, x: g)

        def run():
            return relu(jnp.ones(3))
        """, "ValueError"),
    Case("static union with a sequence of arrays", """
        from collections.abc import Sequence
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit(static_argnames=("keys",))  # JAX302
        def first(keys: "jax.Array | np.ndarray | Sequence[jax.typing.ArrayLike]"):
            return jnp.asarray(keys[0])

        def run():
            return first((jnp.arange(3), jnp.arange(3)))
        """, "ValueError"),
    Case("static sequence of Python ints left alone", """
        from collections.abc import Sequence
        from typing import Optional
        import jax
        import jax.numpy as jnp

        @jax.custom_jvp
        @jax.jit(static_argnames=("axes", "n"))
        def total(x, axes: Sequence[int] = (0,), n: Optional[int] = None):
            return x.sum(axis=tuple(axes))

        total.defjvps(lambda g, ans, x, axes, n: g.sum(axis=tuple(axes)))

        def run():
            return total(jnp.ones((2, 2)), (0, 1))
        """, "ok"),
    Case("static parameter reshaped in the body", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("w",))  # JAX302
        def project(x, w):
            return x @ w.reshape(x.shape[-1], -1)

        def run():
            return project(jnp.ones((2, 4)), jnp.ones(8))
        """, "ValueError"),
    Case("static shape description left alone", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("spec",))
        def zeros_like_spec(x, spec):
            return jnp.zeros(spec.shape, spec.dtype) + x.sum()

        def run():
            return zeros_like_spec(jnp.ones(2), jax.ShapeDtypeStruct((3,), jnp.float32))
        """, "ok"),
    Case("static optional array left alone", """
        from functools import partial
        from typing import Optional
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("mask",))
        def f(x, mask: Optional[jax.Array] = None):
            return x if mask is None else x * mask

        def run():
            return f(jnp.ones(2))
        """, "ok"),
    Case("hashable statics", """
        import dataclasses
        import enum
        from functools import partial
        import jax
        import jax.numpy as jnp
        import numpy as np

        class Act(enum.Enum):
            RELU = "relu"

        @dataclasses.dataclass(frozen=True)
        class Cfg:
            width: int = 2

        @partial(jax.jit, static_argnames=("sizes", "act", "cfg", "fn", "scale", "dims"))
        def f(x, sizes=(2,), act=Act.RELU, cfg=Cfg(), fn=jnp.tanh, scale=np.float32(2.0), dims=[0]):
            return fn(x[: sizes[0] * cfg.width]) * scale

        def run():
            return f(jnp.ones(8), sizes=(1,), act=Act.RELU, cfg=Cfg(3), fn=jax.nn.relu, scale=np.float32(1.5))
        """, "ok"),
    Case("static objects made anew in the loop", """
        import functools
        from functools import partial
        import jax
        import jax.numpy as jnp

        TRACES = {"f": 0}

        class Scaler:
            def __init__(self, k):
                self.k = k

            def __call__(self, x):
                return x * self.k

        @partial(jax.jit, static_argnums=(1,))
        def f(x, fn):
            TRACES["f"] += 1
            return fn(x)

        def run():
            x = jnp.ones(2)
            for i in range(3):
                x = f(x, lambda v: v + 1)  # JAX303
                double = functools.partial(jnp.multiply, 2.0)
                x = f(x, double)  # JAX303
                x = f(x, Scaler(2.0))  # JAX303
                def shift(v):
                    return v - 1
                x = f(x, shift)  # JAX303
            return x
        """, "traces>=12"),
    Case("static objects equal by value or made once", """
        import dataclasses
        from functools import partial
        import jax
        import jax.numpy as jnp

        TRACES = {"f": 0}

        @dataclasses.dataclass(frozen=True)
        class Scale:
            k: float = 2.0

            def __call__(self, x):
                return x * self.k

        class Shift:
            def __init__(self, k):
                self.k = k

            def __eq__(self, other):
                return isinstance(other, Shift) and other.k == self.k

            def __hash__(self):
                return hash(self.k)

            def __call__(self, x):
                return x - self.k

        @partial(jax.jit, static_argnums=(1,))
        def f(x, fn):
            TRACES["f"] += 1
            return fn(x)

        @partial(jax.jit, static_argnums=(1,))
        def g(x, fn):
            return fn(x)

        def run():
            x = jnp.ones(2)
            once = lambda v: v + 1
            for i in range(3):
                x = f(x, Scale())
                x = f(x, Shift(1.0))
                x = g(x, once)
                x = g(x, jnp.tanh)
            return x
        """, "ok"),
    Case("array in a static dataclass field", """
        import dataclasses
        from typing import Union
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Table:
            rows: Union[jax.Array, np.ndarray] = dataclasses.field(metadata={"static": True})  # JAX307
            n: int = dataclasses.field(default=2, metadata=dict(static=True))

        @jax.jit
        def first(t):
            return t.rows[0] * t.n

        def run():
            first(Table(jnp.arange(4.0)))
            return first(Table(jnp.arange(4.0)))
        """, "ValueError"),
    Case("static dataclass fields holding Python values", """
        import dataclasses
        from typing import Optional
        import jax
        import jax.numpy as jnp

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Table:
            rows: jax.Array
            n: int = dataclasses.field(default=2, metadata=dict(static=True))
            mask: Optional[jax.Array] = dataclasses.field(default=None, metadata=dict(static=True))

        @dataclasses.dataclass
        class Plain:
            rows: jax.Array = dataclasses.field(metadata=dict(static=True))

        @jax.jit
        def first(t):
            return t.rows[0] * t.n

        def run():
            first(Table(jnp.arange(4.0)))
            return first(Table(jnp.arange(4.0)))
        """, "ok"),
    Case("float swept as a static", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        TRACES = {"f": 0}

        @partial(jax.jit, static_argnums=(1,))
        def f(x, lr):
            TRACES["f"] += 1
            return x * lr

        def run():
            x = jnp.ones(2)
            lr = 0.1
            while lr > 0.01:
                x = f(x, lr)  # JAX303
                lr = lr / 2
            return x
        """, "traces>=3"),
    Case("static config chosen from a few", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        TRACES = {"f": 0}

        @partial(jax.jit, static_argnames=("mode", "width"))
        def f(x, mode, width=2):
            TRACES["f"] += 1
            return x[:width] * 2 if mode == "double" else x[:width]

        def run():
            x = jnp.ones(4)
            for step in range(6):
                for mode in ("double", "same"):
                    y = f(x, mode, width=2)
            return y
        """, "ok"),
    Case("donated then read", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnames=("params",))
        def step(params, g):
            return params - 0.1 * g

        def run():
            params = jnp.ones(3)
            new = step(params=params, g=jnp.ones(3))
            return new, params.sum()  # JAX304
        """, DONATED_READ),
    Case("an attribute of the instance donated then read", """
        import jax
        import jax.numpy as jnp

        class Trainer:
            def __init__(self):
                self.states = {"params": jnp.ones(3)}
                self.step_fn = jax.jit(self.step, donate_argnums=0)

            @staticmethod
            def step(states, x):
                return {"params": states["params"] - 0.1 * x}

            def fit(self, xs):
                for x in xs:
                    new_states = self.step_fn(self.states, x)
                    print(jnp.linalg.norm(self.states["params"]))  # JAX304
                    self.states = new_states

        def run():
            Trainer().fit([jnp.ones(3)] * 2)
        """, DONATED_READ),
    Case("an attribute of the instance donated and assigned back", """
        import jax
        import jax.numpy as jnp

        class Trainer:
            def __init__(self):
                self.states = {"params": jnp.ones(3)}
                self.step_fn = jax.jit(self.step, donate_argnums=0)

            @staticmethod
            def step(states, x):
                return {"params": states["params"] - 0.1 * x}

            def refresh(self):
                self.states = {"params": jnp.zeros(3)}

            def fit(self, xs):
                for x in xs:
                    self.states = self.step_fn(self.states, x)
                    print(jnp.linalg.norm(self.states["params"]))
                new_states = self.step_fn(self.states, xs[0])
                self.refresh()
                return new_states, self.states["params"]

        def run():
            Trainer().fit([jnp.ones(3)] * 2)
        """, "ok"),
    Case("donated and rebound", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnums=(0,))
        def step(params, g):
            return params - 0.1 * g, g.sum()

        def run():
            params = jnp.ones(3)
            for _ in range(3):
                params, norm = step(params, jnp.ones(3))
            return params, norm
        """, "ok"),
    Case("donated dict of arrays read after the call", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnums=(0,))
        def apply_grads(params, grads):
            return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

        def run():
            params = {"w": jnp.ones(3), "b": jnp.zeros(1)}
            new = apply_grads(params, {"w": jnp.ones(3), "b": jnp.ones(1)})
            return jax.tree_util.tree_map(lambda a, b: a - b, new, params)  # JAX304
        """, DONATED_READ),
    Case("donated dict of Python numbers read after the call", """
        import jax

        def advance(state, dt):
            return {"pos": state["pos"] + dt, "vel": state["vel"]}

        advance = jax.jit(advance, donate_argnames="state")

        def run():
            state = {"pos": 0.0, "vel": [1.0, 2.0]}
            nxt = advance(state, 0.1)
            return nxt["pos"] - state["pos"]
        """, "ok"),
    Case("static length of equal-sized batches", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames="n")
        def mean_of(x, n):
            return x.sum(0) / n

        def run():
            batches = [jnp.ones((4, 2)) * i for i in range(5)]
            return [mean_of(batch, n=len(batch)) for batch in batches] + [
                mean_of(batch, n=len(batch) * 2) for batch in batches
            ]
        """, "ok"),
    Case("static length of a list that grows in the loop", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        TRACES = {"f": 0}

        @partial(jax.jit, static_argnames="n")
        def f(x, n):
            TRACES["f"] += 1
            return x / n

        def run():
            history = []
            for step in range(4):
                history.append(step)
                f(jnp.ones(2), n=len(history))  # JAX303
        """, "traces>=4"),
    Case("donated twice", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnums=(0, 1))
        def merge(a, b):
            return a + b, a - b

        def run():
            x = jnp.ones(3)
            return merge(x, b=x)  # JAX305
        """, "JaxRuntimeError"),
    Case("donated twice under two names", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnums=(0, 1))
        def merge(a, b):
            return a + b, a - b

        def run():
            model_state = jnp.ones(3)
            kernel_state = model_state
            try:
                return merge(model_state, kernel_state)  # JAX305
            finally:
                pass
        """, "JaxRuntimeError"),
    Case("a copy rebound before it is donated beside its source", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnums=(0, 1))
        def merge(a, b):
            return a + b, a - b

        def run():
            model_state = jnp.ones(3)
            kernel_state = model_state
            kernel_state = kernel_state * 2
            return merge(model_state, kernel_state)
        """, "ok"),
    Case("jitted step stored on self, one buffer donated twice", """
        import jax
        import jax.numpy as jnp

        def kernel_step(model_state, kernel_state):
            return model_state + 1, kernel_state * 2

        class Engine:
            def __init__(self):
                self._step = jax.jit(kernel_step, donate_argnums=(0, 1))

            def run(self, state):
                return self._step(state, state)  # JAX305

        def run():
            return Engine().run(jnp.ones(3))
        """, "JaxRuntimeError"),
    Case("jitted step stored on self, donated argument read after", """
        import jax
        import jax.numpy as jnp

        def kernel_step(model_state):
            return model_state + 1

        class Engine:
            def __init__(self):
                self._step = jax.jit(kernel_step, donate_argnums=0)

            def run(self, state):
                new = self._step(state)
                return new, float(state.sum())  # JAX304

        def run():
            return Engine().run(jnp.ones(3))
        """, DONATED_READ),
    Case("jitted step stored on self, fresh buffers", """
        import jax
        import jax.numpy as jnp

        def kernel_step(model_state, kernel_state):
            return model_state + 1, kernel_state * 2

        class Engine:
            def __init__(self, donate):
                self._step = jax.jit(kernel_step, donate_argnums=(0, 1))
                if not donate:
                    self._step = jax.jit(kernel_step)

            def run(self, state):
                return self._step(state, state)  # assigned twice: which one runs is not known

        class Runner:
            def __init__(self):
                self._step = jax.jit(kernel_step, donate_argnums=(0, 1))

            def run(self, state):
                state, kernel = self._step(state, jnp.zeros(3))
                return self._step(state, kernel)

        def run():
            return Engine(False).run(jnp.ones(3)), Runner().run(jnp.ones(3))
        """, "ok"),
    Case("list limits handed to a static argument through a plain helper", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(0, 1))  # JAX302
        def _mesh_eval(func, limits, params):
            return func(jnp.linspace(limits[0], limits[1], 5), params)

        def mesh_eval(func, limits, params):
            return _mesh_eval(func, limits, params)

        def target(xs, params):
            return xs * params

        def run():
            limits = [-2, 2]
            return mesh_eval(target, limits, 1.0)
        """, "ValueError"),
    Case("tuple limits handed to a static argument through a plain helper", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(0, 1))
        def _mesh_eval(func, limits, params):
            return func(jnp.linspace(limits[0], limits[1], 5), params)

        def mesh_eval(func, limits, params):
            return _mesh_eval(func, limits, params)

        def widened(func, limits, params):
            limits = tuple(limits)
            return _mesh_eval(func, limits, params)

        def target(xs, params):
            return xs * params

        def run():
            return mesh_eval(target, (-2, 2), 1.0), widened(target, [-2, 2], 1.0)
        """, "ok"),
    Case("PRNG key handed to a static argument through an alias", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))  # JAX302
        def train_step(state, metric, batch):
            return state + batch.sum(), metric

        def run(seed=42):
            rng = jax.random.PRNGKey(seed)
            metric = rng
            state = jnp.zeros(())
            for batch in [jnp.ones(3)]:
                state, metric = train_step(state, metric, batch)
            return state
        """, "ValueError"),
    Case("seed handed to a static argument through an alias", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))
        def init(x, seed):
            return x + jax.random.normal(jax.random.key(seed), x.shape)

        def run():
            seed = 42
            chosen = seed
            return init(jnp.ones(3), chosen)
        """, "ok"),
    Case("jit on a plain method", """
        import jax
        import jax.numpy as jnp

        class Base:
            pass

        class Net(Base):
            def __init__(self):
                self.w = jnp.ones(2)

            @jax.jit  # JAX306
            def apply(self, x):
                return x * self.w

        def run():
            return Net().apply(jnp.ones(2))
        """, "TypeError"),
    Case("jit on a method, self static and hashable", """
        from functools import partial
        import jax
        import jax.numpy as jnp

        class Net:
            def __init__(self, scale):
                self.scale = scale

            @partial(jax.jit, static_argnames=("self",))
            def apply(self, x):
                return x * self.scale

        def run():
            return Net(2.0).apply(jnp.ones(2))
        """, "ok"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_linter(case):
    source = textwrap.dedent(case.source)
    found = {(f.start.row, f.code) for f in lint_source(source, "case.py", CODES)}
    assert found == marked(source)


def execute(case: Case, monkeypatch) -> dict:
    """Import the case as a module (dataclasses need one) and call its `run()`."""
    module = types.ModuleType("jaxlint_jit_case")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(textwrap.dedent(case.source), "<case>", "exec"), module.__dict__)
    module.run()
    return module.__dict__


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_jax(case, monkeypatch):
    pytest.importorskip("jax")
    if case.jax == "ok" or case.jax.startswith("traces"):
        namespace = execute(case, monkeypatch)
        if case.jax.startswith("traces>="):
            assert namespace["TRACES"]["f"] >= int(case.jax.split(">=")[1])
        if "TRACES" in namespace and case.jax == "ok":
            assert namespace["TRACES"]["f"] <= 2, "a quiet case must not recompile per iteration"
        return
    # Bad argnames fail when `jax.jit` wraps the function, the others when it is called.
    with pytest.raises(Exception) as info:
        execute(case, monkeypatch)
    raised = {cls.__name__ for cls in type(info.value).__mro__}
    assert raised & set(case.jax.split("|")), repr(info.value)


def test_reported_cases_are_the_ones_jax_rejects():
    for case in CASES:
        reported = bool(marked(textwrap.dedent(case.source)))
        assert reported == (case.jax != "ok"), case.name


@pytest.mark.parametrize("code", sorted(CODES))
def test_each_rules_examples_against_the_whole_family(code):
    """A good example of one JAX3xx rule is quiet for all of them; a bad one shows only its marks."""
    rule = all_rules()[code]
    for example in rule.good:
        source = textwrap.dedent(example)
        assert not lint_source(source, "good.py", CODES)
    for example in rule.bad:
        source = textwrap.dedent(example)
        assert {(f.start.row, f.code) for f in lint_source(source, "bad.py", CODES)} == marked(source)


def test_naming_kwargs_itself_leaves_keywords_traced():
    """`static_argnames=("options",)` on `**options`: JAX accepts it, and then traces every keyword."""
    jax = pytest.importorskip("jax")

    def reduce(x, **options):
        return x.sum() if options["keepdims"] else -x.sum()

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(reduce, static_argnames=("options",))(jax.numpy.ones(2), keepdims=True)  # noqa: JAX301
    assert jax.jit(reduce, static_argnames=("keepdims",))(jax.numpy.ones(2), keepdims=True) == 2


def test_array_in_static_field_through_the_cli(cli, make_files):
    make_files({
        "model.py": """
            import equinox as eqx
            import jax

            class Linear(eqx.Module):
                weight: jax.Array = eqx.field(static=True)
                bias: jax.Array
                activation: str = eqx.field(static=True, default="relu")
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX3", "model.py")
    assert out.code == 1
    (finding,) = out.json
    assert (finding["code"], finding["name"]) == ("JAX307", "array-in-static-field")
    assert finding["location"] == {"row": 6, "column": 5}


def test_static_array_under_an_outer_transformation_through_the_cli(cli, make_files):
    make_files({
        "activations.py": """
            from collections.abc import Sequence
            from functools import partial
            import jax
            import jax.numpy as jnp

            @jax.custom_jvp
            @partial(jax.jit, static_argnames=("x",))
            def relu(x: jax.Array):
                return jnp.maximum(x, 0)

            @jax.jit(static_argnames=("axes", "keys"))
            def lexsort(keys: "jax.Array | Sequence[jax.Array]", axes: Sequence[int] = (0,)):
                return jnp.lexsort(keys)
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX302", "activations.py")
    assert out.code == 1
    assert [(f["code"], f["location"]["row"], f["location"]["column"]) for f in out.json] == [
        ("JAX302", 8, 36),
        ("JAX302", 12, 35),
    ]


PROJECT_ALIASES = {
    "mylib/__init__.py": "",
    "mylib/types.py": """
        import jax

        Array = jax.Array
        IntArray = jax.Array
        Shape = tuple
        """,
    "mylib/ops.py": """
        from functools import partial
        import jax
        import jax.numpy as jnp
        from mylib.types import Array, IntArray, Shape
        from mylib import types

        Table = types.Array

        @partial(jax.jit, static_argnames=("table",))
        def lookup(i, table: Array):
            return table[i]

        @partial(jax.jit, static_argnums=(1, 2))
        def gather(x, index: "IntArray", width: Table):
            return x[index]

        @partial(jax.jit, static_argnames=("shape",))
        def zeros(shape: Shape):
            return jnp.zeros(shape)
        """,
}


def test_static_arguments_annotated_with_a_projects_own_array_alias(cli, make_files, monkeypatch):
    # A file linted without its package cannot follow `Array` to `jax.Array`: the name says it.
    make_files(PROJECT_ALIASES)
    out = cli("check", "--output-format", "json", "--select", "JAX302", "mylib/ops.py")
    assert [(f["location"]["row"], f["message"].split(":")[0]) for f in out.json] == [
        (10, "static argument `table` is annotated as an array (`Array`)"),
        (14, "static argument `index` is annotated as an array (`IntArray`)"),
        (14, "static argument `width` is annotated as an array (`Table`)"),
    ]
    pytest.importorskip("jax")
    import jax.numpy as jnp

    monkeypatch.syspath_prepend(".")
    from mylib import ops

    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        ops.lookup(0, jnp.arange(3))
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        ops.gather(jnp.arange(3), jnp.arange(2), jnp.arange(2))
    assert ops.zeros((2,)).shape == (2,)  # `Shape` is a tuple: hashable, and quiet


LOCAL_ALIASES = """
from functools import partial
from typing import Optional, Tuple, Union

import jax
import jax.numpy as jnp
import numpy as np

Array = Union[jnp.ndarray, np.ndarray]
MaybeArray = Optional[jnp.ndarray]
Shape = Tuple[int, ...]


@partial(jax.jit, static_argnames=("w", "im"))
def interpolate(im: Array, w: int):
    return im * w


@partial(jax.jit, static_argnames=("mask", "shape"))
def fill(x, mask: MaybeArray = None, shape: Shape = (2,)):
    return x if mask is None else jnp.where(mask, x, jnp.zeros(shape))
"""


def test_static_arguments_annotated_with_the_modules_own_alias(cli, make_files):
    # `Array` is bound once to a union of array types: an array. `Optional[...]` admits None
    # (hashable, and what the callers pass here); a tuple of ints is hashable.
    make_files({"m.py": LOCAL_ALIASES})
    out = cli("check", "--output-format", "json", "--select", "JAX302", "m.py")
    assert [(f["location"]["row"], f["message"].split(":")[0]) for f in out.json] == [
        (14, "static argument `im` is annotated as an array (`Array`)"),
    ]
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(LOCAL_ALIASES, "m.py", "exec"), namespace)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        namespace["interpolate"](jax.numpy.ones(2), 2)
    assert namespace["fill"](jax.numpy.ones(2)).shape == (2,)


KAULDRON_TYPES = """
import functools

import jax
from kauldron import ktyping as kt
from kauldron.ktyping import Int, ScalarInt, typechecked


class Sampler:
    @functools.partial(jax.jit, static_argnames=("self", "tokens", "steps", "limit"))
    @typechecked
    def sample(self, *, tokens: Int["B L"], steps: kt.Float[""], limit: ScalarInt):
        return tokens * steps + limit
"""


def test_static_arguments_annotated_with_kauldron_array_types(cli, make_files):
    # kauldron's `Int["B L"]` admits only arrays (JAX or NumPy): unhashable, as jaxtyping's are.
    # Its `ScalarInt` admits Python ints too, which hash. (kauldron is not installed to run it.)
    make_files({"m.py": KAULDRON_TYPES})
    out = cli("check", "--output-format", "json", "--select", "JAX302", "m.py")
    assert [(f["location"]["row"], f["message"].split(":")[0]) for f in out.json] == [
        (10, "static argument `tokens` is annotated as an array (`Int['B L']`)"),
        (10, "static argument `steps` is annotated as an array (`kt.Float['']`)"),
    ]


def test_filtering_transformations_key_on_objects_made_per_iteration():
    """What JAX303 says of `eqx.filter_jit` and `nnx.jit`: a new transformation or lambda per
    iteration, or an `nnx.Optimizer` around a new optax transformation, compiles again."""
    source = textwrap.dedent(
        """
        import equinox as eqx
        import optax
        from flax import nnx

        @nnx.jit
        def step(model, optimizer, x):
            optimizer.update(model, nnx.grad(lambda m: m(x).sum())(model))

        @eqx.filter_jit
        def apply(model, loss_fn, x):
            return loss_fn(model(x))

        def train(model, epochs, lr, config):
            tx = optax.adam(lr)
            for epoch in epochs:
                optimizer = nnx.Optimizer(model, optax.adam(lr), wrt=nnx.Param)
                kept = nnx.Optimizer(model, tx, wrt=nnx.Param)
                for x in epoch:
                    step(model, optimizer, x)  # JAX303
                    step(model, kept, x)
                    step(model, lambda y: y, x)  # nnx.jit: not a static structure
                    apply(model, lambda y: (y ** 2).mean(), x)  # JAX303
                    apply(model, config.loss, x)
        """
    )
    found = {(f.start.row, f.code) for f in lint_source(source, "case.py", CODES)}
    assert found == marked(source)


def test_filter_jit_and_nnx_jit_compile_again_under_jax():
    eqx = pytest.importorskip("equinox")
    jnp = pytest.importorskip("jax.numpy")
    traces = []

    @eqx.filter_jit
    def apply(f, x):
        traces.append(1)
        return f(x)

    for _ in range(3):
        apply(lambda y: (y ** 2).mean(), jnp.ones(3))  # noqa: JAX303
    assert len(traces) == 3

    optax = pytest.importorskip("optax")
    nnx = pytest.importorskip("flax.nnx")
    model = nnx.Linear(2, 2, rngs=nnx.Rngs(0))
    steps = []

    @nnx.jit
    def step(model, optimizer, x):
        steps.append(1)
        optimizer.update(model, nnx.grad(lambda m: (m(x) ** 2).mean())(model))

    tx = optax.adam(1e-3)
    for _ in range(2):
        step(model, nnx.Optimizer(model, tx, wrt=nnx.Param), jnp.ones((1, 2)))
    assert len(steps) == 1  # a new optimizer around the same transformation: one compilation
    for _ in range(2):
        step(model, nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param), jnp.ones((1, 2)))  # noqa: JAX303
    assert len(steps) == 3


THROUGH_SELF_AND_HELPERS = (
    "jitted step stored on self, one buffer donated twice",
    "jitted step stored on self, donated argument read after",
    "jitted step stored on self, fresh buffers",
    "list limits handed to a static argument through a plain helper",
    "tuple limits handed to a static argument through a plain helper",
    "PRNG key handed to a static argument through an alias",
    "seed handed to a static argument through an alias",
)


def test_jits_stored_on_self_and_static_arguments_through_helpers_from_the_cli(cli, make_files):
    sources = [c.source for c in CASES if c.name in THROUGH_SELF_AND_HELPERS]
    assert len(sources) == len(THROUGH_SELF_AND_HELPERS)
    got, expected = cli_reports(cli, make_files, sources, "JAX3")
    assert got == expected


def test_an_object_made_per_call_of_the_caller_compiles_once_per_call_under_jax(cli, make_files):
    """JAX303 on a static optax transformation (or nested function) that `train` builds on each
    of its calls, when `train` is called in a loop or from several places: each call compiles the
    step again. Quiet: one made by the caller and passed in, and a builder called once."""
    source = """\
        from functools import partial
        import jax
        import jax.numpy as jnp
        import optax

        traces = []


        @partial(jax.jit, static_argnames=("optimizer", "loss"))
        def update(params, opt_state, optimizer, loss):
            traces.append(1)
            grads = jax.grad(loss)(params)
            updates, opt_state = optimizer.update(grads, opt_state)
            return optax.apply_updates(params, updates), opt_state


        def train(params):
            optimizer = optax.sgd(0.1)

            def loss(p):
                return jnp.sum(p ** 2)

            return update(params, optimizer.init(params), optimizer, loss)[0]


        def train_with(params, optimizer, loss):
            return update(params, optimizer.init(params), optimizer, loss)[0]


        def once(params):
            optimizer = optax.sgd(0.1)
            return update(params, optimizer.init(params), optimizer, jnp.sum)[0]


        def restarts(params):
            return [train(params) for seed in range(3)]


        def shared(params):
            optimizer = optax.sgd(0.1)
            return [train_with(params, optimizer, jnp.sum) for seed in range(3)]
        """
    make_files({"per_call.py": source})
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX303", "per_call.py")
    assert [(f["location"]["row"], f["message"].split("`")[1]) for f in out.json] == [
        (23, "optimizer"), (23, "loss"),
    ]
    assert "made on every call of `train`" in out.json[0]["message"]
    pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<per_call>", "exec"), namespace)
    namespace["restarts"](jax.numpy.ones(2))
    assert len(namespace["traces"]) == 3
    namespace["traces"].clear()
    namespace["shared"](jax.numpy.ones(2))
    namespace["once"](jax.numpy.ones(2))
    assert len(namespace["traces"]) == 2  # `shared` compiles once, `once` with its own optimizer once


def test_a_module_whose_init_makes_a_function_compiles_per_instance_under_jax(cli, make_files):
    """JAX303 on an Equinox module whose `__init__` stores `jax.jit(fn)` (or a lambda), made anew
    per restart and passed to an `eqx.filter_jit` step: the field is static and equal only to
    itself, so each instance compiles the step again. Quiet: a field holding the caller's function."""
    source = """\
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        traces = []


        class Jitted(eqx.Module):
            w: jax.Array
            act: object

            def __init__(self, fn):
                self.w = jnp.ones(3)
                self.act = jax.jit(fn)


        class Given(eqx.Module):
            w: jax.Array
            act: object

            def __init__(self, fn):
                self.w = jnp.ones(3)
                self.act = fn


        @eqx.filter_jit
        def step(model, x):
            traces.append(1)
            return model.act(model.w * x)


        def restarts(cls, x):
            for seed in range(3):
                model = cls(jnp.tanh)
                step(model, x)


        def restart_jitted(x):
            for seed in range(3):
                model = Jitted(jnp.tanh)
                step(model, x)


        def restart_given(x):
            for seed in range(3):
                model = Given(jnp.tanh)
                step(model, x)
        """
    make_files({"fields.py": source})
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX303", "fields.py")
    assert [f["location"]["row"] for f in out.json] == [41]
    assert "its field `act`" in out.json[0]["message"]
    pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<fields>", "exec"), namespace)
    namespace["restart_jitted"](jax.numpy.ones(3))
    assert len(namespace["traces"]) == 3
    namespace["traces"].clear()
    namespace["restart_given"](jax.numpy.ones(3))
    assert len(namespace["traces"]) == 1


ALIAS_OF_ANY = {
    "game/__init__.py": "",
    "game/types.py": """
        from typing import Any

        # typing only for documentation
        Array = Any
    """,
    "game/observe.py": """
        import jax
        import jax.numpy as jnp

        from .types import Array

        def observe(state, player_id: Array):
            return jnp.where(state == player_id, 1.0, 0.0)

        def step(state, player):
            return jax.jit(observe, static_argnames=("player_id",))(state, player)  # JAX302
    """,
}


def test_an_alias_of_any_leaves_the_name_the_project_gave_it(cli, make_files):
    """`Array = Any` in the package says nothing of the type: `player_id: Array` is read as the
    file alone reads it, a project's array type, and the static argument is reported in the
    package as it is loose."""
    make_files(ALIAS_OF_ANY)
    for target in ("game/observe.py", "game"):
        result = cli("check", "--output-format", "json", "--select", "JAX302", target)
        rows = textwrap.dedent(ALIAS_OF_ANY["game/observe.py"]).splitlines()
        line = next(i for i, text in enumerate(rows, 1) if "# JAX302" in text)
        assert [(f["code"], f["location"]["row"]) for f in result.json] == [("JAX302", line)]
