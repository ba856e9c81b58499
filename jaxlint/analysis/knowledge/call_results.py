"""What calls the analysis knows without following them return: builtins, and methods of arrays and strings."""

from __future__ import annotations

import ast
from typing import Mapping, Sequence

from jaxlint.analysis.engine.lattice import (
    STATIC,
    TRACED,
    TRACED_ARRAY,
    UNKNOWN,
    Trace,
    Value,
    element_of,
    join_all,
    strip,
)
from jaxlint.analysis.knowledge import array_api, jax_api, random_api

BOOLEAN_FUNCTIONS = frozenset({
    "jax.numpy.isnan", "jax.numpy.isinf", "jax.numpy.isfinite", "jax.numpy.isneginf",
    "jax.numpy.isposinf", "jax.numpy.logical_and", "jax.numpy.logical_or",
    "jax.numpy.logical_not", "jax.numpy.logical_xor", "jax.numpy.greater",
    "jax.numpy.greater_equal", "jax.numpy.less", "jax.numpy.less_equal", "jax.numpy.equal",
    "jax.numpy.not_equal", "jax.numpy.isclose", "jax.numpy.signbit", "jax.numpy.isin",
    "jax.random.bernoulli", "jax.numpy.tril", "jax.lax.lt", "jax.lax.gt", "jax.lax.le",
    "jax.lax.ge", "jax.lax.eq", "jax.lax.ne", "equinox.internal.unvmap_any", "equinox.internal.unvmap_all",
})
_STRING_METHODS = frozenset({"format", "join", "replace", "split", "strip", "lower", "upper", "startswith", "endswith"})
_PYTHON_RESULT_METHODS = frozenset({"item", "tolist", "__bool__", "__int__", "__float__", "__index__"})
# Methods of arrays (and the `.at[...]` updates) that no pytree container has: a traced value
# sent one is an array, and so is what it returns.
_ARRAY_RESULT_METHODS = frozenset({
    "astype", "reshape", "sum", "mean", "max", "min", "set", "add", "multiply", "divide", "apply",
    "power", "dot", "transpose", "squeeze", "ravel", "flatten", "clip", "std", "var", "prod",
    "argmax", "argmin", "any", "all", "round", "cumsum", "conj", "swapaxes", "take",
})


def builtin_result(name: str, args: list[Value]) -> Value:
    """What a call of the builtin `name` returns, given its arguments' values."""
    if name == "range":
        return Value(join_all(args).trace if args else Trace.STATIC, element=strip(join_all(args)))
    if name == "enumerate":
        return Value(Trace.STATIC, element=Value(Trace.STATIC, items=(STATIC, element_of(args[0]) if args else UNKNOWN)))
    if name == "zip":
        elements = tuple(element_of(a) for a in args)
        return Value(Trace.STATIC, element=Value(join_all(elements).trace, items=elements))
    if name in ("int", "float", "bool", "complex", "len", "isinstance", "type", "str", "repr", "hash", "id", "callable"):
        return STATIC
    if name in ("min", "max", "abs", "round", "pow", "divmod", "sum"):
        values = [element_of(a) if len(args) == 1 and name in ("min", "max", "sum") else a for a in args]
        joined = join_all(values)
        return Value(joined.trace, array=joined.traced)
    if name == "map" and args:
        return Value(Trace.UNKNOWN)
    return UNKNOWN


def method_result(func: ast.Attribute, base: Value, args: Sequence[Value] = (), kwargs: Mapping[str, Value] = {}) -> Value:
    """What calling the method `func` of a value `base` with `args` and `kwargs` returns."""
    name = func.attr
    if name in jax_api.STATIC_METHODS or name in _PYTHON_RESULT_METHODS:
        return STATIC
    if isinstance(func.value, ast.Constant):
        return STATIC
    if name in random_api.SAMPLE_METHODS and _drawn_from_traced_key(args, kwargs):
        # A draw from a traced key (a distribution's `sample(seed=key)`): numbers the key decides.
        return TRACED_ARRAY if name == "sample" else TRACED
    if base.traced:
        if name == "items":
            return Value(Trace.TRACED, element=Value(Trace.TRACED, items=(STATIC, TRACED)))
        if name in ("values", "get", "pop", "copy") or (name == "replace" and not base.array):
            return TRACED  # `state.replace(...)`: a copy of a traced pytree dataclass
        # A value assumed to be an array but sent a method arrays lack is some other object.
        if name in _ARRAY_RESULT_METHODS or base.array and name in jax_api.ARRAY_METHODS:
            boolean = name in ("any", "all") or (base.boolean and name in ("reshape", "ravel", "flatten", "transpose", "squeeze", "set", "take"))
            return Value(Trace.TRACED, array=True, boolean=boolean, not_none=True)
        return UNKNOWN
    if name in _STRING_METHODS and base.trace is Trace.STATIC:
        return STATIC
    return UNKNOWN


