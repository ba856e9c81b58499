"""A parameter declared a JAX array, given a value the analysis cannot see by traced code, is
traced: what an object of unknown type returns there (`model.apply(...)`) is a tracer. So is
what a parameter declared a callable that returns a JAX array returns, called in traced code.
What the call is seen to pass wins, and types that admit concrete values (`np.ndarray`,
`ArrayLike`, `bool`) say nothing. JAX shows both sides."""

from __future__ import annotations

from quiet_and_reported import case_tests

# `model` is a parameter: the analysis does not know what its `apply` returns.
WHILE_LOOP = """
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

def top_two_gap(logits: ANNOTATION):
    ordered = np.sort(logits, axis=-1)
    return ordered[..., -1] - ordered[..., -2]

def decode(model, variables, x):
    def body(state):
        h, i = state
        logits = model.apply(variables, h)
        return h + top_two_gap(logits)[..., None], i + 1

    return lax.while_loop(lambda s: s[1] < 3, body, (x, 0))

def demo():
    model = nn.Dense(4)
    x = jnp.ones((2, 4))
    return decode(model, model.init(jax.random.PRNGKey(0), x), x)
"""

# A jitted step made by a factory; the helper is a method of the same class.
METHOD = """
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

class Scorer:
    def __init__(self, model):
        self.model = model

    def confidence(self, logits: Float[Array, "b v"] = None):
        return np.max(np.exp(logits), axis=-1)

    def make_step(self):
        @jax.jit
        def step(variables, x):
            return self.confidence(logits=self.model.apply(variables, x))
        return step

def demo():
    model = nn.Dense(4)
    x = jnp.ones((2, 4))
    return Scorer(model).make_step()(model.init(jax.random.PRNGKey(0), x), x)
"""

# Under jit, a helper annotated with a type that admits Python numbers, given an opaque Python
# number (a configuration value), and one given a Python literal: both are Python values.
PYTHON_VALUES = """
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

class Config:
    def get(self, name):
        return {"scale": 2.0}[name]

def scaled(x, factor: ArrayLike):
    if factor > 1:
        return x * factor
    return x

def shifted(x, by: jax.Array):
    return x + by if by > 0 else x

def make_step(config):
    @jax.jit
    def step(x):
        return shifted(scaled(x, config.get("scale")), 1.0)
    return step

def demo():
    return make_step(Config())(jnp.ones(3))
"""

# Under jit, a host table an opaque object returns, declared a NumPy array: a constant.
NUMPY_TABLE = """
import jax
import jax.numpy as jnp
import numpy as np

class Tables:
    def table(self):
        return np.arange(4.0)

def sorted_table(table: np.ndarray):
    return np.sort(table)[::-1]

def make_step(tables):
    @jax.jit
    def step(x):
        return x * sorted_table(tables.table())
    return step

def demo():
    return make_step(Tables())(jnp.ones(4))
"""

# Eager code: a JAX array an opaque call returns is concrete, NumPy takes it.
EAGER = """
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

def top_two_gap(logits: jax.Array):
    ordered = np.sort(logits, axis=-1)
    return ordered[..., -1] - ordered[..., -2]

def demo():
    model = nn.Dense(4)
    x = jnp.ones((2, 4))
    return top_two_gap(model.apply(model.init(jax.random.PRNGKey(0), x), x))
"""

# A search whose predicate the caller chooses: declared to return a JAX array, its result is a
# tracer in the loop body.
PREDICATE = """
from typing import Callable

import jax.numpy as jnp
import numpy as np
from jax import lax

def search(shape, predicate: Callable[[jnp.ndarray], RETURNS]):
    def body(i, bits):
        bit = jnp.left_shift(jnp.int32(1), 30 - i)
        satisfied = predicate(bits | bit)
        return bits | (jnp.int32(0) if satisfied else bit)

    return lax.fori_loop(0, 31, body, jnp.zeros(shape, jnp.int32))

def demo():
    return search((), lambda x: x > 1000)
"""

# Python values a declared callable returns: a layer's keep flag, a host table.
PYTHON_CALLABLES = """
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

def make_step(keep: Callable[[int], bool], table: Callable[[], np.ndarray]):
    @jax.jit
    def step(x):
        for layer in range(3):
            if keep(layer):
                x = x * 2
        return x + np.sort(table())[0] if table().sum() > 0 else x
    return step

def demo():
    return make_step(lambda layer: layer != 1, lambda: np.arange(3.0))(jnp.ones(3))
"""

QUIET = {
    "callables-of-python-values": PYTHON_CALLABLES,
    "array-like-and-a-python-literal": PYTHON_VALUES,
    "numpy-annotation": NUMPY_TABLE,
    "numpy-annotation-under-while-loop": WHILE_LOOP.replace("ANNOTATION", "np.ndarray").replace(
        "np.sort(logits, axis=-1)", "np.sort(np.asarray([[0.0, 1.0]]), axis=-1)"
    ),
    "eager-caller": EAGER,
}
REPORTED = {
    "jnp-ndarray-in-a-while-loop": (
        WHILE_LOOP.replace("ANNOTATION", "jnp.ndarray"), "JAX107", "TracerArrayConversionError"
    ),
    "jax-array-in-a-while-loop": (WHILE_LOOP.replace("ANNOTATION", "jax.Array"), "JAX107", "TracerArrayConversionError"),
    "jaxtyping-keyword-of-a-method": (METHOD, "JAX107", "TracerArrayConversionError"),
    "callable-returning-jnp-ndarray": (
        PREDICATE.replace("RETURNS", "jnp.ndarray"), "JAX101", "TracerBoolConversionError"
    ),
    "callable-returning-jax-array": (PREDICATE.replace("RETURNS", "jax.Array").replace(
        "import jax.numpy as jnp", "import jax\nimport jax.numpy as jnp"
    ), "JAX101", "TracerBoolConversionError"),
}

(
    test_python_values_and_concrete_arrays_stay_quiet,
    test_jax_array_parameters_given_unseen_values_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED, needs=("jax", "flax", "jaxtyping"))


def test_a_helper_in_another_module_is_reported_there(cli, make_files):
    # The only array the helper is given is one it cannot see: its declaration makes it traced.
    root = make_files({
        "pkg/__init__.py": "",
        "pkg/scores.py": """
            import jax.numpy as jnp
            import numpy as np

            def top_two_gap(logits: jnp.ndarray, weights):
                ordered = np.sort(logits, axis=-1)  # JAX107
                return (ordered[..., -1] - ordered[..., -2]) * weights
            """,
        "pkg/decode.py": """
            import jax
            from pkg.scores import top_two_gap

            def make_step(model):
                @jax.jit
                def step(variables, x):
                    return top_two_gap(model.apply(variables, x), 2.0)
                return step
            """,
    })
    findings = cli("check", "--no-cache", "--output-format", "json", str(root / "pkg")).json
    assert [(f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in findings] == [
        ("scores.py", 6, "JAX107")
    ]
