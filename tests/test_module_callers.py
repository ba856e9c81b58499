"""A parameter of a framework module's `__call__` holds what its callers pass: when every call of
the module in view passes a Python value (a shape, a literal, a string), the parameter is one,
however it is annotated. One call with an array, an instance handed to other code, or no call
in view leaves it traced. JAX shows both sides."""

from __future__ import annotations

import ast
import textwrap

from jaxlint.analysis.tracing.instance_calls import python_valued_parameters
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING
from jaxlint.analysis.tracing.tracing import discover
from quiet_and_reported import case_tests

HEADER = """
from functools import partial
from typing import Any, Literal

import flax.linen as nn
import jax
import jax.numpy as jnp
"""

SKIP = """
class Skip(nn.Module):
    @nn.compact
    def __call__(self, x, out_shape):
        if x.shape != out_shape:
            x = nn.Conv(out_shape[-1], (1, 1))(x)
        return x
"""

RUN_BLOCK = """
def demo():
    block = Block(8)
    x = jnp.ones((1, 6, 6, 3))
    variables = jax.jit(block.init)(jax.random.key(0), x)
    return jax.jit(block.apply)(variables, x)
"""

# The compact submodule is called with the shape of an array.
COMPACT = HEADER + SKIP + """
class Block(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        y = nn.Conv(self.features, (3, 3))(x)
        return y + Skip()(x, y.shape)
""" + RUN_BLOCK

# A submodule bound in `setup`, called through the attribute, the shape passed by keyword.
SETUP = HEADER + SKIP + """
class Block(nn.Module):
    features: int

    def setup(self):
        self.conv = nn.Conv(self.features, (3, 3))
        self.skip = Skip()

    def __call__(self, x):
        y = self.conv(x)
        return y + self.skip(x, out_shape=y.shape)
""" + RUN_BLOCK

# The class is a field's default (overridden in a subclass) and reached through `partial`.
CLASS_FIELD = HEADER + SKIP + """
class WideSkip(Skip):
    pass

class Block(nn.Module):
    features: int
    skip_cls: Any = Skip

    @nn.compact
    def __call__(self, x):
        skip_cls = partial(self.skip_cls)
        y = nn.Conv(self.features, (3, 3))(x)
        return y + skip_cls()(x, y.shape)

class WideBlock(Block):
    skip_cls: Any = WideSkip
""" + RUN_BLOCK

# A shape and a string, the parameters unannotated.
SHAPE_AND_MODE = HEADER + """
class LearnedPos(nn.Module):
    @nn.compact
    def __call__(self, shape, mode):
        pe = self.param("pe", nn.initializers.zeros, shape[-2:])
        if mode != "decode":
            pe = pe * 2
        return jnp.broadcast_to(pe, shape)

class AddPos(nn.Module):
    @nn.compact
    def __call__(self, x):
        return x + LearnedPos()(x.shape, "train")

def demo():
    x = jnp.ones((2, 4, 8))
    params = AddPos().init(jax.random.PRNGKey(0), x)
    return jax.jit(AddPos().apply)(params, x)
"""

SCALE = HEADER + """
class Scale(nn.Module):
    @nn.compact
    def __call__(self, x, factor):
        if factor > 1:
            return x * factor
        return x
"""

RUN_NET = """
def demo():
    x = jnp.ones(3)
    return jax.jit(Net().apply)({}, x)
"""

# Every call passes a literal.
LITERALS = SCALE + """
class Net(nn.Module):
    @nn.compact
    def __call__(self, x):
        return Scale()(x, 2) + Scale()(x, 1)
""" + RUN_NET

QUANTILES = HEADER + """
class QuantileNet(nn.Module):
    @nn.compact
    def __call__(self, x, num_quantiles, rng):
        tiled = jnp.tile(x, [num_quantiles, 1])
        quantiles = jax.random.uniform(rng, shape=[num_quantiles, 1])
        return nn.Dense(4)(tiled * quantiles)

net = QuantileNet()

@partial(jax.jit, static_argnums=(2,))
def quantile_values(params, x, num_quantiles, rng):
    return net.apply(params, x, num_quantiles=num_quantiles, rng=rng)

def demo():
    x = jnp.ones((8,))
    k_init, k_rng, k_apply = jax.random.split(jax.random.key(0), 3)
    params = net.init(k_init, x, num_quantiles=3, rng=k_rng)
    return quantile_values(params, x, 5, k_apply)
"""

# `apply` given a literal, the shape parameter read by NumPy.
NOISY = HEADER + """
import numpy as onp

class Noisy(nn.Module):
    @nn.compact
    def __call__(self, x, features):
        eps = onp.zeros(shape=(x.shape[0], features), dtype=onp.float32)
        return x @ (self.param("w", nn.initializers.zeros, (x.shape[0], features)) + eps)

noisy = Noisy()

@jax.jit
def noisy_out(params, x):
    return noisy.apply(params, x, features=16)

def demo():
    x = jnp.ones((8,))
    return noisy_out(noisy.init(jax.random.key(0), x, features=16), x)
"""

