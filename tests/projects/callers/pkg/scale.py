def scale(x, factor):
    while x > factor:  # JAX102
        x = x / 2
    return x
