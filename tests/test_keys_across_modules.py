"""A key passed to a function of another project module is consumed when that function consumes it.

The callee's own module answers, per parameter, whether a key passed there is consumed
(`KeyFlow.exported`); absolute, relative and re-exported imports reach it alike. Every case
also runs under JAX's key reuse checker: what is reported raises `KeyReuseError`, what stays
quiet does not.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlint.analysis.keys.key_state import DEFINITE, NONE
from jaxlint.analysis.module import ModuleFacts
from jaxlint.analysis.project.project import Project
from jaxlint.source import Source

DRAWS = """\
    import jax
    import jax.numpy as jnp


    def sample(key, shape):
        return jax.random.normal(key, shape)


    def forward(k):
        return sample(k, (2,))


    def is_prng_key(key):
        return jnp.issubdtype(key.dtype, jax.dtypes.prng_key)


    def describe(key):
        return key.shape, jnp.asarray(key).dtype


    def children(key, n):
        return jax.random.split(key, n)
    """

MAIN = """\
    import jax
    from pkg.sub import draws
    from pkg.sub.draws import forward
    from .sub.draws import sample
    from pkg import sample_again
    from outside_lib import is_valid


    def absolute(x):
        key = jax.random.key(0)
        draws.sample(key, x.shape)
        return jax.random.normal(key, x.shape)  # JAX201


    def relative(x, key):
        sample(key, x.shape)
        return jax.random.uniform(key, x.shape)  # JAX201


    def reexported(x, rng):
        y = sample_again(rng, x.shape)
        return y + jax.random.normal(rng, x.shape)  # JAX201


    def through_another_helper(x, key):
        forward(key)
        return jax.random.normal(key, x.shape)  # JAX201


    def inspects(x, key):
        assert draws.is_prng_key(key)
        shape, dtype = draws.describe(key)
        return jax.random.normal(key, x.shape)


    def splits(x, key):
        a, b = draws.children(key, 2)
        return jax.random.normal(a, x.shape) + jax.random.normal(b, x.shape)


    def tests_outside(x, key):
        if not is_valid(key):
            raise ValueError("not a key")
        return jax.random.normal(key, x.shape)
    """

FILES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "from pkg.sub.draws import sample as sample_again\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/draws.py": DRAWS,
    "pkg/main.py": MAIN,
    "outside_lib.py": "def is_valid(key):\n    return key is not None\n",
}


def marked(text: str) -> set[int]:
    return {row for row, line in enumerate(textwrap.dedent(text).splitlines(), 1) if re.search(r"# JAX201", line)}


def reported(findings: list[dict]) -> set[tuple[str, int, str]]:
    """(file name, row, code) of each finding of `check --output-format json`."""
    return {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in findings}


def run_under_jax(root: Path, script: str) -> str:
    """What `script` prints, run with Python in `root` (where the project's package is)."""
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_helpers_of_other_modules_consume_what_they_consume(cli, make_files):
    make_files(FILES)
    findings = cli("check", "--no-cache", "--output-format", "json").json
    main = [f for f in findings if f["filename"].endswith("main.py")]
    assert {f["location"]["row"] for f in main} == marked(MAIN)
    assert all(f["code"] == "JAX201" for f in findings)
    by_row = {f["location"]["row"]: f["message"] for f in main}
    # The message names the helper where it is defined, whichever way it was imported.
    assert "consumed by `pkg.sub.draws.sample` on line 11" in by_row[12]
    assert "consumed by `pkg.sub.draws.sample` on line 21" in by_row[22]
    assert "consumed by `pkg.sub.draws.forward` on line 26" in by_row[27]


def test_the_checker_agrees(make_files):
    """Each function of MAIN under `jax_debug_key_reuse`: the reported ones raise, the others do not."""
    pytest.importorskip("jax")
    root = make_files(FILES)
    script = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp
        import outside_lib
        from pkg import main

        outside_lib.is_valid = lambda key: True
        raised = []
        with jax.debug_key_reuse(True):
            for name in ("absolute", "relative", "reexported", "through_another_helper",
                         "inspects", "splits", "tests_outside"):
                try:
                    getattr(main, name)(jnp.ones(3), jax.random.key(1)) if name != "absolute" else main.absolute(jnp.ones(3))
                except jax.errors.KeyReuseError:
                    raised.append(name)
        print(",".join(raised))
        """)
    assert run_under_jax(root, script).split(",") == ["absolute", "relative", "reexported", "through_another_helper"]


def test_an_edited_helper_relints_its_callers(cli, make_files):
    root = make_files(FILES)
    first = cli("check", "--output-format", "json").json
    assert any(f["filename"].endswith("main.py") and f["location"]["row"] == 12 for f in first)
    draws = root / "pkg" / "sub" / "draws.py"
    draws.write_text(draws.read_text().replace("return jax.random.normal(key, shape)", "return key.shape + shape"))
    after = cli("check", "--output-format", "json").json
    assert [f["location"]["row"] for f in after if f["filename"].endswith("main.py")] == []
    assert after == cli("check", "--no-cache", "--output-format", "json").json


def test_import_cycles_leave_the_call_opaque(cli, make_files):
    make_files({
        "pyproject.toml": "",
        "a.py": """\
            import jax
            import b


            def draw(key):
                return b.inspect(key) + jax.random.normal(key)
            """,
        "b.py": """\
            import jax
            import a


            def inspect(key):
                return key.shape[0]


            def twice(key):
                a.draw(key)
                return jax.random.normal(key)  # reused
            """,
    })
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert [(Path(f["filename"]).name, f["location"]["row"]) for f in findings] == [("b.py", 11)]


def test_a_helper_in_a_test_file_answers_its_callers(cli, make_files):
    """Nothing is reported from a test file, but what its helpers do to a key still is, to a caller elsewhere."""
    make_files({
        "pyproject.toml": "",
        "test_support.py": """\
            import jax


            def draw(key):
                return jax.random.normal(key)


            def test_draw():
                key = jax.random.key(0)
                return draw(key) + draw(key)  # reused, in a test: not reported
            """,
        "train.py": """\
            import jax
            from test_support import draw


            def twice(key):
                draw(key)
                return jax.random.normal(key)  # reused
            """,
    })
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert [(Path(f["filename"]).name, f["location"]["row"], f["code"]) for f in findings] == [("train.py", 7, "JAX201")]


# ---- the summary, per parameter ------------------------------------------------------------
def facts(tmp_path: Path, text: str) -> ModuleFacts:
    path = tmp_path / "helpers.py"
    path.write_text(textwrap.dedent(text))
    return ModuleFacts(Source.parse(path.read_text(), str(path)), {}, Project(facts=ModuleFacts).link(str(path)))


def test_every_parameter_is_followed_as_a_key(tmp_path):
    module = facts(tmp_path, """\
        def draw(seed, shape, model):
            model.init(seed)
            return shape


        def look(value):
            return value.shape


        def maybe(value, flag):
            if flag:
                return draw(value, (), None)
            return None
        """)
    summaries = {fn.name: module.keys.exported(fn).params for fn in module.names.functions}
    # No name says `seed` is a key and the module never mentions `jax.random`: a key passed to
    # `draw` is still consumed by the opaque `model.init`, and `look` only reads it.
    assert summaries["draw"]["seed"] == DEFINITE and summaries["draw"]["shape"] == NONE
    assert summaries["look"]["value"] == NONE
    assert summaries["maybe"]["value"] not in (NONE, DEFINITE)
    assert module.keys.reuses == []


DEVIATES = """\
    class Deviate:
        def __init__(self, key):
            self.key = key
            self.calls = 0


    def advance(rng, sampler):
        rng.calls += 1
        return sampler(rng)


    def sample(key, sampler):
        return sampler(key)
    """

DEVIATE_USERS = """\
    import jax
    from pkg.deviates import advance, sample


    def two_draws(rng, sampler):
        return advance(rng, sampler), advance(rng, sampler)


    def two_keys(key, sampler):
        sample(key, sampler)
        return jax.random.normal(key)  # JAX201
    """


def test_a_parameter_a_helper_shows_to_be_an_object_takes_no_key(cli, make_files):
    """`advance` stores an attribute on its `rng`: a stateful object there, never a key, so the
    caller's two calls draw nothing twice; `sample` may get a key, and consumes it."""
    root = make_files({
        "pyproject.toml": "", "pkg/__init__.py": "", "pkg/deviates.py": DEVIATES, "pkg/users.py": DEVIATE_USERS,
    })
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"]) for f in findings} == {
        ("users.py", row) for row in marked(DEVIATE_USERS)
    }
    if importlib.util.find_spec("jax") is None:
        return
    script = textwrap.dedent("""\
        import jax
        from pkg.deviates import Deviate
        from pkg.users import two_draws, two_keys

        def split_draw(rng):
            rng.key, sub = jax.random.split(rng.key)
            return jax.random.normal(sub)

        raised = []
        with jax.debug_key_reuse(True):
            a, b = two_draws(Deviate(jax.random.key(0)), split_draw)
            assert a != b
            try:
                two_keys(jax.random.key(1), jax.random.uniform)
            except jax.errors.KeyReuseError:
                raised.append("two_keys")
        print(",".join(raised))
        """)
    assert run_under_jax(root, script) == "two_keys"


