import haiku as hk
import jax.numpy as jnp
import numpy as np


class Positions:
    def __call__(self, length):
        return jnp.asarray(np.arange(length), jnp.float32)  # JAX107


class RelativePositions(hk.Module):
    def __call__(self, qlen, klen):
        relative = np.arange(klen)[None, :] - np.arange(qlen)[:, None]
        return jnp.asarray(np.minimum(np.abs(relative), 8))
