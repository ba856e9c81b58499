"""Facts that cross modules, held the same in every framework: a layer kept on an attribute is
called with what its owner passes, wherever each is defined; a record class's fields are known
wherever the class is defined. Each principle is a matrix: Flax linen, Flax NNX, Haiku, Equinox
and plain JAX x the fact in the same module or in another one x a bug and its clean twin, and
JAX run on each twin agrees."""

from __future__ import annotations

import textwrap

import pytest

FRAMEWORKS = ["linen", "nnx", "haiku", "equinox", "plain"]
IMPORTS = """
    from typing import NamedTuple, Optional

    import jax
    import jax.numpy as jnp
    import numpy as np
    {framework}
    """
FRAMEWORK_IMPORTS = {
    "linen": "import flax.linen as nn",
    "nnx": "from flax import nnx",
    "haiku": "import haiku as hk",
    "equinox": "import equinox as eqx",
    "plain": "",
}


def _source(*parts: str, framework: str) -> str:
    return textwrap.dedent(IMPORTS).format(framework=FRAMEWORK_IMPORTS[framework]) + "\n\n" + "\n\n".join(
        textwrap.dedent(part) for part in parts
    )


def _findings(cli, make_files, files: dict[str, str]) -> set[tuple[str, int, str]]:
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", **files})
    out = cli("check", "--no-cache", "--select", "JAX1", "--output-format", "json", ".")
    return {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in out.json}


