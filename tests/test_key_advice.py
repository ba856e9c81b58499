"""Key reuse where the reusing line is itself a split (or a call handing the key back): the fix
is at the first use, which the message names, and the message never suggests the split the line
already makes. The analysis says so in `Reuse.renewal`: the names that line binds."""

from __future__ import annotations

import textwrap

import pytest

from advice import advice, line_code, normalised, remedies
from jaxlint.analysis.module import ModuleFacts
from jaxlint.source import Source
from marks import family_marks

marked = family_marks(r"JAX2\d\d")

# A reduction of a DQN training set-up: a dummy key drawn from to give a replay buffer its
# shapes, then split; and a scan body that samples the buffer with the carried key, then splits it.
DQN = """
import jax
import jax.numpy as jnp


def make_train(env, env_params, network, buffer, num_updates):
    def train(rng):
        rng, _rng = jax.random.split(rng)
        obs, env_state = env.reset(_rng, env_params)

        rng = jax.random.PRNGKey(0)  # a dummy key, only to give the buffer its shapes
        _action = env.action_space(env_params).sample(rng)
        buffer_state = buffer.init((obs, _action))

        rng, _rng = jax.random.split(rng)  # JAX201
        params = network.init(_rng, jnp.zeros(obs.shape))

        def _update_step(runner_state, unused):
            params, buffer_state, env_state, last_obs, rng = runner_state
            action = jnp.argmax(network.apply(params, last_obs), axis=-1)
            batch = buffer.sample(buffer_state, rng)
            rng, _rng = jax.random.split(rng)  # JAX201
            obs, env_state, reward, done, info = env.step(_rng, env_state, action, env_params)
            return (params, buffer.add(buffer_state, batch), env_state, obs, rng), reward

        runner_state = (params, buffer_state, env_state, obs, rng)
        return jax.lax.scan(_update_step, runner_state, None, num_updates)

    return train
"""


def first_uses(source: str) -> dict[int, int]:
    """Each marked line of `source`, with the line of the draw before it (`sample(... rng)`)."""
    lines = source.splitlines()
    draws = [row for row, line in enumerate(lines, 1) if "sample(" in line and "rng" in line]
    return {row: max(d for d in draws if d < row) for row, _ in marked(source)}


def test_a_split_after_a_draw_names_the_draw_and_not_its_own_split(cli, make_files):
    make_files({"dqn.py": DQN})
    out = cli("check", "--select", "JAX2", "--isolated", "--no-cache", "--output-format", "json")
    messages = {f["location"]["row"]: f["message"] for f in out.json}
    source = textwrap.dedent(DQN)
    assert set(messages) == {row for row, _ in marked(source)}
    for row, first in first_uses(source).items():
        message, own = messages[row], normalised(line_code(source, row))
        assert any(f"line {first}" in clause for clause in advice(message))  # where to split
        assert own not in {normalised(remedy) for remedy in remedies(message)}
        assert own not in normalised(message)


def test_jax_checker_raises_at_a_split_after_a_draw():
    """What the DQN reduction does, under JAX's key reuse checker: the split after the draw raises."""
    jax = pytest.importorskip("jax")

    def set_up(rng):
        action = jax.random.randint(rng, (), 0, 4)
        rng, _rng = jax.random.split(rng)
        return action, jax.random.normal(_rng, (3,)), rng

    with jax.debug_key_reuse(True):
        with pytest.raises(jax.errors.KeyReuseError):
            set_up(jax.random.key(0))


RENEWALS = """
import jax


def split_after_draw(key):
    x = jax.random.normal(key, (2,))
    key, sub = jax.random.split(key)
    return x, jax.random.normal(sub, (2,)), key


def step(key, x):
    key, sub = jax.random.split(key)
    return key, x + jax.random.normal(sub, x.shape)


def handed_back_after_draw(key, x):
    y = jax.random.normal(key, x.shape)
    key, x = step(key, x)
    return key, x + y


def second_draw(key):
    x = jax.random.normal(key, (2,))
    return x, jax.random.uniform(key, (2,))
"""


def test_the_reuse_says_when_its_line_renews_the_key():
    facts = ModuleFacts(Source.parse(RENEWALS))
    renewals = {reuse.use.call.lineno: reuse.renewal for reuse in facts.keys.reuses}
    lines = RENEWALS.splitlines()
    row = {text: lines.index(text) + 1 for text in lines}
    assert renewals == {
        row["    key, sub = jax.random.split(key)"]: ("key", "sub"),  # the split's own names
        row["    key, x = step(key, x)"]: ("key", "x"),  # a call whose result rebinds the key
        row["    return x, jax.random.uniform(key, (2,))"]: None,  # a draw renews nothing
    }
