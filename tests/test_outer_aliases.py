"""A write through a local name bound only to a part of an outer object (`env = self.env`, `latest
= STATE.latest`) mutates that object: a traced value stored there leaks out of the trace (JAX407).
A local rebuilt from itself, or bound to something else on one path, is not such a name. Each
framework's traced code running the helper, in the same module or another one; JAX's leak
checker agrees on each."""

from __future__ import annotations

from module_matrix import helper_matrix, matrix_tests
from quiet_and_reported import case_tests

# The leak goes through a local alias of a part of a module-level object.
LEAKS = """
class Recorder:
    def __init__(self):
        self.latest = {}


RECORDER = Recorder()


def record(x):
    latest = RECORDER.latest
    latest["x"] = x  # JAX407
    return x
"""
# What the trace learns of its input's shape is the same on every trace: no leak.
RECORDS_SHAPES = LEAKS.replace('latest["x"] = x  # JAX407', 'latest["shape"] = x.shape')

(test_writes_through_aliases_across_frameworks, test_jax_sees_the_leaks) = matrix_tests(
    helper_matrix("record", LEAKS, RECORDS_SHAPES, "Exception", names=("RECORDER",), leaks=True)
)

# A bound method jitted, whose helper (called under `jax.vmap`) writes a batched value into the
# environment object the wrapper holds, through a local name.
SHARED_ENVIRONMENT = """
import jax
import jax.numpy as jnp


class Env:
    def __init__(self):
        self.scale = jnp.ones(())

    def reset(self, key):
        return jax.random.uniform(key, (2,)) * self.scale


class Wrapper:
    def __init__(self, env):
        self.env = env
        self.scales = jnp.linspace(0.5, 1.5, 4)

    def _env_fn(self, scale):
        env = self.env
        env.scale = scale{mark}
        return env

    def reset(self, keys):
        def one(scale, key):
            return self._env_fn(scale).reset(key)

        return jax.vmap(one)(self.scales, keys)


def demo():
    env = Env()
    wrapper = Wrapper(env)
    jax.jit(wrapper.reset)(jax.random.split(jax.random.key(0), 4))
    return jax.jit(env.reset)(jax.random.key(1))
"""

# The local is a copy made in the trace, or rebinds itself: nothing outside is written.
LOCAL_OBJECTS = """
import copy

import jax
import jax.numpy as jnp


class Env:
    def __init__(self):
        self.scale = jnp.ones(())
        self.inner = None


class Wrapper:
    def __init__(self, env):
        self.env = env

    @jax.jit
    def fresh(self, scale):
        env = copy.copy(self.env)
        env.scale = scale
        return env.scale * 2


jax.tree_util.register_pytree_node(Wrapper, lambda w: ((), w.env), lambda env, _: Wrapper(env))


def demo():
    return Wrapper(Env()).fresh(jnp.ones(()))
"""

# The fix: the environment gets the batched value for the `with` block only, and gets its own
# back in `finally`, before the trace ends.
RESTORED = SHARED_ENVIRONMENT.replace("{mark}", "").replace(
    """    def _env_fn(self, scale):
        env = self.env
        env.scale = scale
        return env
""",
    """    @contextlib.contextmanager
    def _env_fn(self, scale):
        env = self.env
        old = env.scale
        try:
            env.scale = scale
            yield env
        finally:
            env.scale = old
""",
).replace(
    "            return self._env_fn(scale).reset(key)",
    "            with self._env_fn(scale) as env:\n                return env.reset(key)",
).replace("import jax\n", "import contextlib\n\nimport jax\n", 1)

# A body `jax.vmap` runs inside a jitted method writes into the method's own `self`: directly,
# through `setattr`, or through a name the method binds to a part of it.
NESTED = """
import jax
import jax.numpy as jnp


class Env:
    def __init__(self):
        self.scale = jnp.ones(())


class Wrapper:
    def __init__(self, env):
        self.env = env

    def reset(self, scales, keys):
        env = self.env

        def one(scale, key):
            WRITE
            return jax.random.uniform(key) * scale

        return jax.vmap(one)(scales, keys)


def demo():
    wrapper = Wrapper(Env())
    jax.jit(wrapper.reset)(jnp.ones(4), jax.random.split(jax.random.key(0), 4))
    return wrapper.env.scale + 1
"""
NESTED_WRITES = {
    "self-in-a-nested-body": "self.env.scale = scale",
    "setattr-in-a-nested-body": 'setattr(self.env, "scale", scale)',
    "alias-from-the-method": "env.scale = scale",
}

(
    test_local_objects_stay_quiet,
    test_a_shared_environment_is_reported,
    test_jax_runs_the_local_objects,
    test_jax_rejects_the_shared_environment,
) = case_tests(
    {"local-objects": LOCAL_OBJECTS, "restored-in-finally": RESTORED},
    {
        "shared-environment": (SHARED_ENVIRONMENT.replace("{mark}", ""), "JAX407", "UnexpectedTracerError"),
        **{
            name: (NESTED.replace("WRITE", write), "JAX407", "UnexpectedTracerError")
            for name, write in NESTED_WRITES.items()
        },
    },
)