SUBMODULES = {
    "net/__init__.py": "",
    "net/layers.py": textwrap.dedent("""\
        import jax


        class Mix:
            def __call__(self, x, key=None):
                return x * 2.0


        class Noise:
            def __call__(self, x, key):
                return x + jax.random.normal(key, x.shape)
        """),
    "net/model.py": textwrap.dedent("""\
        import jax

        from net.layers import Mix, Noise


        class Quiet:
            mix: Mix

            def __init__(self):
                self.mix = Mix()

            def __call__(self, x, key):
                k1, k2 = jax.random.split(key)
                x = self.mix(x, key=key)
                return x + jax.random.normal(k1, x.shape)


        class Loud:
            def __init__(self):
                self.noise = Noise()

            def __call__(self, x, key):
                x = self.noise(x, key=key)
                return self.noise(x, key=key)  # JAX201
        """),
}


def test_a_submodule_of_another_module_runs_its_classs_call(cli, make_files):
    """`self.mix(x, key=key)` follows the `__call__` of the class another module defines."""
    root = make_files(SUBMODULES)
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert [(f["code"], f["location"]["row"]) for f in findings] == [
        ("JAX201", row) for row in sorted(marked(SUBMODULES["net/model.py"]))
    ]
    assert "consumed by `self.noise` on line 23" in findings[0]["message"]
    if importlib.util.find_spec("jax") is None:
        return
    script = textwrap.dedent("""\
        import jax
        from net.model import Loud, Quiet

        raised = []
        with jax.debug_key_reuse(True):
            for cls in (Quiet, Loud):
                try:
                    cls()(jax.numpy.ones(3), jax.random.key(0))
                except jax.errors.KeyReuseError:
                    raised.append(cls.__name__)
        print(",".join(raised))
        """)
    assert run_under_jax(root, script) == "Loud"


