"""A parameter declared an array of booleans (jaxtyping's `Bool[Array, "n"]`) that a jitted function
or a framework's traced method receives is a traced boolean mask: indexing with it has a
data-dependent shape (JAX110). Declared an array of numbers, the same index gathers."""

from __future__ import annotations

from quiet_and_reported import case_tests

PLAIN = """
import jax
import jax.numpy as jnp
from jaxtyping import Array, DTYPE


@jax.jit
def picked(x, mask: DTYPE[Array, "n"]):
    return x[mask].sum()


def demo():
    return picked(jnp.arange(4.0), jnp.array(INDEX))
"""

LINEN = """
import jax
import jax.numpy as jnp
import flax.linen as nn
from jaxtyping import Array, DTYPE


class Picked(nn.Module):
    @nn.compact
    def __call__(self, x, mask: DTYPE[Array, "n"]):
        return nn.Dense(1)(x[mask])


def demo():
    model, x, mask = Picked(), jnp.ones((4, 3)), jnp.array(INDEX)
    return jax.jit(model.apply)(model.init(jax.random.key(0), x, mask), x, mask)
"""


def _variant(text: str, dtype: str, index: str) -> str:
    return text.replace("DTYPE", dtype).replace("INDEX", index)


(
    test_integer_indices_stay_quiet,
    test_boolean_masks_are_reported,
    test_jax_gathers_integer_indices,
    test_jax_rejects_boolean_masks,
) = case_tests(
    {
        "plain-integers": _variant(PLAIN, "Int", "[0, 2]"),
        "linen-integers": _variant(LINEN, "Int", "[0, 2]"),
    },
    {
        "plain-booleans": (_variant(PLAIN, "Bool", "[True, False, True, False]"), "JAX110", "NonConcreteBooleanIndexError"),
        "linen-booleans": (_variant(LINEN, "Bool", "[True, False, True, False]"), "JAX110", "NonConcreteBooleanIndexError"),
    },
    needs=("jax", "flax", "jaxtyping"),
)
