def clip(x, limit):
    """Halve `x` when its sum is over `limit`."""
    if x.sum() > limit:  # JAX101
        x = x / 2
    return x


def double(x):
    return x * 2