DEFAULTS = """\
    import jax


    def sample(shape, key=None):
        if key is None:
            key = jax.random.key(0)
        return jax.random.normal(key, shape)
    """

CALLERS = """\
    import jax
    from pkg.defaults import sample


    def twice(x, key):
        a = sample(x.shape, key)
        return a + sample(x.shape, key)  # JAX201


    def split_first(x, key):
        k1, k2 = jax.random.split(key)
        return sample(x.shape, k1) + sample(x.shape, k2)


    def without_keys(x, key):
        return sample(x.shape) + sample(x.shape, None)
    """


# The same default written as a conditional expression, either way round.
DEFAULT_FORMS = {
    "if-statement": DEFAULTS,
    "kept-unless-none": DEFAULTS.replace(
        "if key is None:\n            key = jax.random.key(0)", "key = key if key is not None else jax.random.key(0)"
    ),
    "made-if-none": DEFAULTS.replace(
        "if key is None:\n            key = jax.random.key(0)", "key = jax.random.key(0) if key is None else key"
    ),
}


@pytest.mark.parametrize("form", sorted(DEFAULT_FORMS))
def test_a_helper_elsewhere_that_makes_its_own_key_when_given_none(cli, make_files, form):
    """A call that passes a key skips the helper's `if key is None:` branch (or the arm of
    `key if key is not None else ...` that makes one): the key is consumed."""
    defaults = DEFAULT_FORMS[form]
    assert defaults != DEFAULTS or form == "if-statement"
    root = make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/defaults.py": defaults, "pkg/callers.py": CALLERS})
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert reported(findings) == {
        ("callers.py", row, "JAX201") for row in marked(CALLERS)
    }
    pytest.importorskip("jax")
    script = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp
        from pkg import callers

        raised = []
        with jax.debug_key_reuse(True):
            for name in ("twice", "split_first", "without_keys"):
                try:
                    getattr(callers, name)(jnp.ones(3), jax.random.key(1))
                except jax.errors.KeyReuseError:
                    raised.append(name)
        print(",".join(raised))
        """)
    assert run_under_jax(root, script) == "twice"


def test_a_method_inherited_from_a_class_of_another_module_answers_for_itself(cli, make_files):
    """`self.finalize(params, rng)` where the class inherits `finalize` from a base another module
    defines (directly, or through a base of that module): that module's definition says whether
    the key is consumed."""
    make_files({
        "pyproject.toml": "",
        "lib/__init__.py": "",
        "lib/misc.py": """\
            import jax


            class Finalizable:
                def finalize(self, params, rng):
                    self.structure = jax.tree_util.tree_structure(params)

                def perturb(self, params, rng):
                    return jax.random.normal(rng, (3,))


            class Middle(Finalizable):
                pass
            """,
        "lib/optimizer.py": """\
            import jax

            from lib import misc
            from lib.misc import Middle


            class Optimizer(misc.Finalizable):
                def init(self, params, rng):
                    self.finalize(params, rng)
                    return jax.random.normal(rng, (3,))

                def noisy(self, params, rng):
                    self.perturb(params, rng)
                    return jax.random.normal(rng, (3,))  # JAX201


            class Deep(Middle):
                def init(self, params, rng):
                    self.finalize(params, rng)
                    return jax.random.normal(rng, (3,))

                def noisy(self, params, rng):
                    self.perturb(params, rng)
                    return jax.random.normal(rng, (3,))  # JAX201
            """,
    })
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert [(Path(f["filename"]).name, f["location"]["row"], f["code"]) for f in findings] == [
        ("optimizer.py", 14, "JAX201"), ("optimizer.py", 24, "JAX201"),
    ]
    assert "consumed by `self.perturb` on line 13" in findings[0]["message"]



def test_a_static_method_a_class_of_another_module_inherits_answers_for_itself(cli, make_files):
    """`Helpers.keep(rng)` where `Helpers` inherits the static method from a base of its own module:
    that definition says whether the key is consumed, as `Helpers.noise(rng)`'s says it is."""
    root = make_files({
        "pyproject.toml": "",
        "lib/__init__.py": "",
        "lib/ops.py": """\
            import jax


            class Base:
                @staticmethod
                def keep(rng):
                    return rng

                @staticmethod
                def noise(rng):
                    return jax.random.normal(rng, (3,))


            class Helpers(Base):
                pass
            """,
        "train.py": """\
            import jax

            from lib.ops import Helpers


            def sample(rng):
                Helpers.keep(rng)
                a = jax.random.normal(rng, (3,))
                Helpers.noise(rng)
                return a


            def sample_once(rng):
                Helpers.keep(rng)
                return jax.random.normal(rng, (3,))
            """,
    })
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert [(Path(f["filename"]).name, f["location"]["row"], f["code"]) for f in findings] == [("train.py", 9, "JAX201")]
    assert "consumed by `jax.random.normal` on line 8" in findings[0]["message"]
    if importlib.util.find_spec("jax") is not None:
        script = textwrap.dedent("""\
            import jax
            import train

            raised = []
            with jax.debug_key_reuse(True):
                for name in ("sample", "sample_once"):
                    try:
                        getattr(train, name)(jax.random.key(0))
                    except jax.errors.KeyReuseError:
                        raised.append(name)
            print(",".join(raised))
            """)
        assert run_under_jax(root, script) == "sample"

