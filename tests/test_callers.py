"""Which of the project's modules a check of some files lints with them: those that may call into them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jaxlint.callers import callers


def found(root: Path, name: str, excludes: tuple[str, ...] = ()) -> set[str]:
    kept = [Path(p).relative_to(root).as_posix() for p in callers([str(root / name)], excludes=excludes, root=root)]
    assert len(kept) == len(set(kept))  # each module once, in whichever step it is found
    return set(kept)


def test_importers_and_their_importers_are_kept(make_files):
    root = make_files({
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/ops.py": "def clip(x):\n    return x\n",
        "pkg/layers.py": "from pkg.ops import clip\n",
        "pkg/model.py": "from pkg import (\n    layers,\n)\n",
        "pkg/train.py": "import pkg.model\n",
        "pkg/other.py": "# ops, layers\nops = 1\n",
        "pkg/both.py": "from pkg import ops, layers\n",
    })
    # the third step (train.py) is past the bound; other.py names `ops` only outside an import
    assert found(root, "pkg/ops.py") == {"pkg/layers.py", "pkg/model.py", "pkg/both.py"}


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


def test_modules_whose_imports_resolve_elsewhere_are_not_callers(make_files):
    """In a repository holding several projects, `import lib` in another project finds no `lib`
    where that module's imports are looked up: it names the same words, and cannot call in."""
    root = make_files({
        ".git/HEAD": "",
        "vendor/lib/lib/__init__.py": "",
        "vendor/lib/lib/ops.py": "def clip(x):\n    return x\n",
        "vendor/lib/tools.py": "from lib.ops import clip\n",
        "vendor/lib/lib/layers.py": "from .ops import clip\n",
        "apps/app/run.py": "from lib.ops import clip\n",
        "apps/app/train.py": "import lib\nimport ops\n",
        "scripts/use.py": "from vendor.lib.lib import ops\n",
    })
    assert found(root, "vendor/lib/lib/ops.py") == {"vendor/lib/tools.py", "vendor/lib/lib/layers.py", "scripts/use.py"}


def test_a_docstring_line_that_starts_with_import_neither_keeps_nor_hides_a_module(make_files):
    """The import statements are found by their text, which also finds prose in a docstring; the
    prose is left out, so the module is kept only for its real imports, cut short or not."""
    root = make_files({
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/ops.py": "def clip(x):\n    return x\n",
        "pkg/notes.py": '"""Docs.\n\nimport that is said here, of ops, is prose.\n"""\nimport os\n',
        "pkg/uses.py": '"""Docs.\n\nimport that is said here is prose.\n"""\nfrom pkg.ops import clip, \\\n    clip as c\n',
        "pkg/plain.py": '"""Docs.\n\nimport that is said here is prose.\n"""\nimport pkg.ops\n',
    })
    assert found(root, "pkg/ops.py") == {"pkg/uses.py", "pkg/plain.py"}


def test_a_namespace_packages_module_finds_its_package_by_absolute_name(make_files):
    """`systems/` has no `__init__.py`: its module finds `app` in the folder above `app`."""
    root = make_files({
        ".git/HEAD": "",
        "repo/app/__init__.py": "",
        "repo/app/types.py": "def clip(x):\n    return x\n",
        "repo/app/systems/dqn.py": "from app.types import clip\n",
    })
    assert found(root, "repo/app/types.py") == {"repo/app/systems/dqn.py"}


def test_a_modelled_librarys_modules_are_not_its_callers(make_files):
    """Calls into a library the tables describe are never followed, even in its own project."""
    root = make_files({
        "pyproject.toml": "",
        "optax/__init__.py": "",
        "optax/ops.py": "def clip(x):\n    return x\n",
        "optax/train.py": "from optax.ops import clip\n",
        "optax/layers.py": "from . import ops\n",
    })
    assert found(root, "optax/ops.py") == set()


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


HELPER = """\
    import jax


    def clip(x):
        if x > 0:
            return x
        return -x


    def show(x):
        print(x)
        return x
    """
CALLER = """\
    import jax

    import helper


    @jax.jit
    def step(x):
        return helper.clip(x) * 2


    @jax.jit
    def shown(x):
        return helper.show(x) + 1
    """


def where(findings: list[dict]) -> list[tuple]:
    return [(Path(f["filename"]).name, f["location"]["row"], f["code"], f["message"].rpartition(" (")[2]) for f in findings]


def test_checking_a_caller_reports_what_its_traced_calls_cause_in_another_file(cli, make_files):
    """The caller's own findings are none; the helper's, traced by the caller's calls, are reported
    at the helper's lines, as checking the helper reports them, and naming the caller's entry point."""
    make_files({"pyproject.toml": "", "helper.py": HELPER, "caller.py": CALLER})
    caused = [("helper.py", 5, "JAX101", "traced via `caller.step`)"), ("helper.py", 11, "JAX404", "traced via `caller.shown`)")]
    out = cli("check", "--output-format", "json", "caller.py")
    assert out.code == 1 and where(out.json) == caused
    assert [f["fix"] for f in out.json] == [None, None]  # the helper is not among the files checked: never fixed
    by_itself = cli("check", "--output-format", "json", "helper.py").json
    assert [f["message"] for f in by_itself] == [f["message"] for f in out.json]
    assert by_itself[1]["fix"] is not None
    assert where(cli("check", "--output-format", "json", ".").json) == caused  # each reported once


def test_the_other_files_noqa_ignores_and_excludes_apply(cli, make_files):
    make_files({"caller.py": CALLER, "helper.py": HELPER.replace("if x > 0:", "if x > 0:  # noqa: JAX101")})
    make_files({"pyproject.toml": '[tool.jaxlint]\nper-file-ignores = { "helper.py" = ["JAX404"] }\n'})
    assert cli("check", "--output-format", "json", "caller.py").json == []
    make_files({"pyproject.toml": '[tool.jaxlint]\nextend-exclude = ["helper.py"]\n', "helper.py": HELPER})
    assert cli("check", "--output-format", "json", "caller.py").json == []


def test_fix_and_add_noqa_never_write_a_file_not_checked(cli, make_files):
    root = make_files({"pyproject.toml": "", "helper.py": HELPER, "caller.py": CALLER})
    fixed = cli("check", "--fix", "--unsafe-fixes", "--output-format", "json", "caller.py")
    assert [f["code"] for f in fixed.json] == ["JAX101", "JAX404"]
    noted = cli("check", "--add-noqa", "caller.py")
    assert noted.code == 0
    assert "helper.py: no `# noqa` added: the file was not among those checked" in noted.stderr
    assert (root / "helper.py").read_text() == textwrap.dedent(HELPER)
    assert (root / "caller.py").read_text() == textwrap.dedent(CALLER)