def _row(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _layouts(make, framework: str, definition: str, user: str, imported: str) -> dict[str, dict[str, str]]:
    """The definition and its user in one module, or each in its own (`imported` names what the
    user imports)."""
    return {
        "same module": {"pkg/model.py": make(definition, user, framework=framework)},
        "another module": {
            "pkg/defs.py": make(definition, framework=framework),
            "pkg/model.py": make(f"from pkg.defs import {imported}", user, framework=framework),
        },
    }


def _run(source: str, name: str = "check"):
    namespace: dict = {}
    exec(compile(source, "<matrix>", "exec"), namespace)
    return namespace[name]


# ---- a layer kept on an attribute ------------------------------------------------------------
# The owner stores the layer (or None) on `self` and calls it, after testing it for None, with a
# shape (clean) or with an array (the bug): NumPy on the length is a constant, or fails on a tracer.
BASES = {"linen": "(nn.Module)", "nnx": "(nnx.Module)", "haiku": "(hk.Module)", "equinox": "(eqx.Module)", "plain": ""}
COMPACT = {"linen": "@nn.compact\n    "}
LAYER = """
class Positions{base}:
    {compact}def __call__(self, length):
        return jnp.asarray(np.arange(length), jnp.float32)
"""
LAYERS = {f: LAYER.format(base=BASES[f], compact=COMPACT.get(f, "")) for f in FRAMEWORKS}
# How each framework's owner starts keeping the layer, and how a jitted call runs it.
KEEPS = {
    "linen": "with_positions: bool = True\n\n    def setup(self):\n        with_positions = self.with_positions",
    "nnx": "def __init__(self, with_positions=True):",
    "haiku": "def __init__(self, with_positions=True, name=None):\n        super().__init__(name=name)",
    "equinox": "positions: Optional[Positions]\n\n    def __init__(self, with_positions=True):",
    "plain": "def __init__(self, with_positions=True):",
}
RUNS = {
    "linen": "def check(x):\n    model = Model()\n    return jax.jit(model.apply)(model.init(jax.random.PRNGKey(0), x), x)",
    "nnx": "def check(x):\n    return nnx.jit(lambda model, x: model(x))(Model(), x)",
    "haiku": "def check(x):\n    forward = hk.without_apply_rng(hk.transform(lambda x: Model()(x)))\n"
             "    return jax.jit(forward.apply)(forward.init(jax.random.PRNGKey(0), x), x)",
    "equinox": "def check(x):\n    return eqx.filter_jit(lambda model, x: model(x))(Model(), x)",
    "plain": "model = Model()\n\n\n@jax.jit\ndef check(x):\n    return model(x)",
}
OWNER = """
class Model{base}:
    {keeps}
        if with_positions:
            self.positions = Positions()
        else:
            self.positions = None

    def __call__(self, x):
        if self.positions is not None:
            x = x + self.positions({{length}})
        return x


{run}
"""
OWNERS = {f: OWNER.format(base=BASES[f], keeps=KEEPS[f], run=RUNS[f]) for f in FRAMEWORKS}
TWINS = {"bug": "(x >= 0).sum()", "clean": "x.shape[0]"}


@pytest.mark.parametrize("layout", ["same module", "another module"])
@pytest.mark.parametrize("twin", ["bug", "clean"])
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_layer_on_an_attribute_gets_what_its_owner_passes(cli, make_files, framework, twin, layout):
    owner = OWNERS[framework].replace("{length}", TWINS[twin])
    files = _layouts(_source, framework, LAYERS[framework], owner, "Positions")[layout]
    found = _findings(cli, make_files, files)
    where = "model.py" if layout == "same module" else "defs.py"
    row = _row(files[f"pkg/{where}"], "np.arange(length)")
    assert found == ({(where, row, "JAX107")} if twin == "bug" else set())


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_jax_runs_numpy_on_a_shape_and_rejects_a_tracer(framework):
    pytest.importorskip({"linen": "flax", "nnx": "flax", "haiku": "haiku", "equinox": "equinox"}.get(framework, "jax"))
    import jax
    import jax.numpy as jnp

    x = jnp.arange(3.0)
    clean = _source(LAYERS[framework], OWNERS[framework].replace("{length}", TWINS["clean"]), framework=framework)
    assert _run(clean)(x).shape == (3,)
    bug = _source(LAYERS[framework], OWNERS[framework].replace("{length}", TWINS["bug"]), framework=framework)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        _run(bug)(x)


# ---- a record class's fields -------------------------------------------------------------------
RECORDS = {
    "NamedTuple": """
        class Batch(NamedTuple):
            reward: jax.Array
            done: jax.Array
        """,
    "flax.struct": """
        import flax.struct


        @flax.struct.dataclass
        class Batch:
            reward: jax.Array
            done: jax.Array
        """,
    "chex": """
        import chex


        @chex.dataclass
        class Batch:
            reward: chex.Array
            done: chex.Array
        """,
}
# The loss reads the reward of a batch annotated with the record class: clipped with Python's
# `min`/`max` (the bug: a traced comparison) or with `jnp.clip`.
CLIPS = {"bug": "min(max(batch.reward, -1.0), 1.0)", "clean": "jnp.clip(batch.reward, -1.0, 1.0)"}
LOSS = """
class Loss{base}:
    {compact}def __call__(self, batch: Batch):
        reward = {{clip}}
        return (reward * (1.0 - batch.done)).sum()


def check(batch):
    {run}
"""
LOSS_RUNS = {
    "linen": "return jax.jit(Loss().init)(jax.random.PRNGKey(0), batch)",
    "nnx": "return nnx.jit(lambda loss, batch: loss(batch))(Loss(), batch)",
    "haiku": "return jax.jit(hk.transform(lambda batch: Loss()(batch)).init)(jax.random.PRNGKey(0), batch)",
    "equinox": "return eqx.filter_jit(lambda loss, batch: loss(batch))(Loss(), batch)",
}
LOSSES = {f: LOSS.format(base=BASES[f], compact=COMPACT.get(f, ""), run=run) for f, run in LOSS_RUNS.items()}
# Plain JAX: the loss differentiated inside an update step, scanned over stacked batches.
LOSSES["plain"] = """
def loss(w, batch: Batch):
    reward = {clip}
    return ((w - reward) ** 2 * (1.0 - batch.done)).sum()


def update(w, batch: Batch):
    return w - 0.1 * jax.grad(loss)(w, batch)


@jax.jit
def check(batches):
    def body(w, batch):
        return update(w, batch), None

    return jax.lax.scan(body, 0.0, batches)[0]
"""


@pytest.mark.parametrize("layout", ["same module", "another module"])
@pytest.mark.parametrize("twin", ["bug", "clean"])
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_field_a_record_class_declares_an_array_is_one_in_a_traced_instance(cli, make_files, framework, twin, layout):
    loss = LOSSES[framework].replace("{clip}", CLIPS[twin])
    files = _layouts(_source, framework, RECORDS["NamedTuple"], loss, "Batch")[layout]
    found = _findings(cli, make_files, files)
    row = _row(files["pkg/model.py"], "reward = ")
    assert found == ({("model.py", row, "JAX113")} if twin == "bug" else set())


@pytest.mark.parametrize("record", sorted(RECORDS))
@pytest.mark.parametrize("twin", ["bug", "clean"])
def test_each_kind_of_record_class_of_another_module_declares_its_fields(cli, make_files, record, twin):
    loss = LOSSES["plain"].replace("{clip}", CLIPS[twin])
    files = _layouts(_source, "plain", RECORDS[record], loss, "Batch")["another module"]
    found = _findings(cli, make_files, files)
    row = _row(files["pkg/model.py"], "reward = ")
    assert found == ({("model.py", row, "JAX113")} if twin == "bug" else set())


def _batch(namespace: dict, steps: int | None):
    """One batch of scalar rewards, or (`steps`) a batch of them stacked for `lax.scan`: inside the
    trace each reward is a scalar tracer, which Python's `max` asks the truth of."""
    import jax.numpy as jnp

    shape = () if steps is None else (steps,)
    return namespace["Batch"](reward=jnp.full(shape, 2.0), done=jnp.zeros(shape))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_jax_clips_with_jnp_and_rejects_python_max_on_a_field(framework):
    pytest.importorskip({"linen": "flax", "nnx": "flax", "haiku": "haiku", "equinox": "equinox"}.get(framework, "jax"))
    import jax

    for twin in ("clean", "bug"):
        source = _source(RECORDS["NamedTuple"], LOSSES[framework].replace("{clip}", CLIPS[twin]), framework=framework)
        namespace: dict = {}
        exec(compile(source, "<matrix>", "exec"), namespace)
        batch = _batch(namespace, 3 if framework == "plain" else None)
        if twin == "clean":
            namespace["check"](batch)
        else:
            with pytest.raises(jax.errors.TracerBoolConversionError):
                namespace["check"](batch)


@pytest.mark.parametrize("record", sorted(RECORDS))
def test_jax_traces_the_fields_of_each_kind_of_record(record):
    pytest.importorskip("chex" if record == "chex" else "flax")
    import jax

    for twin in ("clean", "bug"):
        source = _source(RECORDS[record], LOSSES["plain"].replace("{clip}", CLIPS[twin]), framework="plain")
        namespace: dict = {}
        exec(compile(source, "<matrix>", "exec"), namespace)
        batch = _batch(namespace, 3)
        if twin == "clean":
            namespace["check"](batch)
        else:
            with pytest.raises(jax.errors.TracerBoolConversionError):
                namespace["check"](batch)


# ---- structure through loops and tree maps ---------------------------------------------------
# A rollout builds records of another module's class, `lax.scan` stacks them, a tree map reverses
# every leaf, and an epoch loop carries the result: the field is still an array there.
STEP = """
    class Step(NamedTuple):
        reward: jax.Array
        done: jax.Array
    """
ROLLOUT = """
    @jax.jit
    def check(w, rewards):
        def env_step(carry, reward):
            return carry, Step(reward, jnp.zeros_like(reward))

        _, steps = jax.lax.scan(env_step, 0.0, rewards)
        steps = jax.tree_util.tree_map(lambda x: x[::-1], steps)

        def epoch(carry, _):
            w, batch = carry
            reward = {clip}
            return (w + reward * (1.0 - batch.done[0]), batch), None

        return jax.lax.scan(epoch, (w, steps), None, length=2)[0][0]
    """
FIRST_CLIPS = {"bug": "min(max(batch.reward[0], -1.0), 1.0)", "clean": "jnp.clip(batch.reward[0], -1.0, 1.0)"}


@pytest.mark.parametrize("layout", ["same module", "another module"])
@pytest.mark.parametrize("twin", ["bug", "clean"])
def test_loops_and_tree_maps_keep_the_records_they_carry(cli, make_files, twin, layout):
    rollout = ROLLOUT.replace("{clip}", FIRST_CLIPS[twin])
    files = _layouts(_source, "plain", STEP, rollout, "Step")[layout]
    found = _findings(cli, make_files, files)
    row = _row(files["pkg/model.py"], "reward = ")
    assert found == ({("model.py", row, "JAX113")} if twin == "bug" else set())


def test_jax_carries_the_stacked_records_as_tracers():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    rewards = jnp.arange(3.0)
    clean = _run(_source(STEP, ROLLOUT.replace("{clip}", FIRST_CLIPS["clean"]), framework="plain"))
    assert float(clean(0.0, rewards)) == 2.0
    bug = _run(_source(STEP, ROLLOUT.replace("{clip}", FIRST_CLIPS["bug"]), framework="plain"))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        bug(0.0, rewards)


# ---- a concrete JAX array closed over ------------------------------------------------------------
CLOSED = """
    def check(temperature, steps):
        temperature = jnp.asarray(temperature)

        def body(i, total):
            return total + {step}

        return jax.lax.fori_loop(0, steps, body, 0.0)
    """
STEPS = {"bug": "(1.0 if temperature > 0.5 else 0.0)", "clean": "jnp.where(temperature > 0.5, 1.0, 0.0)"}


@pytest.mark.parametrize("twin", ["bug", "clean"])
def test_an_operator_on_a_jax_array_closed_over_is_staged(cli, make_files, twin):
    source = _source(CLOSED.replace("{step}", STEPS[twin]), framework="plain")
    found = _findings(cli, make_files, {"pkg/model.py": source})
    assert found == ({("model.py", _row(source, "return total"), "JAX101")} if twin == "bug" else set())


def test_jax_stages_the_comparison_of_a_closed_over_array():
    jax = pytest.importorskip("jax")

    assert float(_run(_source(CLOSED.replace("{step}", STEPS["clean"]), framework="plain"))(1.0, 3)) == 3.0
    with pytest.raises(jax.errors.TracerBoolConversionError):
        _run(_source(CLOSED.replace("{step}", STEPS["bug"]), framework="plain"))(1.0, 3)


# ---- what an index or a transformation shows of a value -------------------------------------------
MAPPED = """
    def check(features, mask, scale):
        def select(feature, keep):
            return {select}

        scaled = jax.vmap(scale)(features)
        return jax.vmap(select)(scaled, mask)
    """
SELECTS = {"bug": "feature if keep[None, :].any() else jnp.zeros_like(feature)",
           "clean": "jnp.where(keep[None, :].any(), feature, jnp.zeros_like(feature))"}


@pytest.mark.parametrize("twin", ["bug", "clean"])
def test_a_multi_dimensional_index_makes_an_array_of_a_mapped_argument(cli, make_files, twin):
    source = _source(MAPPED.replace("{select}", SELECTS[twin]), framework="plain")
    found = _findings(cli, make_files, {"pkg/model.py": source})
    assert found == ({("model.py", _row(source, "return feature"), "JAX101")} if twin == "bug" else set())


def test_jax_maps_the_selection_and_rejects_a_python_branch():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    features, mask = jnp.ones((2, 3)), jnp.ones((2, 3), bool)
    clean = _run(_source(MAPPED.replace("{select}", SELECTS["clean"]), framework="plain"))
    assert clean(features, mask, lambda f: f * 2).shape == (2, 3)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        _run(_source(MAPPED.replace("{select}", SELECTS["bug"]), framework="plain"))(features, mask, lambda f: f * 2)


# ---- a dataclass pytree's number fields ---------------------------------------------------------
STATE = """
    import flax.struct


    @flax.struct.dataclass
    class State:
        params: jax.Array
        step: {step}
    """
LOGGED = """
    @jax.jit
    def check(state: State):
        return jnp.asarray(np.asarray([state.step])) + state.params.sum()
    """


@pytest.mark.parametrize("layout", ["same module", "another module"])
@pytest.mark.parametrize("step, found", [("int", True), ("Optional[int] = 0", False)])
def test_a_number_field_of_a_dataclass_pytree_is_traced_unless_it_may_be_none(cli, make_files, layout, step, found):
    files = _layouts(_source, "plain", STATE.replace("{step}", step), LOGGED, "State")[layout]
    row = _row(files["pkg/model.py"], "np.asarray")
    assert _findings(cli, make_files, files) == ({("model.py", row, "JAX107")} if found else set())


@pytest.mark.parametrize("through", ["the class", "an alias of it in another module"])
def test_a_record_class_is_found_through_a_module_level_alias(cli, make_files, through):
    """`TrainState = managers.State` in one module, `state: lib.TrainState` in another: the
    alias is the class, as the import of a re-export is."""
    state = _source(STATE.replace("{step}", "int"), framework="plain")
    alias = "from pkg import managers\n\nTrainState = managers.State\n"
    user = LOGGED.replace("state: State", "state: lib.TrainState")
    name = "TrainState" if through != "the class" else "State"
    files = {
        "pkg/managers.py": state,
        "pkg/lib.py": alias if through != "the class" else "from pkg.managers import State\n",
        "pkg/model.py": _source(f"from pkg import lib", user.replace("lib.TrainState", f"lib.{name}"), framework="plain"),
    }
    row = _row(files["pkg/model.py"], "np.asarray")
    assert _findings(cli, make_files, files) == {("model.py", row, "JAX107")}


def test_jax_traces_a_number_field_and_numpy_rejects_it():
    pytest.importorskip("flax")
    import jax
    import jax.numpy as jnp

    namespace: dict = {}
    exec(compile(_source(STATE.replace("{step}", "int"), LOGGED, framework="plain"), "<matrix>", "exec"), namespace)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        namespace["check"](namespace["State"](params=jnp.ones(2), step=3))
