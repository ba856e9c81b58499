"""Following traced calls across the project's own modules: resolution, findings in the helper, the cache."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlint import runner
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING
from jaxlint.analysis.module import ModuleFacts
from jaxlint.analysis.project.project import IncomingCall, Project, ProjectIndex, call_from_json, call_to_json
from jaxlint.analysis.tracing.traced_functions import STAGED
from jaxlint.analysis.values.values import TRACED, TRACED_ARRAY, Trace, Value

SHOP = Path(__file__).parent / "projects" / "shop"
ENTRY = "(traced via `shop.train.train_step`)"


def marked(root: Path) -> set[tuple[str, int, str]]:
    """(file, row, code) of every `# JAXnnn` marker in a project's files."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        for row, line in enumerate(path.read_text().splitlines(), 1):
            for code in re.findall(r"#.*?\b(JAX\d{3})\b", line):
                found.add((path.relative_to(root).as_posix(), row, code))
    return found


def reported(findings: list[dict], root: Path) -> set[tuple[str, int, str]]:
    return {(Path(f["filename"]).relative_to(root).as_posix(), f["location"]["row"], f["code"]) for f in findings}


@pytest.fixture
def shop(tmp_path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root)
    return root


def lint(root: Path, *args: str, cli) -> list[dict]:
    return cli("check", "--output-format", "json", *args, str(root)).json


# ---- the acceptance project --------------------------------------------------------------------
def test_helpers_in_other_modules_are_reported_where_they_go_wrong(cli, shop):
    findings = lint(shop, "--no-cache", cli=cli)
    assert reported(findings, shop) == marked(shop)
    by_file = {Path(f["filename"]).name: f["message"] for f in findings}
    for helper in ("clip.py", "update.py"):  # absolute and re-exported imports
        assert by_file[helper].endswith(ENTRY)
    assert "traced via" not in by_file["train.py"]


def test_only_findings_the_trace_causes_name_its_entry_point(cli, shop):
    """noise.py's reused key is reported when the module is linted alone too (a key is reused whether
    traced or not): the trace through `train_step` is not the reason, so it is not named there."""
    by_file = {Path(f["filename"]).name: f["message"] for f in lint(shop, "--no-cache", cli=cli)}
    assert "traced via" not in by_file["noise.py"]
    assert by_file["clip.py"].endswith(ENTRY)


@pytest.fixture
def linted(monkeypatch) -> list[str]:
    """The names of the files linted (not taken from the cache) from here on."""
    names: list[str] = []
    lint_file = runner.lint_file

    def counting(path, *args, **kwargs):
        names.append(Path(path).name)
        return lint_file(path, *args, **kwargs)

    monkeypatch.setattr(runner, "lint_file", counting)
    return names


def test_linting_the_helpers_alone_lints_their_callers_and_reports_the_helpers(cli, shop):
    findings = lint(shop / "src" / "shop" / "ops", "--no-cache", cli=cli)
    assert reported(findings, shop) == {m for m in marked(shop) if m[0].startswith("src/shop/ops/")}


def test_a_cached_run_reports_an_edited_helper_and_relints_its_dependents(cli, shop, linted):
    first = lint(shop, cli=cli)
    assert reported(first, shop) == marked(shop)
    linted.clear()
    assert lint(shop, cli=cli) == first
    assert linted == []  # everything came from the cache

    clip = shop / "src" / "shop" / "ops" / "clip.py"
    clip.write_text(textwrap.dedent("""\
        import jax.numpy as jnp


        def clip(x, limit):
            return jnp.where(x.sum() > limit, x / 2, x)


        def double(x):
            return x.shape[0]
        """))
    linted.clear()
    after = lint(shop, cli=cli)
    # The helper's branch is gone, and `double` now returns a static value: the caller's `if` is fine.
    assert reported(after, shop) == {r for r in marked(shop) if r[0] not in ("src/shop/ops/clip.py", "src/shop/train.py")}
    assert sorted(set(linted)) == ["clip.py", "train.py"]

    clip.write_text(textwrap.dedent("""\
        def clip(x, limit):
            y = x * 2
            while y.sum() > limit:
                y = y / 2
            return y


        def double(x):
            return x * 2
        """))
    again = lint(shop, cli=cli)
    assert ("src/shop/ops/clip.py", 3, "JAX102") in reported(again, shop)
    assert ("src/shop/train.py", 12, "JAX101") in reported(again, shop)
    assert lint(shop, "--no-cache", cli=cli) == again


SCRIPT = """\
    import jax
    from helpers import clip


    @jax.jit
    def step(x):
        return clip(x)
    """
BRANCHING = "def clip(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"


@pytest.mark.parametrize("before", [{}, {"src/helpers.py": "import jax.numpy as jnp\n\n\ndef clip(x):\n    return jnp.abs(x)\n"}])
def test_a_cached_run_follows_an_import_to_a_module_created_since(cli, make_files, before):
    """`helpers` resolved to nothing, or to the project's `src/helpers.py`; a `helpers.py` created next
    to the script is what the import now reads, so the cached result of the script is stale."""
    root = make_files({"pyproject.toml": "", "scripts/run.py": SCRIPT, **before})
    assert lint(root, cli=cli) == []
    (root / "scripts" / "helpers.py").write_text(BRANCHING)
    findings = lint(root, cli=cli)
    assert reported(findings, root) == {("scripts/helpers.py", 2, "JAX101")}
    assert findings[0]["message"].endswith("(traced via `run.step`)")
    assert lint(root, cli=cli) == findings == lint(root, "--no-cache", cli=cli)


