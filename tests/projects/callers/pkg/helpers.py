def clip(x):
    if x > 0:  # JAX101
        return x
    return -x
