"""A jit (or an eager `lax.scan` body) built anew on every call of a function that a loop calls,
for each framework, with the function in the same module as the loop and in another one, and a
clean twin that builds it once in a factory called at start-up.

JAX502 is reported at the build, the function in the loop's module or in another: the loop's
module hands its repeating call to the function's module, so the finding does not move with
the helper, and a check of either file alone shows it. The clean twins stay quiet. Under JAX, each program runs its loop: the bug compiles on every iteration,
the twin once.
"""

from __future__ import annotations

import importlib
import textwrap

import pytest

from compile_counts import counting_compiles

BUILDERS = {
    "plain": (
        """
        import jax
        import jax.numpy as jnp


        def setup():
            return (jnp.ones(3),)


        def evaluate(x):
            @jax.jit  # build
            def score(x):
                return jnp.tanh(x).sum()

            return score(x)
        """,
        """
        import jax
        import jax.numpy as jnp


        def setup():
            return (jnp.ones(3),)


        def make_score():
            @jax.jit
            def score(x):
                return jnp.tanh(x).sum()

            return score  # a factory: called once, at start-up


        SCORE = make_score()


        def evaluate(x):
            return SCORE(x)
        """,
    ),
    "lax.scan": (
        """
        import jax.numpy as jnp
        from jax import lax


        def setup():
            return (jnp.ones(3),)


        def evaluate(x):
            def step(h, _):
                return jnp.tanh(h + x), h

            return lax.scan(step, x, None, length=4)[0]  # build
        """,
        """
        import jax.numpy as jnp
        from jax import lax


        def setup():
            return (jnp.ones(3),)


        def step(carry, _):
            h, x = carry
            return (jnp.tanh(h + x), x), h


        def evaluate(x):
            return lax.scan(step, (x, x), None, length=4)[0][0]
        """,
    ),
    "equinox": (
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp


        def setup():
            return eqx.nn.Linear(3, 2, key=jax.random.key(0)), jnp.ones(3)


        def evaluate(model, x):
            @eqx.filter_jit  # build
            def predict(model, x):
                return model(x)

            return predict(model, x)
        """,
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp


        def setup():
            return eqx.nn.Linear(3, 2, key=jax.random.key(0)), jnp.ones(3)


        def make_predict():
            @eqx.filter_jit
            def predict(model, x):
                return model(x)

            return predict


        PREDICT = make_predict()


        def evaluate(model, x):
            return PREDICT(model, x)
        """,
    ),
    "flax.linen": (
        """
        import flax.linen as nn
        import jax
        import jax.numpy as jnp

        MODEL = nn.Dense(2)


        def setup():
            x = jnp.ones((1, 3))
            return MODEL.init(jax.random.key(0), x), x


        def evaluate(params, x):
            @jax.jit  # build
            def apply(params, x):
                return MODEL.apply(params, x)

            return apply(params, x)
        """,
        """
        import flax.linen as nn
        import jax
        import jax.numpy as jnp

        MODEL = nn.Dense(2)


        def setup():
            x = jnp.ones((1, 3))
            return MODEL.init(jax.random.key(0), x), x


        def make_apply():
            return jax.jit(lambda params, x: MODEL.apply(params, x))


        APPLY = make_apply()


        def evaluate(params, x):
            return APPLY(params, x)
        """,
    ),
    "flax.nnx": (
        """
        import jax.numpy as jnp
        from flax import nnx


        def setup():
            return nnx.Linear(3, 2, rngs=nnx.Rngs(0)), jnp.ones((1, 3))


        def evaluate(model, x):
            @nnx.jit  # build
            def predict(model, x):
                return model(x)

            return predict(model, x)
        """,
        """
        import jax.numpy as jnp
        from flax import nnx


        def setup():
            return nnx.Linear(3, 2, rngs=nnx.Rngs(0)), jnp.ones((1, 3))


        def make_predict():
            @nnx.jit
            def predict(model, x):
                return model(x)

            return predict


        PREDICT = make_predict()


        def evaluate(model, x):
            return PREDICT(model, x)
        """,
    ),
    "haiku": (
        """
        import haiku as hk
        import jax
        import jax.numpy as jnp

        FORWARD = hk.without_apply_rng(hk.transform(lambda x: hk.Linear(2)(x)))


        def setup():
            x = jnp.ones((1, 3))
            return FORWARD.init(jax.random.key(0), x), x


        def evaluate(params, x):
            @jax.jit  # build
            def apply(params, x):
                return FORWARD.apply(params, x)

            return apply(params, x)
        """,
        """
        import haiku as hk
        import jax
        import jax.numpy as jnp

        FORWARD = hk.without_apply_rng(hk.transform(lambda x: hk.Linear(2)(x)))


        def setup():
            x = jnp.ones((1, 3))
            return FORWARD.init(jax.random.key(0), x), x


        def make_apply():
            @jax.jit
            def apply(params, x):
                return FORWARD.apply(params, x)

            return apply


        APPLY = make_apply()


        def evaluate(params, x):
            return APPLY(params, x)
        """,
    ),
}