def test_a_cached_run_follows_a_caller_that_stops_calling(cli, shop):
    assert ("src/shop/ops/clip.py", 3, "JAX101") in reported(lint(shop, cli=cli), shop)
    train = shop / "src" / "shop" / "train.py"
    train.write_text(train.read_text().replace("clipping.clip(x, 1.0)", "x"))
    after = reported(lint(shop, cli=cli), shop)
    assert ("src/shop/ops/clip.py", 3, "JAX101") not in after
    assert ("src/shop/ops/update.py", 3, "JAX401") in after


def test_fixes_of_every_round_are_counted(cli, shop):
    update = shop / "src" / "shop" / "ops" / "update.py"
    # One in-place update found in the module alone, one only as `train_step` traces it.
    update.write_text(update.read_text() + "\n\nimport jax\n\n\n@jax.jit\ndef reset(y):\n    y[0, :] = 0.0\n    return y\n")
    out = cli("check", "--fix", "--unsafe-fixes", "--no-cache", str(shop))
    assert "(2 fixed, 3 remaining)" in out.stdout
    assert "x = x.at[:, 0].set(1.0)" in update.read_text()
    assert "y = y.at[0, :].set(0.0)" in update.read_text()


def test_worker_processes_give_the_same_results(shop):
    # In a fresh interpreter: forking this one, which may have imported JAX, is unsafe.
    script = textwrap.dedent("""\
        import json, sys
        from jaxlint import runner
        from jaxlint.rules import all_rules
        runner._SERIAL_BYTES = int(sys.argv[1])
        results = runner.lint_files(sys.argv[2:], runner.LintSettings(codes=frozenset(all_rules())))
        print(json.dumps(sorted([r.path, f.start.row, f.code, f.message] for r in results for f in r.findings)))
        """)
    files = sorted(str(p) for p in shop.rglob("*.py"))

    def run(serial_bytes: int) -> list:
        out = subprocess.run(
            [sys.executable, "-c", script, str(serial_bytes), *files], capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    serial, parallel = run(10**9), run(0)
    assert parallel == serial
    assert len(serial) == len(marked(shop))


def test_jax_fails_in_the_helper_at_the_reported_line(shop):
    pytest.importorskip("jax")
    script = textwrap.dedent("""\
        import sys, traceback
        import jax, jax.numpy as jnp
        from shop.train import train_step
        try:
            train_step(jnp.ones((2, 2)), jax.random.key(0))
        except Exception as exc:
            frame = [f for f in traceback.extract_tb(exc.__traceback__) if "shop" in f.filename][-1]
            print(type(exc).__name__, frame.filename.rsplit("/", 1)[-1], frame.lineno)
        """)
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=shop / "src", capture_output=True, text=True, timeout=300
    )
    assert out.stdout.split() == ["TracerBoolConversionError", "clip.py", "3"], out.stderr


