"""A method a subclass overrides runs traced where a jitted method of its base calls it on `self`.

The pattern of every Gymnax-style environment: the base class jits `step`, which calls
`self.step_env(...)`; each environment overrides `step_env`.
"""

from __future__ import annotations

import textwrap

import pytest

BASE = """
    from functools import partial

    import jax


    class Environment:
        @partial(jax.jit, static_argnames=("self", "n"))
        def step(self, key, state, params, n=1):
            key, sub = jax.random.split(key)
            return self.step_env(sub, state, params, n)

        def observe(self, state):
            return self.get_obs(state)
    """

ENV = """
    import jax
    import jax.numpy as jnp
    from flax import struct

    from pkg.base import Environment


    @struct.dataclass
    class State:
        x: jax.Array
        t: int


    class CartPole(Environment):
        flip = True

        def step_env(self, key, state: State, params, n):
            if state.x > 0:
                state = state.replace(x=-state.x)
            if self.flip and n > 1:
                state = state.replace(t=state.t + 1)
            return state

        def get_obs(self, state: State):
            if state.x > 0:
                return state.x
            return -state.x
    """


def _check(cli, make_files, files, *paths):
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", **{k: textwrap.dedent(v) for k, v in files.items()}})
    out = cli("check", "--no-cache", "--select", "JAX1", "--output-format", "json", *(paths or ["."]))
    return sorted((f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"], f["message"]) for f in out.json)


def test_the_override_a_jitted_base_method_calls_runs_traced(cli, make_files):
    found = _check(cli, make_files, {"pkg/base.py": BASE, "pkg/env.py": ENV}, "pkg/env.py")
    # `state.x > 0` fails in `step_env`; `self.flip and n > 1` reads a class attribute and a
    # static argument; `get_obs` is called only from `observe`, which nothing traces.
    row = textwrap.dedent(ENV).splitlines().index("        if state.x > 0:") + 1
    assert [(f, row, code) for f, row, code, _ in found] == [("env.py", row, "JAX101")]
    assert found[0][3].endswith("(traced via `pkg.base.Environment.step`)")


def test_a_generic_base_in_the_same_module(cli, make_files):
    source = textwrap.dedent(BASE) + textwrap.dedent(ENV).replace("from pkg.base import Environment", "").replace(
        "class CartPole(Environment):", "class CartPole(Environment[State]):"
    ).replace("from flax import struct", "from flax import struct\nfrom typing import Generic, TypeVar")
    source = source.replace("class Environment:", "S = TypeVar('S')\n\n\nclass Environment(Generic[S]):")
    found = _check(cli, make_files, {"pkg/env.py": source})
    assert [(row, code) for _, row, code, _ in found] == [(source.splitlines().index("        if state.x > 0:") + 1, "JAX101")]
    assert "traced via" not in found[0][3]  # traced in the module itself


def test_a_subclass_that_defines_the_method_itself_does_not_run_the_base_s(cli, make_files):
    env = textwrap.dedent(ENV).replace(
        "    def step_env(", "    def step(self, key, state, params, n=1):\n"
        "        return self.step_env(key, state, params, n)\n\n    def step_env("
    )
    assert "def step(" in env
    assert _check(cli, make_files, {"pkg/base.py": BASE, "pkg/env.py": env}) == []


def test_a_base_method_nothing_traces_traces_nothing(cli, make_files):
    base = textwrap.dedent(BASE).replace('    @partial(jax.jit, static_argnames=("self", "n"))\n', "")
    assert _check(cli, make_files, {"pkg/base.py": base, "pkg/env.py": ENV}) == []


def test_jax_traces_the_override_and_rejects_its_python_if():
    pytest.importorskip("flax")
    import jax
    import jax.numpy as jnp

    namespace: dict = {}
    exec(textwrap.dedent(BASE), namespace)
    env = textwrap.dedent(ENV).replace("from pkg.base import Environment", "")
    exec(env, namespace)
    cartpole, state = namespace["CartPole"](), namespace["State"](x=jnp.ones(()), t=0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        cartpole.step(jax.random.key(0), state, None)
    assert float(cartpole.observe(state)) == 1.0  # run eagerly, the same test is fine
