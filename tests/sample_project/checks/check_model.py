import jax
import jax.numpy as jnp

from sampleproj import model


def test_init_and_apply_shapes():
    cfg = model.Config(sizes=(3, 5, 2))
    params = model.init(jax.random.key(0), cfg)
    assert [w.shape for w in params.weights] == [(3, 5), (5, 2)]
    assert model.apply(params, jnp.ones((7, 3))).shape == (7, 2)


def test_params_are_a_pytree():
    params = model.init(jax.random.key(0), model.Config())
    assert len(jax.tree_util.tree_leaves(params)) == 4
