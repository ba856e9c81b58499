import jax

from pkg import scale
from pkg.helpers import clip
from pkg.layers import dense


@jax.jit
def step(x):
    return clip(x) * 2


@jax.jit
def forward(w, x):
    return scale(dense(w, x), 4.0)
