"""Dropout and initialisation drawn from the same PRNG key: the two "random" draws are correlated.

Buggy on purpose: the key is consumed twice.
"""

import jax
import jax.numpy as jnp


def init_and_dropout(key, shape, rate=0.5):
    weights = jax.random.normal(key, shape)
    keep = jax.random.bernoulli(key, 1.0 - rate, shape)  # the bug: `key` was already used above
    return jnp.where(keep, weights / (1.0 - rate), 0.0)


def main():
    key = jax.random.key(0)
    print(init_and_dropout(key, (4, 4)))


if __name__ == "__main__":
    main()