# Sizes unpacked from a shape, passed to a compact submodule that asserts on them and reshapes.
MERGE = HEADER + """
class Merge(nn.Module):
    @nn.compact
    def __call__(self, x, h, w):
        b, l, c = x.shape
        assert l == h * w, "length mismatch"
        return nn.Dense(8)(x.reshape(b, h, w, c))

class Net(nn.Module):
    @nn.compact
    def __call__(self, img):
        b, h, w, c = img.shape
        return Merge()(img.reshape(b, h * w, c), h, w)

def demo():
    x = jnp.ones((1, 4, 4, 3))
    variables = jax.jit(Net().init)(jax.random.key(0), x)
    return jax.jit(Net().apply)(variables, x)
"""

QUIET = {
    "apply-given-a-static-argument": QUANTILES,
    "apply-given-a-literal": NOISY,
    "compact-submodule-given-a-shape": COMPACT,
    "setup-submodule-given-a-shape-by-keyword": SETUP,
    "class-field-through-partial": CLASS_FIELD,
    "shape-and-mode-unannotated": SHAPE_AND_MODE,
    "literals": LITERALS,
    "compact-submodule-given-unpacked-sizes": MERGE,
}

REPORTED = {
    # One of the calls passes an array.
    "one-call-with-an-array": (
        SCALE + """
class Net(nn.Module):
    @nn.compact
    def __call__(self, x):
        return Scale()(x, 2) + Scale()(x, jnp.max(x))
""" + RUN_NET,
        "JAX101",
        "TracerBoolConversionError",
    ),
    # The instance is handed to a function, which calls it with an array.
    "instance-handed-to-other-code": (
        SCALE + """
def run(layer, x):
    return layer(x, jnp.max(x))

class Net(nn.Module):
    @nn.compact
    def __call__(self, x):
        return Scale()(x, 2) + run(Scale(), x)
""" + RUN_NET,
        "JAX101",
        "TracerBoolConversionError",
    ),
    # A name bound to the instance is handed to a function, which calls it with an array.
    "named-instance-handed-to-other-code": (
        SCALE + """
def run(layer, x):
    return layer(x, jnp.max(x))

class Net(nn.Module):
    @nn.compact
    def __call__(self, x):
        layer = Scale()
        return layer(x, 2) + run(layer, x)
""" + RUN_NET,
        "JAX101",
        "TracerBoolConversionError",
    ),
    # Called in view with a literal, and applied by the framework with an array.
    "applied-as-well-as-called": (
        LITERALS.replace("return jax.jit(Net().apply)({}, x)", "return jax.jit(Scale().apply)({}, x, jnp.max(x))"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    # `apply` given a parameter the jit traces.
    "apply-given-a-traced-argument": (
        QUANTILES.replace("@partial(jax.jit, static_argnums=(2,))", "@jax.jit"),
        "JAX108",
        "TypeError",  # the shape of `jnp.tile` holds a tracer
    ),
    # `apply` given a traced size, read by NumPy.
    "apply-given-a-traced-size": (
        NOISY.replace("def noisy_out(params, x):", "def noisy_out(params, x, features):")
        .replace("features=16)\n\ndef", "features=features)\n\ndef")
        .replace("features=16), x)", "features=16), x, 16)"),
        "JAX107",
        "TracerIntegerConversionError",
    ),
    # The sizes unpacked from an array's values, not from its shape.
    "compact-submodule-given-unpacked-values": (
        MERGE.replace("b, h, w, c = img.shape", "b, h, w, c = jnp.asarray(img.shape)"),
        "JAX108",
        "TypeError",  # the reshape's shape holds tracers
    ),
    # One of the sizes passed on as an array.
    "compact-submodule-given-an-array-size": (
        MERGE.replace("h * w, c), h, w)", "h * w, c), jnp.asarray(h), w)"),
        "JAX104",
        "TracerBoolConversionError",
    ),
    # No call of the module in view: its caller is the framework's `apply`.
    "no-call-in-view": (
        SCALE + """
def demo():
    x = jnp.ones(3)
    return jax.jit(Scale().apply)({}, x, jnp.max(x))
""",
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_parameters_every_caller_gives_a_python_value_stay_quiet,
    test_parameters_given_an_array_or_out_of_view_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)


def _python_valued(text: str, cls: str = "Skip") -> frozenset[str]:
    tree = ast.parse(textwrap.dedent(text))
    names = Names(tree, spelling=SPELLING)
    method = next(
        node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == cls
        for node in node.body if isinstance(node, ast.FunctionDef) and node.name == "__call__"
    )
    return python_valued_parameters(method, names, discover(names).roots)


def test_the_parameters_every_call_passes_a_python_value():
    assert _python_valued(COMPACT) == {"out_shape"}
    assert _python_valued(SETUP) == {"out_shape"}
    assert _python_valued(CLASS_FIELD) == {"out_shape"}
    assert _python_valued(SHAPE_AND_MODE, "LearnedPos") == {"shape", "mode"}


def test_a_call_that_unpacks_its_arguments_decides_nothing():
    assert _python_valued(COMPACT.replace("Skip()(x, y.shape)", "Skip()(*(x, y.shape))")) == frozenset()
    assert _python_valued(COMPACT.replace("Skip()(x, y.shape)", "Skip()(x, **{'out_shape': y.shape})")) == frozenset()


def test_shapes_and_names_bound_to_them_are_python_values_and_parameters_are_not():
    shape_entries = "Skip()(x, (y.shape[0], *y.shape[1:-1], y.shape[-1] * 2))"
    assert _python_valued(COMPACT.replace("Skip()(x, y.shape)", shape_entries)) == frozenset()  # a starred entry
    assert _python_valued(COMPACT.replace("Skip()(x, y.shape)", "Skip()(x, (y.shape[0], y.shape[-1] * 2))")) == {"out_shape"}
    bound = COMPACT.replace("return y + Skip()(x, y.shape)", "s = y.shape[1:]\n        return y + Skip()(x, s)")
    assert _python_valued(bound) == {"out_shape"}
    assert _python_valued(COMPACT.replace("Skip()(x, y.shape)", "Skip()(x, self.features)")) == frozenset()
    forwarded = COMPACT.replace("def __call__(self, x):", "def __call__(self, x, s):").replace("y.shape)", "s)")
    assert _python_valued(forwarded) == frozenset()


def test_names_unpacked_from_a_shape_are_python_values_unless_bound_otherwise_too():
    assert _python_valued(MERGE, "Merge") == {"h", "w"}
    looped = MERGE.replace("        return Merge()", "        for h in range(2):\n            pass\n        return Merge()")
    assert _python_valued(looped, "Merge") == {"w"}
    rebound = MERGE.replace("        return Merge()", "        h = jnp.max(img)\n        return Merge()")
    assert _python_valued(rebound, "Merge") == {"w"}


def test_a_call_through_self_inside_a_nested_function_counts():
    text = SETUP.replace(
        "return y + self.skip(x, out_shape=y.shape)",
        "twice = lambda h: self.skip(h, jnp.max(h))\n        return twice(y) + self.skip(x, out_shape=y.shape)",
    )
    assert _python_valued(text) == frozenset()


def test_a_class_handed_to_other_code_decides_nothing():
    listed = COMPACT.replace("return y + Skip()(x, y.shape)", "extra = nn.Sequential([Skip()])\n        return y + Skip()(x, y.shape)")
    assert _python_valued(listed) == frozenset()
    tested = COMPACT.replace("return y + Skip()(x, y.shape)", "assert not isinstance(y, Skip)\n        return y + Skip()(x, y.shape)")
    assert _python_valued(tested) == {"out_shape"}


def test_apply_and_init_pass_their_later_arguments_to_call():
    assert _python_valued(QUANTILES, "QuantileNet") == {"num_quantiles"}
    assert _python_valued(NOISY, "Noisy") == {"features"}
    # a parameter the jit traces, or a jit-static parameter of another function, is no Python value
    assert _python_valued(QUANTILES.replace("static_argnums=(2,)", "static_argnums=(0,)"), "QuantileNet") == frozenset()


def test_apply_of_another_method_decides_nothing():
    other = NOISY.replace("features=16)\n\ndef", "features=16, method=Noisy.__call__)\n\ndef")
    assert _python_valued(other, "Noisy") == frozenset()
    unpacked = NOISY.replace("features=16)\n\ndef", "**{'features': 16})\n\ndef")
    assert _python_valued(unpacked, "Noisy") == frozenset()
    own = NOISY.replace("noisy = Noisy()", "    def apply(self, v, x, features):\n        return x\n\nnoisy = Noisy()")
    assert _python_valued(own, "Noisy") == frozenset()


def test_classes_reached_through_chains_of_names_and_fields_count():
    # `Alias = Skip`, a field bound to it, a field bound to an instance made through that: the
    # calls made through the chain decide, and so does handing a link of it to other code.
    chained = SETUP.replace("self.skip = Skip()", "self.make = Alias\n        self.skip = self.make()")
    chained = chained.replace("class Block(", "Alias = Skip\n\nclass Block(")
    assert _python_valued(chained) == {"out_shape"}
    through_array = chained.replace("out_shape=y.shape)", "out_shape=jnp.max(y))")
    assert _python_valued(through_array) == frozenset()
    handed = chained.replace("y = self.conv(x)", "y = self.conv(x)\n        extra = nn.Sequential([self.make])")
    assert _python_valued(handed) == frozenset()
