from lab.ops import clip, log


def dense(w, x):
    return log(clip(w @ x, 4.0))
