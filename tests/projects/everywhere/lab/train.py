import jax

from lab import layers, ops


@jax.jit
def train_step(w, x):
    return layers.dense(w, x).sum()


def init(seed):
    key = jax.random.PRNGKey(seed)
    shape = ops.spec(key, (3, 3))["shape"]
    w = jax.random.normal(key, shape)
    noise = jax.random.normal(key, shape)  # JAX201: the key drew `w` already
    return w + noise
