"""Where tracing starts and what it knows: bound methods handed to transformations, the
solvers of `lax.custom_root`, values drawn in a traced probabilistic model, and branches
ruled out by private module constants."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source
from marks import family_marks

CODES = frozenset({"JAX101", "JAX404"})
marked = family_marks(r"JAX\d{3}")

CASES = {
    "bound_method_of_an_instance_built_here": """
        import jax

        class Stepper:
            def __init__(self, lr):
                self.lr = lr

            def step(self, w, g):
                print(g)  # JAX404
                if self.lr > 0.5:  # the instance is bound, not traced
                    g = g * 0.5
                return w - self.lr * g

            @staticmethod
            def clip(g):
                return g if g.max() < 1 else g / g.max()  # JAX101

        stepper = Stepper(0.1)
        step = jax.jit(stepper.step)
        clip = jax.jit(stepper.clip)
        direct = jax.jit(Stepper(0.2).step)
        """,
    "bound_method_under_a_filtering_jit": """
        import equinox as eqx
        import jax

        class Model(eqx.Module):
            scale: float

            def apply(self, x: jax.Array, flag):
                if flag:  # a Python value under eqx.filter_jit
                    x = x * self.scale
                return x if x.sum() > 0 else -x  # JAX101

        model = Model(2.0)
        apply = eqx.filter_jit(model.apply)
        """,
    "bound_method_kinds_and_unknown_instances": """
        import jax

        class Stepper:
            def step(self, g):
                return g if g > 0 else -g

        class Config:
            @property
            def rule(self):
                return lambda g: g if g > 0 else -g

            @classmethod
            def make(cls, g):
                return g if g > 0 else -g  # JAX101

        def build(make):
            stepper = make()
            stepper = Stepper() if stepper is None else stepper
            return jax.jit(stepper.step), jax.jit(make().step), jax.jit(Config().rule), jax.jit(Config().make)
        """,
    "custom_root_solvers_are_traced": """
        from jax import lax

        def newton(f, y):
            if callable(f):  # the function solved for is a Python callable
                y = f(y)
            return y if y > 0 else -y  # JAX101

        def cube_root(a):
            return lax.custom_root(lambda x: x ** 3 - a, a, newton, lambda g, y: y / 3 if y > 1 else y)  # JAX101
        """,
    "custom_linear_solve_solvers_are_traced": """
        import jax.numpy as jnp
        from jax import lax

        def solve(matvec, b):
            return b / 2 if b.sum() > 0 else b  # JAX101

        def half(b):
            return lax.custom_linear_solve(lambda x: 2 * x, b, solve, symmetric=True)
        """,
    "numpyro_sites_in_a_traced_model": """
        import jax.numpy as jnp
        import numpyro
        import numpyro.distributions as dist
        from numpyro.infer import MCMC, NUTS, SVI, Predictive

        def model(x, y=None):
            mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
            if mu > 0:  # JAX101
                mu = -mu
            scale = numpyro.deterministic("scale", jnp.exp(mu))
            if scale > 1:  # JAX101
                scale = 1.0
            if y is None:  # a default left as it is
                y = None
            seen = numpyro.sample("seen", dist.Normal(mu, 1.0), obs=x)
            if jnp.sum(seen) > 0:  # JAX101
                mu = mu * 2
            if seen.sum() > 0:  # the caller's data: NumPy's sum of a NumPy array is concrete
                mu = mu * 2
            if x.shape[0] > 2 or len(x) > 2:
                mu = mu * 2
            free = numpyro.sample("free", dist.Normal(mu, 1.0), obs=None)
            return free if free > 0 else -free  # JAX101

        def guide(x, y=None):
            loc = numpyro.param("loc", 0.0)
            if loc > 0:  # JAX101
                loc = -loc
            numpyro.sample("mu", dist.Normal(loc, 1.0))

        mcmc = MCMC(NUTS(model), num_warmup=10, num_samples=10)
        svi = SVI(model, guide, None, None)
        """,
    "numpyro_model_arguments_are_the_callers": """
        import jax.numpy as jnp
        import numpyro
        import numpyro.distributions as dist
        from numpyro.infer import MCMC, NUTS

        def model(n, scale):
            if scale > 1.0:
                scale = 1.0
            with numpyro.plate("rows", n):
                numpyro.sample("z", dist.Normal(jnp.zeros(n), scale))

        mcmc = MCMC(NUTS(model), num_warmup=10, num_samples=10)
        """,
    "numpyro_model_arguments_compiled_in": """
        import numpyro
        import numpyro.distributions as dist
        from numpyro.infer import MCMC, NUTS

        def model(n, scale):
            if scale > 1.0:  # JAX101
                scale = 1.0
            numpyro.sample("z", dist.Normal(0.0, scale))

        mcmc = MCMC(NUTS(model), num_warmup=10, num_samples=10, jit_model_args=True)
        """,
    "numpyro_sites_in_an_untraced_function_quiet": """
        import jax.numpy as jnp
        import numpyro
        import numpyro.distributions as dist

        def prior_draw():
            mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
            return mu if mu > 0 else -mu
        """,
    "private_module_constant_rules_out_a_branch": """
        import jax
        import jax.numpy as jnp

        _USE_EAGER = False
        _FAST = True
        _CACHE = None

        @jax.jit
        def f(x):
            if _USE_EAGER:
                return 1 if x > 0 else 0
            if not _FAST:
                x = x if x.sum() > 0 else -x
            if _CACHE is not None:
                x = x if x.sum() > 0 else -x
            y = x if _USE_EAGER and x.sum() > 0 else -x
            return jnp.where(y > 0, 1, 0)
        """,
    "constants_that_may_change_keep_both_branches": """
        import jax

        USE_EAGER = False  # public: a test or another module may patch it
        _PATCHED = False
        _REBOUND = False
        _REBOUND = True
        _COUNTER = 0
        _LEVEL = 0

        def enable():
            global _PATCHED
            _PATCHED = True

        def bump():
            global _LEVEL
            _LEVEL += 1

        @jax.jit
        def f(x):
            if USE_EAGER:
                x = x if x.sum() > 0 else -x  # JAX101
            if _PATCHED:
                x = x if x.sum() > 0 else -x  # JAX101
            if _REBOUND:
                x = x if x.sum() > 0 else -x  # JAX101
            if _LEVEL:
                x = x if x.sum() > 0 else -x  # JAX101
            for _COUNTER in range(2):
                pass
            if _COUNTER:
                x = x if x.sum() > 0 else -x  # JAX101
            return x
        """,
    "local_name_shadowing_a_module_constant": """
        import jax

        _USE_EAGER = False

        @jax.jit
        def f(x, _USE_EAGER):
            if _USE_EAGER:  # JAX101: the parameter, not the constant
                return x
            return -x
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_traced_entry_case(name):
    source = textwrap.dedent(CASES[name])
    found = {(f.start.row, f.code) for f in lint_source(source, f"{name}.py", CODES)}
    assert found == marked(source)


