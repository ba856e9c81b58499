import jax

import shop
from shop.ops import clip as clipping
from .ops.noise import perturb


@jax.jit
def train_step(x, key):
    y = clipping.clip(x, 1.0)
    y = perturb(key, y)
    if clipping.double(y).sum() > 0:  # JAX101
        y = -y
    return shop.overwrite_first(y)
