"""JAX502 and builds that are a different function each time: a loop over written-out values
(`for scheme in ("euler", "rk4")`), or a helper called once per such value, whose build
depends on it compiles once per value, which no rewrite avoids. Every line a case marks
`# JAX502` is reported, through the CLI's JSON; every other line stays quiet.
"""

from __future__ import annotations

import textwrap

import pytest

from marks import family_marks

marked = family_marks("JAX502")

QUIET = {
    "factory_of_the_loop_target": """
        import jax

        def make_step(scheme):
            if scheme == "euler":
                return lambda x: x + 0.1 * x
            return lambda x: x + 0.1 * (x + 0.05 * x)

        def compare(x):
            out = {}
            for scheme in ("euler", "midpoint"):
                step = jax.jit(make_step(scheme))
                out[scheme] = step(x)
            return out
        """,
    "helper_called_once_per_class": """
        import jax

        class Euler:
            def __init__(self, f, dt):
                self.f, self.dt = f, dt

            def __call__(self, x):
                return x + self.dt * self.f(x)

        class Midpoint(Euler):
            def __call__(self, x):
                return x + self.dt * self.f(x + 0.5 * self.dt * self.f(x))

        def rhs(x):
            return -x

        def run(method, x):
            step = jax.jit(method(rhs, dt=0.1))
            return step(x)

        def test_all(x):
            for method in [Euler, Midpoint]:
                run(method, x)
        """,
    "value_made_from_the_target_and_a_module_tuple": """
        import dataclasses

        import jax

        SCHEMES = (False, True)

        @dataclasses.dataclass(frozen=True)
        class Equation:
            smoothed: bool

            def step(self, x):
                return x * 2 if self.smoothed else x + 1

        def make_step(eq, dt):
            return lambda x: x + dt * eq.step(x)

        def compare(eq, x):
            out = {}
            for smoothed in SCHEMES:
                variant = dataclasses.replace(eq, smoothed=smoothed)
                out[smoothed] = jax.jit(make_step(variant, 0.1))(x)
            return out
        """,
    "closure_that_reads_the_target": """
        import jax

        def compare(x):
            out = []
            for order in (1, 2, 3):
                @jax.jit
                def step(y):
                    return y ** order
                out.append(step(x))
            for scale in ("half", "double"):
                @jax.jit
                def scaled(y, factor=0.5 if scale == "half" else 2.0):
                    return y * factor
                out.append(scaled(x))
            return out
        """,
    "comprehension_over_written_out_values": """
        import jax

        def make_step(scheme):
            return (lambda x: x * 2) if scheme == "double" else (lambda x: x + 1)

        def compare(x):
            return [jax.jit(make_step(s))(x) for s in ("double", "increment")]
        """,
}

REPORTED = {
    "loop_that_does_not_feed_the_build": """
        from functools import partial

        import jax

        def loss(x, scale):
            return x * scale

        def compare(x):
            out = []
            for scheme in ("euler", "midpoint"):
                out.append(jax.jit(partial(loss, scale=2.0))(x))  # JAX502
            return out
        """,
    "written_out_loop_inside_an_epoch_loop": """
        import jax

        def make_step(scheme):
            return (lambda x: x * 2) if scheme == "double" else (lambda x: x + 1)

        def train(x, epochs):
            for epoch in range(epochs):
                for scheme in ("double", "increment"):
                    x = jax.jit(make_step(scheme))(x)  # JAX502
            return x
        """,
    "loop_over_values_not_written_out": """
        import jax

        def make_step(scheme):
            return (lambda x: x * 2) if scheme == "double" else (lambda x: x + 1)

        def compare(x, schemes):
            return [jax.jit(make_step(s))(x) for s in schemes]  # JAX502
        """,
    "a_value_written_twice": """
        import jax

        def make_step(scheme):
            return (lambda x: x * 2) if scheme == "double" else (lambda x: x + 1)

        def compare(x):
            for scheme in ("double", "double"):
                x = jax.jit(make_step(scheme))(x)  # JAX502
            return x
        """,
    "helper_called_per_epoch_with_the_same_arguments": """
        import jax

        class Euler:
            def __call__(self, x):
                return x * 0.9

        def run(method, x):
            step = jax.jit(method())  # JAX502
            return step(x)

        def train(x):
            for method in [Euler]:
                run(method, x)
            for epoch in range(10):
                x = run(Euler, x)
            return x
        """,
    "closure_over_per_epoch_data": """
        import jax

        class Model:
            def apply(self, params, x):
                return params * x

        class Fitter:
            def __init__(self):
                self.model = Model()

            def validation_loss(self, params, batches):
                @jax.jit  # JAX502
                def loss_fn(x):
                    return self.model.apply(params, x).sum()

                return loss_fn(batches)

            def fit(self, params, batches, epochs):
                for epoch in range(epochs):
                    params = params * 0.9
                    self.validation_loss(params, batches)
                return params
        """,
    "function_with_a_written_out_loop_called_per_epoch": """
        import jax

        def make_step(scheme):
            return (lambda x: x * 2) if scheme == "double" else (lambda x: x + 1)

        def compare(x):
            for scheme in ("double", "increment"):
                x = jax.jit(make_step(scheme))(x)  # JAX502
            return x

        def train(x, epochs):
            for epoch in range(epochs):
                x = compare(x)
            return x
        """,
}


def _found(cli, make_files, text: str) -> set[tuple[int, str]]:
    make_files({"m.py": text})
    findings = cli("check", "--no-cache", "--select", "JAX502", "--output-format", "json", "m.py").json
    return {(f["location"]["row"], f["code"]) for f in findings}


@pytest.mark.parametrize("case", sorted(QUIET))
def test_a_different_function_per_build_is_quiet(cli, make_files, case):
    assert _found(cli, make_files, QUIET[case]) == set()


@pytest.mark.parametrize("case", sorted(REPORTED))
def test_the_same_function_built_again_is_reported(cli, make_files, case):
    text = textwrap.dedent(REPORTED[case])
    assert marked(text) and _found(cli, make_files, REPORTED[case]) == marked(text)


def _traces_per_build(builds):
    """How many times each `jax.jit(make_step(scheme))` of `builds` traces, all run in order."""
    jax = pytest.importorskip("jax")
    counts: dict[str, int] = {}

    def make_step(scheme):
        def step(x):
            counts[scheme] = counts.get(scheme, 0) + 1
            return x * 2 if scheme == "double" else x + 1

        return step

    x = jax.numpy.ones(3)
    for scheme in builds:
        jax.jit(make_step(scheme))(x)  # noqa: JAX502
    return counts


def test_jax_compiles_each_variant_once_and_a_rebuilt_one_again():
    """A loop over distinct written-out values traces once per value, as a build outside the loop
    per value would; the same value built again traces again: that is JAX502's waste."""
    assert _traces_per_build(("double", "increment")) == {"double": 1, "increment": 1}
    assert _traces_per_build(("double", "increment") * 3) == {"double": 3, "increment": 3}
