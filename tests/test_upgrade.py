"""The upgrade rules (JAX6xx): which uses of removed and deprecated JAX APIs are found, the fixes
each target JAX version allows, and the target version a project declares."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import textwrap
import types
import warnings

import pytest

from jaxlint.analysis.knowledge.removed_apis import CONSTANTS, LOADED_WITH_JAX, NEWEST_KNOWN, REMOVED_APIS, RemovedApi, Replacement
from jaxlint.fixes import apply_fixes, parses
from jaxlint.jax_versions import declared_jax_version, lower_bound, parse_version, show
from jaxlint.linter import lint_source

UPGRADE = {"JAX601", "JAX602", "JAX603"}


def found(source: str, target: str = "0.4.30") -> list[tuple[int, str]]:
    findings = lint_source(textwrap.dedent(source), "case.py", UPGRADE, {"target-jax-version": target})
    return sorted((f.start.row, f.code) for f in findings)


def fixed(source: str, target: str = "0.4.30", unsafe: bool = False) -> str:
    """Fixes applied pass after pass, as `jaxlint check --fix` applies them."""
    text = textwrap.dedent(source)
    for _ in range(10):
        findings = lint_source(text, "case.py", UPGRADE, {"target-jax-version": target})
        new, count = apply_fixes(text, findings, unsafe)
        if not count:
            break
        assert parses(new), new
        text = new
    return text


# ---- which names resolve ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "source, expected",
    [
        ("import jax\njax.tree_map(f, t)\n", [(2, "JAX601")]),
        ("import jax as j\nj.tree_map(f, t)\n", [(2, "JAX601")]),
        ("from jax import numpy as np_\nnp_.product(x)\n", [(2, "JAX601")]),
        # the import fails: it is reported, and the calls through it are not reported again
        ("from jax import tree_map\ntree_map(f, t)\ntree_map(g, t)\n", [(1, "JAX601")]),
        ("from jax import tree_map as tm\ntm(f, t)\n", [(1, "JAX601")]),
        # a removed module: its import, and the members that have advice of their own
        ("import jax.experimental.host_callback as hcb\nhcb.id_tap(f, x)\nhcb.barrier_wait()\n",
         [(1, "JAX602"), (2, "JAX602")]),
        ("from jax.experimental import host_callback\nhost_callback.call(f, x)\n", [(1, "JAX602"), (2, "JAX602")]),
        ("import jax.experimental.stax\njax.experimental.stax.Dense(3)\n", [(1, "JAX601"), (2, "JAX601")]),
        ("from jax.experimental.maps import xmap, Mesh\n", [(1, "JAX601"), (1, "JAX602")]),
        ("import jax\ny = jax.lax.tie_in(a, b).sum()\n", [(2, "JAX602")]),
        # a guard for JAX being installed is no guard for the removed name
        ("try:\n    import jax\nexcept ImportError:\n    pass\njax.tree_map(f, t)\n", [(5, "JAX601")]),
        ("import jax\n\ndef f(x):\n    return isinstance(x, jax.numpy.DeviceArray)\n", [(4, "JAX601")]),
        # compared as text, "0.10.2" < "0.4.25": the branch runs on the JAX without the name
        ("import jax\nif jax.__version__ < '0.4.25':\n    f = jax.tree_map\n", [(3, "JAX601")]),
    ],
)
def test_uses_resolve_through_imports(source, expected):
    assert found(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as np\nnp.product(x)\nnp.in1d(a, b)\n",  # NumPy's own, not JAX's
        "import jax\njax.tree.map(f, t)\njax.tree_util.tree_map(f, t)\njax.tree_util.tree_leaves(t)\n",
        "import jax\n\ndef f(jax):\n    return jax.tree_map(g, t)\n",  # a parameter named jax
        "import jax\n\ndef f():\n    jax = load()\n    return jax.tree_map(g, t)\n",
        "import jax\n\nclass M:\n    def f(self):\n        return self.jax.tree_map(g, t)\n",
        "from jax import tree_util\ntree_map = tree_util.tree_map\ntree_map(f, t)\n",
        # compatibility shims: the code handles the API's absence itself
        "try:\n    from jax import tree_map\nexcept ImportError:\n    from jax.tree_util import tree_map\n",
        "import jax\ntry:\n    leaves = jax.tree_leaves\nexcept AttributeError:\n    leaves = jax.tree_util.tree_leaves\n",
        "import jax\nmap_ = jax.tree_map if hasattr(jax, 'tree_map') else jax.tree_util.tree_map\n",
        "import jax\nif jax.__version_info__ < (0, 4, 25):\n    f = jax.tree_map\n",
        "try:\n    from jax.experimental import host_callback as hcb\nexcept ImportError:\n    hcb = None\n"
        "if hcb is not None:\n    hcb.id_tap(f, x)\n",
        "import jax\njax.tree_map = jax.tree_util.tree_map\n",  # a patch that restores the name
        "import jax.experimental.pjit\njax.experimental.pjit.pjit(f, in_shardings=s)\n",  # deprecated only from 0.8.0
        "import jax.experimental.shard_map as sm\n",  # the module stays; only its `shard_map` is deprecated
    ],
)
def test_look_alikes_are_quiet(source):
    assert found(source) == []


def _names(text: str, version: tuple) -> bool:
    """Whether `text` names the version (`0.4.1` is not named by `0.4.16`)."""
    return re.search(r"(?<![\d.])" + re.escape(".".join(map(str, version))) + r"(?![\d])", text) is not None


def test_every_row_carries_its_evidence():
    for api in REMOVED_APIS:
        assert api.removed or api.deprecated, api.name
        assert api.deprecated is None or api.removed is None or api.deprecated < api.removed, api.name
        for version in (api.deprecated, api.removed):
            assert version is None or _names(api.source, version), (api.name, version)
        assert api.replacements or api.how or api.call, api.name
        for replacement in api.replacements:
            assert replacement.name.startswith("jax.") or replacement.name in CONSTANTS, api.name
            assert replacement.since == (0, 1, 0) or _names(replacement.source, replacement.since), api.name


def _resolve(name: str):
    """The object a dotted name stands for in the installed JAX (its longest importable module, then
    attributes), DeprecationWarning raised as an error."""
    parts = name.split(".")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for cut in range(len(parts), 0, -1):
            try:
                found = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for part in parts[cut:]:
                found = _attribute(found, part)
            return found
    raise ImportError(name)


def _attribute(owner, name: str):
    """`getattr`, with a module's deprecated names looked up in JAX's own table of them: JAX
    warns only on a name's first lookup in the process (its module `__getattr__` is cached), and
    another test may have made it."""
    deprecated = getattr(owner, "_deprecations", None) if isinstance(owner, types.ModuleType) else None
    if isinstance(deprecated, dict) and name in deprecated and name not in vars(owner):
        message, value = deprecated[name]
        if value is None:
            raise AttributeError(message)
        raise DeprecationWarning(message)
    return getattr(owner, name)


def _state(name: str) -> str:
    """"removed", "deprecated" or "present": what the installed JAX does with the name."""
    try:
        _resolve(name)
    except DeprecationWarning:
        return "deprecated"
    except (ImportError, AttributeError):
        return "removed"
    return "present"


def _expected(api: RemovedApi, version: tuple) -> str:
    if api.removed is not None and api.removed <= version:
        return "removed"
    return "deprecated" if api.deprecated is not None and api.deprecated <= version else "present"


def _drift(rows, installed: tuple, newest_known: tuple) -> tuple[list[str], list[str]]:
    """What the installed JAX contradicts in `rows` (failures) and, for a JAX newer than the table
    knows, what it changed since (news). On a JAX the table knows, every row must agree exactly.
    On a newer one, what the table says is removed stays removed and every replacement resolves;
    a name it newly deprecates or removes, or a replacement it deprecates, is news, not an error."""
    newer = installed > newest_known
    failures, news = [], []
    for api in rows:
        expected, state = _expected(api, installed), _state(api.name)
        if state != expected:
            (news if newer and expected != "removed" else failures).append(f"{api.name}: {expected} in the table, {state} in JAX")
        for replacement in api.replacements:
            if replacement.name not in CONSTANTS and replacement.since <= installed:
                replaced = _state(replacement.name)
                if replaced != "present":
                    (news if newer and replaced == "deprecated" else failures).append(f"{replacement.name} (replacing {api.name}): {replaced}")
    return failures, news


def test_installed_jax_agrees_with_the_table():
    jax = pytest.importorskip("jax")
    failures, news = _drift(REMOVED_APIS, jax.__version_info__, NEWEST_KNOWN)
    assert not failures
    if news:
        warnings.warn(f"the table knows JAX {show(NEWEST_KNOWN)}; JAX {jax.__version__} also changed: {'; '.join(news)}")


# A row that is wrong on every JAX: jax.jit has never been deprecated, jax.numpy.prod never removed.
_WRONG_DEPRECATION = RemovedApi("jax.jit", (0, 4, 1), None, "a wrong row", how="-")
_WRONG_REMOVAL = RemovedApi("jax.numpy.prod", None, (0, 4, 1), "a wrong row", how="-")
_MISSING_REPLACEMENT = RemovedApi(
    "jax.numpy.product", (0, 4, 12), (0, 4, 16), "-", (Replacement("jax.numpy.no_such_name", (0, 1, 0), "-"),),
)


def test_drift_fails_on_a_wrong_row_for_a_jax_the_table_knows():
    jax = pytest.importorskip("jax")
    installed = jax.__version_info__
    for row in (_WRONG_DEPRECATION, _WRONG_REMOVAL, _MISSING_REPLACEMENT):
        failures, news = _drift([row], installed, installed)
        assert len(failures) == 1 and not news, row.name


def test_drift_on_a_newer_jax_reports_its_changes_and_keeps_what_the_table_says_removed():
    jax = pytest.importorskip("jax")
    older = (0, 4, 0)  # a table that knows only an older JAX than the one installed
    failures, news = _drift([_WRONG_DEPRECATION], jax.__version_info__, older)
    assert not failures and news == ["jax.jit: deprecated in the table, present in JAX"]
    for row in (_WRONG_REMOVAL, _MISSING_REPLACEMENT):
        failures, news = _drift([row], jax.__version_info__, older)
        assert len(failures) == 1 and not news, row.name


def test_import_jax_loads_the_modules_fixes_reach_through_it():
    pytest.importorskip("jax")
    program = "import jax, sys\nfor m in sys.argv[1:]:\n    obj = jax\n    for p in m.split('.')[1:]: obj = getattr(obj, p)\n"
    subprocess.run([sys.executable, "-c", program, *sorted(LOADED_WITH_JAX)], check=True)


# ---- the target version ----------------------------------------------------------------------
SAME_FILE = """
    import jax
    import jax.numpy as jnp
    import jax.experimental.pjit

    def area(y, params):
        moved = jax.tree_map(lambda p: p + 1, params)
        return jnp.trapz(y), moved, jax.experimental.pjit.pjit(area, in_shardings=None)
    """


def test_each_target_version_gets_the_fixes_it_has():
    # JAX 0.4.20: no jax.tree (0.4.25) and no jnp.trapezoid (0.4.26); pjit is not deprecated yet.
    old = fixed(SAME_FILE, "0.4.20")
    assert "jax.tree_util.tree_map(lambda p: p + 1, params)" in old
    assert "jax.scipy.integrate.trapezoid(y)" in old and "jax.experimental.pjit.pjit(" in old
    # JAX 0.8.0: the newer spellings, and pjit becomes jax.jit.
    new = fixed(SAME_FILE, "0.8.0")
    assert "jax.tree.map(lambda p: p + 1, params)" in new
    assert "jnp.trapezoid(y)" in new and "jax.jit(area, in_shardings=None)" in new
    assert found(SAME_FILE, "0.4.20") == [(7, "JAX601"), (8, "JAX601")]
    assert found(SAME_FILE, "0.8.0") == [(7, "JAX601"), (8, "JAX601"), (8, "JAX603")]


def test_without_the_replacement_the_message_says_when_it_came():
    findings = lint_source("import jax.numpy as jnp\njnp.trapz(y)\n", "case.py", UPGRADE, {"target-jax-version": "0.4.10"})
    (finding,) = findings
    assert finding.fix is None
    assert "0.4.16" in finding.message and "0.4.10" in finding.message


# ---- fixes --------------------------------------------------------------------------------------
def test_import_fix_keeps_the_other_names_and_the_comments():
    source = """
        from jax import (  # tree utilities
            jit,
            tree_map,
            tree_leaves as leaves,
        )

        def f(t):
            return tree_map(abs, leaves(t))
        """
    result = fixed(source)
    assert result == textwrap.dedent(
        """
        from jax import (  # tree utilities
            jit,
        )
        from jax.tree_util import tree_map, tree_leaves as leaves

        def f(t):
            return tree_map(abs, leaves(t))
        """
    )


@pytest.mark.parametrize(
    "before, after",
    [
        # a comment on a moved name's line goes with its new import; the others stay where they were
        (
            "from jax import (\n    tree_map,  # mapping\n    # about vmap\n    vmap,  # vectorising\n)\n",
            "from jax import (\n    # about vmap\n    vmap,  # vectorising\n)\nfrom jax.tree_util import tree_map  # mapping\n",
        ),
        (
            "from jax import (\n    vmap,  # v\n    tree_map  # m\n)\n",
            "from jax import (\n    vmap  # v\n)\nfrom jax.tree_util import tree_map  # m\n",
        ),
        (
            "from jax import (\n    # leading\n    tree_leaves,\n    jit,\n)\n",
            "from jax import (\n    # leading\n    jit,\n)\nfrom jax.tree_util import tree_leaves\n",
        ),
        # one name left in parentheses loses them
        ("from jax import (tree_leaves, jit)\n", "from jax import jit\nfrom jax.tree_util import tree_leaves\n"),
        ("from jax import (\n    tree_leaves,\n    jit,\n)\n", "from jax import jit\nfrom jax.tree_util import tree_leaves\n"),
        # a name the block imports already is not imported twice
        (
            "from jax.tree_util import tree_flatten\nfrom jax import tree_flatten, grad\n",
            "from jax.tree_util import tree_flatten\nfrom jax import grad\n",
        ),
        ("import jax\nfrom jax.tree_util import tree_map\nfrom jax import tree_map\nx = 1\n", "import jax\nfrom jax.tree_util import tree_map\nx = 1\n"),
        # `import jax` binds the name `jax` too, but does not load the module the fix imports
        (
            "import jax\nimport jax.experimental.optimizers\n",
            "import jax\nimport jax.example_libraries.optimizers\n",
        ),
        (
            "def g():\n    from jax.tree_util import tree_map\n    from jax import tree_map\n    return tree_map\n",
            "def g():\n    from jax.tree_util import tree_map\n    return tree_map\n",
        ),
    ],
)
def test_rebuilt_imports_keep_comments_and_never_repeat(before, after):
    assert fixed(before) == after


def test_import_fix_inside_a_function_keeps_its_indentation():
    result = fixed("def f(t):\n    from jax import tree_map\n    return tree_map(abs, t)\n")
    assert result == "def f(t):\n    from jax.tree_util import tree_map\n    return tree_map(abs, t)\n"


def test_module_rename_fixes_the_import_and_the_uses_through_jax():
    result = fixed("import jax.experimental.optimizers\nopt = jax.experimental.optimizers.adam(1e-3)\n")
    assert result == "import jax.example_libraries.optimizers\nopt = jax.example_libraries.optimizers.adam(1e-3)\n"


def test_import_jax_is_added_when_the_replacement_needs_it():
    source = "from __future__ import annotations\nimport jax.numpy as jnp\n\ndef f(x: jnp.DeviceArray):\n    return x\n"
    assert fixed(source) == (
        "from __future__ import annotations\nimport jax\nimport jax.numpy as jnp\n\ndef f(x: jax.Array):\n    return x\n"
    )


def test_no_fix_where_the_name_jax_means_something_else():
    source = "import jax.numpy as jnp\n\ndef f(x, jax):\n    return isinstance(x, jnp.DeviceArray)\n"
    (finding,) = lint_source(source, "case.py", UPGRADE)
    assert finding.code == "JAX601" and finding.fix is None


@pytest.mark.parametrize(
    "before, after",
    [
        ("jax.ops.index_update(x, jax.ops.index[0, :], v)", "x.at[0, :].set(v)"),
        ("jax.ops.index_add(a + b, idx, 1.0)", "(a + b).at[idx].add(1.0)"),
        ("jax.random.shuffle(key, x, axis=1)", "jax.random.permutation(key, x, axis=1, independent=True)"),
        ("jax.tree_multimap(f, a, b)", "jax.tree.map(f, a, b)"),
        ("jax.numpy.round_(x, 2)", "jax.numpy.round(x, 2)"),
    ],
)
def test_call_fixes(before, after):
    assert fixed(f"import jax\ny = {before}\n", unsafe=True) == f"import jax\ny = {after}\n"


@pytest.mark.parametrize(
    "before, after, target",
    [
        # the module that holds the replacement is imported where `import jax` does not load it
        ("import jax\nx = jax.core.Jaxpr\n", "import jax.extend.core\nimport jax\nx = jax.extend.core.Jaxpr\n", "0.4.30"),
        (
            "import jax\nfrom jax import core\ny = core.Var\n",
            "import jax.extend.core\nimport jax\nfrom jax import core\ny = jax.extend.core.Var\n",
            "0.4.30",
        ),
        (
            "import jax.extend.core\nimport jax\nx = jax.core.Literal\n",
            "import jax.extend.core\nimport jax\nx = jax.extend.core.Literal\n",
            "0.4.30",
        ),
        # before jnp.trapezoid (0.4.26), through `jax`, which loads jax.scipy.integrate
        ("import jax.numpy as jnp\ny = jnp.trapz(x)\n", "import jax\nimport jax.numpy as jnp\ny = jax.scipy.integrate.trapezoid(x)\n", "0.4.20"),
        # a constant replaces the name as it is
        (
            "from jax.interpreters import batching\nd = batching.not_mapped\nok = d is batching.not_mapped\n",
            "from jax.interpreters import batching\nd = None\nok = d is None\n",
            "0.4.30",
        ),
    ],
)
def test_fixes_reach_their_replacement(before, after, target):
    assert fixed(before, target) == after


def test_at_update_is_safe_only_on_a_jax_array():
    # `index_update` took any array-like (a NumPy array, a list); `.at` exists on JAX arrays only.
    unknown = "import jax\n\ndef f(x, i):\n    return jax.ops.index_update(x, i, 0.0)\n"
    assert fixed(unknown) == unknown
    known = "import jax\nimport jax.numpy as jnp\n\ndef f(i):\n    x = jnp.zeros(3)\n    return jax.ops.index_update(x, i, 0.0)\n"
    assert fixed(known).endswith("    return x.at[i].set(0.0)\n")


def test_calls_that_differ_are_left_alone():
    source = "import jax\ny = jax.ops.index_update(x, i, v, indices_are_sorted=True)\nf = jax.random.shuffle\n"
    assert fixed(source) == source


def test_unsafe_replacement_needs_unsafe_fixes():
    source = "import jax\n\ndef f(k: jax.random.KeyArray):\n    return k\n"
    assert fixed(source) == source
    assert "k: jax.Array" in fixed(source, unsafe=True)


def test_fixed_code_runs_under_jax():
    jax = pytest.importorskip("jax")
    source = """
        import jax
        import jax.numpy as jnp
        from jax import tree_map

        def run():
            x = jnp.arange(4.0)
            x = jax.ops.index_update(x, jax.ops.index[1], 10.0)
            x = jax.ops.index_add(x, 0, 1.0)
            return tree_map(lambda a: a * 2, {"x": x}), jnp.product(x[1:]), jnp.sometrue(x > 5)
        """
    namespace: dict = {}
    exec(compile(fixed(source), "fixed.py", "exec"), namespace)
    tree, product, some = namespace["run"]()
    assert tree["x"].tolist() == [2.0, 20.0, 4.0, 6.0] and float(product) == 60.0 and bool(some)
    assert jax.numpy.ones(1) is not None


# ---- the project's declared JAX --------------------------------------------------------------
@pytest.mark.parametrize(
    "requirement, bound",
    [
        ("jax>=0.4.20", (0, 4, 20)),
        ("jax[cuda12] >= 0.4.26, <0.5", (0, 4, 26)),
        ("jax==0.4.23 ; python_version >= '3.9'", (0, 4, 23)),
        ("jax~=0.4.16", (0, 4, 16)),
        ("jax", None),
        ("jax<0.5", None),
        ("jaxlib>=0.4.1", None),
        ("jax-md>=0.2", None),
        ("numpy>=1.24", None),
    ],
)
def test_lower_bound(requirement, bound):
    assert lower_bound(requirement) == bound


def test_declared_version_from_setup_py_constants_and_requirements(tmp_path):
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n_jax = '0.4.16'\n"
        "setup(install_requires=[f'jax >= {_jax}', 'numpy'], extras_require={'tpu': [f'jax[tpu] >= {_jax}']})\n"
    )
    (tmp_path / "requirements-dev.txt").write_text("jax>=0.4.25\n")
    assert declared_jax_version(tmp_path) == ((0, 4, 16), "setup.py")


def test_declared_version_from_setup_py_lists_held_in_names(tmp_path):
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nCORE = ['numpy', 'jax>=0.4.16']\nEXTRA = ['tf2jax']\n"
        "JAX = {'tpu': ['jax[tpu]>=0.4.20']}\nsetup(install_requires=CORE + EXTRA, extras_require=JAX)\n"
    )
    assert declared_jax_version(tmp_path) == ((0, 4, 16), "setup.py")


def test_declared_version_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["jax>=0.4.23"]\n')
    assert declared_jax_version(tmp_path) == ((0, 4, 23), "pyproject.toml")


def test_setting_defaults_to_the_declared_version_and_can_be_overridden(cli, make_files):
    make_files({
        "pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax>=0.4.10"]\n\n[tool.jaxlint]\nselect = ["JAX6"]\n',
        "m.py": "import jax.numpy as jnp\ny = jnp.trapz(x)\n",
    })
    assert "target-jax-version = 0.4.10" in cli("check", "--show-settings", "m.py").stdout
    old = cli("check", "--output-format", "json", "m.py").json
    assert old[0]["fix"] is None  # jax.scipy.integrate.trapezoid came in 0.4.16, jnp.trapezoid in 0.4.26
    new = cli("check", "--output-format", "json", "--config", "target-jax-version = '0.4.26'", "m.py").json
    assert new[0]["fix"]["edits"][0]["content"] == "jnp.trapezoid"


def test_invalid_setting_stops(cli, make_files):
    make_files({"jaxlint.toml": 'target-jax-version = "latest"\n', "m.py": "x = 1\n"})
    outcome = cli("check", "m.py")
    assert outcome.code == 2 and "target-jax-version" in outcome.stderr


def test_parse_version():
    assert parse_version("0.4.30") == (0, 4, 30)
    with pytest.raises(ValueError):
        parse_version("0.4.x")