FLAX_LAYERS = {
    "pyproject.toml": "",
    "agent/__init__.py": "",
    "agent/layers.py": """
        import flax.linen as nn


        class MLP(nn.Module):
            @nn.compact
            def __call__(self, x):
                for size in (8, 8):
                    x = nn.Dense(size)(x)
                return x
        """,
    "agent/common.py": """
        import flax.linen as nn


        class Model:
            @classmethod
            def create(cls, model_def: nn.Module, inputs):
                return model_def.init(*inputs)
        """,
    "agent/nets.py": """
        import flax.linen as nn

        from agent.layers import MLP


        class Policy(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(2)(MLP()(x))


        class ValueCritic(nn.Module):
            @nn.compact
            def __call__(self, x):
                return MLP()(x)


        class Temperature(nn.Module):
            @nn.compact
            def __call__(self):
                return self.param("log_temp", nn.initializers.zeros, ())
        """,
    "agent/learner.py": """
        import jax

        from agent import nets
        from agent.common import Model


        def build(seed, obs):
            rng = jax.random.PRNGKey(seed)
            actor = Model.create(nets.Policy(), inputs=[rng, obs])
            temp = Model.create(nets.Temperature(), inputs=[rng])
            value = Model.create(nets.ValueCritic(), inputs=[rng, obs])
            return actor, temp, value
        """,
}


