"""JAX108's table of the arguments JAX needs concrete, checked against the installed JAX: each
entry names the parameter JAX's signature has at that position, and JAX rejects a traced
value there while the same call with a Python value traces."""

from __future__ import annotations

import importlib
import inspect

import pytest

from jaxlint.analysis.knowledge.shape_api import CONCRETE_ARGUMENTS

ENTRIES = [(name, index, keyword) for name, entries in CONCRETE_ARGUMENTS.items() for index, keyword, _ in entries]


def resolve(qualname: str):
    """The function a table entry names (its package skips the test where it is not installed)."""
    pytest.importorskip(qualname.split(".", 1)[0])
    module, _, attr = qualname.rpartition(".")
    if module == "jax.Array":
        return getattr(importlib.import_module("jax").Array, attr)
    return getattr(importlib.import_module(module), attr)


def _diffeqsolve_sample() -> dict:
    """A small solve, where Diffrax is installed."""
    try:
        import diffrax
    except ImportError:
        return {}
    term = diffrax.ODETerm(lambda t, y, args: -y)
    return {"terms": term, "solver": diffrax.Euler(), "t0": 0.0, "t1": 1.0, "dt0": 0.1, "y0": 1.0, "max_steps": 16}


def samples(jax, jnp):
    """For each function: positional-only arguments and keyword arguments of a call JAX accepts,
    naming every parameter of the table."""
    x = jnp.arange(6.0)
    m = jnp.ones((3, 3))
    key = jax.random.key(0)
    reduce = {"a": m, "axis": 1}
    keep = {**reduce, "keepdims": True}
    return {
        "jax.numpy.zeros": {"shape": (2,)},
        "jax.numpy.ones": {"shape": (2,)},
        "jax.numpy.empty": {"shape": (2,)},
        "jax.numpy.full": {"shape": (2,), "fill_value": 1.0},
        "jax.numpy.zeros_like": {"a": x, "shape": (2,)},
        "jax.numpy.ones_like": {"a": x, "shape": (2,)},
        "jax.numpy.empty_like": {"prototype": x, "shape": (2,)},
        "jax.numpy.full_like": {"a": x, "fill_value": 1.0, "shape": (2,)},
        "jax.numpy.eye": {"N": 2, "M": 3},
        "jax.numpy.identity": {"n": 2},
        "jax.numpy.tri": {"N": 2, "M": 3, "k": 1},
        "jax.numpy.arange": {"start": 1, "stop": 5, "step": 2},
        "jax.numpy.linspace": {"start": 0.0, "stop": 1.0, "num": 3, "axis": 0},
        "jax.numpy.logspace": {"start": 0.0, "stop": 1.0, "num": 3, "axis": 0},
        "jax.numpy.geomspace": {"start": 1.0, "stop": 2.0, "num": 3, "axis": 0},
        "jax.numpy.indices": {"dimensions": (2, 3)},
        "jax.numpy.triu_indices": {"n": 3, "k": 1, "m": 4},
        "jax.numpy.tril_indices": {"n": 3, "k": 1, "m": 4},
        "jax.numpy.triu_indices_from": {"arr": m, "k": 1},
        "jax.numpy.tril_indices_from": {"arr": m, "k": 1},
        "jax.numpy.diag_indices": {"n": 3, "ndim": 2},
        "jax.numpy.vander": {"x": x, "N": 3},
        "jax.nn.one_hot": {"x": jnp.arange(3), "num_classes": 3, "axis": 0},
        "jax.lax.full": {"shape": (2,), "fill_value": 1.0},
        "jax.lax.full_like": {"x": x, "fill_value": 1.0, "shape": (2,)},
        "jax.lax.iota": {"dtype": jnp.int32, "size": 3},
        "jax.lax.scan": {
            "f": lambda c, _: (c, c), "init": 0.0, "xs": None, "length": 3, "reverse": True, "unroll": 2,
        },
        "jax.lax.fori_loop": {
            "lower": 0, "upper": 3, "body_fun": lambda i, c: c + 1.0, "init_val": 0.0, "unroll": 2,
        },
        **{f"jax.lax.{f}": {"operand": m, "axis": 1, "reverse": True} for f in ("cumsum", "cumprod", "cummax", "cummin")},
        "jax.numpy.round": {"a": x, "decimals": 1},
        "equinox.partition": {"pytree": (x, m), "filter_spec": (True, False)},
        "equinox.filter": {"pytree": (x, m), "filter_spec": (True, False)},
        "equinox.internal.while_loop": {
            "cond_fun": lambda c: c < 3, "body_fun": lambda c: c + 1, "init_val": 0, "max_steps": 5,
            "kind": "checkpointed",
        },
        "diffrax.diffeqsolve": _diffeqsolve_sample(),
        "jax.lax.broadcasted_iota": {"dtype": jnp.int32, "shape": (2, 3), "dimension": 1},
        "jax.numpy.reshape": {"a": x, "shape": (2, 3)},
        "jax.numpy.broadcast_to": {"array": x, "shape": (2, 6)},
        "jax.numpy.resize": {"a": x, "new_shape": (4,)},
        "jax.numpy.tile": {"A": x, "reps": 2},
        "jax.numpy.pad": {"array": x, "pad_width": ((0, 2),)},
        "jax.numpy.split": {"ary": x, "indices_or_sections": 2, "axis": 0},
        "jax.numpy.array_split": {"ary": x, "indices_or_sections": 2, "axis": 0},
        "jax.numpy.hsplit": {"ary": x, "indices_or_sections": 2},
        "jax.numpy.vsplit": {"ary": m, "indices_or_sections": 3},
        "jax.numpy.diff": {"a": m, "n": 1, "axis": 1},
        "jax.image.resize": {"image": x, "shape": (3,), "method": "linear"},
        "jax.lax.reshape": {"operand": m, "new_sizes": (9,), "dimensions": (1, 0)},
        "jax.lax.broadcast": {"operand": x, "sizes": (2,)},
        "jax.lax.broadcast_in_dim": {"operand": x, "shape": (2, 6), "broadcast_dimensions": (1,)},
        "jax.lax.pad": {"operand": x, "padding_value": 0.0, "padding_config": ((0, 2, 0),)},
        "jax.lax.dynamic_slice": {"operand": x, "start_indices": (1,), "slice_sizes": (2,)},
        "jax.lax.dynamic_slice_in_dim": {"operand": m, "start_index": 1, "slice_size": 2, "axis": 1},
        "jax.lax.dynamic_index_in_dim": {"operand": m, "index": 1, "axis": 1},
        "jax.lax.slice": {"operand": x, "start_indices": (1,), "limit_indices": (5,), "strides": (2,)},
        "jax.lax.slice_in_dim": {"operand": m, "start_index": 1, "limit_index": 3, "stride": 1, "axis": 1},
        "jax.lax.index_in_dim": {"operand": m, "index": 1, "axis": 1},
        "jax.numpy.nonzero": {"a": x, "size": 3},
        "jax.numpy.argwhere": {"a": x, "size": 3},
        "jax.numpy.flatnonzero": {"a": x, "size": 3},
        "jax.numpy.where": ((x > 2,), {"size": 3}),
        "jax.numpy.unique": {"ar": m, "axis": 1, "size": 2},
        "jax.numpy.bincount": {"x": jnp.arange(3), "minlength": 4, "length": 5},
        "jax.numpy.fft.fft": {"a": m, "n": 4, "axis": 1},
        "jax.numpy.fft.ifft": {"a": m, "n": 4, "axis": 1},
        "jax.numpy.fft.rfft": {"a": m, "n": 4, "axis": 1},
        "jax.numpy.fft.irfft": {"a": m, "n": 4, "axis": 1},
        "jax.lax.top_k": {"operand": m, "k": 2, "axis": 0},
        "jax.numpy.partition": {"a": m, "kth": 1, "axis": 0},
        "jax.numpy.argpartition": {"a": m, "kth": 1, "axis": 0},
        "jax.numpy.tril": {"m": m, "k": 1},
        "jax.numpy.triu": {"m": m, "k": 1},
        "jax.numpy.diag": {"v": x, "k": 1},
        "jax.numpy.diagflat": {"v": x, "k": 1},
        "jax.numpy.diagonal": {"a": jnp.ones((2, 3, 4)), "offset": 1, "axis1": 1, "axis2": 2},
        "jax.random.split": {"key": key, "num": 3},
        "jax.random.normal": {"key": key, "shape": (2,)},
        "jax.random.uniform": {"key": key, "shape": (2,)},
        "jax.random.bits": {"key": key, "shape": (2,)},
        "jax.random.exponential": {"key": key, "shape": (2,)},
        "jax.random.laplace": {"key": key, "shape": (2,)},
        "jax.random.gumbel": {"key": key, "shape": (2,)},
        "jax.random.cauchy": {"key": key, "shape": (2,)},
        "jax.random.logistic": {"key": key, "shape": (2,)},
        "jax.random.rademacher": {"key": key, "shape": (2,)},
        "jax.random.maxwell": {"key": key, "shape": (2,)},
        "jax.random.randint": {"key": key, "shape": (2,), "minval": 0, "maxval": 5},
        "jax.random.bernoulli": {"key": key, "p": 0.5, "shape": (2,)},
        "jax.random.gamma": {"key": key, "a": 1.0, "shape": (2,)},
        "jax.random.loggamma": {"key": key, "a": 1.0, "shape": (2,)},
        "jax.random.poisson": {"key": key, "lam": 1.0, "shape": (2,)},
        "jax.random.dirichlet": {"key": key, "alpha": jnp.ones(3), "shape": (2,)},
        "jax.random.chisquare": {"key": key, "df": 2.0, "shape": (2,)},
        "jax.random.t": {"key": key, "df": 2.0, "shape": (2,)},
        "jax.random.pareto": {"key": key, "b": 2.0, "shape": (2,)},
        "jax.random.geometric": {"key": key, "p": 0.5, "shape": (2,)},
        "jax.random.rayleigh": {"key": key, "scale": 1.0, "shape": (2,)},
        "jax.random.wald": {"key": key, "mean": 1.0, "shape": (2,)},
        "jax.random.lognormal": {"key": key, "sigma": 1.0, "shape": (2,)},
        "jax.random.generalized_normal": {"key": key, "p": 2.0, "shape": (2,)},
        "jax.random.choice": {"key": key, "a": m, "shape": (2,), "axis": 1},
        "jax.random.beta": {"key": key, "a": 1.0, "b": 1.0, "shape": (2,)},
        "jax.random.binomial": {"key": key, "n": 5.0, "p": 0.5, "shape": (2,)},
        "jax.random.f": {"key": key, "dfnum": 2.0, "dfden": 2.0, "shape": (2,)},
        "jax.random.truncated_normal": {"key": key, "lower": -1.0, "upper": 1.0, "shape": (2,)},
        "jax.random.multivariate_normal": {"key": key, "mean": jnp.zeros(2), "cov": jnp.eye(2), "shape": (3,)},
        "jax.random.double_sided_maxwell": {"key": key, "loc": 0.0, "scale": 1.0, "shape": (2,)},
        "jax.random.weibull_min": {"key": key, "scale": 1.0, "concentration": 1.0, "shape": (2,)},
        "jax.random.triangular": {"key": key, "left": 0.0, "mode": 0.5, "right": 1.0, "shape": (2,)},
        "jax.random.multinomial": {"key": key, "n": 5.0, "p": jnp.ones(3) / 3, "shape": (2, 3)},
        "jax.random.ball": {"key": key, "d": 2, "shape": (3,)},
        "jax.random.orthogonal": {"key": key, "n": 3, "shape": (2,), "m": 2},
        "jax.random.categorical": {"key": key, "logits": m, "axis": 0, "shape": (2, 3)},
        "jax.random.permutation": {"key": key, "x": m, "axis": 1},
        "jax.numpy.sum": keep,
        "jax.numpy.mean": keep,
        "jax.numpy.max": keep,
        "jax.numpy.min": keep,
        "jax.numpy.amax": reduce,
        "jax.numpy.amin": reduce,
        "jax.numpy.prod": keep,
        "jax.numpy.std": keep,
        "jax.numpy.var": keep,
        "jax.numpy.median": reduce,
        "jax.numpy.average": reduce,
        "jax.numpy.nansum": reduce,
        "jax.numpy.nanmean": reduce,
        "jax.numpy.count_nonzero": reduce,
        "jax.numpy.argmax": reduce,
        "jax.numpy.argmin": reduce,
        "jax.numpy.any": keep,
        "jax.numpy.all": keep,
        "jax.numpy.cumsum": reduce,
        "jax.numpy.cumprod": reduce,
        "jax.numpy.sort": {**reduce, "descending": True},
        "jax.numpy.argsort": {**reduce, "descending": True},
        "jax.numpy.flip": {"m": m, "axis": 1},
        "jax.numpy.squeeze": {"a": jnp.ones((3, 1)), "axis": 1},
        "jax.numpy.expand_dims": {"a": m, "axis": 1},
        "jax.numpy.concatenate": {"arrays": [m, m], "axis": 1},
        "jax.numpy.stack": {"arrays": [m, m], "axis": 1},
        "jax.numpy.transpose": {"a": jnp.ones((2, 3)), "axes": (1, 0)},
        "jax.numpy.moveaxis": {"a": jnp.ones((2, 3)), "source": 1, "destination": 0},
        "jax.numpy.swapaxes": {"a": jnp.ones((2, 3)), "axis1": 1, "axis2": 0},
        "jax.numpy.roll": {"a": m, "shift": 1, "axis": 1},
        "jax.numpy.take": {"a": m, "indices": jnp.array([0, 2]), "axis": 1},
        "jax.numpy.take_along_axis": {"arr": m, "indices": jnp.zeros((3, 1), int), "axis": 1},
        "jax.numpy.linalg.norm": {"x": m, "axis": 1, "keepdims": True},
        "jax.nn.softmax": {"x": m, "axis": 1},
        "jax.nn.log_softmax": {"x": m, "axis": 1},
        "jax.nn.logsumexp": reduce,
        "jax.scipy.special.logsumexp": reduce,
        "jax.lax.expand_dims": {"array": m, "dimensions": (1,)},
        "jax.lax.squeeze": {"array": jnp.ones((3, 1)), "dimensions": (1,)},
        "jax.lax.rev": {"operand": m, "dimensions": (1,)},
        "jax.lax.transpose": {"operand": jnp.ones((2, 3)), "permutation": (1, 0)},
        **{"jax.Array." + method: {"self": m, "axis": 1} for method in (
            "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all",
            "cumsum", "cumprod", "sort", "argsort",
        )},
        "jax.Array.squeeze": {"self": jnp.ones((3, 1)), "axis": 1},
        "jax.Array.swapaxes": {"self": jnp.ones((2, 3)), "axis1": 1, "axis2": 0},
        "jax.Array.take": {"self": m, "indices": jnp.array([0, 2]), "axis": 1},
        "jax.Array.diagonal": {"self": jnp.ones((2, 3, 4)), "offset": 1, "axis1": 1, "axis2": 2},
        "jax.Array.repeat": {"self": x, "repeats": 2, "axis": 0},
        "jax.numpy.repeat": {"a": x, "repeats": 2, "axis": 0},
    }


