"""Instances hashed by their fields, given as static arguments: an Equinox module, a Flax
`struct.dataclass`, a frozen dataclass hash the tuple of their fields, so a list, dict or set
field (or an array one) makes the call raise. `eqx.partition` keeps a container field in both
halves: the non-array half of a module with a dict field cannot be static either, while one
whose only unhashable fields are arrays can. The class in the same module or in another one,
the bug and its clean twin; JAX agrees on each."""

from __future__ import annotations

from module_matrix import Program, Twins, matrix_tests
from quiet_and_reported import case_tests

IMPORTS = "import functools\nimport jax\nimport jax.numpy as jnp\n"

# A configuration object given as a static argument (its class defined per framework below).
CONFIG_USE = """
@functools.partial(jax.jit, static_argnames="config")  {mark}
def apply(x, config):
    return x * config.scale

def demo():
    return apply(jnp.ones(2), config=Config({table}))
"""

CLASSES = {
    "equinox": (
        """
        import equinox as eqx

        class Model(eqx.Module):
            weight: jax.Array
            table: {kind}

            def __init__(self, table):
                self.weight = jnp.ones(2)
                self.table = table

            def __call__(self, x):
                return x * self.weight
        """,
        """
        import equinox as eqx

        def merge(params, static):
            return eqx.combine(params, static)(jnp.ones(2))

        def demo():
            params, static = eqx.partition(Model({table}), eqx.is_array)
            return jax.jit(merge, static_argnames="static")(params, static)  {mark}
        """,
        "equinox",
    ),
    "flax": (
        """
        from flax import struct

        @struct.dataclass
        class Config:
            sizes: {kind}
            scale: float = 2.0
        """,
        CONFIG_USE,
        "flax",
    ),
    "jax": (
        """
        import dataclasses

        @dataclasses.dataclass(frozen=True)
        class Config:
            sizes: {kind}
            scale: float = 2.0
        """,
        CONFIG_USE,
        "jax",
    ),
}
NAMES = {"equinox": ("Model",), "flax": ("Config",), "jax": ("Config",)}


def _twins() -> dict[str, Twins]:
    twins = {}
    for framework, (definitions, use, needs) in CLASSES.items():
        table = "{0: 0.5}" if framework == "equinox" else "[1, 2]"
        kind = "dict" if framework == "equinox" else "list"
        bug = Program(IMPORTS, definitions.replace("{kind}", kind), use.format(table=table, mark="# JAX302"), NAMES[framework])
        clean = Program(IMPORTS, definitions.replace("{kind}", "tuple"), use.format(table="(1, 2)", mark=""), NAMES[framework])
        twins[framework] = Twins(bug, clean, "ValueError", needs)
    return twins


(test_fields_hashed_across_frameworks_and_modules, test_jax_hashes_the_fields) = matrix_tests(_twins())


# The non-array half of a module whose only unhashable fields are arrays: they are None there.
ARRAY_FIELDS_ONLY = """
import jax
import jax.numpy as jnp
import equinox as eqx


class Linear(eqx.Module):
    weight: jax.Array
    bias: jax.Array
    activation: str = "tanh"

    def __call__(self, x):
        return jnp.tanh(x * self.weight + self.bias)


class Scaled(eqx.Module):
    scale: jax.Array
    name: str

    def __init__(self, scale):
        self.scale = scale
        self.name = "scaled"

    def __call__(self, x):
        return x * self.scale


def merge(params, static, x):
    return eqx.combine(params, static)(x)


def demo():
    linear_params, linear_static = eqx.partition(Linear(jnp.ones(2), jnp.zeros(2)), eqx.is_array)
    scaled = Scaled(jnp.ones(2))
    scaled_static = eqx.filter(scaled, eqx.is_array, inverse=True)
    run = jax.jit(merge, static_argnums=1)
    return run(linear_params, linear_static, jnp.ones(2)), run(eqx.filter(scaled, eqx.is_array), scaled_static, jnp.ones(2))
"""

(test_array_fields_only_stay_quiet, _, test_jax_hashes_the_non_array_halves, _) = case_tests(
    {"array-fields-only": ARRAY_FIELDS_ONLY}, {}, needs=("jax", "equinox")
)


# What `lax` control flow returns is JAX arrays, every part of it, even run eagerly: an `int`
# carried in comes back as an array. Declared static, it cannot be hashed.
SCAN_OUTPUT = """
import jax
import jax.numpy as jnp


def body(count, x):
    return count + 1, x * 2


def total(x, ys):
    return x + ys.sum()


def demo():
    count, ys = jax.lax.scan(body, 0, jnp.arange(3.0))
    return jax.jit(total, static_argnums=1)(count, ys)
"""

SCAN_COUNT_TRACED = SCAN_OUTPUT.replace("jax.jit(total, static_argnums=1)(count, ys)", "jax.jit(total)(count, ys)")

(test_scan_outputs_traced_stay_quiet, test_scan_outputs_static_are_reported, test_jax_traces_scan_outputs, test_jax_cannot_hash_scan_outputs) = (
    case_tests({"scan-outputs-traced": SCAN_COUNT_TRACED}, {"scan-outputs-static": (SCAN_OUTPUT, "JAX302", "ValueError")})
)


# A static parameter annotated with a class whose instances hash their fields: a declared array
# field makes every instance unhashable (`chex.dataclass` hashes as `dataclasses.dataclass`
# does); a field the hash leaves out (`field(hash=False)`, `compare=False`) does not count.
ANNOTATED_CLASS = """
import dataclasses
import functools
import chex
import jax
import jax.numpy as jnp


@chex.dataclass(frozen=True)
class Batch:
    x: chex.Array
    y: chex.Array


@dataclasses.dataclass(frozen=True)
class Config:
    scale: float = 2.0
    history: list = dataclasses.field(default_factory=list, compare=False, hash=False)


@functools.partial(jax.jit, static_argnames={static})
def step(batch: Batch, config: Config):
    return batch.x * config.scale


def demo():
    return step(Batch(x=jnp.ones(2), y=jnp.ones(2)), Config())
"""

(
    test_annotated_class_left_out_of_the_hash_stays_quiet,
    test_annotated_class_of_arrays_is_reported,
    test_jax_hashes_the_annotated_class,
    test_jax_cannot_hash_the_class_of_arrays,
) = case_tests(
    {"static-config-with-unhashed-list": ANNOTATED_CLASS.replace("{static}", '("config",)')},
    {"static-batch-of-arrays": (ANNOTATED_CLASS.replace("{static}", '("batch", "config")'), "JAX302", "ValueError")},
    needs=("jax", "chex"),
)
