import jax

from sampleproj import data, metrics, model


def _setup():
    cfg = model.Config()
    return data.make_data(jax.random.key(0), 16, 4), model.init(jax.random.key(1), cfg)


def test_eval_step_in_range():
    d, params = _setup()
    assert 0 <= metrics.eval_step(params, d) <= 1


def test_reset_output_bias():
    _, params = _setup()
    assert float(metrics.reset_output_bias(params).biases[-1][0]) == 0.0


def test_summary_keys():
    d, params = _setup()
    assert set(metrics.summary(params, d)) == {"mse", "max"}
