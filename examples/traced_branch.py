"""A jitted loss with a Python `if` on a traced value: JAX raises TracerBoolConversionError.

Buggy on purpose: `jaxlint check examples/traced_branch.py` reports the `if`.
"""

import jax
import jax.numpy as jnp


@jax.jit
def clipped_loss(pred, target):
    err = jnp.mean((pred - target) ** 2)
    if err > 1.0:  # the bug: `err` is a tracer inside jit
        err = jnp.sqrt(err)
    return err


def main():
    pred = jnp.linspace(0.0, 2.0, 8)
    print(clipped_loss(pred, jnp.zeros(8)))


if __name__ == "__main__":
    main()
