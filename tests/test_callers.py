"""Which of the project's modules a check of some files lints with them: those that may call into them."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxlint.callers import callers


def found(root: Path, name: str, excludes: tuple[str, ...] = ()) -> set[str]:
    return {Path(p).relative_to(root).as_posix() for p in callers([str(root / name)], excludes=excludes, root=root)}


def test_importers_and_their_importers_are_kept(make_files):
    root = make_files({
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/ops.py": "def clip(x):\n    return x\n",
        "pkg/layers.py": "from pkg.ops import clip\n",
        "pkg/model.py": "from pkg import (\n    layers,\n)\n",
        "pkg/train.py": "import pkg.model\n",
        "pkg/other.py": "# ops, layers\nops = 1\n",
    })
    # the third step (train.py) is past the bound; other.py names `ops` only outside an import
    assert found(root, "pkg/ops.py") == {"pkg/layers.py", "pkg/model.py"}


def test_a_packages_reexport_names_what_its_importers_write(make_files):
    """`from pkg import fit` reaches pkg/fitting.py through pkg/__init__.py; every module of the
    project names `pkg`, so the re-exported name, not the package's, marks its importers."""
    root = make_files({
        "setup.py": "",
        "pkg/__init__.py": "try:\n    from .fitting import fit as fit_model\nexcept ImportError:\n    pass\n",
        "pkg/fitting.py": "def fit(x):\n    return x\n",
        "pkg/app.py": "from pkg import fit_model\n",
        "pkg/unrelated.py": "from pkg import something_else\n",
    })
    assert found(root, "pkg/fitting.py") == {"pkg/__init__.py", "pkg/app.py"}


def test_excluded_modules_and_files_outside_a_project_bring_nothing(make_files):
    root = make_files({
        "pyproject.toml": "",
        "ops.py": "def clip(x):\n    return x\n",
        "build/copy.py": "from ops import clip\n",
        "uses.py": "from ops import clip\n",
    })
    assert found(root, "ops.py", excludes=("build",)) == {"uses.py"}
    (root / "pyproject.toml").unlink()
    assert found(root, "ops.py") == set()


def test_callers_are_linted_but_neither_reported_nor_fixed(cli, make_files):
    root = make_files({
        "pyproject.toml": "",
        "ops.py": "def clip(x):\n    return x\n",
        "uses.py": """\
            import jax
            import jax.numpy as jnp

            from ops import clip


            @jax.jit
            def fill(n):
                counts = jnp.zeros(3)
                counts[0] = 1.0
                return clip(counts)
            """,
    })
    before = (root / "uses.py").read_text()
    assert [f["code"] for f in cli("check", "--output-format", "json", "uses.py").json] == ["JAX401"]
    assert cli("check", "--fix", "--output-format", "json", "ops.py").json == []
    assert (root / "uses.py").read_text() == before


def test_the_editors_buffer_is_read_in_the_encoding_its_cookie_declares(make_files):
    pytest.importorskip("pygls")
    from jaxlint.server.app import lint_text

    root = make_files({"pyproject.toml": ""})
    source = '# -*- coding: latin-1 -*-\nimport jax\n\n\n@jax.jit\ndef f(x):\n    s = "é"; y = x if x > 0 else -x\n    return y\n'
    (found,) = lint_text(source, root / "f.py").findings
    # columns are 1-based and count characters: `é` is one, not the two of its UTF-8 bytes read as Latin-1
    assert (found.code, found.start.column) == ("JAX101", source.splitlines()[6].index("x > 0") + 1)
