"""A verdict survives refactorings that change no behaviour: the same bug is found after the
helper moves into another module, gains a forwarding `*args, **kwargs` wrapper, is made by a
factory, becomes a static method called through its class, or is jitted at the call site of
another module, or hands the key on through another module's `**kwargs`, or becomes a method
inherited from a base or a method of an object the function makes, or a static method of
another module's class; and the clean twin of each stays quiet. Each program is a small project linted
through the command line as a folder (so calls between its modules are followed), and run under
JAX to show that the bug is there (JAX's key-reuse checker, a tracer error, a compile count).

The principles are those of the one resolver and binder (`docs/calls.md`).
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import textwrap

import pytest

from marks import family_marks

marked = family_marks(r"JAX\d\d\d")


@dataclasses.dataclass
class Program:
    name: str
    files: dict[str, str]
    raises: str | None = None  # what JAX raises when `pkg.main.run()` runs, or None: nothing
    compiles: tuple[str, int] | None = None  # (a jitted function of pkg.main, its compiles at least)


KEY_HELPER = """
    import jax
    import jax.numpy as jnp

    def dropout(key, x, rate):
        keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
        return jnp.where(keep, x / (1.0 - rate), 0.0)
"""

PROGRAMS = [
    Program("forwarding *args, **kwargs", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        def _dropout_impl(key, x, rate):
            keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
            return jnp.where(keep, x / (1.0 - rate), 0.0)

        def dropout(*args, **kwargs):
            return _dropout_impl(*args, **kwargs)

        def forward(x, dropout_key):
            h = dropout(dropout_key, x, 0.5)
            return dropout(dropout_key, h, rate=0.5)  # JAX201

        def run():
            return forward(jnp.ones(4), jax.random.key(0))
    """}, raises="KeyReuseError"),
    Program("forwarding *args, **kwargs, keys split", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        def _dropout_impl(key, x, rate):
            keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
            return jnp.where(keep, x / (1.0 - rate), 0.0)

        def dropout(*args, **kwargs):
            return _dropout_impl(*args, **kwargs)

        def forward(x, dropout_key):
            first, second = jax.random.split(dropout_key)
            h = dropout(first, x, 0.5)
            return dropout(second, h, rate=0.5)

        def run():
            return forward(jnp.ones(4), jax.random.key(0))
    """}),
    Program("a factory's function", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        def _make_dropout():
            def dropout(key, x, rate):
                keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
                return jnp.where(keep, x / (1.0 - rate), 0.0)
            return dropout

        dropout = _make_dropout()

        def forward(x, dropout_key):
            h = dropout(dropout_key, x, 0.5)
            return dropout(dropout_key, h, 0.5)  # JAX201

        def run():
            return forward(jnp.ones(4), jax.random.key(0))
    """}, raises="KeyReuseError"),
    Program("a helper in another module", {"pkg/helpers.py": KEY_HELPER, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg.helpers import dropout

        def forward(x, dropout_key):
            h = dropout(dropout_key, x, 0.5)
            return dropout(dropout_key, h, 0.5)  # JAX201

        def run():
            return forward(jnp.ones(4), jax.random.key(0))
    """}, raises="KeyReuseError"),
    Program("a helper in another module, keys split", {"pkg/helpers.py": KEY_HELPER, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg.helpers import dropout

        def forward(x, dropout_key):
            first, second = jax.random.split(dropout_key)
            h = dropout(first, x, 0.5)
            return dropout(second, h, 0.5)

        def run():
            return forward(jnp.ones(4), jax.random.key(0))
    """}),
    Program("a value handed twice to another module's function that draws nothing", {"pkg/helpers.py": """
        def batches(data, size):
            for start in range(0, len(data), size):
                yield data[start:start + size]
    """, "pkg/main.py": """
        import jax
        from pkg.helpers import batches

        def run():
            key, size = jax.random.key(0), 2
            for epoch in range(2):
                for batch in batches(list(range(5)), size):
                    key, sub = jax.random.split(key)
                    jax.random.normal(sub, (len(batch),))
    """}),
    Program("a flag handed twice to another module's function that hands it to code not seen", {
        "pkg/helpers.py": """
        import jax
        import numpy as np

        def block(x, deterministic, key):
            noise = jax.random.normal(key, x.shape)
            return np.asarray(x) if deterministic else x + noise
    """, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg.helpers import block

        def run():
            first, second = jax.random.split(jax.random.key(0))
            h = block(jnp.ones(3), True, first)
            return block(h, True, second)
    """}),
    Program("vmap of another module's function, a defaulted and an unbatched parameter", {"pkg/helpers.py": """
        import jax.numpy as jnp

        def features(pos, atoms, ndim=3):
            assert atoms.shape[1] == ndim
            return jnp.reshape(pos, [-1, 1, ndim]) - atoms[None, ...]
    """, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg import helpers

        def run():
            batched = jax.vmap(helpers.features, (0, None))
            return batched(jnp.ones((2, 6)), jnp.ones((4, 3)))
    """}),
    Program("a jitted static method called through its class", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        class Ops:
            @staticmethod
            @jax.jit
            def total(tokens):
                return tokens.sum()

            @staticmethod
            def generate(steps):
                tokens = jnp.zeros(1)
                for _ in range(steps):
                    nxt = Ops.total(tokens)  # JAX501
                    tokens = jnp.concatenate([tokens, nxt[None]])
                return tokens

        total = Ops.total

        def run():
            return Ops.generate(4)
    """}, compiles=("total", 4)),
    Program("a jitted function rebound to its jit, called from jitted code", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        def masked_copy(new, old, mask):
            return jax.tree_util.tree_map(
                lambda a, b, keep: a if keep else b, new, old, mask,  # JAX101
            )
        masked_copy = jax.jit(masked_copy)

        def copy_encoder(new, old):
            mask = {name: name.startswith("encoder") for name in new}
            return masked_copy(new, old, mask)  # Python bools, traced by the jit they enter
        copy_encoder = jax.jit(copy_encoder)

        def run():
            params = {"encoder": jnp.ones(2), "head": jnp.ones(2)}
            return copy_encoder(params, params)
    """}, raises="TracerBoolConversionError"),
    Program("a jitted function rebound to its jit, called from jitted code, the flag static", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        def scale(x, double):
            return x * 2 if double else x
        before = scale(jnp.ones(2), True)  # the plain function: it is jitted only below
        scale = jax.jit(scale, static_argnames="double")

        @jax.jit
        def step(x):
            return scale(x, True) + scale(x, False)

        def run():
            return step(jnp.ones(2))
    """}),
    Program("a factory's function, differentiated eagerly and jitted", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        def _make_solve():
            def solve(y0, t_end, dt):
                steps = jnp.array(t_end // dt).astype(int)
                return y0 * jnp.arange(steps).sum()  # JAX108
            return solve
        solve = _make_solve()

        def _make_sim():
            def sim(coeff):
                return solve(coeff, 0.5, 0.1)
            return sim
        sim = _make_sim()

        def run():
            jax.grad(sim)(1.0)  # eager: the step count is a concrete array
            return jax.jit(sim)(1.0)
    """}, raises="ConcretizationTypeError"),
    Program("jit applied to a function of another module", {"pkg/helpers.py": """
        import jax.numpy as jnp

        def clip(x, limit):
            if x.sum() > limit:  # JAX101
                return jnp.zeros_like(x)
            return x
    """, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg import helpers

        def run():
            return jax.jit(helpers.clip)(jnp.ones(3), 1.0)
    """}, raises="TracerBoolConversionError"),
    Program("jit applied to a function of another module, the bound static", {"pkg/helpers.py": """
        import jax.numpy as jnp

        def clip(x, limit):
            if limit > 2:
                return jnp.zeros_like(x)
            return x
    """, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg import helpers

        def run():
            return jax.jit(helpers.clip, static_argnames="limit")(jnp.ones(3), 1.0)
    """}),
    Program("a keyword forwarded through **kwargs", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        def _scale_impl(x, *, limit):
            if limit > 0:  # JAX101
                return x * limit
            return x

        def scale(*args, **kwargs):
            return _scale_impl(*args, **kwargs)

        @jax.jit
        def step(x, limit):
            return scale(x, limit=limit)

        def run():
            return step(jnp.ones(3), 2.0)
    """}, raises="TracerBoolConversionError"),
    Program("a keyword forwarded through **kwargs, static", {"pkg/main.py": """
        import functools
        import jax
        import jax.numpy as jnp

        def _scale_impl(x, *, limit):
            if limit > 0:
                return x * limit
            return x

        def scale(*args, **kwargs):
            return _scale_impl(*args, **kwargs)

        @functools.partial(jax.jit, static_argnames="limit")
        def step(x, limit):
            return scale(x, limit=limit)

        def run():
            return step(jnp.ones(3), 2.0)
    """}),
    Program("a key in a dict that another module's **kwargs hand on to code not seen", {"pkg/helpers.py": """
        import jax

        def apply(x, *, rngs):
            return x + jax.random.normal(rngs["dropout"], x.shape)

        def call_model(fn, *args, **kwargs):
            return fn(*args, **kwargs)
    """, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg import helpers

        def forward(x, key):
            h = helpers.call_model(helpers.apply, x, rngs={"dropout": key})
            return h + jax.random.normal(key, x.shape)  # JAX201

        def run():
            return forward(jnp.ones(4), jax.random.key(0))
    """}, raises="KeyReuseError"),
    Program("a key that another module's **kwargs collect and drop", {"pkg/helpers.py": """
        def log_call(x, **kwargs):
            return x
    """, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg import helpers

        def forward(x, key):
            h = helpers.log_call(x, rng=key)
            return h + jax.random.normal(key, x.shape)

        def run():
            return forward(jnp.ones(4), jax.random.key(0))
    """}),
    Program("a method inherited from a base, transformed through self", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        class Base:
            def clip(self, x):
                if x.sum() > 0:  # JAX101
                    return x
                return -x

        class Model(Base):
            def run(self, xs):
                return jax.vmap(self.clip)(xs)

        def run():
            return Model().run(jnp.ones((2, 3)))
    """}, raises="TracerBoolConversionError"),
    Program("a method inherited from a base, transformed through self, jnp.where", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        class Base:
            def clip(self, x):
                return jnp.where(x.sum() > 0, x, -x)

        class Model(Base):
            def run(self, xs):
                return jax.vmap(self.clip)(xs)

        def run():
            return Model().run(jnp.ones((2, 3)))
    """}),
    Program("a helper made a method of an object the function makes", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        class Noise:
            def add(self, key, x):
                return x + jax.random.normal(key, x.shape)

        def forward(x, key):
            noise = Noise()
            h = noise.add(key, x)
            return noise.add(key, h)  # JAX201

        def run():
            return forward(jnp.ones(3), jax.random.key(0))
    """}, raises="KeyReuseError"),
    Program("a helper made a method of an object the function makes, keys split", {"pkg/main.py": """
        import jax
        import jax.numpy as jnp

        class Noise:
            def add(self, key, x):
                return x + jax.random.normal(key, x.shape)

        def forward(x, key):
            noise = Noise()
            first, second = jax.random.split(key)
            h = noise.add(first, x)
            return noise.add(second, h)

        def run():
            return forward(jnp.ones(3), jax.random.key(0))
    """}),
    Program("a static method of another module's class, called in jitted code", {"pkg/helpers.py": """
        class Ops:
            @staticmethod
            def clip(x):
                if x.sum() > 0:  # JAX101
                    return x
                return -x
    """, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg.helpers import Ops

        @jax.jit
        def step(x):
            return Ops.clip(x) * 2

        def run():
            return step(jnp.ones(3))
    """}, raises="TracerBoolConversionError"),
    Program("a static method of another module's class, called in jitted code, jnp.where", {"pkg/helpers.py": """
        import jax.numpy as jnp

        class Ops:
            @staticmethod
            def clip(x):
                return jnp.where(x.sum() > 0, x, -x)
    """, "pkg/main.py": """
        import jax
        import jax.numpy as jnp
        from pkg.helpers import Ops

        @jax.jit
        def step(x):
            return Ops.clip(x) * 2

        def run():
            return step(jnp.ones(3))
    """}),
]


def _project(make_files, program: Program):
    files = {"pyproject.toml": '[project]\nname = "pkg"\n', "pkg/__init__.py": ""}
    files.update({path: textwrap.dedent(text) for path, text in program.files.items()})
    return make_files(files), files


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_the_verdict_survives(cli, make_files, program):
    _, files = _project(make_files, program)
    out = cli("check", "--output-format", "json", "--no-cache", "--select", "JAX1,JAX2,JAX3,JAX4,JAX5", ".")
    got = {(f["filename"].split("/pkg/", 1)[-1], f["location"]["row"], f["code"]) for f in out.json}
    expected = {
        (path.split("pkg/", 1)[-1], row, code) for path, text in files.items() if path.endswith(".py") for row, code in marked(text)
    }
    assert got == expected


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_jax_agrees(make_files, monkeypatch, program):
    jax = pytest.importorskip("jax")
    root, _ = _project(make_files, program)
    monkeypatch.syspath_prepend(str(root))
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    main = importlib.import_module("pkg.main")
    raised = None
    with jax.debug_key_reuse(True):
        try:
            main.run()
        except Exception as error:  # what JAX raises is the point
            raised = type(error).__name__
    assert raised == program.raises
    if program.compiles is not None:
        function, at_least = program.compiles
        assert getattr(main, function)._cache_size() >= at_least
