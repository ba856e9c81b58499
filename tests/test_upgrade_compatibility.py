"""Compatibility code is no use of a removed JAX API: code that runs only on the JAX releases where
the name exists is neither reported nor fixed.

Each form is a module written to run on old and new JAX alike; it is linted (no finding), fixed
(no edit) and run under the installed JAX (it works). Each bug twin is the same code where the
old name runs on a JAX that no longer has it: it is reported, and the installed JAX raises.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from jaxlint.linter import lint_source

UPGRADE = {"JAX601", "JAX602", "JAX603"}

FORMS = {
    # The fallback import after a `try` of the new one (distrax's `utils/transformations.py`).
    "except ImportError": """
        try:
          # jax >= 0.4.16
          from jax.extend import linear_util as lu
        except ImportError:
          from jax import linear_util as lu

        def run():
            return lu.wrap_init
        """,
    # The same with a tuple of errors (jax-md's `util.py`), and ModuleNotFoundError (evojax).
    "except (ImportError, AttributeError)": """
        try:
          from jax.extend.backend import get_backend
        except (ImportError, AttributeError):
          from jax.lib.xla_bridge import get_backend
        try:
            from jax.example_libraries import optimizers
        except ModuleNotFoundError:
            from jax.experimental import optimizers

        def run():
            return get_backend().platform, optimizers.sgd
        """,
    "except AttributeError": """
        import jax

        try:
            tree_map = jax.tree.map
        except AttributeError:
            tree_map = jax.tree_map

        def run():
            return tree_map(abs, [-1.0])
        """,
    # A fallback inside a fallback (equinox's `_jit.py`).
    "nested fallbacks": """
        import jax

        try:
            RuntimeFailure = jax.errors.JaxRuntimeError
        except AttributeError:
            try:
                RuntimeFailure = jax.lib.xla_extension.XlaRuntimeError
            except Exception:
                RuntimeFailure = RuntimeError

        def run():
            return RuntimeFailure
        """,
    "version tuple": """
        import jax

        if jax.__version_info__ < (0, 4, 25):
            tree_map = jax.tree_map
        else:
            tree_map = jax.tree.map
        if jax.version.__version_info__ >= (0, 4, 25):
            leaves = jax.tree.leaves
        else:
            leaves = jax.tree_leaves

        def run():
            return tree_map(abs, leaves([-1.0]))
        """,
    "packaging.version": """
        import jax
        from packaging import version

        if version.parse(jax.__version__) < version.parse("0.6"):
            tree_map = jax.tree_map
        else:
            tree_map = jax.tree_util.tree_map

        def run():
            return tree_map(abs, [-1.0])
        """,
    # A test the versions cannot say exactly: the author tested the environment.
    "version prefix": """
        import jax

        if jax.__version__.startswith("0.3."):
            tree_map = jax.tree_multimap
        else:
            tree_map = jax.tree_util.tree_map

        def run():
            return tree_map(abs, [-1.0])
        """,
    # A version tuple bound once, from whichever attribute the JAX has (kfac-jax's `parallel.py`).
    "version bound once": """
        import jax

        jax_version = (
            jax.__version_info__ if hasattr(jax, "__version_info__")
            else tuple(map(int, jax.__version__.split("."))))

        if jax_version >= (0, 6, 0):
            tree_map = jax.tree.map
        else:
            tree_map = jax.tree_map

        def run():
            return tree_map(abs, [-1.0])
        """,
    "flag bound once": """
        import jax

        _NEW_TREE = hasattr(jax, "tree")
        OLD_JAX = jax.__version_info__ < (0, 4, 25)

        if _NEW_TREE:
            tree_map = jax.tree.map
        else:
            tree_map = jax.tree_map
        if not _NEW_TREE:
            tree_leaves = jax.tree_leaves
        else:
            tree_leaves = jax.tree.leaves
        flatten = jax.tree_flatten if OLD_JAX else jax.tree.flatten

        def run():
            return tree_map(abs, tree_leaves([-1.0])), flatten([1])
        """,
    "conditional expression": """
        import jax

        OLD = jax.__version_info__ < (0, 4, 25)
        tree_map = jax.tree_map if OLD else jax.tree.map
        leaves = jax.tree.leaves if hasattr(jax, "tree") else jax.tree_leaves

        def run():
            return tree_map(abs, leaves([-1.0]))
        """,
    "getattr fallback": """
        import jax

        tree_map = getattr(jax.tree, "map", None) or jax.tree_map
        leaves = not hasattr(jax, "tree_leaves") and jax.tree.leaves or jax.tree_leaves

        def run():
            return tree_map(abs, leaves([-1.0]))
        """,
    "early return": """
        import jax

        def tree_map(f, tree):
            if jax.__version_info__ >= (0, 4, 25):
                return jax.tree.map(f, tree)
            return jax.tree_map(f, tree)

        def run():
            return tree_map(abs, [-1.0])
        """,
    # chex's `asserts.py`: the member is read only where `hasattr` found it.
    "and": """
        import jax

        def sharded(x):
            return hasattr(jax, "pxla") and isinstance(x, jax.pxla.ShardedDeviceArray)

        def run():
            return sharded(1)
        """,
}

# The same code where the old name runs on a JAX that lacks it.
BUG_TWINS = {
    # The `try` reaches for nothing of JAX: its handler runs on every JAX.
    "except ImportError": """
        try:
            import not_installed_anywhere
        except ImportError:
            from jax import linear_util as lu

        def run():
            return lu
        """,
    # The branch runs from 0.5 on; the name went in 0.6.0.
    "version tuple": """
        import jax

        if jax.__version_info__ >= (0, 5):
            tree_map = jax.tree_map
        else:
            tree_map = jax.tree_util.tree_map

        def run():
            return tree_map(abs, [-1.0])
        """,
    "packaging.version": """
        import jax
        from packaging import version

        if version.parse(jax.__version__) >= version.parse("0.4.25"):
            tree_map = jax.tree_map
        else:
            tree_map = jax.tree_util.tree_map

        def run():
            return tree_map(abs, [-1.0])
        """,
    # Compared as text, "0.10.0" < "0.4.26": the branch runs on JAX 0.10.
    "version text": """
        import jax

        if jax.__version__ < "0.4.26":
            tree_map = jax.tree_map
        else:
            tree_map = jax.tree.map

        def run():
            return tree_map(abs, [-1.0])
        """,
    "flag bound once": """
        import jax

        NEW_JAX = jax.__version_info__ >= (0, 4, 25)
        tree_map = jax.tree_map if NEW_JAX else jax.tree_util.tree_map

        def run():
            return tree_map(abs, [-1.0])
        """,
    # A flag bound twice is not a flag: its test says nothing sure.
    "flag bound twice": """
        import jax

        OLD = True
        OLD = False
        tree_map = jax.tree_util.tree_map if OLD else jax.tree_map

        def run():
            return tree_map(abs, [-1.0])
        """,
    # `hasattr` of a value of the program asks nothing of JAX.
    "hasattr of a value": """
        import jax

        def run(x=[-1.0]):
            if hasattr(x, "append"):
                return jax.tree_map(abs, x)
            return x
        """,
    # `getattr`'s default is evaluated first, whatever JAX has.
    "getattr default": """
        import jax

        def run():
            return getattr(jax.tree, "map", jax.tree_map)(abs, [-1.0])
        """,
}


def _lint(source: str) -> list:
    return lint_source(textwrap.dedent(source), "case.py", UPGRADE, {"target-jax-version": "0.4.30"})


@pytest.mark.parametrize("form", sorted(FORMS))
def test_compatibility_code_is_not_reported(form):
    assert _lint(FORMS[form]) == []


@pytest.mark.parametrize("form", sorted(FORMS))
def test_compatibility_code_is_not_edited(form, cli, make_files):
    folder = make_files({"case.py": FORMS[form], "jaxlint.toml": 'select = ["JAX6"]\n'})
    before = (folder / "case.py").read_bytes()
    cli("check", "--fix", "--unsafe-fixes", "case.py")
    assert (folder / "case.py").read_bytes() == before


@pytest.mark.parametrize("twin", sorted(BUG_TWINS))
def test_bug_twins_are_reported(twin):
    assert [f.code for f in _lint(BUG_TWINS[twin])] in (["JAX601"], ["JAX602"])


def _run_all(sources: dict) -> dict:
    """Each source's `run()` under the installed JAX, in one fresh interpreter: name -> error or None."""
    program = textwrap.dedent(
        """
        import json, sys, textwrap, warnings
        warnings.simplefilter("ignore")
        outcome = {}
        for name, source in json.loads(sys.stdin.read()).items():
            scope = {}
            try:
                exec(compile(textwrap.dedent(source), name, "exec"), scope)
                scope["run"]()
                outcome[name] = None
            except Exception as error:
                outcome[name] = type(error).__name__
        print(json.dumps(outcome))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], input=json.dumps(sources), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_jax_runs_the_forms_and_fails_on_the_twins():
    jax = pytest.importorskip("jax")
    if jax.__version_info__ < (0, 8, 0):
        pytest.skip("the twins fail on a JAX without the names they read")
    assert _run_all(FORMS) == {form: None for form in FORMS}
    failed = _run_all(BUG_TWINS)
    assert all(failed[twin] in ("AttributeError", "ImportError", "ModuleNotFoundError") for twin in BUG_TWINS), failed


# ---- the same principle in framework code, with the flag in the module or in another one ----------
MODELS = {
    "plain": """
        import jax
        import jax.numpy as jnp
        {flag_import}

        @jax.jit
        def forward(tree):
            tree_map = jax.tree_map if {flag} else jax.tree.map
            return tree_map(lambda a: a * 2, tree)

        def run():
            return forward({{"w": jnp.ones(2)}})
        """,
    "linen": """
        import jax
        import jax.numpy as jnp
        import flax.linen as nn
        {flag_import}

        class Model(nn.Module):
            @nn.compact
            def __call__(self, x):
                tree_map = jax.tree_map if {flag} else jax.tree.map
                return tree_map(lambda a: a * 2, {{"y": nn.Dense(2)(x)}})

        def run():
            model, x = Model(), jnp.ones((1, 3))
            return model.apply(model.init(jax.random.PRNGKey(0), x), x)
        """,
    "nnx": """
        import jax
        import jax.numpy as jnp
        from flax import nnx
        {flag_import}

        class Model(nnx.Module):
            def __init__(self, rngs):
                self.dense = nnx.Linear(3, 2, rngs=rngs)

            def __call__(self, x):
                tree_map = jax.tree_map if {flag} else jax.tree.map
                return tree_map(lambda a: a * 2, {{"y": self.dense(x)}})

        def run():
            return Model(nnx.Rngs(0))(jnp.ones((1, 3)))
        """,
    "haiku": """
        import jax
        import jax.numpy as jnp
        import haiku as hk
        {flag_import}

        def forward(x):
            tree_map = jax.tree_map if {flag} else jax.tree.map
            return tree_map(lambda a: a * 2, {{"y": hk.Linear(2)(x)}})

        def run():
            model, x = hk.transform(forward), jnp.ones((1, 3))
            return model.apply(model.init(jax.random.PRNGKey(0), x), None, x)
        """,
    "equinox": """
        import jax
        import jax.numpy as jnp
        import equinox as eqx
        {flag_import}

        class Model(eqx.Module):
            dense: eqx.nn.Linear

            def __init__(self, key):
                self.dense = eqx.nn.Linear(3, 2, key=key)

            def __call__(self, x):
                tree_map = jax.tree_map if {flag} else jax.tree.map
                return tree_map(lambda a: a * 2, {{"y": self.dense(x)}})

        def run():
            return Model(jax.random.PRNGKey(0))(jnp.ones(3))
        """,
}
# The flag: true only before JAX 0.4.25 (the old name exists there), or, in the bug twin, from it on.
FLAGS = {"clean": "jax.__version_info__ < (0, 4, 25)", "bug": "jax.__version_info__ >= (0, 4, 25)"}
# Where the flag is bound: in the model's module, or in another one read by name or as an attribute.
PLACES = {
    "same module": ("FLAG = {test}", "FLAG"),
    "imported name": ("from .compat import FLAG", "FLAG"),
    "module attribute": ("from . import compat", "compat.FLAG"),
}


def _matrix(make_files):
    files = {"pyproject.toml": '[tool.jaxlint]\nselect = ["JAX6"]\n'}
    for framework, model in MODELS.items():
        for twin, test in FLAGS.items():
            for place, (flag_import, flag) in PLACES.items():
                package = f"{framework}_{twin}_{place.replace(' ', '_')}"
                files[f"{package}/__init__.py"] = ""
                files[f"{package}/compat.py"] = f"import jax\nFLAG = {test}\n"
                files[f"{package}/model.py"] = model.format(flag_import=flag_import.format(test=test), flag=flag)
    return make_files(files)


def test_framework_matrix_reports_only_the_bug_twins(cli, make_files):
    _matrix(make_files)
    reported = {f["filename"].split("/")[-2] for f in cli("check", "--output-format", "json", ".").json}
    expected = {
        f"{framework}_bug_{place.replace(' ', '_')}" for framework in MODELS for place in PLACES
    }
    assert reported == expected


def test_jax_agrees_on_the_framework_matrix(tmp_path, make_files):
    pytest.importorskip("jax")
    for module in ("flax", "haiku", "equinox"):
        pytest.importorskip(module)
    folder = _matrix(make_files)
    packages = sorted(p.name for p in folder.iterdir() if p.is_dir())
    program = textwrap.dedent(
        """
        import importlib, json, sys, warnings
        warnings.simplefilter("ignore")
        outcome = {}
        for package in sys.argv[1:]:
            try:
                importlib.import_module(package + ".model").run()
                outcome[package] = None
            except Exception as error:
                outcome[package] = type(error).__name__
        print(json.dumps(outcome))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program, *packages], cwd=folder, capture_output=True, text=True, check=True
    )
    outcome = json.loads(done.stdout.splitlines()[-1])
    assert {p: outcome[p] for p in packages if "_clean_" in p} == {p: None for p in packages if "_clean_" in p}
    assert {p: outcome[p] for p in packages if "_bug_" in p} == {p: "AttributeError" for p in packages if "_bug_" in p}
