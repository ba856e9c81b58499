"""Which uses of a PRNG key draw numbers, and where a reuse repeats them: each principle as a matrix.

Every principle is a bug and its clean twin, written once with a consumer of the key for each
framework where the construct exists (plain `jax.random`, Equinox's `key=`, Flax NNX's `Rngs`,
Haiku's and Flax linen's `init`), and linted twice: with the helper the caller uses in the same
module, and in another module of a project. Flax linen folds each module's path into the key, so
one key given to two of its runs repeats numbers only where both draw at one path, and a Flax run
and any other use of one key repeat nothing (JAX207, `test_flax_runs.py`): its column is the
principles about paths and copies, and those whose draws do not pass through a Flax run. Flax
NNX's `Rngs` derives its keys by `fold_in(key, n)`: two `Rngs` of one key repeat numbers, an
`Rngs` and a split of the key only where a child at the same index is drawn, which is not
followed (an `Rngs` is taken to draw, as code not seen is). The bug's marked lines are reported, the twin's are
quiet. Then the same programs run under JAX: what JAX201/202/203/204 report draws the same numbers
(or JAX's key reuse checker raises, as it does for JAX207's reuses, which repeat nothing).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest

from marks import family_marks

marked = family_marks(r"JAX2\d\d")

# Per framework: its imports, and an expression drawing from the key `{k}` (a pytree of arrays).
FRAMEWORKS = {
    "plain": ("import jax\nimport jax.numpy as jnp\n", "jax.random.normal({k}, (3, 3))"),
    "equinox": ("import equinox as eqx\nimport jax\nimport jax.numpy as jnp\n", "eqx.nn.Linear(3, 3, key={k})"),
    "nnx": ("from flax import nnx\nimport jax\nimport jax.numpy as jnp\n", "nnx.Linear(3, 3, rngs=nnx.Rngs({k}))"),
    "haiku": (
        "import haiku as hk\nimport jax\nimport jax.numpy as jnp\n",
        "hk.transform(lambda x: hk.Linear(3)(x)).init({k}, jnp.ones((1, 3)))",
    ),
    "linen": ("import flax.linen as nn\nimport jax\nimport jax.numpy as jnp\n", "nn.Dense(3).init({k}, jnp.ones((1, 3)))"),
}


@dataclass(frozen=True)
class Principle:
    """`parts`: the helpers (`{draw}` is the framework's consumer of `key`); `bug`, `clean`: the
    caller, whose `run(key)` returns what the check compares; `frameworks`: where it applies;
    `check`: what JAX shows, "repeats" (the first two results share numbers) or "checker" (JAX's
    key reuse checker raises on the bug, not on the twin), "checker-both" (it raises on both:
    JAX207's reuses, which repeat nothing), or "copy" (both repeat: the twin is a deliberate copy)."""

    parts: str
    bug: str
    clean: str
    frameworks: tuple[str, ...]
    check: str
    names: tuple[str, ...]  # what the caller imports from the helpers' module


ALL = tuple(FRAMEWORKS)
# The helper each principle hands the key to: the framework's consumer of it.
BUILD = """
            def build(key):
                return {draw}
            """
UNFOLDED = ("plain", "equinox", "nnx", "haiku")  # whose runs do not fold a module path into the key

PRINCIPLES = {
    # A key handed to two consumers, wherever they are defined, draws the same numbers twice.
    "two consumers of one key": Principle(
        parts=BUILD,
        bug="""
            def run(key):
                first = build(key)
                second = build(key)  # JAX201
                return first, second
            """,
        clean="""
            def run(key):
                k1, k2 = jax.random.split(key)
                return build(k1), build(k2)
            """,
        frameworks=UNFOLDED, check="repeats", names=("build",),
    ),
    # A setup function that splits the key and hands back children: they are drawn from only if
    # the caller uses them.
    "children a setup hands back, dropped or used": Principle(
        parts="""
            def setup(key, n):
                key, *keys = jax.random.split(key, n + 1)
                return jnp.stack(keys)

            def build(key):
                return {draw}
            """,
        bug="""
            def run(key):
                keys = setup(key, 2)
                first = build(keys[0])
                key, sub = jax.random.split(key)  # JAX201
                return first, build(sub)
            """,
        clean="""
            def run(key):
                keys = setup(key, 2)
                key, sub = jax.random.split(key)  # JAX207
                keys = jnp.stack([sub])
                return build(keys[0]), None
            """,
        frameworks=UNFOLDED, check="repeats", names=("setup", "build"),
    ),
    # An object that keeps a key no method reads never draws from it.
    "a key kept on an object, read or not": Principle(
        parts=BUILD + """
            class Sampler:
                def __init__(self, key, steps):
                    self.key = key
                    self.steps = steps

                def draw(self):
                    return build(self.key)

            class Manager:
                def __init__(self, key, steps):
                    self.key = key
                    self.steps = steps

                def describe(self):
                    return self.steps
            """,
        bug="""
            def run(key):
                sampler = Sampler(key, 3)
                second = build(key)  # JAX201
                return sampler.draw(), second
            """,
        clean="""
            def run(key):
                manager = Manager(key, 3)
                return build(key), manager.describe()
            """,
        frameworks=UNFOLDED, check="repeats", names=("build", "Sampler", "Manager"),
    ),
    # A method a `Protocol` declares only says what implementations accept: the object held
    # runs one of them, which draws from the key it is handed.
    "a key handed to a method a protocol declares": Principle(
        parts=BUILD + """
            import typing

            class Drawer(typing.Protocol):
                def __call__(self, key):
                    \"\"\"Draws from the key.\"\"\"

            class Built:
                def __call__(self, key):
                    return build(key)
            """,
        bug="""
            import dataclasses

            @dataclasses.dataclass
            class Pair:
                drawer: Drawer

                def both(self, key):
                    first = self.drawer(key)
                    second = build(key)  # JAX201
                    return first, second

            def run(key):
                return Pair(Built()).both(key)
            """,
        clean="""
            import dataclasses

            @dataclasses.dataclass
            class Pair:
                drawer: Drawer

                def both(self, key):
                    first_key, second_key = jax.random.split(key)
                    return self.drawer(first_key), build(second_key)

            def run(key):
                return Pair(Built()).both(key)
            """,
        frameworks=UNFOLDED, check="repeats", names=("build", "Drawer", "Built"),
    ),
    # A tree map calls its function there and then, on each leaf: the key it reads is used there.
    # (It reads the same key for every leaf, too: JAX203, unless the draw only reorders each
    # leaf alike, which keeps them aligned.)
    "a key a tree map's function reads": Principle(
        parts=BUILD,
        bug="""
            def run(key):
                first = build(key)
                second = jax.tree_util.tree_map(lambda leaf: leaf + build(key), {"a": jnp.zeros((3, 3))})["a"]  # JAX201 # JAX203
                return first, second
            """,
        clean="""
            def run(key):
                first_key, second_key = jax.random.split(key)
                rows = jax.tree_util.tree_map(lambda leaf: jax.random.permutation(second_key, leaf), {"a": jnp.arange(9.0)})
                return build(first_key), rows["a"]
            """,
        frameworks=("plain",), check="repeats", names=("build",),
    ),
    # A helper that draws only when a parameter is None, called with a value: the branch is not
    # taken, and rebinding the parameter after its test (`score = score + 0.0`) changes nothing.
    "a parameter rebound after the test a call decides": Principle(
        parts="""
            def scored(x, key, *, score=None):
                if score is None:
                    key, sub = jax.random.split(key)
                    score = jax.random.uniform(sub, x.shape)
                score = score + 0.0
                return jax.random.normal(key, (3, 3)) + 0.0 * score
            """,
        bug="""
            def run(key, first=None):
                if first is None:
                    first = jax.random.normal(key, (3, 3))
                second = scored(first, key, score=first)  # JAX201
                return first, second
            """,
        clean="""
            def run(key, first=None):
                first_key, second_key = jax.random.split(key)
                if first is None:
                    first = jax.random.normal(first_key, (3, 3))
                return first, scored(first, second_key, score=first)
            """,
        frameworks=("plain",), check="repeats", names=("scored",),
    ),
    # One key in every element of a batch draws the same numbers in each.
    "one key for every element of a vmap": Principle(
        parts=BUILD,
        bug="""
            def run(key):
                batch = jax.vmap(lambda i: build(key))(jnp.arange(2))  # JAX203
                return first_element(batch, 0), first_element(batch, 1)
            """,
        clean="""
            def run(key):
                batch = jax.vmap(build)(jax.random.split(key, 2))
                return first_element(batch, 0), first_element(batch, 1)
            """,
        frameworks=("plain", "equinox", "haiku", "linen"), check="repeats", names=("build",),
    ),
    # A stream an object advances, consumed from outside and left in place, is split again.
    "a stream consumed from outside its object": Principle(
        parts=BUILD + """
            class Schedule:
                def __init__(self, key):
                    self.key = key

                def advance(self):
                    self.key, key = jax.random.split(self.key)
                    return jax.random.uniform(key)
            """,
        bug="""
            def act(schedule: Schedule):
                schedule.advance()
                return build(schedule.key)  # JAX203

            def run(key):
                schedule = Schedule(key)
                first = act(schedule)
                return first, schedule.advance()
            """,
        clean="""
            def act(schedule: Schedule):
                schedule.advance()
                schedule.key, key = jax.random.split(schedule.key)
                return build(key)

            def run(key):
                schedule = Schedule(key)
                first = act(schedule)
                return first, schedule.advance()
            """,
        frameworks=("plain", "equinox", "haiku"), check="checker", names=("build", "Schedule"),
    ),
    # A key made from a constant seed in a loop whose iterations differ in nothing else.
    "a constant seed in a loop of identical iterations": Principle(
        parts=BUILD,
        bug="""
            def run(key):
                collected = []
                for _ in range(2):
                    key = jax.random.PRNGKey(0)  # JAX204
                    collected.append(build(key))
                return collected[0], collected[1]
            """,
        clean="""
            def run(key):
                collected = []
                key = jax.random.PRNGKey(0)
                for _ in range(2):
                    key, sub = jax.random.split(key)
                    collected.append(build(sub))
                return collected[0], collected[1]
            """,
        frameworks=ALL, check="repeats", names=("build",),
    ),
    # A seed parameter left to its constant default by a caller that has a seed of its own.
    "a seed left to its default": Principle(
        parts=BUILD + """
            class Agent:
                def __init__(self, dim, seed=0):
                    self.params = build(jax.random.PRNGKey(seed))
            """,
        bug="""
            def make(seed):
                print("seed", seed)
                return Agent(3)  # JAX204

            def run(key):
                return make(1).params, make(2).params
            """,
        clean="""
            def make(seed):
                print("seed", seed)
                return Agent(3, seed=seed)

            def run(key):
                return make(1).params, make(2).params
            """,
        frameworks=ALL, check="repeats", names=("build", "Agent"),
    ),
}

# Frameworks whose modules build parameters with `init(key, example_inputs)`.
INIT_MODULES = {
    "haiku": "hk.transform(lambda x: hk.Linear(3)(x))",
    "linen": "Actor()",
}
OTHER_MODULES = {
    "haiku": "hk.transform(lambda x: hk.Linear(2)(jax.nn.relu(hk.Linear(3)(x))))",
    "linen": "Critic()",
}
# Two Flax linen modules that each make a `Dense` first: both draw its parameters at `Dense_0`.
LINEN_CLASSES = """
class Actor(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(3)(x)


class Critic(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.relu(nn.Dense(3)(x))
        return nn.Dense(1)(h)
"""
INIT_PRINCIPLES = {
    # Draws made only as an `init`'s example inputs decide nothing: the parameters depend on shapes.
    "example inputs of an init": Principle(
        parts="""
            def make():
                return {module}
            """,
        bug="""
            def run(key):
                model = make()
                noise = jax.random.normal(key, (1, 3))
                return model.init(key, noise), noise  # JAX201
            """,
        clean="""
            def run(key):
                model = make()
                example = jax.random.normal(key, (1, 3))
                return model.init(key, example), None  # JAX207
            """,
        frameworks=("haiku",), check="checker-both", names=("make",),
    ),
    # ... and so do the draws of code not seen whose result serves only as such inputs (an
    # observation a space the caller cannot see samples).
    "example inputs of an init, sampled by code not seen": Principle(
        parts="""
            class Space:
                def sample(self, key):
                    return jax.random.normal(key, (1, 3))

            def make():
                return {module}

            def make_space():
                return Space()
            """,
        bug="""
            def run(key):
                model = make()
                observation = make_space().sample(key)
                return model.init(key, observation), observation  # JAX201
            """,
        clean="""
            def run(key):
                model = make()
                observation = make_space().sample(key)
                return model.init(key, observation), None  # JAX207
            """,
        frameworks=("haiku",), check="checker-both", names=("make", "make_space"),
    ),
    # Two inits of one module on the same inputs build a copy (a target network); two of
    # different modules repeat numbers (for Flax linen: where both make a layer at one path).
    "a copy made by a second init": Principle(
        parts="""
            def make():
                return {module}

            def make_other():
                return {other}
            """,
        bug="""
            def run(key):
                online = make().init(key, jnp.ones((1, 3)))
                other = make_other().init(key, jnp.ones((1, 3)))  # JAX201
                return online, other
            """,
        clean="""
            def run(key):
                model = make()
                online = model.init(key, jnp.ones((1, 3)))
                target = model.init(key, jnp.ones((1, 3)))
                return online, target
            """,
        frameworks=tuple(INIT_MODULES), check="copy", names=("make", "make_other"),
    ),
}


def layouts(principle: Principle, framework: str, twin: str) -> dict[str, dict[str, str]]:
    """The program as one module (`same`) and as a caller importing the helpers (`other`)."""
    imports, draw = FRAMEWORKS[framework]
    parts = textwrap.dedent(principle.parts).format(
        draw=draw.format(k="key"), module=INIT_MODULES.get(framework, ""), other=OTHER_MODULES.get(framework, "")
    )
    if framework == "linen" and "{module}" in principle.parts:
        parts = LINEN_CLASSES + parts
    caller = textwrap.dedent(getattr(principle, twin))
    helpers = FIRST_ELEMENT
    return {
        "same": {"pkg/__init__.py": "", "pkg/main.py": imports + parts + helpers + caller},
        "other": {
            "pkg/__init__.py": "",
            "pkg/parts.py": imports + parts,
            "pkg/main.py": imports + f"from pkg.parts import {', '.join(principle.names)}\n" + helpers + caller,
        },
    }


FIRST_ELEMENT = """
def first_element(batch, i):
    return jax.tree_util.tree_map(lambda leaf: leaf[i], batch)
"""

CASES = [
    (name, framework, layout, twin)
    for table in (PRINCIPLES, INIT_PRINCIPLES)
    for name, principle in table.items()
    for framework in principle.frameworks
    for layout in ("same", "other")
    for twin in ("bug", "clean")
]


def _principle(name: str) -> Principle:
    return PRINCIPLES.get(name) or INIT_PRINCIPLES[name]


@pytest.mark.parametrize("name,framework,layout,twin", CASES)
def test_principle(cli, make_files, name, framework, layout, twin):
    files = layouts(_principle(name), framework, twin)[layout]
    make_files({"pyproject.toml": "", **files})
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX2,JAX207", "pkg")
    found = {(f["location"]["row"], f["code"]) for f in out.json if f["filename"].endswith("main.py")}
    assert found == marked(files["pkg/main.py"])


# ---- what JAX does with each program --------------------------------------------------------
RUNNER = """
import json, sys
import jax
import jax.numpy as jnp

def flat(tree):
    try:
        from flax import nnx
        if isinstance(tree, nnx.Module):
            tree = nnx.state(tree)
    except ImportError:
        pass
    leaves = [jnp.ravel(jnp.asarray(leaf)) for leaf in jax.tree_util.tree_leaves(tree)]
    return max(leaves, key=lambda leaf: leaf.size) if leaves else jnp.zeros(0)  # the weights

def shares(a, b):
    a, b = flat(a), flat(b)
    n = min(a.size, b.size, 8)
    return bool(n) and bool(jnp.all(a[:n] == b[:n]))

results = {}
for case in json.loads(sys.argv[1]):
    scope = {}
    exec(compile(case["source"], case["id"], "exec"), scope)
    first, second = scope["run"](jax.random.key(0))
    try:
        with jax.debug_key_reuse(True):
            scope["run"](jax.random.key(0))
        raised = False
    except jax.errors.KeyReuseError:
        raised = True
    results[case["id"]] = {"repeats": second is not None and shares(first, second), "raised": raised}
print(json.dumps(results))
"""


@pytest.mark.parametrize("framework", ALL)
def test_jax_agrees(framework):
    """Each principle's bug and twin under JAX: the bug repeats numbers (or the checker raises on
    it), the twin does not; JAX207's reuses make the checker raise and repeat nothing."""
    pytest.importorskip("jax")
    pytest.importorskip({"plain": "jax", "equinox": "equinox", "nnx": "flax.nnx", "haiku": "haiku", "linen": "flax.linen"}[framework])
    cases = []
    for table in (PRINCIPLES, INIT_PRINCIPLES):
        for name, principle in table.items():
            if framework in principle.frameworks:
                for twin in ("bug", "clean"):
                    source = layouts(principle, framework, twin)["same"]["pkg/main.py"]
                    cases.append({"id": f"{name}/{twin}", "source": source, "check": principle.check, "twin": twin})
    out = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(cases)], capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    for case in cases:
        seen = results[case["id"]]
        bug = case["twin"] == "bug"
        if case["check"] == "repeats":
            assert seen["repeats"] is bug, case["id"]
        elif case["check"] == "copy":
            assert seen["repeats"], case["id"]  # the bug repeats numbers; the twin is a copy, on purpose
        elif case["check"] == "checker":
            assert seen["raised"] is bug, case["id"]
        else:  # checker-both
            assert seen["raised"], case["id"]
            assert not seen["repeats"] or bug, case["id"]


def test_marks_are_codes():
    for table in (PRINCIPLES, INIT_PRINCIPLES):
        for principle in table.values():
            for twin in (principle.bug, principle.clean):
                assert all(re.fullmatch(r"JAX20\d", code) for _, code in marked(twin))


def test_children_a_helper_hands_back_reshaped_are_drawn_from():
    """Children handed through `jnp.stack` to a helper that returns them reshaped are followed no
    further: they count as drawn from, so a second split of the key repeats them (JAX202)."""
    from jaxlint.linter import lint_source

    source = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp

        def reshape_keys(x):
            return x.reshape((2, 2) + x.shape[1:])

        def run(key):
            step_keys = jax.random.split(key, 4)
            warmup_keys = jax.random.split(key, 4)  # JAX202
            step_keys = reshape_keys(jnp.stack(step_keys))
            warmup_keys = reshape_keys(jnp.stack(warmup_keys))
            return jax.vmap(jax.vmap(jax.random.normal))(step_keys), warmup_keys
        """)
    found = {(f.start.row, f.code) for f in lint_source(source, "case.py", {"JAX202", "JAX207"})}
    assert found == marked(source)


INITS_FROM_A_FACTORY = """\
import jax
import jax.numpy as jnp


class Model:
    def init(self, key, x):
        return jax.random.normal(key, x.shape) * 0.1


def make_inits():
    embed_init = Model().init
    proj_init = Model().init
    return embed_init, proj_init


def run(key):
    embed_init, proj_init = make_inits()
    example = jax.random.uniform(key, (1, 3))
    return proj_init(key, example), None  # JAX207


def run_bug(key):
    embed_init, proj_init = make_inits()
    noise = jax.random.uniform(key, (1, 3))
    return proj_init(key, noise), noise  # JAX201
"""


def test_example_inputs_of_inits_a_factory_returns(cli, make_files):
    """A name unpacked from what a function of the module returns, an `init` at that position
    (`embed_init, proj_init = make_inits()`), is an `init`: numbers drawn only as its example
    inputs decide nothing (JAX207); kept beside what it builds, they are drawn (JAX201). JAX's
    checker raises on both."""
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/main.py": INITS_FROM_A_FACTORY})
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX2,JAX207", "pkg")
    assert {(f["location"]["row"], f["code"]) for f in out.json} == marked(INITS_FROM_A_FACTORY)
    jax = pytest.importorskip("jax")
    scope: dict = {}
    exec(compile(INITS_FROM_A_FACTORY, "main.py", "exec"), scope)
    for name in ("run", "run_bug"):
        with jax.debug_key_reuse(True), pytest.raises(jax.errors.KeyReuseError):
            scope[name](jax.random.key(0))
