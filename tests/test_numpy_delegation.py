"""NumPy functions JAX107 leaves alone work on tracers under `jax.jit`; those it reports do not."""

from __future__ import annotations

import pytest

from jaxlint.linter import lint_source

SHAPE_AND_SLICING = {
    "split": "np.split(t, 2, axis=-1)",
    "array_split": "np.array_split(t, 3, axis=-1)",
    "hsplit": "np.hsplit(t, 2)",
    "vsplit": "np.vsplit(t, 2)",
    "dsplit": "np.dsplit(t, 2)",
    "swapaxes": "np.swapaxes(t, 0, 1)",
    "rollaxis": "np.rollaxis(t, 1)",
}
CONVERTING = {
    "clip": "np.clip(t, 0, 1)",
    "ravel": "np.ravel(t)",
    "expand_dims": "np.expand_dims(t, 0)",
}


def _program(call: str) -> str:
    return f"import jax\nimport numpy as np\n\n@jax.jit\ndef f(t):\n    return {call}\n"


def _run(call: str):
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(_program(call), namespace)
    return jax, lambda: namespace["f"](jax.numpy.ones((4, 6, 2)))


@pytest.mark.parametrize("name", sorted(SHAPE_AND_SLICING))
def test_left_alone_and_works_under_jit(name):
    assert lint_source(_program(SHAPE_AND_SLICING[name]), "case.py", {"JAX107"}) == []
    _, run = _run(SHAPE_AND_SLICING[name])
    run()


@pytest.mark.parametrize("name", sorted(CONVERTING))
def test_reported_and_fails_under_jit(name):
    assert [f.code for f in lint_source(_program(CONVERTING[name]), "case.py", {"JAX107"})] == ["JAX107"]
    jax, run = _run(CONVERTING[name])
    with pytest.raises(jax.errors.TracerArrayConversionError):
        run()
