"""Gradient transformations on parameter pytrees."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from sampleproj.model import Params


def global_norm(tree) -> jax.Array:
    return jnp.sqrt(sum(jnp.sum(leaf ** 2) for leaf in jax.tree_util.tree_leaves(tree)))


def clip_grads(grads: Params, limit: float) -> Params:
    norm = global_norm(grads)
    if norm > limit:
        return jax.tree_util.tree_map(lambda g: g * (limit / norm), grads)
    return grads


def sgd(params: Params, grads: Params, lr: float) -> Params:
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


class Tracker:
    """Keeps the losses seen in training."""

    def __init__(self):
        self.values = []

    def record(self, value):
        self.values.append(value)
