"""Fields that frameworks' state classes declare as JAX arrays (`array_api.DECLARED_ARRAY_FIELDS`):
the declarations, checked against the framework where it is installed, the store JAX rejects, and
JAX401 on them."""

from __future__ import annotations

import importlib
import textwrap
import typing

import pytest
from marks import family_marks

from jaxlint.analysis.knowledge import array_api

marked = family_marks(r"JAX401")


@pytest.mark.parametrize("qualname", sorted(array_api.DECLARED_ARRAY_FIELDS))
def test_each_class_declares_its_fields_jax_arrays(qualname):
    jax = pytest.importorskip("jax")
    pytest.importorskip("brax")
    module, name = qualname.rsplit(".", 1)
    hints = typing.get_type_hints(getattr(importlib.import_module(module), name))
    for field in array_api.DECLARED_ARRAY_FIELDS[qualname]:
        assert hints[field] is jax.Array, (qualname, field)


def test_a_field_declared_a_jax_array_rejects_item_assignment_eagerly_and_under_jit():
    """Brax's states are `flax.struct` dataclasses whose fields hold what the pipeline computes."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    struct = pytest.importorskip("flax.struct")

    @struct.dataclass
    class State:
        q: jax.Array
        qd: jax.Array

    def observe(state):
        position = state.q
        position[1] = 0.0
        return jnp.concatenate((position, state.qd))

    state = State(q=jnp.zeros(3), qd=jnp.ones(3))
    with pytest.raises(TypeError, match="immutable"):
        observe(state)
    with pytest.raises(TypeError, match="immutable"):
        jax.jit(observe)(state)


FIELDS = """
    import jax
    import jax.numpy as jp
    import numpy as np
    from brax import base
    from brax.envs import State as EnvState
    from brax.envs.base import PipelineEnv

    class Hopper(PipelineEnv):
        def _get_obs(self, pipeline_state: base.State) -> jax.Array:
            position = pipeline_state.q
            position[1] = pipeline_state.x.pos[0, 2]  # JAX401
            return jp.concatenate((position, pipeline_state.qd))

    def clip_reward(state: EnvState) -> EnvState:
        reward = state.reward
        reward[reward > 1.0] = 1.0  # JAX401
        obs = state.obs
        obs["pixels"] = 0  # an observation may be a dict
        metrics = state.metrics
        metrics["clipped"] = 1.0  # a dict of metrics
        return state.replace(reward=reward, obs=obs)

    def render(pipeline_state: base.State):
        pipeline_state = jax.device_get(pipeline_state)
        q = pipeline_state.q
        q[0] = 0.0  # rebound: a host copy, NumPy arrays
        return q

    class State:
        q: np.ndarray

    def reset_first(state: State):
        q = state.q
        q[0] = 0.0  # the module's own class, declaring a NumPy array
        return q
    """


def test_declared_fields_through_the_cli(cli, make_files):
    make_files({"fields.py": FIELDS})
    out = cli("check", "--no-cache", "--output-format", "json", "fields.py")
    expected = sorted(marked(textwrap.dedent(FIELDS)))
    assert out.code == 1
    assert sorted((f["location"]["row"], f["code"]) for f in out.json) == expected
