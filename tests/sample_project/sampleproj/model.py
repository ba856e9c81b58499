"""The model: an MLP whose parameters are a pytree dataclass."""

from __future__ import annotations

from dataclasses import dataclass, field

import jax
import jax.numpy as jnp


@jax.tree_util.register_dataclass
@dataclass
class Params:
    weights: list
    biases: list


@jax.tree_util.register_dataclass
@dataclass
class Batch:
    x: jax.Array
    y: jax.Array


@dataclass(frozen=True)
class Config:
    sizes: tuple = (4, 8, 1)
    lr: float = 0.05
    clip: float = 1.0
    dropout: float = 0.1
    history: list = field(default_factory=list, compare=False, hash=False)


def init(key, cfg: Config) -> Params:
    keys = jax.random.split(key, len(cfg.sizes) - 1)
    weights = [jax.random.normal(k, (m, n)) / jnp.sqrt(m) for k, m, n in zip(keys, cfg.sizes, cfg.sizes[1:])]
    return Params(weights, [jnp.zeros(n) for n in cfg.sizes[1:]])


def apply(params: Params, x):
    for w, b in zip(params.weights[:-1], params.biases[:-1]):
        x = jax.nn.relu(x @ w + b)
    return x @ params.weights[-1] + params.biases[-1]