# ---- which files form the project --------------------------------------------------------------
def test_module_names_follow_packages_and_src_layouts(tmp_path):
    for name in ("pyproject.toml", "src/pkg/__init__.py", "src/pkg/sub/__init__.py", "src/pkg/sub/m.py", "tools/run.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    index = ProjectIndex()
    src = str(tmp_path / "src")
    assert index.module_name(str(tmp_path / "src/pkg/sub/m.py")) == ("pkg.sub.m", "pkg.sub", src)
    assert index.module_name(str(tmp_path / "src/pkg/sub/__init__.py")) == ("pkg.sub", "pkg.sub", src)
    # A script outside any package imports what lies next to it, and the project's modules.
    roots = index.search_roots(str(tmp_path / "tools/run.py"))
    assert roots == (str(tmp_path / "tools"), str(tmp_path), src)
    assert index.find_module("pkg.sub.m", roots)[0] == str(tmp_path / "src/pkg/sub/m.py")
    assert index.find_module("pkg.sub", roots)[0] == str(tmp_path / "src/pkg/sub/__init__.py")
    assert index.find_module("pkg.missing", roots)[0] is None
    # What was looked for and is missing: a whole missing folder stands for the files under it.
    _, absent = index.find_module("pkg.sub.m", roots)
    assert set(absent) == {str(tmp_path / "tools/pkg"), str(tmp_path / "pkg")}


NAMESPACED = {
    # No project marker, and `systems/` has no `__init__.py`: a namespace package inside `app`.
    "repo/app/__init__.py": "",
    "repo/app/types.py": """
        from typing import NamedTuple

        import jax


        class Transition(NamedTuple):
            reward: jax.Array
        """,
    "repo/app/systems/dqn.py": """
        import jax

        from app.types import Transition


        @jax.jit
        def loss(batch: Transition):
            return min(max(batch.reward, -1.0), 1.0)
        """,
}


def test_a_namespace_package_imports_its_package_by_absolute_name(cli, make_files):
    """A module in a folder without `__init__.py` inside package `app` imports `app.types`: the
    folder above `app` is where Python, run from the repository, finds it. The folder is a
    namespace portion of `app`: the module is `app.systems.dqn`."""
    root = make_files(NAMESPACED)
    index = ProjectIndex()
    dqn = str(root / "repo/app/systems/dqn.py")
    assert index.module_name(dqn) == ("app.systems.dqn", "app.systems", str(root / "repo"))
    assert index.namespace_root(str(root / "repo/app/systems"), "app") == str(root / "repo")
    assert index.namespace_root(str(root / "repo/app/systems"), "other") is None
    out = cli("check", "--no-cache", "--output-format", "json", "repo/app/systems/dqn.py")
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX113", 9)]


# The same modules, `dqn.py` reading its package by a relative import.
RELATIVE = {
    **NAMESPACED,
    "repo/app/systems/dqn.py": NAMESPACED["repo/app/systems/dqn.py"].replace(
        "from app.types import Transition", "from ..types import Transition"
    ),
}


def test_a_namespace_portion_reads_its_package_by_relative_imports(cli, make_files):
    """`from ..types import Transition` in `app/systems/` (no `__init__.py`) reads `app.types`, as
    Python does: the class's array field is traced in the jitted function."""
    make_files(RELATIVE)
    out = cli("check", "--no-cache", "--output-format", "json", "repo/app/systems/dqn.py")
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX113", 9)]


def test_a_subpackage_named_as_a_library_is_not_that_library(tmp_path):
    """`lib/_src/numpy/ops.py` imports `numpy`: its folder is the subpackage `lib._src.numpy`, not
    a top-level `numpy` of the project, so the library it means is NumPy's, never followed."""
    ops = tmp_path / "lib" / "_src" / "numpy" / "ops.py"
    ops.parent.mkdir(parents=True)
    for package in ("lib", "lib/_src", "lib/_src/numpy"):
        (tmp_path / package / "__init__.py").write_text("")
    ops.write_text("import numpy as np\n")
    index = ProjectIndex()
    assert index.namespace_root(str(ops.parent), "numpy") is None
    assert str(tmp_path / "lib" / "_src") not in index.import_roots(str(ops), "numpy")


@pytest.mark.parametrize("files", [NAMESPACED, RELATIVE], ids=["absolute", "relative"])
def test_python_imports_the_namespace_package_from_the_repository(make_files, monkeypatch, files):
    jax = pytest.importorskip("jax")
    root = make_files(files)
    monkeypatch.syspath_prepend(str(root / "repo"))
    for name in ("app", "app.types", "app.systems", "app.systems.dqn"):
        monkeypatch.delitem(sys.modules, name, raising=False)  # restored after the test
    from app.systems import dqn
    from app.types import Transition

    with pytest.raises(jax.errors.TracerBoolConversionError):
        dqn.loss(Transition(jax.numpy.float32(2.0)))


# A checkout holding an `__init__.py` of its own at its root, whose scripts import its packages by
# absolute name: Python, run from the root (where `pyproject.toml` is), finds them there.
CHECKOUT_PACKAGE = {
    "jax-aht/__init__.py": "",
    "jax-aht/pyproject.toml": "[project]\nname = 'aht'\n",
    "jax-aht/app/__init__.py": "",
    "jax-aht/app/types.py": NAMESPACED["repo/app/types.py"],
    "jax-aht/app/dqn.py": NAMESPACED["repo/app/systems/dqn.py"],
}


@pytest.mark.parametrize("root", ["jax-aht", "aht"])
def test_a_checkout_with_an_init_file_imports_its_packages_from_its_root(cli, make_files, root):
    """A folder whose name is no identifier (`jax-aht/`) is no package, whatever it holds: `app`
    is the top-level package. Named as one (`aht/`), it may be a package, and the project root
    nearest the module, below it, is where `app` is found all the same."""
    made = make_files({name.replace("jax-aht/", f"{root}/"): text for name, text in CHECKOUT_PACKAGE.items()})
    dqn = str(made / root / "app/dqn.py")
    if root == "jax-aht":
        assert ProjectIndex().module_name(dqn) == ("app.dqn", "app", str(made / root))
    out = cli("check", "--no-cache", "--output-format", "json", f"{root}/app/dqn.py")
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX113", 9)]


def test_python_imports_the_package_from_the_checkout_root(make_files, monkeypatch):
    jax = pytest.importorskip("jax")
    root = make_files(CHECKOUT_PACKAGE)
    monkeypatch.syspath_prepend(str(root / "jax-aht"))
    for name in ("app", "app.types", "app.dqn"):
        monkeypatch.delitem(sys.modules, name, raising=False)  # restored after the test
    from app import dqn
    from app.types import Transition

    with pytest.raises(jax.errors.TracerBoolConversionError):
        dqn.loss(Transition(jax.numpy.float32(2.0)))


@pytest.mark.parametrize(
    "statement, package, expected",
    [
        ("from . import util", "pkg.sub", "pkg.sub.util"),
        ("from .util import clip", "pkg.sub", "pkg.sub.util.clip"),
        ("from ..util import clip", "pkg.sub", "pkg.util.clip"),
        ("from ... import clip", "pkg.sub", None),  # above the top-level package
        ("from . import util", "", None),  # a module in no package
        ("from .util import clip", None, None),  # linted alone: the package is unknown
    ],
)
def test_relative_imports_resolve_against_the_package(statement, package, expected):
    tree = ast.parse(f"{statement}\n{statement.split()[-1]}\n")
    names = Names(tree, package, SPELLING)
    assert names.qualname(tree.body[1].value) == expected


def test_reexport_chains_and_import_cycles_terminate(cli, make_files, tmp_path):
    make_files({
        "pyproject.toml": "",
        "pkg/__init__.py": "from pkg.a import helper\nfrom pkg import b as helper2\n",
        "pkg/a.py": """\
            from pkg import b


            def helper(x):
                return b.other(x)
            """,
        "pkg/b.py": """\
            import pkg


            def other(x):
                if x > 0:  # JAX101
                    return pkg.helper(x - 1)
                return x
            """,
        "pkg/c.py": """\
            import jax
            from pkg import helper


            @jax.jit
            def step(x):
                return helper(x)
            """,
    })
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert reported(findings, tmp_path) == marked(tmp_path)
    assert findings[0]["message"].endswith("(traced via `pkg.c.step`)")


# A module that reads everything through star imports: `jax` and `jnp` come from `constants`,
# by way of `utils`, which star-imports it in turn (and `world`, which star-imports it back).
STARRED = {
    "pyproject.toml": "",
    "game/__init__.py": "",
    "game/constants.py": """\
        import jax
        import jax.numpy as jnp
        import numpy as np

        SEA = 1
        _HIDDEN = jnp
        """,
    "game/utils.py": "from game.constants import *\nfrom game.world import *\n",
    "game/world.py": """\
        from game.utils import *


        def generate(rng):
            water = jax.random.uniform(rng, (4, 4))
            world = jnp.where(water > 0.5, SEA, 0)
            world[0, 0] = 2  # JAX401: `world` is what `jnp.where` returns
            return world


        def generate_all(rngs):
            return jax.vmap(generate)(rngs)
        """,
}


def test_a_star_import_binds_the_public_names_of_the_module(cli, make_files):
    """`from game.utils import *` binds what `utils` binds, its own star import's names included:
    `jnp.where` is `jax.numpy.where`, so its result is a JAX array, updated in place. Two modules
    star-importing each other terminate."""
    root = make_files(STARRED)
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert reported(findings, root) == marked(root)


def test_a_star_import_binds_only_what_all_lists(cli, make_files):
    """With `__all__`, a star import binds the names it lists, and no others: `jnp` unbound is no
    name of JAX's, and nothing is reported."""
    files = dict(STARRED)
    files["game/constants.py"] = STARRED["game/constants.py"].rstrip(" ") + '        __all__ = ["jax", "SEA"]\n'
    make_files(files)
    assert cli("check", "--no-cache", "--output-format", "json").json == []


def test_a_private_name_is_not_bound_by_a_star_import(cli, make_files):
    files = dict(STARRED)
    files["game/world.py"] = STARRED["game/world.py"].replace("jnp.where", "_HIDDEN.where").replace("  # JAX401: `world` is what `jnp.where` returns", "")
    make_files(files)
    assert cli("check", "--no-cache", "--output-format", "json").json == []


# ---- what stays opaque -------------------------------------------------------------------------
OPAQUE_CALLER = """\
    import jax
    from helpers import {name}


    @jax.jit
    def step(x):
        return {name}(x)
    """


@pytest.mark.parametrize(
    "name, helper",
    [
        # A decorator may replace the function.
        ("cached", "import functools\n\n\n@functools.lru_cache\ndef cached(x):\n    if x > 0:\n        return 1\n    return 0\n"),
        # Type dispatch: the path a tracer takes is not the one the analysis would follow.
        ("as_array", "import numpy as np\n\n\ndef as_array(x):\n    if isinstance(x, float):\n        return np.asarray(x)\n    return x\n"),
        ("shape_of", "import numpy as np\n\n\ndef shape_of(a):\n    return a.shape if hasattr(a, 'shape') else np.asarray(a).shape\n"),
        # ... also through a function of its own module.
        ("dtype_of", "import numpy as np\n\n\ndef dtype_of(x):\n    if _python(x):\n        return np.asarray(x).dtype\n    return x.dtype\n\n\ndef _python(x):\n    return type(x) in (int, float)\n"),
    ],
)
def test_callees_the_analysis_cannot_follow_stay_opaque(cli, make_files, name, helper):
    make_files({"pyproject.toml": "", "main.py": OPAQUE_CALLER.format(name=name), "helpers.py": helper})
    assert cli("check", "--no-cache", "--output-format", "json").json == []


STATIC_CALLS = """\
    import jax
    import numpy as np
    from helpers import scale, time_ids


    @jax.jit
    def step(x):
        return x + scale(3.0, 4)


    @jax.jit
    def embed(x):
        ids = time_ids((64, 64), x.shape[0])
        return x, np.concatenate([ids, ids])  # JAX107
    """


def test_calls_without_traced_arguments_are_followed_with_their_static_values(cli, make_files):
    """A helper of another module called from traced code runs under the trace whatever it is
    given: a Python test of its static arguments is no finding, and a `jax.numpy` array it
    makes is a tracer there, as in the caller's own module (JAX stages every operation)."""
    root = make_files({
        "pyproject.toml": "",
        "helpers.py": (
            "import jax.numpy as jnp\n\n\ndef scale(x, n):\n    if n > 2:\n        return x * n\n    return x\n\n\n"
            "def time_ids(size, batch):\n    return jnp.array([list(size)] * batch)\n"
        ),
        "main.py": textwrap.dedent(STATIC_CALLS),
    })
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert reported(findings, root) == marked(root) == {("main.py", 14, "JAX107")}
    jax = pytest.importorskip("jax")
    sys.path.insert(0, str(root))
    try:
        import main
        assert float(main.step(1.0)) == 13.0
        with pytest.raises(jax.errors.TracerArrayConversionError):
            main.embed(jax.numpy.ones((2, 3)))
    finally:
        sys.path.remove(str(root))
        for name in ("main", "helpers"):
            sys.modules.pop(name, None)


def test_names_of_the_modelled_libraries_are_never_followed(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "jax").mkdir()
    (tmp_path / "jax" / "__init__.py").write_text("")
    (tmp_path / "jax" / "extra.py").write_text("def branch(x):\n    if x > 0:\n        return x\n    return -x\n")
    link = Project(facts=ModuleFacts).link(str(tmp_path / "main.py"))
    assert link.callee("jax.extra.branch") is not None  # it resolves...
    assert link.follow("jax.extra.branch", [TRACED], {}, STAGED, 0).trace is Trace.UNKNOWN  # ...but JAX is a table
    assert link.calls == set()


def test_a_traced_container_is_false_only_when_empty(cli, make_files):
    # `not leaves` is the length of a list of traced leaves: a Python bool, even under jit.
    make_files({"a.py": """\
        import jax


        @jax.jit
        def f(tree):
            leaves = jax.tree_util.tree_leaves(tree)
            if not leaves:
                return tree
            return leaves[0]
        """})
    assert cli("check", "--no-cache", "--output-format", "json").json == []


# ---- values crossing modules -------------------------------------------------------------------
def test_a_helpers_return_value_reaches_the_caller(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text("def double(x):\n    return x * 2\n\n\ndef size(x):\n    return x.shape[0]\n")
    link = Project(facts=ModuleFacts).link(str(tmp_path / "main.py"))
    link.entry = "main.step"
    assert link.follow("helpers.double", [TRACED_ARRAY], {}, STAGED, 0).trace is Trace.TRACED
    assert link.follow("helpers.size", [TRACED_ARRAY], {}, STAGED, 0).trace is Trace.STATIC
    assert {(c.function, c.entry) for c in link.calls} == {("double", "main.step"), ("size", "main.step")}
    assert link.deps == {str(tmp_path / "helpers.py")}


def test_a_module_without_the_words_a_question_needs_is_not_read_for_it(tmp_path):
    """`pkg.geometry.rotate` is a def of a module whose text holds no word a key needs: asked
    whether it takes a key, the project answers from the text, reads no tree, and still records
    the module as a dependency (a key appearing there later changes the answer)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "geometry.py").write_text("def rotate(x, q):\n    return x * q\n")
    (tmp_path / "pkg" / "noise.py").write_text("import jax\n\n\ndef rotate(x, key):\n    return x * jax.random.normal(key)\n")
    project = Project(facts=ModuleFacts)
    link = project.link(str(tmp_path / "pkg" / "main.py"))
    words = ("random", "key", "rng")
    assert link.defined_without("pkg.geometry.rotate", words)
    assert not link.defined_without("pkg.noise.rotate", words)
    assert not link.defined_without("pkg.missing.rotate", words)
    assert project.loaded(str(tmp_path / "pkg" / "geometry.py")) is None
    assert str(tmp_path / "pkg" / "geometry.py") in link.deps


def test_summaries_say_what_a_function_does_with_each_parameter(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""\
        def update(state, x, flag):
            state["last"] = x
            if flag:
                x = x + 1
            return x * 2
        """))
    project = Project(facts=ModuleFacts)
    function = project.link(str(tmp_path / "main.py")).callee("helpers.update")
    state, x, flag = project.summary(function)
    assert (state.mutated, state.reaches_return, state.truth_tested) == (True, False, False)
    assert (x.mutated, x.reaches_return, x.truth_tested) == (False, True, False)
    assert (flag.mutated, flag.reaches_return, flag.truth_tested) == (False, False, True)


