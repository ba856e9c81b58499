"""Split the key once per use, so every draw gets fresh randomness. Clean."""

import jax
import jax.numpy as jnp


def init_and_dropout(key, shape, rate=0.5):
    init_key, dropout_key = jax.random.split(key)
    weights = jax.random.normal(init_key, shape)
    keep = jax.random.bernoulli(dropout_key, 1.0 - rate, shape)
    return jnp.where(keep, weights / (1.0 - rate), 0.0)


def sample_batches(key, n, batch):
    keys = jax.random.split(key, n)
    return [jax.random.uniform(keys[i], (batch,)) for i in range(n)]


def main():
    key = jax.random.key(0)
    key, sub = jax.random.split(key)
    print(init_and_dropout(sub, (4, 4)))
    print(sample_batches(key, 3, 2))


if __name__ == "__main__":
    main()
