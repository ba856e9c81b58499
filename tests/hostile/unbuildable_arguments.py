"""A function whose arguments nothing can synthesise, and no entry point to run it."""
from typing import Callable

import jax


class Config:
    def __init__(self, depth):
        self.depth = depth


def apply(cfg: Config, fn: Callable, x):
    if jax.numpy.sum(x) > cfg.depth:  # expect: JAX101 inconclusive could not be built: no value for type Config
        return fn(x)
    return x
