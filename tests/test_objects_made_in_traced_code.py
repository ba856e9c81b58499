"""An instance of a plain class of the module that traced code makes itself: its methods are
followed with the caller's tracers (a Python branch on one raises), and what they store on
`self` stays in the trace (the object is made and dropped within it, so JAX407 stays quiet)."""

from __future__ import annotations

from quiet_and_reported import case_tests

ACCUMULATOR = """
import jax
import jax.numpy as jnp

class Accumulator:
    def __init__(self):
        self.total = 0.0

    def __call__(self, x):
        self.total = self.total + x
        return self.total

    def add(self, x):
        self.total = self.total + 2 * x

@jax.jit
def total(xs):
    acc = Accumulator()
    for i in range(xs.shape[0]):
        acc(xs[i])
        acc.add(xs[i])
    return acc.total

def demo():
    return total(jnp.ones(3))
"""

ADAPTER = """
import jax
import jax.numpy as jnp
from jax import lax

class Adapter:
    def __init__(self, target=0.44):
        self.target = target

    def adapt(self, sd, rate):
        if rate < self.target:
            return sd * 0.9
        return sd * 1.1

@jax.jit
def once(sd, rate):
    adapter = Adapter()
    return adapter.adapt(sd, rate)

def demo():
    return once(jnp.float32(1.0), jnp.float32(0.2))
"""

IN_SCAN_BODY = """
import jax
import jax.numpy as jnp
from jax import lax

class Adapter:
    def __init__(self, target=0.44):
        self.target = target

    def adapt(self, sd, rate):
        if rate < self.target:
            return sd * 0.9
        return sd * 1.1

def run(sd, rates):
    adapter = Adapter()

    def body(sd, rate):
        sd = adapter.adapt(sd, rate)
        return sd, sd

    return lax.scan(body, sd, rates)

def demo():
    return jax.jit(run)(jnp.float32(1.0), jnp.array([0.2, 0.6]))
"""

QUIET = {"object-made-in-jit-updates-itself": ACCUMULATOR}
REPORTED = {
    "method-of-an-object-made-in-jit": (ADAPTER, "JAX101", "TracerBoolConversionError"),
    "method-of-an-object-made-around-a-scan-body": (IN_SCAN_BODY, "JAX101", "TracerBoolConversionError"),
}

(
    test_an_object_made_in_the_trace_may_change_itself,
    test_its_methods_run_traced,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)
