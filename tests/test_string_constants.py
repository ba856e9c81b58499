"""A name bound once to a string, or a member of an enum class that is no number, compared with
`==`: a JAX array returns NotImplemented for such an object and Python falls back to identity,
so the test is a Python bool whatever the other side holds (`if model_mode ==
MODEL_MODE_PREFILL:` on a framework module's unannotated parameter). A name bound to a number,
or a member of an `IntEnum`, compares element by element, as the number would. The constant or
the enum may be in another module of the project, as large model code bases keep their modes."""

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

ENUM = """
import enum

import flax.linen as nn
import jax
import jax.numpy as jnp

class Kind(BASE):
    ATTENTION = MEMBER
    MLP = OTHER

class Layer(nn.Module):
    @nn.compact
    def __call__(self, x, kind):
        if kind == Kind.ATTENTION:
            return nn.Dense(2)(x)
        return nn.Dense(2)(x) * 2

def demo():
    x = jnp.ones((3, 2))
    params = Layer().init(jax.random.PRNGKey(0), x, Kind.ATTENTION)
    return jax.jit(Layer().apply)(params, x, ARGUMENT)
"""


def _enum(base: str, member: str, other: str, argument: str) -> str:
    return ENUM.replace("BASE", base).replace("MEMBER", member).replace("OTHER", other).replace("ARGUMENT", argument)


QUIET = {
    "a mode compared with a string constant": LAYER,
    # Traced or not, the argument is never the member: the test is False, a Python bool.
    "a kind compared with a member of an enum": _enum("enum.Enum", '"attention"', '"mlp"', "jnp.int32(1)"),
    "a kind compared with a member of a string enum": _enum("str, enum.Enum", '"attention"', '"mlp"', "jnp.int32(1)"),
}
REPORTED = {
    "a mode compared with a number constant": (NUMBERED, "JAX101", "TracerBoolConversionError"),
    "a kind compared with a member of an IntEnum": (
        _enum("enum.IntEnum", "1", "2", "jnp.int32(1)"), "JAX101", "TracerBoolConversionError"
    ),
}

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


KINDS = "import enum\n\n\nclass Kind(enum.Enum):\n    PREFILL = 'prefill'\n    TRAIN = 'train'\n"
KIND_LAYER = LAYERS.replace("from pkg.types import MODEL_MODE_PREFILL", "from pkg.types import Kind").replace(
    "model_mode == MODEL_MODE_PREFILL", "model_mode == Kind.PREFILL"
).replace("model_mode != types.MODEL_MODE_TRAIN", "model_mode != types.Kind.TRAIN")


def test_a_member_of_an_enum_of_another_module_compares_by_identity(cli, make_files):
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/types.py": KINDS, "pkg/layers.py": textwrap.dedent(KIND_LAYER)})
    assert cli("check", "--no-cache", "--output-format", "json", "pkg").json == []
    make_files({"pkg/types.py": KINDS.replace("enum.Enum", "enum.IntEnum").replace("'prefill'", "1").replace("'train'", "2")})
    assert [f["code"] for f in cli("check", "--no-cache", "--output-format", "json", "pkg").json] == ["JAX101", "JAX101"]