LOOP = """
import jax


def run(n):
    args = setup()
    out = []
    for _ in range(n):
        out.append(evaluate(*args))  # repeat
    return out
"""

CASES = [
    pytest.param(framework, where, twin, id=f"{framework}-{where}-{twin}")
    for framework in BUILDERS
    for where in ("same", "other")
    for twin in ("bug", "clean")
]


def _files(framework: str, where: str, twin: str, package: str) -> dict[str, str]:
    helper = textwrap.dedent(BUILDERS[framework][0 if twin == "bug" else 1])
    if where == "same":
        return {f"{package}/__init__.py": "", f"{package}/main.py": helper + LOOP}
    return {
        f"{package}/__init__.py": "",
        f"{package}/helpers.py": helper,
        f"{package}/main.py": f"from {package}.helpers import evaluate, setup\n" + LOOP,
    }


def _marked(files: dict[str, str], mark: str) -> set[tuple[str, int]]:
    return {
        (name.rsplit("/", 1)[-1], row)
        for name, text in files.items()
        for row, line in enumerate(text.splitlines(), 1)
        if line.rstrip().endswith(f"# {mark}")
    }


@pytest.mark.parametrize("framework, where, twin", CASES)
def test_reported_where_the_rebuild_shows(framework, where, twin, cli, make_files):
    files = _files(framework, where, twin, "app")
    make_files({**files, "pyproject.toml": ""})
    out = cli("check", "--output-format", "json", "--select", "JAX502", "--isolated", "--no-cache", ".")
    got = {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"]) for f in out.json}
    assert got == (set() if twin == "clean" else _marked(files, "build"))


@pytest.mark.parametrize("framework", sorted(BUILDERS))
@pytest.mark.parametrize("alone", ["main.py", "helpers.py"])
def test_a_check_of_either_module_alone_reports_the_build(framework, alone, cli, make_files):
    """The loop's module alone reports what its calls cause in the helper's (as a traced call's
    findings are); the helper's module alone is checked with the modules that import it."""
    files = _files(framework, "other", "bug", "app")
    make_files({**files, "pyproject.toml": ""})
    out = cli("check", "--output-format", "json", "--select", "JAX502", "--isolated", "--no-cache", f"app/{alone}")
    got = {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"]) for f in out.json}
    assert got == _marked(files, "build")


@pytest.mark.parametrize("framework, where, twin", CASES)
def test_jax_compiles_on_every_call_of_the_bug_only(framework, where, twin, tmp_path, monkeypatch):
    jax = pytest.importorskip("jax")
    pytest.importorskip(framework.split(".")[0] if framework not in ("plain", "lax.scan") else "jax")
    package = f"rebuilt_{framework.replace('.', '_')}_{where}_{twin}"
    for name, text in _files(framework, where, twin, package).items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    main = importlib.import_module(f"{package}.main")
    main.run(1)  # the first call compiles in both
    with counting_compiles(jax) as compiles:
        main.run(3)
    if twin == "bug":
        assert len(compiles) >= 3
    else:
        assert compiles == []