def test_summaries_say_what_every_call_in_the_project_passes(tmp_path):
    """Top down: `span` is given a Python value by every call in the project (a shape, a literal),
    wherever the calls are; `x` an array by one of them; `Window.__call__`'s `size` shapes only.
    Each is read once per run: asked again, the answer is kept, and the modules read are the
    asking module's dependencies each time."""
    files = {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/helpers.py": """\
            import jax
            import numpy as np


            def window(x: jax.Array, span, scale=1.0):
                return x[: np.arange(span).size] * scale


            class Window:
                def __call__(self, x, size):
                    return x[: np.arange(size).size]
            """,
        "pkg/main.py": """\
            import jax

            from pkg import helpers
            from pkg.helpers import Window, window


            @jax.jit
            def step(x):
                return window(x, x.shape[0], 2.0) + helpers.window(x, 3, x.sum()) + Window()(x, x.shape[-1])
            """,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    project = Project(facts=ModuleFacts)
    link = project.link(str(tmp_path / "pkg/other.py"))
    x, span, scale = link.summary(link.callee("pkg.helpers.window"))
    assert (x.array, x.python) == (True, False)
    assert (span.array, span.python) == (False, True)
    assert scale.python is False  # `x.sum()`: an array
    x, size = link.summary(link.instance_call("pkg.helpers.Window"))
    assert (x.python, size.python) == (False, True)
    assert link.summary(link.callee("pkg.helpers.window")) is project.summary(link.callee("pkg.helpers.window"))
    again = project.link(str(tmp_path / "pkg/another.py"))
    again.summary(again.callee("pkg.helpers.window"))
    assert str(tmp_path / "pkg/main.py") in link.deps and str(tmp_path / "pkg/main.py") in again.deps


def test_incoming_calls_survive_the_cache_format():
    nested = Value(Trace.TRACED, items=(TRACED_ARRAY, Value(Trace.STATIC)), element=TRACED)
    call = IncomingCall("/p/helpers.py", "clip", (("limit", Value(Trace.STATIC)), ("x", nested)), STAGED, "main.step")
    assert call_from_json(call_to_json(call)) == call


# ---- classes of other modules ------------------------------------------------------------------
PYTREE_STATE = """\
    import dataclasses

    import jax


    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class State:
        x: jax.Array
        steps: int = dataclasses.field(metadata=dict(static=True), default=1)
    """

PYTREE_STEP = """\
    import jax

    from state import State


    @jax.jit
    def step(s: State):
        total = s.x
        for _ in range(s.steps):
            if s.x.sum() > 0:  # JAX101
                total = total - s.x
        return State(total, s.steps)
    """


def test_an_annotated_pytree_class_of_another_module_types_its_fields(cli, make_files):
    root = make_files({"pyproject.toml": "", "state.py": PYTREE_STATE, "step.py": PYTREE_STEP})
    assert reported(cli("check", "--no-cache", "--output-format", "json").json, root) == marked(root)


def test_jax_traces_the_array_field_and_not_the_static_one(make_files, monkeypatch):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    root = make_files({"state.py": PYTREE_STATE, "step.py": PYTREE_STEP.replace("  # JAX101", "")})
    monkeypatch.syspath_prepend(str(root))
    for name in ("state", "step"):
        sys.modules.pop(name, None)
    import state
    import step

    with pytest.raises(jax.errors.TracerBoolConversionError):
        step.step(state.State(jnp.ones(2), 2))


# ---- one way through for a document ------------------------------------------------------------
CALLERS = Path(__file__).parent / "projects" / "callers"


@pytest.fixture
def callers_project(tmp_path) -> Path:
    root = tmp_path / "callers"
    shutil.copytree(CALLERS, root)
    return root


def by_file(findings: list[dict], root: Path) -> dict[str, set[tuple[int, int, str, str]]]:
    found: dict[str, set] = {}
    for f in findings:
        name = Path(f["filename"]).relative_to(root).as_posix()
        found.setdefault(name, set()).add((f["location"]["row"], f["location"]["column"], f["code"], f["message"]))
    return found


def test_a_file_has_the_same_findings_alone_in_its_folder_and_from_standard_input(cli, callers_project):
    """helpers.py and scale.py go wrong only when main.py's jitted functions call them (scale.py
    through the package's re-export, helpers.py directly and through layers.py), and evaluation.py
    only because sweep.py calls it again and again (JAX502 at its build): checking one file,
    or its text on standard input, lints those callers too and reports the file's findings as the
    folder's check does. Checking the file also reports what its traced calls cause in the other
    files (main.py's and layers.py's in helpers.py): those are the other files' own findings."""
    root = callers_project
    folder = by_file(lint(root, "--no-cache", cli=cli), root)
    assert {(name, code) for name, found in folder.items() for _, _, code, _ in found} == {
        (name, code) for name, _, code in marked(root)
    }
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        alone = by_file(cli("check", "--no-cache", "--output-format", "json", str(path)).json, root)
        stdin = cli(
            "check", "--no-cache", "--output-format", "json", "--stdin-filename", str(path), "-",
            input=path.read_bytes(),
        ).json
        own = {name: folder[name]} if name in folder else {}
        assert by_file(stdin, root) == own, name
        assert {n: found for n, found in alone.items() if n == name} == own, name
        assert all(found <= folder.get(other, set()) for other, found in alone.items()), name
    elsewhere = by_file(cli("check", "--no-cache", "--output-format", "json", str(root / "pkg" / "main.py")).json, root)
    assert set(elsewhere) == {"pkg/helpers.py", "pkg/norms.py", "pkg/scale.py"}


def test_a_buffer_is_linted_with_its_text_not_the_files(cli, callers_project):
    """The text on standard input replaces the file's for the whole run: the callers that follow
    calls into it read the buffer, and the file on disk is neither read for it nor cached."""
    helpers = callers_project / "pkg" / "helpers.py"
    fixed = "import jax.numpy as jnp\n\n\ndef clip(x):\n    return jnp.abs(x)\n"
    out = cli("check", "--output-format", "json", "--stdin-filename", str(helpers), "-", input=fixed).json
    assert out == []
    assert [f["code"] for f in lint(helpers, cli=cli)] == ["JAX101"]  # the file on disk still has the bug


def test_a_checked_file_brings_its_callers_through_the_cache(cli, callers_project, linted):
    helpers = callers_project / "pkg" / "helpers.py"
    assert [f["code"] for f in lint(helpers, cli=cli)] == ["JAX101"]
    assert {"helpers.py", "layers.py", "main.py"} <= set(linted)
    linted.clear()
    assert [f["code"] for f in lint(helpers, cli=cli)] == ["JAX101"]
    assert linted == []  # a repeat run is read from the cache, callers included


TESTED_HELPER = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/helpers.py": textwrap.dedent("""
        def clip(x):
            if x.sum() > 0:
                return x
            return -x
    """),
}
JITS_IT = textwrap.dedent("""
    import jax
    import jax.numpy as jnp
    from pkg import helpers

    def run():
        return jax.jit(helpers.clip)(jnp.ones(3))
""")


@pytest.mark.parametrize(("where", "reported"), [("pkg/train.py", True), ("pkg/helpers_test.py", False), ("tests/test_helpers.py", False)])
def test_a_test_files_transformation_of_another_modules_function_is_not_followed(cli, make_files, where, reported):
    """A test transforms the functions it tests in ways it shows they survive (a test failing on
    the bug already says so): the module that jits `helpers.clip` traces it there, a test does not."""
    root = make_files({**TESTED_HELPER, where: JITS_IT})
    found = {(Path(f["filename"]).name, f["code"]) for f in cli("check", "--output-format", "json", "--no-cache", str(root)).json}
    assert (("helpers.py", "JAX101") in found) is reported


def _fresh_import(root: Path, module: str, monkeypatch):
    """`module` of the package `pkg` written under `root`, imported anew (an earlier test's `pkg` forgotten)."""
    import importlib

    if str(root) not in sys.path:
        monkeypatch.syspath_prepend(str(root))
        for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            monkeypatch.delitem(sys.modules, name)
    return importlib.import_module(module)


# The helper's `if` is on the key's draw: traced wherever the function is transformed.
GAME = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/game.py": textwrap.dedent("""
        import jax

        def play(key, params, steps):
            first = jax.random.randint(key, (), 0, 2)
            if first == 0:
                return params
            return params + steps
    """),
}
# Ways of handing `play` to a transformation from another module: through a `functools.partial`
# that fixes its other arguments, directly or bound to a name first.
PLAYS = {
    "partial named": """
        def run(keys, params):
            play_fn = partial(play, params=params, steps=3)
            return jax.vmap(play_fn)(keys)
    """,
    "partial inline": """
        def run(keys, params):
            return jax.vmap(partial(play, params=params, steps=3))(keys)
    """,
    "partial positional": """
        def run(keys, params):
            return jax.vmap(partial(play, steps=3), in_axes=(0, None))(keys, params)
    """,
    "in a test function": """
        def test_play(keys, params):
            return jax.vmap(partial(play, params=params, steps=3))(keys)
    """,
}
_PLAYS_HEADER = """
        from functools import partial
        import jax
        import jax.numpy as jnp
        from pkg.game import play
"""


@pytest.mark.parametrize("way", PLAYS)
def test_a_partial_of_another_modules_function_handed_to_a_transformation_traces_it(cli, make_files, way):
    """`jax.vmap(partial(play, params=p))` traces `play` with the arguments the call maps (the
    key) traced and those the partial fixed as the caller's values. A test function's
    transformation is not followed, as a test file's is not."""
    root = make_files({**GAME, "pkg/train.py": textwrap.dedent(_PLAYS_HEADER + PLAYS[way])})
    found = {(Path(f["filename"]).name, f["code"]) for f in cli("check", "--output-format", "json", "--no-cache", str(root)).json}
    assert (("game.py", "JAX101") in found) is (way != "in a test function")


@pytest.mark.parametrize("way", [w for w in PLAYS if w != "in a test function"])
def test_jax_traces_a_partial_of_another_modules_function(make_files, way, monkeypatch):
    """JAX agrees: each way of handing `play` over runs its `if` on a tracer."""
    jax = pytest.importorskip("jax")
    train = _fresh_import(make_files({**GAME, "pkg/train.py": textwrap.dedent(_PLAYS_HEADER + PLAYS[way])}), "pkg.train", monkeypatch)

    keys = jax.random.split(jax.random.key(0), 2)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        train.run(keys, jax.numpy.zeros(()))


# A partial fixing the first argument (a model, used as a static argument of a jit there): the
# mapped arguments bind the parameters after it, the model stays the caller's value.
MODEL_STEP = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/steps.py": textwrap.dedent("""
        import functools
        import jax

        @functools.partial(jax.jit, static_argnums=0)
        def loss(model, x):
            return x * model.scale

        def step(model, key, x):
            return loss(model, x + jax.random.normal(key))
    """),
    "pkg/train.py": textwrap.dedent("""
        import functools
        import jax
        from pkg.steps import step

        class Model:
            scale = 2.0

        def run(keys, xs):
            return jax.vmap(functools.partial(step, Model()))(keys, xs)
    """),
}


def test_a_partial_fixing_a_leading_argument_binds_the_mapped_ones_after_it(cli, make_files):
    """The keys and arrays `vmap` maps bind `key` and `x`, not `model`: the model handed to the
    jit's static argument is no tracer."""
    root = make_files(MODEL_STEP)
    assert cli("check", "--output-format", "json", "--no-cache", str(root)).json == []


def test_jax_maps_the_arguments_after_the_fixed_one(make_files, monkeypatch):
    jax = pytest.importorskip("jax")
    train = _fresh_import(make_files(MODEL_STEP), "pkg.train", monkeypatch)
    assert train.run(jax.random.split(jax.random.key(0), 2), jax.numpy.ones(2)).shape == (2,)


# A record class of one module whose method another module's traced code calls on an instance
# it carries: the method runs there, on the instance's traced fields.
TREES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/trees.py": textwrap.dedent("""
        from typing import Generic, TypeVar
        import chex
        from chex import dataclass
        import jax.numpy as jnp

        N = TypeVar("N")

        @dataclass(frozen=True)
        class Tree(Generic[N]):
            parents: chex.Array

            def child(self, index):
                return jnp.where(self.parents[index] > 0, 1.0, 0.0)

            def size(self):
                return self.parents.shape[0]
    """),
    "pkg/search.py": textwrap.dedent("""
        from chex import dataclass
        import jax
        from pkg.trees import Tree

        @dataclass(frozen=True)
        class State:
            idx: int
            tree: Tree

        def backprop(tree, parent):
            def body(state: State):
                n = state.tree.child(state.idx)
                step = 2 if state.tree.size() > 4 else 1
                out = n if n > 0 else 0.0  # JAX101
                return State(idx=state.idx + step, tree=state.tree)

            return jax.lax.while_loop(lambda s: s.idx < 3, body, State(idx=parent, tree=tree))
    """),
}


def test_a_method_of_another_modules_record_class_runs_there_on_the_instance(cli, make_files):
    """`state.tree.child(i)` of a carried instance of another module's record class follows the
    method there, `self` the instance (its fields traced): what it returns is traced, what it
    reads of a shape is not."""
    root = make_files(TREES)
    out = cli("check", "--output-format", "json", "--no-cache", "--select", "JAX1", str(root))
    assert reported(out.json, root) == marked(root)


def test_jax_runs_a_method_of_another_modules_record_class_on_tracers(make_files, monkeypatch):
    """JAX agrees: the method's result is a tracer, and the `if` on it raises."""
    jax = pytest.importorskip("jax")
    pytest.importorskip("chex")
    root = make_files(TREES)
    search, trees = (_fresh_import(root, f"pkg.{name}", monkeypatch) for name in ("search", "trees"))

    with pytest.raises(jax.errors.TracerBoolConversionError):
        search.backprop(trees.Tree(parents=jax.numpy.ones(5)), 0)


# A copy of `flax.struct.dataclass` kept in the project (PEP 681 marks it as making
# dataclasses; it registers each as a pytree), a base state class made with it in one module,
# and a game's state deriving from it in another.
VENDORED = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/struct.py": textwrap.dedent("""
        import dataclasses
        import jax

        try:
            from typing import dataclass_transform
        except ImportError:  # Python 3.10 and older
            from typing_extensions import dataclass_transform

        @dataclass_transform()
        def dataclass(clz):
            data_clz = dataclasses.dataclass(frozen=True)(clz)
            fields = [f.name for f in dataclasses.fields(data_clz)]
            jax.tree_util.register_dataclass(data_clz, data_fields=fields, meta_fields=[])
            return data_clz
    """),
    "pkg/core.py": textwrap.dedent("""
        import abc
        import jax.numpy as jnp
        from pkg.struct import dataclass

        @dataclass
        class State(abc.ABC):
            current_player: jnp.ndarray
    """),
    "pkg/game.py": textwrap.dedent("""
        import jax
        import jax.numpy as jnp
        import pkg.core as core
        from pkg.struct import dataclass

        @dataclass
        class State(core.State):
            hands: jnp.ndarray

        def score(state: State):
            hand = state.hands
            return hand.sum() + 1 if hand.sum() == 5 else hand.sum()  # JAX101

        @jax.jit
        def init(hands):
            state = State(current_player=jnp.int32(1), hands=hands)
            return score(state)
    """),
}


def test_a_vendored_pytree_dataclass_and_a_base_of_another_module(cli, make_files):
    """A project's own copy of `flax.struct.dataclass` makes what Flax's makes (every field a
    pytree child), and a record class deriving from another module's takes its fields first:
    `State(current_player=..., hands=hands)` built in a jitted function holds the tracer."""
    root = make_files(VENDORED)
    out = cli("check", "--output-format", "json", "--no-cache", "--select", "JAX1", str(root))
    assert reported(out.json, root) == marked(root)


def test_jax_traces_the_vendored_dataclass(make_files, monkeypatch):
    """JAX agrees: the field is a tracer, and the conditional on it raises."""
    jax = pytest.importorskip("jax")
    if not hasattr(jax.tree_util, "register_dataclass"):
        pytest.skip("jax.tree_util.register_dataclass is newer than this JAX")
    game = _fresh_import(make_files(VENDORED), "pkg.game", monkeypatch)

    with pytest.raises(jax.errors.TracerBoolConversionError):
        game.init(jax.numpy.ones(3, dtype=jax.numpy.int32))


SLICED_HELPER = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/masks.py": textwrap.dedent("""
        def decode(positions, prompt_len):
            return positions[:, prompt_len:]
    """),
}
# Traced code that calls the helper with a parameter it cannot show to be a Python value: the
# `__call__` of a Linen module its file defines, and a function it jits.
CALLS_IT_TRACED = textwrap.dedent("""
    import flax.linen as nn
    import jax
    from pkg import masks

    class Wrapper(nn.Module):
        @nn.compact
        def __call__(self, positions, prompt_len):
            return masks.decode(positions, prompt_len)

    @jax.jit
    def run(positions, prompt_len):
        return masks.decode(positions, prompt_len)
""")


@pytest.mark.parametrize(("where", "reported"), [("pkg/model.py", True), ("pkg/model_test.py", False), ("tests/test_model.py", False)])
def test_a_test_files_traced_code_hands_no_calls_to_the_modules_it_tests(cli, make_files, where, reported):
    """A test's own traced code (a Linen module it defines for the test, a jitted check) calling
    the package with values it passes from its cases is run by the test, which shows the call
    survives; it is not evidence against the function called."""
    root = make_files({**SLICED_HELPER, where: CALLS_IT_TRACED})
    for target in (root, root / "pkg" / "masks.py"):
        found = {(Path(f["filename"]).name, f["code"]) for f in cli("check", "--output-format", "json", "--no-cache", str(target)).json}
        assert (("masks.py", "JAX112") in found) is reported
