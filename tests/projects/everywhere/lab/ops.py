import jax.numpy as jnp


def clip(x, limit):
    if x.sum() > limit:  # JAX101 when traced: `lab.train.train_step` traces it, through `lab.layers`
        return x / limit
    return x


def spec(key, shape):
    # the key is carried along, not consumed: the caller may still draw with it
    return {"key": key, "shape": shape, "dtype": jnp.float32}


def log(x):
    print(x)  # noqa: JAX404
    return x
