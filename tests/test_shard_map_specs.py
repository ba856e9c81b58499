"""`jax.shard_map` hands an argument whose `in_specs` entry is `None` to the function as it is,
a static Python value (`P()` replicates an array, traced): a Python test of it is fine. JAX shows
both."""

from __future__ import annotations

from quiet_and_reported import case_tests

SPECS = """
import functools

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

def run(mesh, a, n):
    @functools.partial(jax.shard_map, mesh=mesh, in_specs=(P(), SPEC), out_specs=P(), check_vma=False)
    def scale(a, n):
        if n > 1:
            return a * 2
        return a

    return scale(a, n)

def demo():
    return run(jax.make_mesh((1,), ("x",)), jnp.ones(4), 3)
"""

QUIET = {"a count passed with a None spec": SPECS.replace("SPEC", "None")}
REPORTED = {"a count replicated with P()": (SPECS.replace("SPEC", "P()"), "JAX101", "TracerBoolConversionError")}

(
    test_static_specs_stay_quiet,
    test_replicated_specs_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)
