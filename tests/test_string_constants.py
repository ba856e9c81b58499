"""A name bound once to a string, compared with `==`: a JAX array returns NotImplemented for a
string and Python falls back to identity, so the test is a Python bool whatever the other side
holds (`if model_mode == MODEL_MODE_PREFILL:` on a framework module's unannotated parameter). A
name bound to a number compares element by element, as the number would. The constant may be
bound in another module of the project, as large model code bases keep their modes."""

from __future__ import annotations

import textwrap

from quiet_and_reported import case_tests

LAYER = """
import flax.linen as nn
import jax
import jax.numpy as jnp

MODE_PREFILL = "prefill"

class Layer(nn.Module):
    @nn.compact
    def __call__(self, x, model_mode):
        if model_mode == MODE_PREFILL:
            return nn.Dense(2)(x)
        return nn.Dense(2)(x) * 2

def demo():
    x = jnp.ones((3, 2))
    params = Layer().init(jax.random.PRNGKey(0), x, MODE_PREFILL)
    return jax.jit(Layer().apply, static_argnums=2)(params, x, MODE_PREFILL)
"""

NUMBERED = LAYER.replace('MODE_PREFILL = "prefill"', "MODE_PREFILL = 1").replace(
    "jax.jit(Layer().apply, static_argnums=2)(params, x, MODE_PREFILL)", "jax.jit(Layer().apply)(params, x, 1)"
)

QUIET = {"a mode compared with a string constant": LAYER}
REPORTED = {"a mode compared with a number constant": (NUMBERED, "JAX101", "TracerBoolConversionError")}

(
    test_string_constants_stay_quiet,
    test_number_constants_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED, needs=("jax", "flax"))

TYPES = 'MODEL_MODE_PREFILL = "prefill"\nMODEL_MODE_TRAIN = "train"\n'
LAYERS = """
import flax.linen as nn

from pkg import types
from pkg.types import MODEL_MODE_PREFILL


class Layer(nn.Module):
    @nn.compact
    def __call__(self, x, model_mode):
        if model_mode == MODEL_MODE_PREFILL:
            x = x * 2
        if model_mode != types.MODEL_MODE_TRAIN:
            x = x + 1
        return x
"""


def _codes(cli, make_files, types: str) -> list[str]:
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/types.py": types, "pkg/layers.py": textwrap.dedent(LAYERS)})
    return [f["code"] for f in cli("check", "--no-cache", "--output-format", "json", "pkg").json]


def test_a_string_constant_of_another_module_compares_as_a_string(cli, make_files):
    assert _codes(cli, make_files, TYPES) == []


def test_a_number_constant_of_another_module_compares_element_by_element(cli, make_files):
    assert _codes(cli, make_files, TYPES.replace('"prefill"', "1").replace('"train"', "2")) == ["JAX101", "JAX101"]
