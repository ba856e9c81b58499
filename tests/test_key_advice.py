"""Key reuse where the reusing line is itself a split (or a call handing the key back): the fix
is at the first use, which the message names, and the message never suggests the split the line
already makes. The analysis says so in `Reuse.renewal`: the names that line binds. The rules' bad
examples of this shape run under JAX's key reuse checker, which raises on each."""

from __future__ import annotations

import textwrap

import pytest

from advice import advice, line_code, normalised, remedies
from jaxlint.analysis.module import ModuleFacts
from jaxlint.rules import all_rules
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


# The bad examples whose reusing line renews the key, with arguments to run them: each raises
# under JAX's key reuse checker, as the rule says it should.
RENEWING_EXAMPLES = {
    ("JAX201", "init_agent"): lambda jnp, key: (key, 3, 2),
    ("JAX201", "noisy_layer"): lambda jnp, key: (jnp.ones((3, 2)), jnp.ones((4, 3)), key, True),
    ("JAX202", "init_layer"): lambda jnp, key: (key, 3, 2),
    ("JAX203", "rollout"): lambda jnp, key: (lambda state, action: state + action, jnp.zeros(3), key, 2),
}


@pytest.mark.parametrize("code,function", sorted(RENEWING_EXAMPLES))
def test_jax_checker_raises_on_the_renewing_examples(code, function):
    jax = pytest.importorskip("jax")
    example = next(textwrap.dedent(e) for e in all_rules()[code].bad if f"def {function}(" in e)
    namespace: dict = {}
    exec(compile(example, f"<{code} example>", "exec"), namespace)
    arguments = RENEWING_EXAMPLES[code, function](jax.numpy, jax.random.key(0))
    with jax.debug_key_reuse(True), pytest.raises(jax.errors.KeyReuseError):
        namespace[function](*arguments)


RENEWALS = """
import jax


def split_after_draw(key):
    x = jax.random.normal(key, (2,))
    key, sub = jax.random.split(key)
    return x, jax.random.normal(sub, (2,)), key


def step(key, x):
    key, noise_key = jax.random.split(key)
    return key, x + jax.random.normal(noise_key, x.shape)


def handed_back_after_draw(key, x):
    y = jax.random.normal(key, x.shape)
    key, x = step(key, x)
    return key, x + y


def split_into_children(key):
    x = jax.random.normal(key, (2,))
    k1, k2 = jax.random.split(key)
    return x, jax.random.normal(k1, (2,)), jax.random.normal(k2, (2,))


def split_in_place(key):
    x = jax.random.normal(key, (2,))
    return x, jax.random.normal(jax.random.split(key)[0], (2,))


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
        row["    k1, k2 = jax.random.split(key)"]: ("k1", "k2"),  # a split, the key's name left bound to it
        row["    return x, jax.random.normal(jax.random.split(key)[0], (2,))"]: (),  # a split bound to no name
        row["    return x, jax.random.uniform(key, (2,))"]: None,  # a draw renews nothing
    }
