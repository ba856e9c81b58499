import jax
import jax.numpy as jnp

from sampleproj import data, model, train


def _setup(n=32):
    d = data.make_data(jax.random.key(0), n, 4)
    cfg = model.Config()
    return d, cfg, model.init(jax.random.key(1), cfg)


def test_train_reduces_loss():
    d, cfg, _ = _setup()
    _, losses = train.train(jax.random.key(3), d, cfg, steps=3, batch_size=16)
    assert losses.shape == (6,)


def test_clipped_step():
    d, cfg, params = _setup()
    new = train.clipped_step(params, d, cfg)
    assert jax.tree_util.tree_structure(new) == jax.tree_util.tree_structure(params)


def test_evaluate_is_stable():
    d, cfg, params = _setup()
    values = [train.evaluate(params, d) for _ in range(4)]
    assert jnp.allclose(values[0], values[-1])


def test_tracked_loss():
    d, cfg, params = _setup()
    assert train.tracked_loss(params, d) >= 0
    assert len(train.TRACKER.values) == 1


def test_noisy_batches():
    d, _, _ = _setup()
    assert len(list(train.noisy_batches(jax.random.key(4), d, 8, 0.1))) == 4