def test_every_function_has_a_sample():
    jax = pytest.importorskip("jax")
    assert set(samples(jax, jax.numpy)) == set(CONCRETE_ARGUMENTS)


@pytest.mark.parametrize("name,index,keyword", ENTRIES)
def test_entry_names_the_parameter_of_jax_signature(name, index, keyword):
    pytest.importorskip("jax")
    parameters = inspect.signature(resolve(name)).parameters
    if index is None:
        assert parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY
    else:
        parameter = list(parameters.values())[index]
        assert (parameter.name, parameter.kind) == (keyword, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@pytest.mark.parametrize("name,index,keyword", ENTRIES)
def test_jax_rejects_a_traced_value_there(name, index, keyword):
    jax = pytest.importorskip("jax")
    function = resolve(name)
    sample = samples(jax, jax.numpy)[name]
    positional, keywords = sample if isinstance(sample, tuple) else ((), sample)
    if name.startswith("jax.Array."):
        # `jax.Array` declares its methods abstract: call the array's own.
        method = name.rpartition(".")[2]

        def function(self, **arguments):
            return getattr(self, method)(**arguments)

    def call(zero, traced: bool):
        # Every Python int of the argument becomes a traced int of the same value.
        value = keywords[keyword]
        if traced:
            value = jax.tree.map(lambda leaf: leaf + zero if isinstance(leaf, int) else leaf, value)
        return function(*positional, **{**keywords, keyword: value})

    jax.jit(lambda zero: call(zero, traced=False))(0)
    with pytest.raises(Exception) as info:
        jax.jit(lambda zero: call(zero, traced=True))(0)
    assert not isinstance(info.value, AssertionError)
