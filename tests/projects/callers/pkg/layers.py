from pkg.helpers import clip


def dense(w, x):
    return clip(w @ x)
