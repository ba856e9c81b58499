"""A training loop that wraps a new lambda in `jax.jit` on every step: every step compiles again.

Buggy on purpose: the jitted function is rebuilt inside the loop.
"""

import jax
import jax.numpy as jnp


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def train(w, x, y, steps=5, lr=0.1):
    for _ in range(steps):
        step = jax.jit(lambda w: w - lr * jax.grad(loss)(w, x, y))  # the bug: a new function each step
        w = step(w)
    return w


def main():
    x = jnp.ones((8, 3))
    y = jnp.ones(8)
    print(train(jnp.zeros(3), x, y))


if __name__ == "__main__":
    main()
