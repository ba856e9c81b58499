"""A function handed to an optax function, by `learning_rate=`/`step_size=` or as its first
argument (`optax.sgd(schedule)`, `optax.scale_by_schedule(fn)`), runs inside the jitted step that
applies the transformation, on a traced step count: a Python `if` on it raises there."""

from __future__ import annotations

from quiet_and_reported import case_tests

_STEP = """
@jax.jit
def train_step(params, grads, opt_state):
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state

def demo():
    params = jnp.ones(2)
    return train_step(params, jnp.ones(2), tx.init(params))
"""

TRIANGULAR = """
import jax
import jax.numpy as jnp
import optax

def create_triangular_schedule(lr_min, lr_max, steps_per_cycle):
    top = (steps_per_cycle + 1) // 2

    def learning_rate_fn(step):
        cycle_step = step % steps_per_cycle
        if cycle_step < top:
            return lr_min + cycle_step / top * (lr_max - lr_min)
        return lr_max - (cycle_step - top) / top * (lr_max - lr_min)

    return learning_rate_fn

tx = optax.sgd(create_triangular_schedule(1e-3, 1e-1, 10))
""" + _STEP

STEP_SIZE_FN = """
import jax
import jax.numpy as jnp
import optax

def warmup(count):
    if count < 10:
        return -0.01
    return -0.1

tx = optax.scale_by_schedule(warmup)
""" + _STEP

WITH_WHERE = TRIANGULAR.replace(
    """        if cycle_step < top:
            return lr_min + cycle_step / top * (lr_max - lr_min)
        return lr_max - (cycle_step - top) / top * (lr_max - lr_min)""",
    """        up = lr_min + cycle_step / top * (lr_max - lr_min)
        down = lr_max - (cycle_step - top) / top * (lr_max - lr_min)
        return jnp.where(cycle_step < top, up, down)""",
)

CONSTANT_RATE = """
import jax
import jax.numpy as jnp
import optax

tx = optax.chain(optax.clip(1.0), optax.sgd(0.1))
""" + _STEP

QUIET = {"schedule-with-where": WITH_WHERE, "constant-rate": CONSTANT_RATE}
REPORTED = {
    "schedule-given-first-to-sgd": (TRIANGULAR, "JAX101", "TracerBoolConversionError"),
    "step-size-function-of-scale-by-schedule": (STEP_SIZE_FN, "JAX101", "TracerBoolConversionError"),
}

(
    test_schedules_without_python_branches_stay_quiet,
    test_a_python_branch_in_a_schedule_is_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED, needs=("jax", "optax"))
