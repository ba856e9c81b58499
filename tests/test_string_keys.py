"""A traced value read with a string key is a dict of a pytree: JAX does not index an array by a
string. Iterating what the key holds binds its keys, so storing under them into a dict the code
just made is no array update; what the key holds is still taken for an array leaf. JAX shows both
sides."""

from __future__ import annotations

import pytest

from quiet_and_reported import case_tests

# Multimodal training code: the label becomes a dict of one label per modality.
PER_MODALITY = """
import jax
import jax.numpy as jnp

@jax.jit
def train_step(batch):
    labels = batch["label"]
    batch["label"] = {}
    for modality in batch["inputs"]:
        batch["label"][modality] = labels
    batch["label"]["all"] = labels
    return sum(v.sum() for v in batch["label"].values())

def demo():
    batch = {"inputs": {"rgb": jnp.ones((2, 3)), "audio": jnp.ones((2, 4))}, "label": jnp.ones((2, 5))}
    return train_step(batch)
"""

LEAF = """
import jax
import jax.numpy as jnp

@jax.jit
def train_step(batch):
    STORE
    return batch

def demo():
    return train_step({"x": jnp.ones((2, 3)), "i": jnp.int32(1)})
"""

QUIET = {"stores-under-the-keys": PER_MODALITY}
REPORTED = {
    # What the key holds is still an array leaf where the code takes its truth.
    "truth-of-a-leaf": (
        LEAF.replace("STORE", 'batch = {**batch, "y": batch["x"] if batch["i"] else 0}'), "JAX101", "TracerBoolConversionError"
    ),
    "array-leaf-sliced": (LEAF.replace("STORE", 'batch["x"][:, 0] = 1.0'), "JAX401", "TypeError"),
    "array-leaf-at-a-traced-index": (LEAF.replace("STORE", 'batch["x"][batch["i"]] = 1.0'), "JAX401", "TypeError"),
}

(
    test_stores_under_string_keys_stay_quiet,
    test_array_leaves_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)


def test_jax_refuses_a_string_index():
    jax = pytest.importorskip("jax")
    with pytest.raises(TypeError, match="string indexing"):
        jax.jit(lambda x: x["label"])(jax.numpy.ones(3))