def test_a_helper_initialising_the_module_its_caller_passes_draws_at_that_modules_paths(cli, make_files):
    # `Model.create` runs `model_def.init(*inputs)`: the key in `inputs` draws the parameters of the
    # module passed, at its submodules' paths; the policy and the value critic both make an `MLP`
    # (of a module the learner does not import) first, at `MLP_0`, so one key gives them the same first layer. The
    # temperature draws at the root only, where neither of the others does.
    make_files(FLAX_LAYERS)
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX201", "agent/learner.py")
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX201", 12)]



def test_an_edited_layer_class_of_a_third_module_relints_the_caller(cli, make_files):
    # Whether the policy and the value critic draw at one path comes from `MLP`, in
    # `agent/layers.py`: once it draws no parameters, the cached verdict of `learner.py`, which
    # does not import that module, goes with it.
    root = make_files(FLAX_LAYERS)
    first = cli("check", "--output-format", "json", "--select", "JAX201", "agent/learner.py").json
    assert [f["location"]["row"] for f in first] == [12]
    layers = root / "agent" / "layers.py"
    layers.write_text(layers.read_text().replace("x = nn.Dense(size)(x)", "x = x * size"))
    after = cli("check", "--output-format", "json", "--select", "JAX201", "agent/learner.py").json
    assert after == cli("check", "--no-cache", "--output-format", "json", "--select", "JAX201", "agent/learner.py").json
    assert after == []


BUILDERS = """\
    def get_model(kind, create_model, rng, shape):
        create_model_args = (kind, rng, shape)
        return create_model(*create_model_args)
    """

BUILDS = """\
    import jax
    from pkg.builders import get_model


    def create(kind, rng, shape):
        return jax.random.normal(rng, shape)


    def main(create_model):
        rng = jax.random.key(0)
        model = get_model("mlp", create_model, rng, (3,))
        return model + jax.random.normal(rng, (3,))  # JAX201
    """


def test_a_builder_elsewhere_spreading_a_tuple_of_arguments_into_a_callable_parameter(cli, make_files):
    """In its package, the key a builder packs into a tuple of arguments and spreads into the
    function it is given is consumed there, as the file alone (the builder not seen) takes it to be."""
    root = make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/builders.py": BUILDERS, "pkg/train.py": BUILDS})
    findings = cli("check", "--no-cache", "--output-format", "json").json
    assert reported(findings) == {
        ("train.py", row, "JAX201") for row in marked(BUILDS)
    }
    pytest.importorskip("jax")
    script = textwrap.dedent("""\
        import jax
        from pkg import train

        with jax.debug_key_reuse(True):
            try:
                train.main(train.create)
            except jax.errors.KeyReuseError:
                print("raised")
        """)
    assert run_under_jax(root, script) == "raised"
