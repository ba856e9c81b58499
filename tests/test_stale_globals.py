"""A global rebound after a jitted function that reads it matters only when a call traced the
function before the rebinding and a call runs it after: a notebook that rebinds its model in a
later cell and never calls the old jitted function again keeps nothing stale. Each framework's
model held in a global, read by a jitted function; the bug calls it again after the rebinding
(JAX keeps the first model), the clean twin does not."""

from __future__ import annotations

import textwrap

import pytest

PROGRAMS = {
    "jax": (
        "jax",
        """
        import jax
        import jax.numpy as jnp

        def make(scale):
            return {"scale": jnp.asarray(scale)}

        def run(model, x):
            return x * model["scale"]
        """,
    ),
    "linen": (
        "flax",
        """
        import jax
        import jax.numpy as jnp
        import flax.linen as nn

        class Scale(nn.Module):
            scale: float

            def __call__(self, x):
                return x * self.scale

        def make(scale):
            return Scale(scale)

        def run(model, x):
            return model.apply({}, x)
        """,
    ),
    "haiku": (
        "haiku",
        """
        import jax
        import jax.numpy as jnp
        import haiku as hk

        def make(scale):
            return hk.without_apply_rng(hk.transform(lambda x: x * scale))

        def run(model, x):
            return model.apply({}, x)
        """,
    ),
    "equinox": (
        "equinox",
        """
        import jax
        import jax.numpy as jnp
        import equinox as eqx

        class Scale(eqx.Module):
            scale: float

            def __call__(self, x):
                return x * self.scale

        def make(scale):
            return Scale(scale)

        def run(model, x):
            return model(x)
        """,
    ),
}
USE = """
model = make(1.0)
forward = jax.jit(lambda x: run(model, x))
first = forward(jnp.ones(2))
model = make(2.0)
"""
AGAIN = "second = forward(jnp.ones(2))\n"


def _program(framework: str, again: bool) -> str:
    return textwrap.dedent(PROGRAMS[framework][1]) + USE + (AGAIN if again else "")


@pytest.mark.parametrize("framework", sorted(PROGRAMS))
@pytest.mark.parametrize("again", [True, False], ids=["called-again", "not-called-again"])
def test_a_rebound_global_is_reported_only_when_called_after(cli, make_files, framework, again):
    make_files({"m.py": _program(framework, again)})
    found = cli("check", "--no-cache", "--isolated", "--output-format", "json", "m.py").json
    rows = {(f["code"], f["location"]["row"]) for f in found}
    line = _program(framework, again).splitlines().index("forward = jax.jit(lambda x: run(model, x))") + 1
    assert rows == ({("JAX410", line)} if again else set())


@pytest.mark.parametrize("framework", sorted(PROGRAMS))
def test_jax_keeps_the_first_model_when_called_after(framework):
    pytest.importorskip("jax")
    pytest.importorskip(PROGRAMS[framework][0])
    namespace: dict = {}
    exec(compile(_program(framework, True), "m.py", "exec"), namespace)
    assert namespace["first"].tolist() == namespace["second"].tolist() == [1.0, 1.0]  # not 2.0: stale


# The calls that run the jitted function are those the module's resolver follows: through a
# method of an instance the module makes, and never through another function of the same name.
THROUGH_A_METHOD = """
import jax
import jax.numpy as jnp

scale = jnp.asarray(1.0)

@jax.jit
def forward(x):
    return x * scale

class Runner:
    def go(self, x):
        return forward(x)

runner = Runner()
first = runner.go(jnp.ones(2))
scale = jnp.asarray(2.0)
second = runner.go(jnp.ones(2))
"""
SAME_NAME_ELSEWHERE = """
import jax
import jax.numpy as jnp

scale = jnp.asarray(1.0)

@jax.jit
def forward(x):
    return x * scale

def main(x):
    def forward(x):
        return x + 1
    return forward(x)

first = main(jnp.ones(2))
scale = jnp.asarray(2.0)
second = main(jnp.ones(2))
"""


@pytest.mark.parametrize("source, stale", [(THROUGH_A_METHOD, True), (SAME_NAME_ELSEWHERE, False)], ids=["method", "same-name"])
def test_the_calls_that_run_it_are_the_resolvers(cli, make_files, source, stale):
    make_files({"m.py": source})
    found = cli("check", "--no-cache", "--isolated", "--output-format", "json", "m.py").json
    rows = {(f["code"], f["location"]["row"]) for f in found}
    line = source.splitlines().index("    return x * scale") + 1
    assert rows == ({("JAX410", line)} if stale else set())


def test_jax_keeps_the_first_scale_through_a_method():
    pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(THROUGH_A_METHOD, "m.py", "exec"), namespace)
    assert namespace["first"].tolist() == namespace["second"].tolist() == [1.0, 1.0]  # not 2.0: stale
