"""An instance of a class of the module that traced code makes itself: its `__init__` (and an
Equinox module's `__check_init__`) and its methods run with the caller's tracers (a Python branch
on one raises), and what they store on `self` stays in the trace (the object is made and dropped
within it, so JAX407 stays quiet)."""

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

_ADAPTER_CLASS = """
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
"""

ADAPTER = _ADAPTER_CLASS + """
@jax.jit
def once(sd, rate):
    adapter = Adapter()
    return adapter.adapt(sd, rate)

def demo():
    return once(jnp.float32(1.0), jnp.float32(0.2))
"""

IN_SCAN_BODY = _ADAPTER_CLASS + """
def run(sd, rates):
    adapter = Adapter()

    def body(sd, rate):
        sd = adapter.adapt(sd, rate)
        return sd, sd

    return lax.scan(body, sd, rates)

def demo():
    return jax.jit(run)(jnp.float32(1.0), jnp.array([0.2, 0.6]))
"""

INIT_BRANCH = """
import jax
import jax.numpy as jnp

class Scaler:
    def __init__(self, x, lo=0.0):
        if lo > 0:  # a Python value
            x = x - lo
        if x.sum() < lo:
            x = x * 2
        self.x = x

@jax.jit
def scaled(x):
    return Scaler(x).x

def demo():
    return scaled(jnp.ones(3))
"""

INIT_ON_PYTHON_VALUES = INIT_BRANCH.replace("        if x.sum() < lo:\n            x = x * 2\n", "")

CHECK_INIT = """
import equinox as eqx
import jax
import jax.numpy as jnp

class Potential(eqx.Module):
    m: jax.Array
    a: jax.Array

    def __check_init__(self):
        if (self.m <= 0) or (self.a <= 0):
            raise ValueError("m and a must be positive")

    def __call__(self, r):
        return -self.m * jnp.log1p(r / self.a) / r

@jax.jit
def compute(m, a, r):
    return Potential(m=m, a=a)(r)

def demo():
    return compute(jnp.array(1.0), jnp.array(2.0), jnp.array(3.0))
"""

CHECK_INIT_ON_SHAPES = CHECK_INIT.replace("if (self.m <= 0) or (self.a <= 0):", "if jnp.ndim(self.m) != 0:")

QUIET = {
    "object-made-in-jit-updates-itself": ACCUMULATOR,
    "init-branching-on-python-values": INIT_ON_PYTHON_VALUES,
    "check-init-on-shapes": CHECK_INIT_ON_SHAPES,
}
REPORTED = {
    "method-of-an-object-made-in-jit": (ADAPTER, "JAX101", "TracerBoolConversionError"),
    "method-of-an-object-made-around-a-scan-body": (IN_SCAN_BODY, "JAX101", "TracerBoolConversionError"),
    "init-branching-on-a-tracer": (INIT_BRANCH, "JAX101", "TracerBoolConversionError"),
    "equinox-check-init-on-a-tracer": (CHECK_INIT, "JAX101", "TracerBoolConversionError"),
}

(
    test_an_object_made_in_the_trace_may_change_itself,
    test_its_methods_run_traced,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED, needs=("jax", "equinox"))
