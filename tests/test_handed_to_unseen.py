"""A function nested in traced code and handed to a callable the analysis cannot see through a
plain name (a parameter holding a transformation, a helper imported relatively by a file linted
alone) runs in that trace if it runs at all, as one handed to an unseen library call does: what
it computes with JAX is traced. JAX shows both sides."""

from __future__ import annotations

import sys

import pytest
from quiet_and_reported import case_tests

STEP = """
import jax
import jax.numpy as jnp

def make_step(differentiate):
    @jax.jit
    def step(params, batch):
        def loss_fn(p):
            obs = batch["x"]
            if TEST:
                return (p * obs).sum()
            return p.sum()

        return differentiate(loss_fn)(params)

    return step

def demo():
    return make_step(jax.grad)(jnp.ones(3), {"x": jnp.ones(3)})
"""

QUIET = {"a shape test in a loss handed to a parameter": STEP.replace("TEST", "obs.shape[0] > 0")}
REPORTED = {
    "a value test in a loss handed to a parameter": (
        STEP.replace("TEST", "obs.sum() > 0"), "JAX101", "TracerBoolConversionError"
    ),
}

(
    test_quiet_programs_stay_quiet,
    test_reported_programs_are_reported,
    test_jax_traces_the_quiet_programs,
    test_jax_rejects_the_reported_programs,
) = case_tests(QUIET, REPORTED)

RELATIVE = """
import jax

from .jax_utils import value_and_multi_grad


@jax.jit
def step(params, batch):
    def loss_fn(p):
        if batch["x"].sum() > 0:
            return p.sum()
        return -p.sum()

    return value_and_multi_grad(loss_fn, 2)(params)
"""


def test_a_loss_handed_to_a_helper_imported_relatively_is_traced_in_a_file_alone(cli, make_files):
    make_files({"train.py": RELATIVE})
    found = cli("check", "--no-cache", "--output-format", "json", "train.py").json
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JAX101", 10)]


# The helper in its package: the analysis follows the call there with values only (a function of
# this module cannot run in another module's analysis), so the loss it is handed is analysed in
# this trace, as in the file alone.
JAX_UTILS = """
import jax


def value_and_multi_grad(fun, n_outputs, argnums=0):
    def select_output(index):
        def wrapped(*args, **kwargs):
            return fun(*args, **kwargs)[index]
        return wrapped

    grad_fns = tuple(jax.value_and_grad(select_output(i), argnums=argnums) for i in range(n_outputs))

    def multi_grad_fn(*args, **kwargs):
        return tuple(grad_fn(*args, **kwargs) for grad_fn in grad_fns)

    return multi_grad_fn
"""

PACKAGE = {
    "pyproject.toml": '[project]\nname = "trainer"\n',
    "trainer/__init__.py": "",
    "trainer/jax_utils.py": JAX_UTILS,
    "trainer/train.py": RELATIVE.replace("return p.sum()", "return (p.sum(), p.sum())").replace(
        "return -p.sum()", "return (-p.sum(), p.sum())"
    ),
}


def test_a_loss_handed_to_a_helper_of_the_package_is_traced_there_too(cli, make_files):
    make_files(PACKAGE)
    found = cli("check", "--no-cache", "--output-format", "json", "trainer/train.py").json
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JAX101", 10)]


def test_jax_rejects_the_loss_handed_to_the_helper_of_the_package(make_files, monkeypatch):
    jax = pytest.importorskip("jax")
    root = make_files(PACKAGE)
    monkeypatch.syspath_prepend(str(root))
    import importlib

    train = importlib.import_module("trainer.train")
    try:
        with pytest.raises(jax.errors.TracerBoolConversionError):
            train.step(jax.numpy.ones(3), {"x": jax.numpy.ones(3)})
    finally:
        for name in [m for m in sys.modules if m == "trainer" or m.startswith("trainer.")]:
            del sys.modules[name]