def test_new_entries_through_the_cli(cli, make_files):
    make_files({
        "train.py": """
            import jax
            from jax import lax

            _DEBUG = False

            class Trainer:
                def step(self, w, g):
                    print(g)
                    return w - g

            step = jax.jit(Trainer().step)

            def root(a):
                return lax.custom_root(lambda x: x - a, a, lambda f, y: y if y > 0 else -y, lambda f, y: y)

            @jax.jit
            def probe(x):
                if _DEBUG:
                    print(x)
                return x
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX101,JAX404", "train.py")
    assert out.code == 1
    assert [(f["code"], f["location"]["row"], f["location"]["column"]) for f in out.json] == [
        ("JAX404", 9, 9),
        ("JAX101", 15, 66),
    ]


def test_a_model_module_that_imports_only_numpyro_is_linted(cli, make_files):
    make_files({
        "model.py": """
            import numpyro
            import numpyro.distributions as dist
            from numpyro.infer import MCMC, NUTS

            def model(y):
                mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
                if mu > 0:
                    mu = -mu
                numpyro.sample("obs", dist.Normal(mu, 1.0), obs=y)

            sampler = MCMC(NUTS(model), num_warmup=10, num_samples=10)
            """,
    })
    out = cli("check", "--output-format", "json", "model.py")
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX101", 8)]


# ---- what JAX does -------------------------------------------------------------------------


def test_branching_in_a_jitted_bound_method_fails_under_jax():
    """A bound method under `jax.jit`: its arguments are tracers, its instance is not."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    class Stepper:
        lr = 0.7

        def step(self, g):
            if self.lr > 0.5:  # a Python value: works
                g = g * 0.5
            return g if g.sum() > 0 else -g  # noqa: JAX101

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(Stepper().step)(jnp.ones(3))


def test_branching_in_a_filter_jitted_bound_method_fails_under_equinox():
    """`eqx.filter_jit(model.method)` traces the method's array arguments."""
    jax = pytest.importorskip("jax")
    eqx = pytest.importorskip("equinox")
    import jax.numpy as jnp

    class Model(eqx.Module):
        scale: float

        def apply(self, x, flag):
            if flag:  # a Python value under filter_jit: works
                x = x * self.scale
            return x if x.sum() > 0 else -x

    with pytest.raises(jax.errors.TracerBoolConversionError):
        eqx.filter_jit(Model(2.0).apply)(jnp.ones(3), True)


def test_custom_root_and_linear_solve_trace_their_solvers():
    """The solvers receive a function, then a tracer."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    seen = []

    def newton(f, y):
        seen.append(callable(f))
        return y if y > 0 else -y  # noqa: JAX101

    with pytest.raises(jax.errors.TracerBoolConversionError):
        lax.custom_root(lambda x: x - 2.0, 1.0, newton, lambda g, y: y)
    assert seen == [True]
    with pytest.raises(jax.errors.TracerBoolConversionError):
        lax.custom_root(lambda x: x - 2.0, 1.0, lambda f, y: y, lambda g, y: y if y > 0 else -y)  # noqa: JAX101
    with pytest.raises(jax.errors.TracerBoolConversionError):
        lax.custom_linear_solve(lambda x: 2 * x, jnp.ones(2), lambda mv, b: b if b.sum() > 0 else -b)  # noqa: JAX101


def _run_nuts(model, **data):
    jax = pytest.importorskip("jax")
    pytest.importorskip("numpyro")
    from numpyro.infer import MCMC, NUTS

    MCMC(NUTS(model), num_warmup=2, num_samples=2, progress_bar=False).run(jax.random.key(0), **data)


def test_branching_on_a_sampled_value_fails_under_nuts():
    """`numpyro.sample` in a model NUTS runs returns a tracer."""
    jax = pytest.importorskip("jax")
    numpyro = pytest.importorskip("numpyro")
    import jax.numpy as jnp
    import numpyro.distributions as dist

    def model(y=None):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        if mu > 0:
            mu = -mu
        numpyro.sample("obs", dist.Normal(mu, 1.0), obs=y)

    with pytest.raises(jax.errors.TracerBoolConversionError):
        _run_nuts(model, y=jnp.ones(3))


def test_model_arguments_are_the_callers_values_under_nuts():
    """What the entry-point analysis says of a NumPyro model's arguments: the sampler closes over
    what `run` is given, so a Python number or NumPy array stays one; with `jit_model_args=True`
    they are arguments of the compiled sampler, traced."""
    jax = pytest.importorskip("jax")
    numpyro = pytest.importorskip("numpyro")
    import jax.numpy as jnp
    import numpy as np
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    def model(n, scale, y):
        if scale > 1.0 and y.sum() > 0:  # noqa: JAX101
            scale = 1.0
        numpyro.sample("z", dist.Normal(jnp.zeros(n), scale))

    MCMC(NUTS(model), num_warmup=2, num_samples=2, progress_bar=False).run(jax.random.key(0), 3, 2.0, np.ones(3))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        MCMC(NUTS(model), num_warmup=2, num_samples=2, progress_bar=False, jit_model_args=True).run(
            jax.random.key(0), 3, 2.0, np.ones(3)
        )


def test_branching_on_an_observed_or_deterministic_site_fails_under_nuts():
    """An observed site returns the observation, traced as the model's data argument; a
    deterministic site returns its (traced) value."""
    jax = pytest.importorskip("jax")
    numpyro = pytest.importorskip("numpyro")
    import jax.numpy as jnp
    import numpyro.distributions as dist

    def observed(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        seen = numpyro.sample("obs", dist.Normal(mu, 1.0), obs=y)
        if seen.sum() > 0:
            numpyro.factor("penalty", 0.0)

    def recorded(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        if numpyro.deterministic("twice", 2 * mu) > 0:
            mu = -mu
        numpyro.sample("obs", dist.Normal(mu, 1.0), obs=y)

    for model in (observed, recorded):
        with pytest.raises(jax.errors.TracerBoolConversionError):
            _run_nuts(model, y=jnp.ones(3))


def test_a_branch_a_module_constant_rules_out_never_runs():
    """What the JAX1xx pages say of `if _USE_EAGER:` with `_USE_EAGER = False`: JAX traces only
    the branch Python takes, so the other one cannot fail."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    use_eager = False

    @jax.jit
    def f(x):
        if use_eager:
            return 1 if x > 0 else 0  # noqa: JAX101
        return jnp.where(x > 0, 1, 0)

    assert int(f(1.0)) == 1
