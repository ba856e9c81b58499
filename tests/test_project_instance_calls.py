"""A framework module's `__call__` parameter holds what the project's calls pass, wherever they
are: built in one module, handed to a block as a field, called there with shapes and options, and
called by a test with numbers set in `setUp`, it is no tracer (JAX107/JAX101 stay quiet). A call
anywhere with an array keeps it traced. With no call in view (or an instance handed to other
code), the module alone answers: a parameter it uses as a dimension is a Python number, any other
may be an array. Flax shows both."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

LAYERS = """
    import flax.linen as nn
    import jax.numpy as jnp
    import numpy as np


    class Bias(nn.Module):
        heads: int

        @nn.compact
        def __call__(self, qlen, klen):
            context = np.arange(qlen)[:, None]
            memory = np.arange(klen)[None, :]
            table = self.param("table", nn.initializers.zeros, (self.heads, 8))
            return jnp.take(table, np.clip(memory - context, 0, 7), axis=1)
    """

NETWORK = """
    import flax.linen as nn

    from pkg import layers


    class Block(nn.Module):
        bias: nn.Module

        @nn.compact
        def __call__(self, x, decode=False, max_length=None):
            length = max_length if decode and max_length else x.shape[-2]
            return x + self.bias(length, x.shape[-2]).sum()


    class Encoder(nn.Module):
        @nn.compact
        def __call__(self, x):
            bias = layers.Bias(heads=2, name="bias")
            for i in range(2):
                x = Block(bias=bias, name=f"block_{i}")(x)
            return x
    """

TEST = """
    import unittest

    import jax

    from pkg import layers


    class BiasTest(unittest.TestCase):
        def setUp(self):
            self.qlen = 5
            self.klen = 7
            self.bias = layers.Bias(heads=3)

        def test_shapes(self):
            variables = self.bias.init(jax.random.PRNGKey(0), self.qlen, self.klen)
            self.assertEqual(self.bias.apply(variables, self.qlen, self.klen).shape, (3, 5, 7))
    """


def _check(cli, make_files, files):
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", **{k: textwrap.dedent(v) for k, v in files.items()}})
    out = cli("check", "--no-cache", "--select", "JAX1", "--output-format", "json", ".")
    return sorted((f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in out.json)


def test_shapes_and_options_passed_from_other_modules_are_no_tracers(cli, make_files):
    assert _check(cli, make_files, {"pkg/layers.py": LAYERS, "pkg/network.py": NETWORK, "pkg/layers_test.py": TEST}) == []


@pytest.mark.parametrize("path", ["pkg/layers.py", "pkg/network.py", "pkg/layers_test.py"])
def test_the_same_answer_for_each_file_checked_alone(cli, make_files, path):
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/layers.py": textwrap.dedent(LAYERS),
                "pkg/network.py": textwrap.dedent(NETWORK), "pkg/layers_test.py": textwrap.dedent(TEST)})
    out = cli("check", "--no-cache", "--select", "JAX1", "--output-format", "json", path)
    assert out.json == []


def test_a_call_with_an_array_elsewhere_keeps_the_parameter_traced(cli, make_files):
    network = NETWORK.replace("self.bias(length, x.shape[-2])", "self.bias(x, x.shape[-2])")
    found = _check(cli, make_files, {"pkg/layers.py": LAYERS, "pkg/network.py": network})
    assert ("layers.py", 12, "JAX107") in found  # `qlen`: an array from `Block`
    assert ("layers.py", 13, "JAX107") not in found  # `klen`: a shape from every call


def test_an_instance_handed_to_other_code_decides_nothing(cli, make_files):
    """The module alone then says what its parameters are: lengths it makes ranges of."""
    network = textwrap.dedent(NETWORK).replace("x = Block(bias=bias, name=f\"block_{i}\")(x)", "x = run(bias, x)")
    network += "\n\ndef run(module, x):\n    return module(x.shape[-2], x.shape[-2])\n"
    assert _check(cli, make_files, {"pkg/layers.py": LAYERS, "pkg/network.py": network}) == []


def test_a_parameter_used_as_a_dimension_without_a_call_in_view_is_a_number(cli, make_files):
    """`np.arange(qlen)`: JAX needs a Python number there while tracing (a tracer fails, as
    `test_flax_runs_numpy_on_the_lengths_and_rejects_a_tracer` shows), so a module that runs is
    given one. With no call in view, that is the evidence there is."""
    assert _check(cli, make_files, {"pkg/layers.py": LAYERS}) == []


SCALE = """
    import flax.linen as nn
    import numpy as np


    class Scale(nn.Module):
        @nn.compact
        def __call__(self, x, n):
            return np.asarray(x) * np.ones(n)
    """


def test_a_parameter_used_otherwise_without_a_call_in_view_stays_traced(cli, make_files):
    found = _check(cli, make_files, {"pkg/scale.py": SCALE})
    assert found == [("scale.py", 9, "JAX107")]  # `x`, an input; `n` is a dimension


def test_flax_runs_numpy_on_the_lengths_and_rejects_a_tracer():
    pytest.importorskip("flax")
    import jax
    import jax.numpy as jnp

    namespace: dict = {}
    exec(textwrap.dedent(LAYERS), namespace)
    network = textwrap.dedent(NETWORK).replace("from pkg import layers", "")
    namespace["layers"] = type("layers", (), {"Bias": namespace["Bias"]})
    exec(network, namespace)
    encoder, x = namespace["Encoder"](), jnp.ones((2, 5, 4))
    variables = jax.jit(encoder.init)(jax.random.PRNGKey(0), x)
    assert jax.jit(encoder.apply)(variables, x).shape == (2, 5, 4)  # NumPy on shapes: constants

    bias = namespace["Bias"](heads=2)
    table = bias.init(jax.random.PRNGKey(0), 3, 3)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.jit(lambda q: bias.apply(table, q, 3))(jnp.int32(3))  # a traced length: NumPy fails


# Another method of the layer, called through the instance, runs no `__call__`.
LAYERS_WITH_A_METHOD = LAYERS + """

        def width(self):
            return self.heads * self.depth()

        def depth(self):
            return 8
    """
NETWORK_CALLING_THE_METHOD = NETWORK.replace(
    "return x + self.bias(length, x.shape[-2]).sum()",
    "return x + self.bias(length, x.shape[-2]).sum() / self.bias.width()",
)


def test_another_method_called_through_the_instance_is_no_call_of_it(cli, make_files):
    files = {"pkg/layers.py": LAYERS_WITH_A_METHOD, "pkg/network.py": NETWORK_CALLING_THE_METHOD}
    assert _check(cli, make_files, files) == []


def test_a_method_that_calls_the_instance_decides_nothing(cli, make_files):
    """`width` hands `__call__` what it is given, out of the search's view: the module alone
    answers, as it does with no call in view."""
    layers = LAYERS_WITH_A_METHOD.replace("return self.heads * self.depth()", "return self(x_len, 1).shape[-1]")
    layers = layers.replace("def width(self):", "def width(self, x_len):")
    network = NETWORK_CALLING_THE_METHOD.replace("self.bias.width()", "self.bias.width(x)")
    found = _check(cli, make_files, {"pkg/layers.py": layers, "pkg/network.py": network})
    assert found == _check(cli, make_files, {"pkg/layers.py": layers, "pkg/network.py": ""})


def test_flax_runs_the_other_method_under_jit():
    pytest.importorskip("flax")
    import jax
    import jax.numpy as jnp

    namespace: dict = {}
    exec(textwrap.dedent(LAYERS_WITH_A_METHOD), namespace)
    network = textwrap.dedent(NETWORK_CALLING_THE_METHOD).replace("from pkg import layers", "")
    namespace["layers"] = type("layers", (), {"Bias": namespace["Bias"]})
    exec(network, namespace)
    encoder, x = namespace["Encoder"](), jnp.ones((2, 5, 4))
    variables = jax.jit(encoder.init)(jax.random.PRNGKey(0), x)
    assert jax.jit(encoder.apply)(variables, x).shape == (2, 5, 4)


# A field the module declares a Python tuple of ints (`Tuple[int, int]`) is its configuration:
# passed to a layer's `__call__`, a shape.
GRID = """
    from typing import Tuple

    import flax.linen as nn
    import jax.numpy as jnp


    class Grid(nn.Module):
        @nn.compact
        def __call__(self, size):
            h, w = size
            return jnp.ones((h, w)).cumsum(0)


    class Encoder(nn.Module):
        size: Tuple[int, int] = (4, 4)

        def setup(self):
            self.grid = Grid()

        def __call__(self, x):
            return x + self.grid({size}).sum()
    """


@pytest.mark.parametrize("size, found", [("self.size", []), ("(x.shape[0], x.sum().astype(int))", ["JAX108"])])
def test_a_field_declared_a_python_tuple_is_a_shape(cli, make_files, size, found):
    files = {"pkg/grid.py": textwrap.dedent(GRID).replace("{size}", size)}
    assert [code for _, _, code in _check(cli, make_files, files)] == found


def test_flax_builds_the_grid_from_the_field_and_rejects_a_traced_size():
    pytest.importorskip("flax")
    import jax
    import jax.numpy as jnp

    for size, fails in (("self.size", False), ("(x.shape[0], x.sum().astype(int))", True)):
        namespace: dict = {}
        exec(textwrap.dedent(GRID).replace("{size}", size), namespace)
        encoder, x = namespace["Encoder"](), jnp.ones(4)
        if fails:
            with pytest.raises(TypeError):
                jax.jit(encoder.init)(jax.random.PRNGKey(0), x)
        else:
            jax.jit(encoder.init)(jax.random.PRNGKey(0), x)


def test_projects_under_one_root_read_each_file_once(cli, make_files, monkeypatch):
    """Two top-level folders under one project root search the same files for calls: each file is
    read once for the names it holds, not once per folder, and the answers stay each folder's."""
    from jaxlint.analysis.project import project_instance_calls

    files = {"pkg/__init__.py": "", "pkg/layers.py": LAYERS, "pkg/network.py": NETWORK, "pkg/layers_test.py": TEST}
    root = make_files({"pyproject.toml": "", **{f"{top}/{k}": textwrap.dedent(v) for top in "ab" for k, v in files.items()}})
    network = textwrap.dedent(NETWORK).replace("self.bias(length, x.shape[-2])", "self.bias(x, x.shape[-2])")
    make_files({"b/pkg/network.py": network})
    reads: list[str] = []

    def counted(path, *args, **kwargs):
        reads.append(str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(project_instance_calls, "open", counted, raising=False)
    out = cli("check", "--no-cache", "--select", "JAX1", "--output-format", "json", ".")
    tops = {Path(f["filename"]).resolve().relative_to(root.resolve()).parts[0] for f in out.json}
    assert tops == {"b"}  # `qlen` gets an array only from b's network
    assert reads and len(reads) == len(set(reads))
