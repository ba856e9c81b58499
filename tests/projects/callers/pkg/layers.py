from pkg.helpers import clip
from pkg.norms import norm


def dense(w, x):
    return norm(clip(w @ x))
