import jax


def perturb(key, x):
    """Add two draws of noise, both from the same key."""
    a = jax.random.normal(key, x.shape)
    b = jax.random.normal(key, x.shape)  # JAX201
    return x + a + b