def _drawn_from_traced_key(args: Sequence[Value], kwargs: Mapping[str, Value]) -> bool:
    """Whether a sampling method is given a traced key: as `seed=` (distrax, TensorFlow
    Probability) or another key keyword, or first (`dist.sample(key, shape)`)."""
    keys = [v for k, v in kwargs.items() if k == "seed" or k in random_api.KEY_KEYWORDS]
    return any(v.traced for v in keys) or bool(args) and args[0].traced


# Probabilistic-programming primitives, read inside a model an inference entry point traces
# (see `entry_points.py`): a latent site's draw and a parameter's value are arrays the sampler
# or optimiser passes in, traced wherever the model is; a site given an observation returns
# that observation, and a deterministic site returns the value it records.
# (qualified name) -> the position and keyword of the argument returned as it is, if any.
_MODEL_SITES: dict[str, tuple[int, str] | None] = {
    **{f"numpyro{module}.sample": (2, "obs") for module in ("", ".primitives")},
    **{f"numpyro{module}.deterministic": (1, "value") for module in ("", ".primitives")},
    **{f"numpyro{module}.param": None for module in ("", ".primitives")},
}


def model_site_result(callee: str, args: list[Value], keywords: dict[str, Value]) -> Value | None:
    """What a model's sample, param or deterministic site returns in traced code; None for other calls."""
    if callee not in _MODEL_SITES:
        return None
    passed = _MODEL_SITES[callee]
    if passed is not None:
        index, keyword = passed
        given = args[index] if index < len(args) else keywords.get(keyword)
        if given is not None and not (given.known and given.known[0] is None):
            return given
    return TRACED_ARRAY


def made_callable_result(maker: str | None, made: ast.Call, args: list[Value], traced_context: bool) -> Value | None:
    """What calling the callable a library call made (`jax.grad(f)(x)`, `nn.Dense(4)(x)`) returns,
    when what it was made from cannot be followed; None when unknown.

    Inside traced code, derivatives are traced whatever the function is: `grad` gives a pytree
    of traced gradients, `value_and_grad` the traced value with them (its auxiliary output,
    with `has_aux=True`, is the function's own and stays unknown). A layer applied to a traced
    input gives a traced array. A staging or batching transformation (`jit`, `vmap`, ...) of any
    callable returns JAX arrays: called in traced code with a tracer, a pytree of tracers."""
    if maker in jax_api.CONCRETE_TRANSFORMS and traced_context:
        aux = next((k.value for k in made.keywords if k.arg == "has_aux"), None)
        if aux is not None and not (isinstance(aux, ast.Constant) and isinstance(aux.value, bool)):
            return None
        has_aux = aux is not None and aux.value
        if maker.endswith("value_and_grad"):
            value = Value(Trace.TRACED, items=(TRACED_ARRAY, UNKNOWN)) if has_aux else TRACED_ARRAY
            return Value(Trace.TRACED, items=(value, TRACED))
        return Value(Trace.TRACED, items=(TRACED, UNKNOWN)) if has_aux else TRACED
    if maker in array_api.ARRAY_LAYERS and args and join_all(args).traced:
        return TRACED_ARRAY
    if maker in jax_api.OUTPUT_PRESERVING_TRANSFORMS and traced_context and args and join_all(args).traced:
        return TRACED  # a jit's or vmap's outputs are JAX arrays: inside a trace, given tracers, tracers
    return None


# JAX's example libraries (`jax.example_libraries`, `jax.experimental` before 0.2.25) hand back
# tuples of functions: an optimizer `(init_fun, update_fun, get_params)`, a stax layer or
# combinator `(init_fun, apply_fun)`.
_EXAMPLE_LIBRARIES = ("jax.example_libraries", "jax.experimental")
_OPTIMIZER_MODULES = frozenset(f"{root}.optimizers" for root in _EXAMPLE_LIBRARIES)
_STAX_MODULES = frozenset(f"{root}.stax" for root in _EXAMPLE_LIBRARIES)
_OPTIMIZERS = frozenset({
    "sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3",
})
_STAX_MAKERS = frozenset({
    "serial", "parallel", "Dense", "Conv", "Conv1DTranspose", "ConvTranspose", "GeneralConv",
    "GeneralConvTranspose", "BatchNorm", "Dropout", "MaxPool", "AvgPool", "SumPool", "FanOut", "shape_dependent",
})


def unpacked_function_result(maker: str | None, position: int, args: list[Value], traced_context: bool) -> Value | None:
    """What calling the function an example library made returns, for the function unpacked at
    `position` of the maker's result (`opt_init, opt_update, get_params = optimizers.adam(1e-3)`,
    `init_fun, apply_fun = stax.serial(...)`); None when unknown. In traced code, given a traced
    argument: an optimizer's functions return its state or parameters, pytrees of what they are
    given (traced); a layer's `apply_fun(params, inputs)` returns an array computed from them."""
    if maker is None or not traced_context or not args or not join_all(args).traced:
        return None
    module, _, name = maker.rpartition(".")
    if module in _OPTIMIZER_MODULES and name in _OPTIMIZERS:
        return TRACED
    if module in _STAX_MODULES and name in _STAX_MAKERS and position == 1:
        return TRACED_ARRAY
    return None
