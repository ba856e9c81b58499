"""Framework entry points: functions a library runs traced although this module never transforms them."""

from __future__ import annotations

ENTRY_POINTS = """
import jax
import haiku as hk
import optax

def forward(x):
    if x.sum() > 0:
        x = -x
    return x

model = hk.transform(forward)

def update_fn(updates, state, params=None):
    if updates > 0:
        updates = -updates
    return updates, state

tx = optax.GradientTransformation(lambda p: (), update_fn)

def schedule(count):
    if count < 100:
        return 0.1
    return 0.01

opt = optax.adam(learning_rate=schedule)

@jax.custom_jvp
def f(x):
    return x

@f.defjvp
def f_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    if x > 0:
        return x, t
    return x, -t
"""

STATIC_ARGUMENTS = """
import jax
import numpy as np
import optax
from functools import partial

@partial(jax.custom_vjp, nondiff_argnums=(1,))
def scaled(x, dims):
    return x

def scaled_fwd(x, dims):
    order = np.argsort(dims)
    return x, order

def scaled_bwd(dims, res, g):
    if dims[0] > 0:
        return (g,)
    return (-g,)

scaled.defvjp(scaled_fwd, scaled_bwd)

def update(updates, state, params=None, *, loss, **extra):
    assert loss == 1
    leaves = jax.tree_util.tree_leaves(updates)
    if not leaves:
        return updates, state
    return updates, state

tx = optax.GradientTransformationExtraArgs(lambda p: (), update)
"""


def findings(cli, make_files, text):
    make_files({"m.py": text})
    result = cli("check", "--no-cache", "--output-format", "json", "m.py")
    return sorted((f["code"], f["location"]["row"]) for f in result.json)


def test_functions_run_by_frameworks_are_traced(cli, make_files):
    assert findings(cli, make_files, ENTRY_POINTS) == [
        ("JAX101", 7), ("JAX101", 14), ("JAX101", 21),
    ]  # not the rule of `f` (line 34): nothing here calls `f` from traced code


def test_nondiff_and_caller_supplied_arguments_stay_static_or_unknown(cli, make_files):
    assert findings(cli, make_files, STATIC_ARGUMENTS) == []
