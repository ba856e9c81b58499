"""A static method called through `self` is given no instance: its first parameter is the first
argument. The sizes a module passes it from its fields are Python values; an array passed for a
size is still traced, and a plain method still binds `self`. JAX shows both sides."""

from __future__ import annotations

from quiet_and_reported import case_tests

# Block extraction as audio and local-attention layers write it: the block size is a field.
BLOCKS = """
import flax.linen as nn
import jax
import jax.numpy as jnp

class LocalBlocks(nn.Module):
    block_size: int = 2
    left: int = 1

    @staticmethod
    def _blocks(x, block_size: int, left: int):
        if block_size < 1:
            raise ValueError(f"{block_size=} must be at least 1")
        x = jnp.pad(x, ((0, 0), (left, block_size - 1)))
        frame = block_size + left
        count = (x.shape[1] - frame) // block_size + 1
        starts = jnp.arange(count) * block_size
        return jnp.take(x, starts[:, None] + jnp.arange(frame)[None, :], axis=1)

    @nn.compact
    def __call__(self, x):
        return CALL

def demo():
    x = jnp.ones((2, 6))
    return jax.jit(LocalBlocks().apply)({}, x)
"""

QUIET = {
    "fields-through-self": BLOCKS.replace("CALL", "self._blocks(x, self.block_size, max(0, self.left))"),
    "keywords-through-self": BLOCKS.replace("CALL", "self._blocks(x, left=self.left, block_size=self.block_size)"),
    "through-the-class": BLOCKS.replace("CALL", "LocalBlocks._blocks(x, self.block_size, self.left)"),
}
REPORTED = {
    # The size comes from the data: traced, whichever way the static method is called.
    "array-for-the-size": (
        BLOCKS.replace("CALL", "self._blocks(x, x.sum().astype(int), self.left)"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    # Without `@staticmethod` the instance takes the first parameter, the traced sum the block size.
    "plain-method": (
        BLOCKS.replace("    @staticmethod\n", "").replace("def _blocks(x,", "def _blocks(self, x,")
        .replace("CALL", "self._blocks(self.block_size, x.sum(), self.left)"),
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_static_method_sizes_from_fields_stay_quiet,
    test_traced_sizes_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED, needs=("jax", "flax"))
