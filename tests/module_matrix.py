"""A principle tested as a matrix: each framework that has the construct x the definitions in the
same module as their use or in another one x the bug and its clean twin. jaxlint must report the
bug (the code at the line marked `# JAXnnn`) and nothing in the twin; JAX must reject the bug
with the named error and run the twin.

A program is its imports, the definitions (a class, a helper) and the use (the jitted code and a
`demo()` that runs it). In another module, the definitions live in `lib.py` and the use imports
the names it needs from there.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import textwrap
from dataclasses import dataclass

import pytest

from marks import family_marks

_MARKS = family_marks(r"JAX\d\d\d")


@dataclass(frozen=True)
class Program:
    imports: str
    definitions: str
    use: str
    names: tuple[str, ...]  # what the use imports from the definitions' module

    def files(self, placement: str) -> dict[str, str]:
        imports, definitions, use = (textwrap.dedent(part) for part in (self.imports, self.definitions, self.use))
        if placement == "same":
            return {"main.py": imports + definitions + use}
        return {"lib.py": imports + definitions, "main.py": imports + f"from lib import {', '.join(self.names)}\n" + use}


@dataclass(frozen=True)
class Twins:
    """A bug, its clean twin, the package they need and the error JAX raises on the bug."""

    bug: Program
    clean: Program
    error: str
    needs: str = "jax"
    leaks: bool = False  # run `demo()` under `jax.checking_leaks()`: a tracer kept after its trace raises


def _cells(twins: dict[str, Twins]):
    return [
        pytest.param(name, placement, kind, id=f"{name}-{placement}-{kind}")
        for name in sorted(twins)
        for placement in ("same", "other")
        for kind in ("bug", "clean")
    ]


def matrix_tests(twins: dict[str, Twins]):
    """The two tests of a matrix: what jaxlint reports on each cell, and what JAX does with it."""

    @pytest.mark.parametrize("name, placement, kind", _cells(twins))
    def jaxlint_reports_the_bugs_only(cli, make_files, name, placement, kind):
        files = getattr(twins[name], kind).files(placement)
        make_files(files)
        found = cli("check", "--no-cache", "--isolated", "--output-format", "json", *sorted(files)).json
        got = {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in found}
        marked = {(file, row, code) for file, text in files.items() for row, code in _MARKS(text)}
        assert got == marked

    @pytest.mark.parametrize("name, placement, kind", _cells(twins))
    def jax_agrees(tmp_path, name, placement, kind):
        case = twins[name]
        pytest.importorskip("jax")
        pytest.importorskip(case.needs)
        for file, text in getattr(case, kind).files(placement).items():
            (tmp_path / file).write_text(text, encoding="utf-8")
        sys.path.insert(0, str(tmp_path))
        jax = importlib.import_module("jax")
        checking = jax.checking_leaks if case.leaks else contextlib.nullcontext
        try:
            if kind == "clean":
                with checking():
                    importlib.import_module("main").demo()
            else:
                with pytest.raises(Exception) as info, checking():
                    importlib.import_module("main").demo()
                assert case.error in {cls.__name__ for cls in type(info.value).__mro__}, repr(info.value)
        finally:
            sys.path.remove(str(tmp_path))
            for module in ("main", "lib"):
                sys.modules.pop(module, None)

    return jaxlint_reports_the_bugs_only, jax_agrees


# How each framework runs a helper `{helper}(x)` (one array in, one array out) in traced code,
# and calls it from `demo()`: (imports, the use, the package it needs).
_COMMON = "import jax\nimport jax.numpy as jnp\n"
FRAMEWORKS = {
    "jax": (
        _COMMON,
        """
        @jax.jit
        def step(x):
            return {helper}(x) * 2

        def demo():
            return step(jnp.full(3, 0.5))
        """,
        "jax",
    ),
    "linen": (
        _COMMON + "import flax.linen as nn\n",
        """
        class Model(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(3)({helper}(x))

        def demo():
            model, x = Model(), jnp.full((1, 3), 0.5)
            return jax.jit(model.apply)(model.init(jax.random.key(0), x), x)
        """,
        "flax",
    ),
    "nnx": (
        _COMMON + "from flax import nnx\n",
        """
        class Model(nnx.Module):
            def __init__(self, rngs):
                self.dense = nnx.Linear(3, 3, rngs=rngs)

            def __call__(self, x):
                return self.dense({helper}(x))

        @nnx.jit
        def forward(model, x):
            return model(x)

        def demo():
            return forward(Model(nnx.Rngs(0)), jnp.full((1, 3), 0.5))
        """,
        "flax",
    ),
    "haiku": (
        _COMMON + "import haiku as hk\n",
        """
        def forward(x):
            return hk.Linear(3)({helper}(x))

        model = hk.without_apply_rng(hk.transform(forward))

        def demo():
            x = jnp.full((1, 3), 0.5)
            return jax.jit(model.apply)(model.init(jax.random.key(0), x), x)
        """,
        "haiku",
    ),
    "equinox": (
        _COMMON + "import equinox as eqx\n",
        """
        class Model(eqx.Module):
            linear: eqx.nn.Linear

            def __init__(self, key):
                self.linear = eqx.nn.Linear(3, 3, key=key)

            def __call__(self, x):
                return self.linear({helper}(x))

        @eqx.filter_jit
        def forward(model, x):
            return model(x)

        def demo():
            return forward(Model(jax.random.key(0)), jnp.full(3, 0.5))
        """,
        "equinox",
    ),
}


def helper_matrix(
    helper: str, bug: str, clean: str, error: str, names: tuple[str, ...] = (), leaks: bool = False
) -> dict[str, Twins]:
    """Twins for every framework: a helper defined as `bug` or `clean` (the definitions, which
    define `helper` and the `names` it needs to be imported with), run by each framework's traced code."""
    twins = {}
    for framework, (imports, use, needs) in FRAMEWORKS.items():
        use = textwrap.dedent(use).replace("{helper}", helper)
        exported = (helper, *names)
        twins[framework] = Twins(
            Program(imports, bug, use, exported), Program(imports, clean, use, exported), error, needs, leaks
        )
    return twins
