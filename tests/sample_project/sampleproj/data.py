"""Synthetic regression data and batching."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from sampleproj.model import Batch


class NoiseSource:
    """Draws noise for data augmentation from one stored key."""

    def __init__(self, key):
        self.key = key

    def draw(self, shape):
        return jax.random.normal(self.key, shape)


def make_data(key, n: int, dim: int) -> Batch:
    kx, ky = jax.random.split(key)
    x = jax.random.normal(kx, (n, dim))
    return Batch(x, x.sum(axis=1, keepdims=True) + 0.1 * jax.random.normal(ky, (n, 1)))


def augment(key, batch: Batch, rate: float) -> Batch:
    noise = 0.01 * jax.random.normal(key, batch.x.shape)
    keep = jax.random.bernoulli(key, 1.0 - rate, batch.x.shape)
    return Batch(jnp.where(keep, batch.x + noise, 0.0), batch.y)


def batches(data: Batch, size: int):
    """Consecutive batches; the last one is smaller when `size` does not divide the data."""
    for start in range(0, data.x.shape[0], size):
        yield Batch(data.x[start:start + size], data.y[start:start + size])
