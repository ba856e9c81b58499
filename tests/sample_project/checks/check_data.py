import jax

from sampleproj import data


def test_batches_cover_the_data():
    d = data.make_data(jax.random.key(0), 10, 3)
    assert [b.x.shape[0] for b in data.batches(d, 4)] == [4, 4, 2]


def test_augment_keeps_shapes():
    d = data.make_data(jax.random.key(0), 8, 3)
    out = data.augment(jax.random.key(1), d, 0.5)
    assert out.x.shape == d.x.shape


def test_noise_source_draws():
    source = data.NoiseSource(jax.random.key(2))
    a, b = source.draw((3,)), source.draw((3,))
    assert a.shape == b.shape == (3,)
