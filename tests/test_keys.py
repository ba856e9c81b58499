"""The key flow analysis against JAX's own key reuse checker, case by case.

Each case is a small program whose `run()` uses typed keys (`jax.random.key`), what jaxlint
reports on it (the JAX2xx codes and the marked lines), and whether JAX's checker
(`jax_debug_key_reuse`) raises `KeyReuseError` when `run()` is executed.  Where the two
disagree, the case says why.  The linter half runs everywhere; the checker half needs JAX.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import pytest

from jaxlint.linter import lint_source
from marks import cli_reports

KEY_CODES = {"JAX201", "JAX202", "JAX203", "JAX204", "JAX206"}
MARK = re.compile(r"#\s*(JAX2\d\d)\b")


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    checker_raises: bool
    disagreement: str | None = None  # why the linter and the checker differ, when they do


# A helper that draws only a position from its key: an offset to crop each array it is given at.
_CROP = """
        import jax
        import jax.numpy as jnp

        def crop(rng, image, width):
            start = jax.random.randint(rng, (), 0, image.shape[0] - width)
            return jax.lax.dynamic_slice_in_dim(image, start, width)
"""

# Code not seen (a solver) that keeps the functions handed to it and runs them later.
_SOLVER = """
        import jax
        import jax.numpy as jnp

        class Solver:
            def __init__(self):
                self.terms = []

            def add(self, term):
                self.terms.append(term)

            def run(self, y):
                for term in self.terms:
                    y = term(y)
                return y

"""

# One key handed to both key parameters of a mixup, whose first draw a test on `alpha` guards.
_MIXUP = """
    import jax

    def mixup(key_0, key_1, x, alpha=1.0):
        lam = 1.0
        if alpha > 0:
            lam = jax.random.beta(key_0, alpha, alpha)
        index = jax.random.permutation(key_1, x.shape[0])
        return lam * x + (1 - lam) * x[index]

    def run():
        key_0, key_1 = jax.random.split(jax.random.key(0))
        return mixup(key_0, key_0, jax.numpy.arange(4.0)), key_1  # JAX201
    """
# ... drawing from both keys on every path, and called with `alpha=0`, drawing from one only.
_MIXUP_UNGUARDED = _MIXUP.replace(
    "        lam = 1.0\n        if alpha > 0:\n            lam = jax.random.beta", "        lam = jax.random.beta"
)
_MIXUP_NO_BETA = _MIXUP.replace("arange(4.0)), key_1  # JAX201", "arange(4.0), alpha=0), key_1")
assert _MIXUP_UNGUARDED != _MIXUP != _MIXUP_NO_BETA

# A record holding a key, as RL training states do (`ts.rng`).
_STATE = """
        from typing import NamedTuple

        import jax

        class State(NamedTuple):
            rng: jax.Array
            obs: jax.Array
"""

CASES = [
    # ---- an interface's methods draw from the keys handed to them ----------------------------
    # ---- a split key handed to a helper that draws from it on some path ----------------------
    Case("split key to a helper that draws on some path", """
        import jax

        def permute(x, key):
            if x.shape[0] == 1:
                return x
            return jax.random.permutation(key, x)

        def layer(key, x):
            w_key, b_key = jax.random.split(key)
            w = jax.random.normal(w_key, x.shape)
            return permute(x * w, key)  # JAX202

        def run():
            return layer(jax.random.key(0), jax.numpy.ones(3))
        """, True),
    Case("fresh key to a helper that draws on some path, then split", """
        import jax

        def permute(x, key):
            if x.shape[0] == 1:
                return x
            return jax.random.permutation(key, x)

        def layer(key, x):
            key, sub = jax.random.split(key)
            x = permute(x, sub)
            return permute(x, key)

        def run():
            return layer(jax.random.key(0), jax.numpy.ones(3))
        """, False),
    Case("one key for every leaf, through a lambda bound to a name", """
        import jax

        def add_noise(grads, rng):
            noise = lambda g: g + jax.random.normal(rng, g.shape)  # JAX203
            return jax.tree.map(noise, grads)

        def run():
            return add_noise((jax.numpy.zeros(3), jax.numpy.zeros(3)), jax.random.key(0))
        """, True),
    # ---- a helper that returns the key it drew from ----------------------------------------------
    Case("helper returns the key it drew from, the caller draws again", """
        import jax

        def random_card(key):
            key = jax.random.split(key)[0]
            card = jax.random.choice(key, 10, shape=(1,))
            return card[0], key  # JAX201

        def draw_hand(key):
            a, key = random_card(key)
            b, key = random_card(key)
            return a + b, key

        def run():
            return draw_hand(jax.random.key(0))
        """, True),
    Case("a jitted step hands back the key its loss drew from", """
        import jax
        import jax.numpy as jnp

        def loss(params, key):
            return jnp.sum(params * jax.random.normal(key, params.shape))

        def update(key, params):
            grads = jax.grad(loss)(params, key)
            return key, params - grads  # JAX201

        step = jax.jit(update)

        def run():
            key, params = jax.random.key(0), jnp.ones(3)
            for _ in range(2):
                key, params = step(key, params)
            return params
        """, True),
    Case("a step hands the loss to code not seen, and returns the key the loss drew from", """
        import jax
        import jax.numpy as jnp

        class Model:
            def apply_gradient(self, loss_fn):
                return jax.grad(loss_fn)(jnp.ones(3))

        def update(model, rng):
            def loss_fn(params):
                return jnp.sum(params * jax.random.normal(rng, params.shape))
            return (rng, model.apply_gradient(loss_fn))  # JAX201

        def run():
            rng = jax.random.key(0)
            for _ in range(2):
                rng, grads = update(Model(), rng)
            return grads
        """, True),
    Case("a loss drawing from the step's key is handed to a helper seen that runs it", """
        import jax
        import jax.numpy as jnp

        def update_by_loss_grad(params, loss_fn):
            grad_fn = jax.value_and_grad(loss_fn)
            loss, grads = grad_fn(params)
            return params - grads

        def update_critic(params, rng):
            def loss_fn(p):
                return jnp.sum(p * jax.random.normal(rng, p.shape))
            return update_by_loss_grad(params, loss_fn)

        def run():
            rng, params = jax.random.key(0), jnp.ones(3)
            for _ in range(2):
                rng, batch_rng = jax.random.split(rng)  # JAX203
                params = update_critic(params + jax.random.uniform(batch_rng, (3,)), rng)
            return params
        """, True),
    Case("a loss reading a split key runs where the transformation bound to a name is called", """
        import jax
        import jax.numpy as jnp

        def update(params, rng):
            new_rng, noise_rng = jax.random.split(rng)

            def loss_fn(p):
                return jnp.sum(p * jax.random.normal(rng, p.shape))  # JAX202

            grad_fn = jax.value_and_grad(loss_fn)
            loss, grads = grad_fn(params)
            return params - grads, new_rng, noise_rng

        def run():
            params, rng, noise_rng = update(jnp.ones(3), jax.random.key(0))
            return params + jax.random.uniform(noise_rng, (3,)), rng
        """, True),
    Case("a loss transformed by a library's grad draws once, where the transformed loss is called", """
        import jax
        import jax.numpy as jnp
        from flax import nnx

        def update(params, rng):
            new_rng, noise_rng = jax.random.split(rng)

            def loss_fn(p):
                return jnp.sum(p * jax.random.normal(noise_rng, p.shape))

            loss, grads = nnx.value_and_grad(loss_fn)(params)
            return params - grads, new_rng

        def run():
            return update(jnp.ones(3), jax.random.key(0))
        """, False),
    Case("a loss drawing from the step's key is handed to a helper seen that only keeps it", """
        import jax
        import jax.numpy as jnp

        LOSSES = []

        def register(name, loss_fn):
            LOSSES.append((name, loss_fn))
            return name

        def update_critic(params, rng):
            def loss_fn(p):
                return jnp.sum(p * jax.random.normal(rng, p.shape))
            register("critic", loss_fn)
            return params

        def run():
            rng, params = jax.random.key(0), jnp.ones(3)
            for _ in range(2):
                rng, batch_rng = jax.random.split(rng)
                params = update_critic(params + jax.random.uniform(batch_rng, (3,)), rng)
            return params
        """, False),
    Case("a setup unpacks the keys tuple it is handed and splits the first; the caller splits it again", """
        import jax

        def setup(keys, n):
            key, actor_key, critic_key = keys
            actor = jax.random.normal(actor_key, (n,))
            critic = jax.random.normal(critic_key, (n,))
            key, step_key = jax.random.split(key)
            return actor, critic, step_key

        def run():
            key, actor_key, critic_key = jax.random.split(jax.random.key(0), num=3)
            learner = setup((key, actor_key, critic_key), 2)
            eval_keys = jax.random.split(key, 4)  # JAX201
            return learner, eval_keys
        """, True),
    Case("a setup unpacks the keys tuple it is handed and draws from the others only", """
        import jax

        def setup(keys, n):
            key, actor_key, critic_key = keys
            actor = jax.random.normal(actor_key, (n,))
            critic = jax.random.normal(critic_key, (n,))
            return actor, critic

        def run():
            key, actor_key, critic_key = jax.random.split(jax.random.key(0), num=3)
            learner = setup((key, actor_key, critic_key), 2)
            eval_keys = jax.random.split(key, 4)
            return learner, eval_keys
        """, False),
    Case("a policy made by a factory draws from the key while its setting holds; the caller draws again", """
        import types
        import jax
        import jax.numpy as jnp

        def make_policy(config):
            def policy(obs, key):
                if config.exploration_noise != 0:
                    obs = obs + config.exploration_noise * jax.random.normal(key, obs.shape)
                return obs
            return policy

        def run():
            policy = make_policy(types.SimpleNamespace(exploration_noise=0.1))
            key = jax.random.key(0)
            action = policy(jnp.zeros(2), key)
            return action + jax.random.uniform(key, (2,))  # JAX201
        """, True),
    Case("a sampler draws from the key unless the caller asks for the deterministic action", """
        import jax
        import jax.numpy as jnp

        def sample(obs, key, deterministic):
            if deterministic:
                return obs
            return obs + jax.random.normal(key, obs.shape)

        def run():
            key = jax.random.key(0)
            action = sample(jnp.zeros(2), key, deterministic=True)
            return action + jax.random.uniform(key, (2,))
        """, False),
    Case("a builder packs the key into a tuple of arguments and spreads it into the function it is given", """
        import jax

        def get_model(create_model, rng, shape):
            create_model_args = ("mlp", rng, shape)
            return create_model(*create_model_args)

        def create(kind, rng, shape):
            return jax.random.normal(rng, shape)

        def run():
            rng = jax.random.key(0)
            model = get_model(create, rng, (3,))
            return model + jax.random.normal(rng, (3,))  # JAX201
        """, True),
    Case("a tuple of arguments holding the key is spread into a function seen that only reads its shape", """
        import jax

        def describe(kind, rng, shape):
            return kind, shape

        def run():
            rng = jax.random.key(0)
            args = ("mlp", rng, (3,))
            kind, shape = describe(*args)
            return jax.random.normal(rng, shape)
        """, False),
    Case("a function kept by code not seen draws from a key already drawn from", _SOLVER + """
        def sample(solver, key, x):
            key, sub = jax.random.split(key)
            drift = lambda y: y + jax.random.normal(key, y.shape)  # JAX201
            noise = jax.random.normal(key, x.shape)
            solver.add(drift)
            return solver.run(x + noise)

        def run():
            return sample(Solver(), jax.random.key(0), jnp.zeros(2))
        """, True),
    Case("a loss handed by keyword to code not seen draws from a key the function returns", """
        import jax
        import jax.numpy as jnp

        class Trainer:
            def apply_loss_fn(self, *, loss_fn, params):
                return loss_fn(params)

        def update(trainer, rng, x):
            new_rng, sub = jax.random.split(rng)

            def loss_fn(p):
                return (p * jax.random.normal(new_rng, p.shape)).sum()

            loss = trainer.apply_loss_fn(loss_fn=loss_fn, params=x)
            return new_rng, loss  # JAX201

        def run():
            rng, loss = update(Trainer(), jax.random.key(0), jnp.ones(2))
            return loss + jax.random.normal(rng)
        """, True),
    Case("a function kept by code not seen reads the key its maker binds after handing it on", _SOLVER + """
        def sample(solver, key, x):
            key, sub = jax.random.split(key)
            drift = lambda y: y + jax.random.normal(key, y.shape)
            noise = jax.random.normal(key, x.shape)
            solver.add(drift)
            key, sub = jax.random.split(sub)  # what `drift` reads when the solver runs it
            return solver.run(x + noise)

        def run():
            return sample(Solver(), jax.random.key(0), jnp.zeros(2))
        """, False),
    Case("a Haiku state name held in a parameter named key", """
        import haiku as hk
        import jax
        import jax.numpy as jnp

        def cached(x):
            def update_cache(key, value):
                cache = hk.get_state(key, shape=value.shape, dtype=value.dtype, init=jnp.zeros)
                hk.set_state(key, cache + value)
                return cache + value
            return update_cache("k", x) + update_cache("v", x)

        def run():
            model = hk.transform_with_state(cached)
            params, state = model.init(jax.random.key(0), jnp.ones(2))
            return model.apply(params, state, None, jnp.ones(2))
        """, False),
    Case("a key drawn in a hk.fori_loop body and carried to the next iteration", """
        import haiku as hk
        import jax
        import jax.numpy as jnp

        def body(i, carry):
            x, key = carry
            x = x + jax.random.normal(key, x.shape)
            return x, key  # JAX203

        def forward(x, key):
            return hk.fori_loop(0, 3, body, (x, key))

        def run():
            model = hk.transform(forward)
            params = model.init(None, jnp.ones(2), jax.random.key(0))
            return model.apply(params, None, jnp.ones(2), jax.random.key(1))
        """, True),
    Case("a key split in a hk.fori_loop body, the new one carried", """
        import haiku as hk
        import jax
        import jax.numpy as jnp

        def body(i, carry):
            x, key = carry
            key, sub = jax.random.split(key)
            return x + jax.random.normal(sub, x.shape), key

        def forward(x, key):
            return hk.fori_loop(0, 3, body, (x, key))

        def run():
            model = hk.transform(forward)
            params = model.init(None, jnp.ones(2), jax.random.key(0))
            return model.apply(params, None, jnp.ones(2), jax.random.key(1))
        """, False),
    Case("a step splits only when a flag asks, then returns the key it drew from", """
        import jax

        def update(rng, x, train):
            if train:
                rng, key = jax.random.split(rng)
                x = x + jax.random.normal(rng, x.shape)
            return rng, x  # JAX201

        def run():
            rng, x = jax.random.key(0), jax.numpy.zeros(2)
            rng, x = update(rng, x, True)
            return jax.random.normal(rng, x.shape)
        """, True),
    Case("a scan body packs the key it drew from into the state it carries", """
        import jax

        def epoch(carry, _):
            params, rng = carry
            perm = jax.random.permutation(rng, params.shape[0])
            carry = (params[perm], rng)  # JAX203
            return carry, None

        def run():
            return jax.lax.scan(epoch, (jax.numpy.arange(4.0), jax.random.key(0)), None, 3)
        """, True),
    Case("a step returns the new key of its split, and a helper returns the key it only looked at", """
        import jax

        def update(rng, x):
            rng, key = jax.random.split(rng)
            return rng, x + jax.random.normal(key, x.shape)

        def describe(key, step):
            jax.debug.print("{d}", d=jax.random.key_data(key))
            sub = jax.random.fold_in(key, step)
            return key, jax.random.normal(sub)

        def epoch(carry, _):
            params, rng = carry
            rng, key = jax.random.split(rng)
            carry = (params[jax.random.permutation(key, params.shape[0])], rng)
            return carry, None

        def run():
            rng, x = update(jax.random.key(0), jax.numpy.zeros(2))
            rng, y = describe(rng, 1)
            rng, x = update(rng, x)
            return jax.lax.scan(epoch, (x, rng), None, 3), y
        """, False),
    Case("a step hands code not seen a loss that draws from a key split off", """
        import jax
        import jax.numpy as jnp

        class Model:
            def apply_gradient(self, loss_fn):
                return jax.grad(loss_fn)(jnp.ones(3))

        def update(model, rng):
            rng, key = jax.random.split(rng)
            def loss_fn(params):
                return jnp.sum(params * jax.random.normal(key, params.shape))
            return rng, model.apply_gradient(loss_fn)

        def run():
            rng = jax.random.key(0)
            for _ in range(2):
                rng, grads = update(Model(), rng)
            return grads
        """, False),
    Case("a helper splits its key in a loop the call makes run, the caller draws again", """
        import jax

        def sample_batch(key, data, n):
            out = []
            for _ in range(n):
                key, sub = jax.random.split(key)
                out.append(jax.random.choice(sub, data))
            return out

        def run():
            key, data = jax.random.key(0), jax.numpy.arange(5)
            batch = sample_batch(key, data, 3)
            return batch, jax.random.normal(key)  # JAX201
        """, True),
    Case("a helper's loop the call makes run zero times leaves the key alone", """
        import jax

        def sample_batch(key, data, n):
            out = []
            for _ in range(n):
                key, sub = jax.random.split(key)
                out.append(jax.random.choice(sub, data))
            return out

        def run():
            key, data = jax.random.key(0), jax.numpy.arange(5)
            batch = sample_batch(key, data, 0)
            return batch, jax.random.normal(key)
        """, False),
    Case("a helper that splits its key once per batch, called twice with one key", """
        import jax

        def train_epoch(state, rng, batches):
            for batch in batches:
                rng, drop_rng = jax.random.split(rng)
                state = state + jax.random.normal(drop_rng, batch.shape).sum()
            return state

        def run():
            rng, batches = jax.random.key(0), [jax.numpy.ones(3)] * 2
            state = train_epoch(0.0, rng, batches)
            return train_epoch(state, rng, batches)  # JAX201
        """, True),
    Case("a helper that splits its key once per batch, called on every epoch with one key", """
        import jax

        def train_epoch(state, rng, batches):
            for batch in batches:
                rng, drop_rng = jax.random.split(rng)
                state = state + jax.random.normal(drop_rng, batch.shape).sum()
            return state

        def run():
            rng, batches, state = jax.random.key(0), [jax.numpy.ones(3)] * 2, 0.0
            for epoch in range(2):
                state = train_epoch(state, rng, batches)  # JAX203
            return state
        """, True),
    Case("a helper whose loop draws only under a test, called twice with one key", """
        import jax

        def perturb(x, key, steps):
            for _ in range(steps):
                if x.sum() > 100.0:
                    key, sub = jax.random.split(key)
                    x = x + jax.random.normal(sub, x.shape)
            return x

        def run():
            key, x = jax.random.key(0), jax.numpy.ones(3)
            return perturb(perturb(x, key, 2), key, 2)
        """, False),
    Case("a factory returns a function that draws from its key, the caller draws from it too", """
        import jax

        def make_noise(key):
            def noise(x):
                return x + jax.random.normal(key, x.shape)
            return noise

        def run():
            key = jax.random.key(0)
            add_noise = make_noise(key)
            y = jax.random.normal(key, (3,))  # JAX201
            return add_noise(y)
        """, True),
    Case("a factory returns one of two functions, the one chosen draws from its key", """
        import jax

        def feature_layer(key, noisy):
            def noisy_net(x):
                return x + jax.random.normal(key, x.shape)

            def plain_net(x):
                return 2 * x

            return noisy_net if noisy else plain_net

        def run():
            key = jax.random.key(0)
            net = feature_layer(key, True)
            return net(jax.random.normal(key, (3,)))  # JAX201
        """, True),
    Case("a factory is handed a key split off for it", """
        import jax

        def make_noise(key):
            def noise(x):
                return x + jax.random.normal(key, x.shape)
            return noise

        def run():
            key = jax.random.key(0)
            key, sub = jax.random.split(key)
            add_noise = make_noise(sub)
            return add_noise(jax.random.normal(key, (3,)))
        """, False),
    Case("helper returns a fresh key after drawing from its sibling", """
        import jax

        def random_card(key):
            key, sub = jax.random.split(key)
            card = jax.random.choice(sub, 10, shape=(1,))
            return card[0], key

        def draw_hand(key):
            a, key = random_card(key)
            b, key = random_card(key)
            return a + b, key

        def run():
            return draw_hand(jax.random.key(0))
        """, False),
    Case("helper returns the key it drew from on one path only", """
        import jax

        def maybe_card(key, draw):
            if draw:
                return jax.random.choice(key, 10), key  # JAX201
            return 0, key

        def run():
            key = jax.random.key(0)
            a, key = maybe_card(key, False)
            return a + jax.random.choice(key, 10)
        """, False,
        disagreement="when it draws, the helper hands back the key it drew from, and the caller's "
        "next draw repeats it; this `run` never asks it to draw, so the checker sees no reuse"),
    # ---- a key a class keeps on self as a stream ------------------------------------------------
    Case("stream key drawn after the method advanced it, method called twice", """
        import jax

        class VectorEnv:
            def __init__(self, seed, n):
                self.rng = jax.random.key(seed)
                self.n = n

            def step(self, state):
                rng, self.rng = jax.random.split(self.rng)
                state = state + jax.random.normal(rng, state.shape)
                rngs = jax.random.split(self.rng, self.n)  # JAX203
                return state + jax.vmap(jax.random.normal)(rngs)

        def run():
            env = VectorEnv(0, 2)
            state = env.step(jax.numpy.zeros(2))
            return env.step(state)
        """, True),
    Case("stream key drawn without advancing, advanced by another method", """
        import jax

        class VectorEnv:
            def __init__(self, seed, n):
                self.rng = jax.random.key(seed)
                self.n = n

            def reset(self):
                rng, self.rng = jax.random.split(self.rng)
                return jax.random.normal(rng, (self.n,))

            def step(self, state):
                return state + jax.random.normal(self.rng, (self.n,))  # JAX203

        def run():
            env = VectorEnv(0, 2)
            state = env.step(env.reset())
            return env.step(state)
        """, True),
    Case("stream key advanced by indexing a split, drawn without advancing", """
        import jax

        class Noise:
            def __init__(self, seed):
                self.key = jax.random.key(seed)

            def advance(self):
                self.key = jax.random.split(self.key)[0]

            def sample(self, shape):
                return jax.random.normal(self.key, shape)  # JAX203

        def run():
            noise = Noise(0)
            noise.advance()
            a = noise.sample((2,))
            noise.advance()
            return a, noise.sample((2,))
        """, True),
    Case("stream key advanced where it is drawn, method called twice", """
        import jax

        class VectorEnv:
            def __init__(self, seed, n):
                self.rng = jax.random.key(seed)
                self.n = n

            def step(self, state):
                rng, self.rng = jax.random.split(self.rng)
                rngs = jax.random.split(rng, self.n)
                return state + jax.vmap(jax.random.normal)(rngs)

        def run():
            env = VectorEnv(0, 2)
            return env.step(env.step(jax.numpy.zeros(2)))
        """, False),
    Case("key kept on self and never advanced: the same noise on every call", """
        import jax

        class FixedNoise:
            def __init__(self, seed):
                self.key = jax.random.key(seed)

            def __call__(self, x):
                return x + jax.random.normal(self.key, x.shape)

        def run():
            noise = FixedNoise(0)
            return noise(noise(jax.numpy.zeros(2)))
        """, True, disagreement="a class that never advances a key it keeps may mean the same numbers on every call"),
    # ---- a static method called through self: its first parameter is the first argument -----
    Case("static method drawing from its key, called twice through self", """
        import jax

        class Sampler:
            @staticmethod
            def draw(key, n):
                return jax.random.normal(key, (n,))

            def pair(self, key):
                a = self.draw(key, 2)
                return a, self.draw(key, 2)  # JAX201

        def run():
            return Sampler().pair(jax.random.key(0))
        """, True),
    Case("static method ignoring its key, called twice through self", """
        import jax

        class Sampler:
            @staticmethod
            def zeros(key, n):
                return jax.numpy.zeros((n,))

            def pair(self, key):
                a = self.zeros(key, 2)
                return a, self.zeros(key, 2) + jax.random.normal(key, (2,))

        def run():
            return Sampler().pair(jax.random.key(0))
        """, False),
    Case("class method drawing from its key, called twice through self", """
        import jax

        class Sampler:
            @classmethod
            def draw(cls, key, n):
                return jax.random.normal(key, (n,))

            def pair(self, key):
                a = self.draw(key, 2)
                return a, self.draw(key, 2)  # JAX201

        def run():
            return Sampler().pair(jax.random.key(0))
        """, True),
    # ---- a method inherited from a base class: the base's definition answers ----------------
    Case("inherited method ignoring its key, then a draw", """
        import jax

        class Finalizable:
            def finalize(self, params, rng):
                self.structure = jax.tree_util.tree_structure(params)

        class Optimizer(Finalizable):
            def init(self, params, rng):
                self.finalize(params, rng)
                return jax.random.normal(rng, (3,))

        def run():
            return Optimizer().init({"w": 1.0}, jax.random.key(0))
        """, False),
    Case("method inherited through two bases drawing from its key, then a draw", """
        import jax

        class Base:
            def perturb(self, params, rng):
                return jax.random.normal(rng, (3,))

        class Middle(Base):
            pass

        class Optimizer(Middle):
            def noisy(self, params, rng):
                self.perturb(params, rng)
                return jax.random.normal(rng, (3,))  # JAX201

        def run():
            return Optimizer().noisy({"w": 1.0}, jax.random.key(0))
        """, True),
    # ---- a branch under a literal test: only the live one runs ------------------------------
    Case("second draw under `if False:`", """
        import jax

        def make(key):
            x = jax.random.normal(key, (3,))
            if False:
                x = x + jax.random.uniform(key, (3,))
            return x

        def run():
            return make(jax.random.key(0))
        """, False),
    Case("second draw in the dead arm of a literal conditional expression", """
        import jax

        def make(key):
            x = jax.random.normal(key, (3,))
            mask = jax.random.randint(key, (3,), 0, 4) if False else None
            return x, mask

        def run():
            return make(jax.random.key(0))
        """, False),
    Case("second draw under `if True:`", """
        import jax

        def make(key):
            x = jax.random.normal(key, (3,))
            if True:
                x = x + jax.random.uniform(key, (3,))  # JAX201
            return x

        def run():
            return make(jax.random.key(0))
        """, True),
    # ---- a key held on a state record passed in -------------------------------------------
    Case("key of a state record split, then drawn from", """
        from typing import NamedTuple

        import jax

        class State(NamedTuple):
            key: jax.Array
            mean: jax.Array

        def ask(state):
            key, _ = jax.random.split(state.key)
            z = jax.random.normal(state.key, (4,))  # JAX202
            return state.mean + z, state._replace(key=key)

        def run():
            return ask(State(jax.random.key(0), jax.numpy.zeros(4)))
        """, True),
    # ---- a key put in the returned record, then consumed -------------------------------------
    # `replace` copies the record: the fields it does not set keep the key put in before.
    Case("a key put in the returned record and then split", _STATE + """

        def collect(ts, n):
            rng, rng_steps = jax.random.split(ts.rng)
            ts = ts._replace(rng=rng)
            rng_steps = jax.random.split(rng, n)  # JAX202
            ts = ts._replace(obs=ts.obs + 1.0)
            return ts, rng_steps

        def run():
            ts, first = collect(State(jax.random.key(0), jax.numpy.zeros(2)), 2)
            return collect(ts, 2)
        """, True),
    Case("the other child split after the key is put in the returned record", _STATE + """

        def collect(ts, n):
            rng, rng_steps = jax.random.split(ts.rng)
            ts = ts._replace(rng=rng)
            rng_steps = jax.random.split(rng_steps, n)
            ts = ts._replace(obs=ts.obs + 1.0)
            return ts, rng_steps

        def renewed(ts, n):
            rng, rng_steps = jax.random.split(ts.rng)
            ts = ts._replace(rng=rng)
            steps = jax.random.split(rng, n)
            ts = ts._replace(rng=rng_steps)  # the field replaced: the split key is not returned
            return ts, steps

        def run():
            ts, first = collect(State(jax.random.key(0), jax.numpy.zeros(2)), 2)
            ts, second = renewed(ts, 2)
            return collect(ts, 2)
        """, False),
    # The field of a record read back is the key put there.
    Case("the key put in a record drawn from, then read back from the record", _STATE + """

        def step(ts):
            rng, action_rng = jax.random.split(ts.rng)
            ts = ts._replace(rng=rng)
            action = jax.random.normal(rng, (2,))
            rng, steps_rng = jax.random.split(ts.rng)  # JAX201
            return ts._replace(rng=rng), action, action_rng, steps_rng

        def run():
            return step(State(jax.random.key(0), jax.numpy.zeros(2)))
        """, True),
    Case("a subkey drawn from, then the key put in the record read back", _STATE + """

        def step(ts):
            rng, action_rng = jax.random.split(ts.rng)
            ts = ts._replace(rng=rng)
            action = jax.random.normal(action_rng, (2,))
            rng, steps_rng = jax.random.split(ts.rng)
            ts = ts._replace(rng=rng, obs=ts.obs + action)
            return ts, steps_rng

        def run():
            return step(State(jax.random.key(0), jax.numpy.zeros(2)))
        """, False),
    # ---- a key given to the branches of `lax.cond` / `lax.switch` ---------------------------
    Case("a drawn key given to lax.cond branches that ignore it", """
        import jax
        import jax.numpy as jnp

        def step(pred, key):
            a = jax.random.normal(key, (3,))

            def fresh(_rng):
                return a

            def stale(_rng):
                return -jnp.ones(3)

            return jax.lax.cond(pred, fresh, stale, key)

        def run():
            return step(True, jax.random.key(0))
        """, False),
    Case("a drawn key given to a lax.cond branch that draws from it", """
        import jax
        import jax.numpy as jnp

        def step(pred, key):
            a = jax.random.normal(key, (3,))

            def noisy(rng):
                return jax.random.uniform(rng, (3,))

            def quiet(rng):
                return -jnp.ones(3)

            return a + jax.lax.cond(pred, noisy, quiet, key)  # JAX201

        def run():
            return step(False, jax.random.key(0))
        """, True),
    Case("a drawn key given to lax.switch branches, one lambda drawing", """
        import jax
        import jax.numpy as jnp

        def keep(k):
            return jnp.zeros(3)

        def quiet(i, key):
            a = jax.random.normal(key, (3,))
            return a + jax.lax.switch(i, [keep, keep], key)

        def noisy(i, key):
            a = jax.random.normal(key, (3,))
            return a + jax.lax.switch(i, [keep, lambda k: jax.random.uniform(k, (3,))], key)  # JAX201

        def run():
            return quiet(0, jax.random.key(0)), noisy(0, jax.random.key(1))
        """, True),
    Case("a drawn key put back in a record held in the returned record", """
        from typing import NamedTuple

        import jax

        class Inner(NamedTuple):
            key: jax.Array

        class Outer(NamedTuple):
            inner: Inner
            steps: int

        def step(outer):
            key, sub = jax.random.split(outer.inner.key)
            z = jax.random.normal(key, (2,))
            inner = outer.inner._replace(key=key)  # JAX201
            return z, outer._replace(inner=inner)

        def run():
            z, outer = step(Outer(Inner(jax.random.key(0)), 0))
            return z + jax.random.normal(outer.inner.key, (2,))
        """, True),
    Case("the fresh key put back in a record held in the returned record", """
        from typing import NamedTuple

        import jax

        class Inner(NamedTuple):
            key: jax.Array

        class Outer(NamedTuple):
            inner: Inner
            steps: int

        def step(outer):
            key, sub = jax.random.split(outer.inner.key)
            z = jax.random.normal(sub, (2,))
            inner = outer.inner._replace(key=key)
            return z, outer._replace(inner=inner)

        def run():
            z, outer = step(Outer(Inner(jax.random.key(0)), 0))
            return z + jax.random.normal(outer.inner.key, (2,))
        """, False),
    Case("key of a loop body's own carry record", """
        from typing import NamedTuple

        import jax

        class State(NamedTuple):
            key: jax.Array
            x: jax.Array

        def evolve(state):
            def body(i, state):
                key, sub = jax.random.split(state.key)
                return State(key, state.x + jax.random.normal(sub, state.x.shape))

            return jax.lax.fori_loop(0, 3, body, state)

        def run():
            return evolve(State(jax.random.key(0), jax.numpy.zeros(2)))
        """, False),
    Case("a generator object whose attribute hands out a fresh key per read", """
        import jax

        class Keys:
            def __init__(self, seed):
                self._key = jax.random.key(seed)

            @property
            def rng(self):
                self._key, key = jax.random.split(self._key)
                return key

        keys = Keys(0)

        def run():
            q = jax.random.normal(keys.rng, (2,))
            return q, jax.random.normal(keys.rng, (2,))
        """, False),
    # ---- a helper that draws only under a flag, called with the flag as a literal -----------
    Case("helper drawing under a literal flag, called twice with one key", """
        import jax

        def dropout(key, x, rate, train):
            if train:
                keep = jax.random.bernoulli(key, 1 - rate, x.shape)
                x = x * keep
            return x

        def forward(key, x):
            h = dropout(key, x, 0.1, True)
            return dropout(key, h, 0.1, True)  # JAX201

        def run():
            return forward(jax.random.key(0), jax.numpy.ones(3))
        """, True),
    Case("helper drawing under a flag left to its default, called twice with one key", """
        import jax

        def dropout(key, x, rate, deterministic=False):
            if not deterministic:
                keep = jax.random.bernoulli(key, 1 - rate, x.shape)
                x = x * keep
            return x

        def forward(key, x):
            h = dropout(key, x, 0.1)
            return dropout(key, h, 0.1)  # JAX201

        def run():
            return forward(jax.random.key(0), jax.numpy.ones(3))
        """, True),
    Case("helper drawing under a flag the literal turns off", """
        import jax

        def dropout(key, x, rate, train):
            if train:
                keep = jax.random.bernoulli(key, 1 - rate, x.shape)
                x = x * keep
            return x

        def evaluate(key, x):
            h = dropout(key, x, 0.1, False)
            h = dropout(key, h, 0.1, False)
            return h + jax.random.normal(key, h.shape)

        def run():
            return evaluate(jax.random.key(0), jax.numpy.ones(3))
        """, False),
    Case("helper drawing under a flag the caller passes on", """
        import jax

        def dropout(key, x, rate, train):
            if train:
                keep = jax.random.bernoulli(key, 1 - rate, x.shape)
                x = x * keep
            return x

        def forward(key, x, train):
            h = dropout(key, x, 0.1, train)
            return dropout(key, h, 0.1, not train)

        def run():
            return forward(jax.random.key(0), jax.numpy.ones(3), True)
        """, False),
    # ---- a helper that makes its own key when given None ---------------------------------------
    Case("helper defaulting a None key, called twice with one key", """
        import jax

        def sample(shape, key=None):
            if key is None:
                key = jax.random.key(0)
            return jax.random.normal(key, shape)

        def run():
            key = jax.random.key(1)
            a = sample((3,), key)
            b = sample((3,), key)  # JAX201
            return a, b
        """, True),
    Case("helper drawing only when given a key, called twice with one key", """
        import jax

        def noisy(x, key=None):
            if key is not None:
                x = x + jax.random.normal(key, x.shape)
            return x

        def run():
            key = jax.random.key(1)
            x = noisy(jax.numpy.ones(3), key)
            return noisy(x, key=key)  # JAX201
        """, True),
    Case("helper defaulting a None key, called twice without one", """
        import jax

        def sample(shape, key=None):
            if key is None:
                key = jax.random.key(0)
            return jax.random.normal(key, shape)

        def run():
            a = sample((3,))
            b = sample((3,), None)
            return a, b
        """, False),
    Case("helper defaulting a None key, called with split keys", """
        import jax

        def sample(shape, key=None):
            if key is None:
                key = jax.random.key(0)
            return jax.random.normal(key, shape)

        def run():
            k1, k2 = jax.random.split(jax.random.key(1))
            return sample((3,), k1), sample((3,), k2)
        """, False),
    Case("helper rebinding its key outside the None test", """
        import jax

        def sample(shape, key=None):
            if key is None:
                key = jax.random.key(0)
            key = jax.random.fold_in(key, 3)
            return jax.random.normal(key, shape)

        def run():
            key = jax.random.key(1)
            return sample((3,), key), sample((3,), key)
        """, False),
    Case("one key to two abstract methods", """
        import abc
        import jax

        class Env:
            def step(self, key, state):
                state = self.step_env(key, state)
                obs = self.reset_env(key)  # JAX201
                return state, obs

            def step_env(self, key, state):
                \"\"\"Environment-specific step.\"\"\"
                raise NotImplementedError

            @abc.abstractmethod
            def reset_env(self, key):
                ...

        class Walk(Env):
            def step_env(self, key, state):
                return state + jax.random.normal(key)

            def reset_env(self, key):
                return jax.random.uniform(key)

        def run():
            return Walk().step(jax.random.key(0), 0.0)
        """, True),
    Case("split keys to two abstract methods", """
        import jax

        class Env:
            def step(self, key, state):
                step_key, reset_key = jax.random.split(key)
                state = self.step_env(step_key, state)
                return state, self.reset_env(reset_key)

            def step_env(self, key, state):
                raise NotImplementedError()

            def reset_env(self, key):
                raise NotImplementedError

        class Walk(Env):
            def step_env(self, key, state):
                return state + jax.random.normal(key)

            def reset_env(self, key):
                return jax.random.uniform(key)

        def run():
            return Walk().step(jax.random.key(0), 0.0)
        """, False),
    # ---- reuse on one path ---------------------------------------------------------------
    Case("two samplers", """
        import jax
        def run():
            key = jax.random.key(0)
            a = jax.random.normal(key, (3,))
            b = jax.random.uniform(key, (3,))  # JAX201
            return a + b
        """, True),
    Case("sampler then split", """
        import jax
        def run():
            key = jax.random.key(0)
            a = jax.random.normal(key, (3,))
            k1, k2 = jax.random.split(key)  # JAX201
            return a, k1, k2
        """, True),
    Case("split then sampler", """
        import jax
        def run():
            key = jax.random.key(0)
            k1, k2 = jax.random.split(key)
            return jax.random.normal(key, (2,)), k1, k2  # JAX202
        """, True),
    Case("two user functions", """
        import jax
        def init(key):
            return jax.random.normal(key, (4, 2))
        def dropout(key, x):
            return x * jax.random.bernoulli(key, 0.5, x.shape)
        def run():
            key = jax.random.key(0)
            w = init(key)
            return dropout(key, jax.numpy.ones((3, 4))) @ w  # JAX201
        """, True),
    Case("inside jit", """
        import jax
        @jax.jit
        def f(key):
            return jax.random.normal(key, (2,)) + jax.random.normal(key, (2,))  # JAX201
        def run():
            return f(jax.random.key(0))
        """, True),
    Case("jitted function called twice with one key", """
        import jax
        @jax.jit
        def noisy(x, key):
            return x + jax.random.normal(key, x.shape)
        def run():
            key = jax.random.key(0)
            x = noisy(jax.numpy.ones(2), key)
            return noisy(x, key)  # JAX201
        """, True),
    Case("alias", """
        import jax
        def run():
            key = jax.random.key(0)
            rng = key
            a = jax.random.normal(rng)
            return a + jax.random.normal(key)  # JAX201
        """, True),
    Case("same element of a split twice", """
        import jax
        def run():
            keys = jax.random.split(jax.random.key(0), 3)
            a = jax.random.normal(keys[0])
            return a + jax.random.normal(keys[0])  # JAX201
        """, True),
    # ---- reuse across iterations -----------------------------------------------------------
    Case("eager loop", """
        import jax
        def run():
            key = jax.random.key(0)
            total = 0.0
            for _ in range(3):
                total = total + jax.random.normal(key)  # JAX203
            return total
        """, True),
    Case("a key reused in an inner loop, reported on that loop", """
        import jax
        def run():
            key = jax.random.key(0)
            total = 0.0
            for _ in range(2):
                for _ in range(2):
                    total = total + jax.random.normal(key)  # JAX203
            return total
        """, True),
    Case("after a loop that always runs, its last key is spent", """
        import jax
        def run():
            key = jax.random.key(0)
            for _ in range(2):
                key, sub = jax.random.split(key)
                last = jax.random.normal(sub)
            return last + jax.random.normal(sub)  # JAX201
        """, True),
    Case("after a loop that may not run, the key may be fresh", """
        import jax
        def run(n=2):
            key = jax.random.key(0)
            sub = key
            for _ in range(n):
                key, sub = jax.random.split(key)
            return jax.random.normal(sub)
        """, False),
    Case("a while-True loop that splits every iteration", """
        import jax
        def run():
            key = jax.random.key(0)
            total = 0.0
            while True:
                key, sub = jax.random.split(key)
                total = total + jax.random.normal(sub)
                if total > 3 or total < -3:
                    break
            return total
        """, False),
    Case("while loop", """
        import jax
        def run():
            key = jax.random.key(0)
            x, n = 0.0, 0
            while n < 3:
                x = x + jax.random.uniform(key)  # JAX203
                n += 1
            return x
        """, True),
    Case("scan closes over a key", """
        import jax
        from jax import lax
        def run():
            key = jax.random.key(0)
            def step(c, _):
                return c + jax.random.normal(key), None  # JAX203
            return lax.scan(step, 0.0, None, length=3)
        """, True),
    Case("fori_loop closes over a key", """
        import jax
        from jax import lax
        def run():
            key = jax.random.key(0)
            return lax.fori_loop(0, 3, lambda i, c: c + jax.random.normal(key), 0.0)  # JAX203
        """, True),
    Case("while_loop closes over a key", """
        import jax
        from jax import lax
        def run():
            key = jax.random.key(0)
            def body(c):
                return c[0] + 1, c[1] + jax.random.normal(key)  # JAX203
            return lax.while_loop(lambda c: c[0] < 3, body, (0, 0.0))
        """, True),
    Case("comprehension", """
        import jax
        def run():
            key = jax.random.key(0)
            return [jax.random.normal(key, (n,)) for n in (2, 3)]  # JAX203
        """, True),
    # ---- quiet ---------------------------------------------------------------------------
    Case("split in the loop", """
        import jax
        def run():
            key = jax.random.key(0)
            out = []
            for _ in range(3):
                key, sub = jax.random.split(key)
                out.append(jax.random.normal(sub))
            return out
        """, False),
    Case("indexed per iteration", """
        import jax
        def run():
            keys = jax.random.split(jax.random.key(0), 3)
            return [jax.random.normal(keys[i]) for i in range(3)]
        """, False),
    Case("iterate over split keys", """
        import jax
        def run():
            return [jax.random.normal(k) for k in jax.random.split(jax.random.key(0), 3)]
        """, False),
    Case("star unpack", """
        import jax
        def run():
            key, *subs = jax.random.split(jax.random.key(0), 4)
            return [jax.random.normal(k) for k in subs], jax.random.normal(key)
        """, False),
    Case("fold_in with distinct data", """
        import jax
        def run():
            key = jax.random.key(0)
            return [jax.random.normal(jax.random.fold_in(key, i)) for i in range(3)]
        """, False),
    Case("branches each consume once", """
        import jax
        def run(heavy=False):
            key = jax.random.key(0)
            if heavy:
                x = jax.random.cauchy(key)
            else:
                x = jax.random.normal(key)
            return x
        """, False),
    Case("early return", """
        import jax
        def sample(key, kind="normal"):
            if kind == "uniform":
                return jax.random.uniform(key)
            return jax.random.normal(key)
        def run():
            return sample(jax.random.key(0))
        """, False),
    Case("looking at a key consumes nothing", """
        import jax
        def run():
            key = jax.random.key(0)
            data = jax.random.key_data(key)
            jax.debug.print("{d} {s}", d=data, s=key.shape)
            same = key == key
            x = jax.random.normal(key)
            return x, key, jax.random.key_data(key)  # JAX201
        """, False,
        disagreement="the key returned was drawn from: a caller's next draw from it would repeat "
        "this one; the checker raises only when such a caller runs, and `run` has none"),
    Case("scan carries the key", """
        import jax
        from jax import lax
        def run():
            def step(carry, _):
                x, key = carry
                key, sub = jax.random.split(key)
                return (x + jax.random.normal(sub), key), None
            return lax.scan(step, (0.0, jax.random.key(0)), None, length=3)
        """, False),
    Case("static flag decides consumption", """
        from functools import partial
        import jax
        @partial(jax.jit, static_argnames=("train",))
        def drop(x, key, train):
            if train:
                x = x * jax.random.bernoulli(key, 0.5, x.shape)
            return x
        def run():
            key = jax.random.key(0)
            a = drop(jax.numpy.ones(3), key, train=True)
            return a, drop(jax.numpy.ones(3), key, train=False)
        """, False),
    Case("a function that only returns the key", """
        import jax
        def keep(key):
            return key
        def run():
            key = jax.random.key(0)
            key = keep(key)
            a = jax.random.normal(keep(key))
            return a
        """, False),
    Case("a key moved through two names comes back on the third iteration", """
        import jax
        def run():
            key = jax.random.key(0)
            a, b = jax.random.split(key)
            total = 0.0
            for _ in range(3):
                total = total + jax.random.normal(b)  # JAX203
                b = a
            return total
        """, True),
    Case("a function mapped over a pytree closes over a key", """
        import jax
        def run():
            key = jax.random.key(0)
            grads = {"w": jax.numpy.zeros(3), "b": jax.numpy.zeros(3)}
            return jax.tree_util.tree_map(lambda g: g + jax.random.normal(key, g.shape), grads)  # JAX203
        """, True),
    Case("per-leaf keys for a pytree", """
        import jax
        def run():
            key = jax.random.key(0)
            grads = {"w": jax.numpy.zeros(3), "b": jax.numpy.zeros(3)}
            leaves, treedef = jax.tree_util.tree_flatten(grads)
            keys = jax.random.split(key, len(leaves))
            noisy = [g + jax.random.normal(k, g.shape) for g, k in zip(leaves, keys)]
            return jax.tree_util.tree_unflatten(treedef, noisy)
        """, False),
    Case("a consumed key handed back in the scan carry", """
        import jax
        from jax import lax
        def run():
            def step(carry, _):
                x, key = carry
                x = x + jax.random.normal(key)
                return (x, key), x  # JAX203
            return lax.scan(step, (0.0, jax.random.key(0)), None, length=3)
        """, True),
    Case("a module-level key inside a jitted function", """
        import jax
        KEY = jax.random.key(0)
        @jax.jit
        def noisy(x):
            return x + jax.random.normal(KEY, x.shape)  # JAX206
        def run():
            return noisy(jax.numpy.zeros(3)), noisy(jax.numpy.ones(3))
        """, True),
    Case("a module-level key read through a getter inside a jitted function", """
        import jax
        _KEY = jax.random.key(0)
        def get_key():
            return _KEY
        @jax.jit
        def noisy(x):
            return x + jax.random.normal(get_key(), x.shape)  # JAX206
        def run():
            return noisy(jax.numpy.zeros(3)), noisy(jax.numpy.ones(3))
        """, True),
    Case("a module-level key read through a getter twice in eager code", """
        import jax
        _KEY = jax.random.key(0)
        def get_key():
            return _KEY
        def run():
            a = jax.random.normal(get_key())
            return a, jax.random.uniform(get_key())  # JAX201
        """, True),
    Case("a getter that advances the module-level key", """
        import jax
        _KEY = jax.random.key(0)
        def next_key():
            global _KEY
            _KEY, sub = jax.random.split(_KEY)
            return sub
        @jax.jit
        def noisy(x, key):
            return x + jax.random.normal(key, x.shape)
        def run():
            return noisy(jax.numpy.zeros(3), next_key()), noisy(jax.numpy.ones(3), next_key())
        """, False),
    Case("a module-level key passed in as an argument", """
        import jax
        KEY = jax.random.key(0)
        @jax.jit
        def noisy(x, key):
            return x + jax.random.normal(key, x.shape)
        def run():
            k1, k2 = jax.random.split(KEY)
            return noisy(jax.numpy.zeros(3), k1), noisy(jax.numpy.ones(3), k2)
        """, False),
    Case("an imported predicate looks at the key", """
        import jax
        from operator import is_not
        def run():
            key = jax.random.key(0)
            assert is_not(key, None)
            return jax.random.normal(key)
        """, False),
    Case("a helper that consumes and returns its key", """
        import jax
        def keep(key):
            jax.random.normal(key)
            return key  # JAX201
        def run():
            key = jax.random.key(0)
            key = keep(key)
            return jax.random.uniform(key)
        """, True),
    Case("results compared on purpose", """
        import jax
        def run():
            key = jax.random.key(0)
            eager = jax.random.normal(key, (3,))
            compiled = jax.jit(jax.random.normal, static_argnums=1)(key, (3,))
            assert (eager == compiled).all()
        """, True,
        disagreement="two computations fed one key and compared are a deliberate check, "
        "not a reuse that biases anything"),
    Case("a module's init called again as before on one key: a copy", """
        import jax
        class Net:
            def init(self, key, x):
                return jax.random.normal(key, x.shape) * x
        def make_states(net, key, x):
            online = net.init(key, x)
            target = net.init(key, x)
            return online, target
        def run():
            return make_states(Net(), jax.random.key(0), jax.numpy.ones(3))
        """, True,
        disagreement="two inits of one module on the same inputs build one set of parameters twice, "
        "a copy (how a target network starts): nothing is drawn anew"),
    Case("a method of an object not seen, called again after its input changed", """
        import jax
        class Net:
            def init(self, key, x):
                return jax.random.normal(key, x.shape) * x
        def make_states(net, key, x):
            online = net.init(key, x)
            x = x + 1.0
            target = net.init(key, x)  # JAX201
            return online, target
        def run():
            return make_states(Net(), jax.random.key(0), jax.numpy.ones(3))
        """, True),
    Case("results stored on an object whose other attribute is compared", """
        import jax
        from types import SimpleNamespace
        def setup(key, w):
            w.x = jax.random.normal(key)
            w.y = jax.random.normal(key)  # JAX201
            if w.n == 1:
                w.n = 2
        def run():
            setup(jax.random.key(0), SimpleNamespace(n=1))
        """, True),
    Case("results stored on an object and compared", """
        import jax
        from types import SimpleNamespace
        def run():
            key = jax.random.key(0)
            w = SimpleNamespace()
            w.eager = jax.random.normal(key, (3,))
            w.compiled = jax.jit(jax.random.normal, static_argnums=1)(key, (3,))
            assert (w.eager == w.compiled).all()
        """, True,
        disagreement="two computations fed one key and compared are a deliberate check, "
        "not a reuse that biases anything"),
    Case("a branch on the loop variable draws from one key", """
        import jax
        def run():
            key = jax.random.key(0)
            out = []
            for size, shuffled in [(3, True), (4, True)]:
                x = jax.numpy.arange(size)
                if shuffled:
                    x = jax.random.permutation(key, x)  # JAX203
                out.append(x)
            return out
        """, True),
    Case("a key unpacked from a carry fed to two scans", """
        import jax
        from jax import lax
        def draw(carry, _):
            x, key = carry
            key, sub = jax.random.split(key)
            return (x + jax.random.normal(sub), key), None
        def run():
            carry = (0.0, jax.random.key(0))
            x, key = carry
            (a, _), _ = lax.scan(draw, (x, key), None, length=2)
            (b, _), _ = lax.scan(draw, (x, key), None, length=2)  # JAX201
            return a + b
        """, True),
    Case("two batches split from one parent", """
        import jax
        def run():
            key = jax.random.key(0)
            train_keys = jax.random.split(key, 4)
            eval_keys = jax.random.split(key, 4)  # JAX202
            return train_keys, eval_keys
        """, True),
    Case("a jitted step that makes its own constant key", """
        import jax
        @jax.jit
        def step(w, x):
            key = jax.random.key(0)  # JAX204
            return w - 0.1 * jax.random.normal(key, w.shape) * x
        def run():
            w = jax.numpy.ones(3)
            for _ in range(2):
                w = step(w, 1.0)
            return w
        """, False,
        disagreement="every call makes a fresh key, so the checker sees no reuse; every step "
        "draws the same numbers all the same"),
    Case("a constant-seed key passed straight to a helper in a stepping loop", """
        import jax
        def sim(key, p):
            return p * jax.random.uniform(key, (3,))
        def run():
            x = jax.numpy.zeros(3)
            for _ in range(3):
                x = x + sim(jax.random.key(0), 0.1)  # JAX204
            return x
        """, False,
        disagreement="every call makes a fresh key, so the checker sees no reuse; every step "
        "draws the same numbers all the same"),
    Case("a helper a fori_loop body calls makes a constant-seed key", """
        import jax
        def perturb(i, total, x):
            return total + jax.numpy.sum(x * jax.random.normal(jax.random.key(0), x.shape))  # JAX204
        def run():
            x = jax.numpy.ones(3)
            return jax.lax.fori_loop(0, 3, lambda i, total: perturb(i, total, x), 0.0)
        """, False,
        disagreement="every iteration makes a fresh key, so the checker sees no reuse; every "
        "iteration draws the same numbers all the same"),
    Case("a constant-seed key passed straight to a library call in a stepping loop", """
        import jax
        from jax.flatten_util import ravel_pytree
        class Prior:
            def sample(self, seed):
                return {"a": jax.random.normal(seed, (3,))}
        def fit(prior):
            x = jax.numpy.zeros(3)
            for _ in range(3):
                _, unravel = ravel_pytree(prior.sample(seed=jax.random.key(0)))
                x = x + unravel(jax.numpy.ones(3))["a"]
            return x
        def run():
            return fit(Prior())
        """, False),
    Case("a helper a fori_loop body calls only for a value it drops", """
        import jax
        def probe(x):
            return jax.random.normal(jax.random.key(0), x.shape)
        def run():
            x = jax.numpy.ones(3)
            def body(i, total):
                noise = probe(x)
                return total + i
            return jax.lax.fori_loop(0, 3, body, 0.0)
        """, False),
    # ---- where the two differ --------------------------------------------------------------
    Case("one branch consumes, then unconditional use", """
        import jax
        def run(train=True):
            key = jax.random.key(0)
            x = 0.0
            if train:
                x = jax.random.normal(key)
            return x + jax.random.uniform(key)  # JAX201
        """, True),
    Case("two branches on one flag", """
        import jax
        def run(train=True):
            key = jax.random.key(0)
            x = 0.0
            if train:
                x = jax.random.normal(key)
            if not train:
                x = jax.random.uniform(key)
            return x
        """, False),
    Case("closure called from a vmap", """
        import jax
        def run():
            key = jax.random.key(0)
            return jax.vmap(lambda x: x + jax.random.normal(key))(jax.numpy.ones(3))  # JAX203
        """, False,
        disagreement="one key in every element of a batch: JAX consumes it once, but every element "
        "draws the same numbers (tests/test_key_draws.py runs it)"),
    Case("opaque function that does not sample", """
        import jax
        def run():
            key = jax.random.key(0)
            words = str(key) + repr(key)
            return jax.random.normal(key), jax.tree_util.tree_map(lambda k: k, key)
        """, False),
    Case("legacy PRNGKey", """
        import jax
        def run():
            key = jax.random.PRNGKey(0)
            a = jax.random.normal(key)
            return a + jax.random.normal(key)  # JAX201
        """, False,
        disagreement="the checker only tracks typed keys (`jax.random.key`); a legacy uint32 "
        "`PRNGKey` is reused just the same"),
    Case("fold_in after split", """
        import jax
        def run():
            key = jax.random.key(0)
            a, b = jax.random.split(key)
            c = jax.random.fold_in(key, 0)  # JAX202
            return a, b, c
        """, False,
        disagreement="`fold_in` does not consume its key for the checker, but `fold_in(key, i)` "
        "is `split(key, n)[i]`: `c` is the same key as `a`"),
    Case("fold_in with the split's own count as data", """
        import jax
        def run():
            key, n = jax.random.key(0), 3
            keys = jax.random.split(key, n)
            extra = jax.random.fold_in(key, n)
            return keys, extra
        """, False),
    Case("fold_in with data beyond the split's children", """
        import jax
        def run():
            key = jax.random.key(0)
            a, b = jax.random.split(key)
            c = jax.random.fold_in(key, 7)
            d = jax.random.fold_in(key, 2)
            return a, b, c, d
        """, False),
    Case("a permutation drawn for every leaf", """
        import jax
        def run():
            key = jax.random.key(0)
            batch = {"x": jax.numpy.arange(4.0), "y": jax.numpy.arange(4)}
            return jax.tree_util.tree_map(lambda v: jax.random.permutation(key, v), batch)
        """, True,
        disagreement="one permutation for every leaf keeps the rows of a batch aligned, "
        "which is what such code wants"),
    Case("a helper that only permutes, given one key for every leaf", """
        import jax

        def run():
            key = jax.random.key(0)
            batch = {"x": jax.numpy.arange(4.0), "y": jax.numpy.arange(4)}

            def shuffle(v, rng):
                v = v.reshape(-1, *v.shape[1:])
                return jax.random.permutation(rng, v).reshape(2, -1)

            return jax.tree_util.tree_map(lambda v: shuffle(v, key), batch)
        """, True,
        disagreement="the helper's one permutation for every leaf keeps the rows of a batch "
        "aligned, which is what such code wants"),
    Case("a helper that adds noise, given one key for every leaf", """
        import jax

        def run():
            key = jax.random.key(0)
            grads = {"w": jax.numpy.ones(4), "b": jax.numpy.ones(4)}

            def perturb(v, rng):
                return v + jax.random.normal(rng, v.shape)

            return jax.tree_util.tree_map(lambda v: perturb(v, key), grads)  # JAX203
        """, True),
    Case("one permutation for each array of a dataset, in a comprehension", """
        import jax
        def run():
            x = jax.numpy.arange(5.0)
            key = jax.random.key(0)
            for _ in range(2):
                key, sub = jax.random.split(key)
                x, y = [jax.random.permutation(sub, a) for a in (x, 10 * x)]
            return x, y
        """, True,
        disagreement="one permutation for each array the loop goes through keeps their rows "
        "aligned, which is what such code wants"),
    Case("a helper drawing a position on the board it is given, looped with one key", """
        import jax
        import jax.numpy as jnp

        def place(rng, board, size):
            spot = jax.random.choice(rng, jnp.arange(board.shape[0]), shape=(1,))[0]
            return board.at[spot].add(size)

        def run():
            rng = jax.random.key(0)
            board = jnp.zeros(4)
            for size in (1.0, 2.0, 3.0):
                board = place(rng, board, size)  # JAX203
            return board
        """, True),
    Case("a helper cropping each array it is given at a drawn offset, one key for all", _CROP + """
        def run():
            rng = jax.random.key(0)
            image, mask = jnp.arange(8.0), jnp.arange(8) % 2
            return [crop(rng, a, 4) for a in (image, mask)]
        """, True,
        disagreement="one offset for each array the loop goes through crops them alike, which keeps "
        "the mask on its image"),
    Case("a helper cropping at a drawn offset, called with one key for an image and its mask", _CROP + """
        def run():
            rng = jax.random.key(0)
            image, mask = jnp.arange(8.0), jnp.arange(8) % 2
            return crop(rng, image, 4), crop(rng, mask, 4)
        """, True,
        disagreement="one offset for both arrays crops them alike, which keeps the mask on its image"),
    Case("a helper cropping at a drawn offset, called with one key for one array twice", _CROP + """
        def run():
            rng = jax.random.key(0)
            image = jnp.arange(8.0)
            return crop(rng, image, 4), crop(rng, image, 4)  # JAX201
        """, True),
    Case("one permutation for two arrays, one after the other", """
        import jax
        def run():
            x = jax.numpy.arange(5.0)
            key = jax.random.key(0)
            return jax.random.permutation(key, x), jax.random.permutation(key, 10 * x)
        """, True,
        disagreement="one permutation for both arrays keeps their rows aligned, which is what "
        "such code wants"),
    Case("a nested function that only permutes with the key around it, mapped and called", """
        import jax
        def run():
            key = jax.random.key(0)
            batch = {"x": jax.numpy.arange(4.0), "y": jax.numpy.arange(4)}
            advantages = jax.numpy.arange(4.0)

            def shuffle(v):
                return jax.random.permutation(key, v).reshape(2, -1)

            return jax.tree_util.tree_map(shuffle, batch), shuffle(advantages), shuffle(2 * advantages)
        """, True,
        disagreement="the batch and the arrays that go with it are reordered alike, which keeps "
        "their rows aligned, as such code wants"),
    Case("a helper that only permutes, called with one key for two arrays", """
        import jax

        def shuffle(v, rng):
            return jax.random.permutation(rng, v)

        def run():
            key = jax.random.key(0)
            x = jax.numpy.arange(4.0)
            return shuffle(x, key), shuffle(x + 1, key)
        """, True,
        disagreement="one permutation for both arrays keeps their rows aligned, which is what "
        "such code wants"),
    Case("the same array permuted twice with one key", """
        import jax
        def run():
            x = jax.numpy.arange(5.0)
            key = jax.random.key(0)
            a = jax.random.permutation(key, x)
            return a, jax.random.permutation(key, x)  # JAX201
        """, True),
    Case("draws from one key that masks for different values of one choice keep at most one of", """
        import jax
        def run():
            key = jax.random.key(0)
            kind_key, key = jax.random.split(key)
            kind = jax.random.randint(kind_key, (), 0, 2)
            coal = jax.random.randint(key, (), 1, 4) * (kind == 0)
            iron = jax.random.randint(key, (), 1, 3) * (kind == 1).astype(int)
            return coal + iron
        """, True,
        disagreement="at most one of the products keeps its draw: the branchless form of "
        "`if kind == 0: ... elif kind == 1: ...`"),
    Case("draws from one key under masks that may both hold", """
        import jax
        def run():
            key = jax.random.key(0)
            kind_key, key = jax.random.split(key)
            kind = jax.random.randint(kind_key, (), 0, 2)
            coal = jax.random.randint(key, (), 1, 4) * (kind == 0)
            iron = jax.random.randint(key, (), 1, 3) * (kind >= 0)  # JAX201
            return coal + iron
        """, True),
    Case("two choices from different arrays with one key", """
        import jax
        def run():
            key = jax.random.key(0)
            cells = jax.numpy.arange(9)
            start = jax.random.choice(key, cells, shape=(), p=cells > 2)
            return start, jax.random.choice(key, cells * 2, shape=())  # JAX201
        """, True),
    Case("two orders of a size drawn with one key", """
        import jax
        def run():
            key = jax.random.key(0)
            return jax.random.permutation(key, 8), jax.random.permutation(key, 8)  # JAX201
        """, True),
    Case("a permutation, then noise, from one key", """
        import jax
        def run():
            x = jax.numpy.arange(5.0)
            key = jax.random.key(0)

            def shuffle(v):
                return jax.random.permutation(key, v)

            return shuffle(x), x + jax.random.normal(key, x.shape)  # JAX201
        """, True),
    Case("a helper that permutes and adds noise, called with one key for two arrays", """
        import jax

        def augment(v, rng):
            return jax.random.permutation(rng, v) + jax.random.normal(rng, v.shape)  # JAX201

        def run():
            key = jax.random.key(0)
            x = jax.numpy.arange(4.0)
            return augment(x, key), augment(x + 1, key)  # JAX201
        """, True),
    Case("a jit of a partial of a step that folds its step count into the key, called in a loop", """
        import functools
        import jax

        def train_step(state, x, scale, dropout_rng=None):
            dropout_rng = jax.random.fold_in(dropout_rng, state)
            return state + 1, x + scale * jax.random.normal(dropout_rng, x.shape)

        def run():
            step = jax.jit(functools.partial(train_step, scale=0.1))
            dropout_rng, state, x = jax.random.key(0), 0, jax.numpy.ones(3)
            for _ in range(3):
                state, x = step(state, x, dropout_rng=dropout_rng)
            return x
        """, False),
    Case("a jit of a partial of a step that draws from its key, called in a loop", """
        import functools
        import jax

        def train_step(state, x, scale, dropout_rng=None):
            return state + 1, x + scale * jax.random.normal(dropout_rng, x.shape)

        def run():
            step = jax.jit(functools.partial(train_step, scale=0.1))
            dropout_rng, state, x = jax.random.key(0), 0, jax.numpy.ones(3)
            for _ in range(3):
                state, x = step(state, x, dropout_rng=dropout_rng)  # JAX203
            return x
        """, True),
    Case("the same data reordered on every pass with one key", """
        import jax
        def run():
            x = jax.numpy.arange(5.0)
            key = jax.random.key(0)
            for _ in range(2):
                perm = jax.random.permutation(key, x.shape[0])  # JAX203
                x = x[perm]
            return x
        """, True),
    Case("a helper that draws only when given no latents, called with a name that may hold None", """
        import jax

        def prepare(rng, latents=None):
            if latents is not None:
                if latents.ndim == 3:
                    latents = latents[None]
                return latents
            return jax.random.normal(rng, (2,))

        def run(latents=None):
            rng = jax.random.key(0)
            latents = prepare(rng, latents=latents)
            noise = jax.random.normal(rng, (2,))  # JAX201
            return latents, noise
        """, True),
    Case("one key given to two parameters that the function draws from", _MIXUP_UNGUARDED, True),
    Case("one key given to two parameters, drawn from under a test the call decides", _MIXUP, True),
    Case("one key given to two parameters, the test the call decides skipping one draw", _MIXUP_NO_BETA, False),
    Case("one key given to two parameters, one of which the function never reads", """
        import jax

        def noisy(key_0, key_1, x):
            return x + jax.random.normal(key_0, x.shape)

        def run():
            key_0, key_1 = jax.random.split(jax.random.key(0))
            return noisy(key_1, key_1, jax.numpy.arange(4.0)), key_0
        """, False),
    Case("a key fixed by a partial that is never called, then drawn from", """
        import functools
        import jax

        def sample(x, rng):
            return x + jax.random.normal(rng, x.shape)

        def run():
            rng, x = jax.random.key(0), jax.numpy.ones(3)
            noise = functools.partial(sample, rng=rng)
            del noise
            return jax.random.uniform(rng, x.shape)
        """, False),
    Case("a key fixed by two partials that are returned, not called", """
        import functools
        import jax

        def sample(x, rng):
            return x + jax.random.normal(rng, x.shape)

        def run():
            rng = jax.random.key(0)
            return functools.partial(sample, rng=rng), functools.partial(sample, rng=rng)
        """, False),
    Case("a key fixed by a partial, called, then drawn from", """
        import functools
        import jax

        def sample(x, rng):
            return x + jax.random.normal(rng, x.shape)

        def run():
            rng, x = jax.random.key(0), jax.numpy.ones(3)
            noise = functools.partial(sample, rng=rng)
            return noise(x), jax.random.uniform(rng, x.shape)  # JAX201
        """, True),
    Case("a key fixed by a partial called on every element", """
        import functools
        import jax

        def sample(x, rng):
            return x + jax.random.normal(rng, x.shape)

        def noisy(rng, xs):
            noise = functools.partial(sample, rng=rng)  # JAX203
            return [noise(x) for x in xs]

        def run():
            return noisy(jax.random.key(0), [jax.numpy.ones(3)] * 2)
        """, True),
    Case("a helper returning one key at two places of its tuple", """
        import jax

        def random_split(rng):
            if rng is None:
                key = None
            else:
                key, rng = jax.random.split(rng)
            return key, key

        def run():
            key, rng = random_split(jax.random.key(0))
            a = jax.random.normal(key, (2,))
            key, rng = random_split(rng)  # JAX201
            return a + jax.random.normal(key, (2,))
        """, True),
    Case("a helper returning a key and the key it split off", """
        import jax

        def random_split(rng):
            if rng is None:
                key = None
            else:
                key, rng = jax.random.split(rng)
            return key, rng

        def run():
            key, rng = random_split(jax.random.key(0))
            a = jax.random.normal(key, (2,))
            key, rng = random_split(rng)
            return a + jax.random.normal(key, (2,))
        """, False),
    Case("a key drawn from on every step past a warm-up", """
        import jax

        def run():
            key, xs, warmup = jax.random.key(0), [jax.numpy.ones(2)] * 4, 2
            out = []
            for step, x in enumerate(xs):
                if step >= warmup:
                    x = x + jax.random.normal(key, x.shape)  # JAX203
                out.append(x)
            return out
        """, True),
    Case("a key drawn from on every tenth step", """
        import jax

        def run():
            key, xs = jax.random.key(0), [jax.numpy.ones(2)] * 12
            out = []
            for i, x in enumerate(xs):
                if i % 10 == 0:
                    x = x + jax.random.normal(key, x.shape)  # JAX203
                out.append(x)
            return out
        """, True),
    Case("a key drawn from on the first step only", """
        import jax

        def run():
            key, xs = jax.random.key(0), [jax.numpy.ones(2)] * 4
            out = []
            for i, x in enumerate(xs):
                if i == 0:
                    x = x + jax.random.normal(key, x.shape)
                out.append(x)
            return out
        """, False),
    Case("a key handed to a generator of keys after a split, the generator advanced", """
        import jax

        def key_iterator(key):
            if isinstance(key, int):
                key = jax.random.key(key)
            while True:
                key, subkey = jax.random.split(key)
                yield subkey

        def shuffled(xs, key):
            keys = key_iterator(key)
            return [jax.random.permutation(next(keys), x) for x in xs]

        def run():
            key = jax.random.key(0)
            mix_key, shuffle_key = jax.random.split(key)
            return shuffled([jax.numpy.arange(3.0)], key), mix_key  # JAX202
        """, True),
    Case("a generator of keys given the split's child", """
        import jax

        def key_iterator(key):
            if isinstance(key, int):
                key = jax.random.key(key)
            while True:
                key, subkey = jax.random.split(key)
                yield subkey

        def run():
            key = jax.random.key(0)
            mix_key, shuffle_key = jax.random.split(key)
            keys = key_iterator(shuffle_key)
            return jax.random.normal(next(keys), (2,)), jax.random.normal(next(keys), (2,)), mix_key
        """, False),
    Case("one key drawn from twice in a function only traced for shapes", """
        import jax
        def run():
            return jax.eval_shape(
                lambda key: jax.random.normal(key, (2,)) + jax.random.uniform(key, (2,)),
                jax.random.key(0),
            )
        """, True,
        disagreement="`jax.eval_shape` traces the function for shapes only: nothing is drawn, "
        "so the reuse the checker sees in the trace makes no two draws alike"),
    Case("a key fixed by a partial that is only traced for shapes, then drawn from", """
        import functools
        import jax

        class Model:
            def init(self, key, x):
                return jax.random.normal(key, x.shape) * x

        def shapes_then_noise(model, key, x):
            shapes = jax.eval_shape(functools.partial(model.init, key), x)
            return shapes, jax.random.uniform(key, (3,))

        def run():
            return shapes_then_noise(Model(), jax.random.key(0), jax.numpy.ones(3))
        """, False),
    Case("a key fixed by a partial that is only lowered, then drawn from", """
        import functools
        import jax

        class Model:
            def init(self, key, x):
                return jax.random.normal(key, x.shape) * x

        def lowered_then_noise(model, key, x):
            make = functools.partial(model.init, key, x)
            lowered = jax.jit(make).lower()
            return lowered, jax.random.uniform(key, (3,))

        def run():
            return lowered_then_noise(Model(), jax.random.key(0), jax.numpy.ones(3))
        """, False),
    Case("a key fixed by a partial that is called, then drawn from", """
        import functools
        import jax

        class Model:
            def init(self, key, x):
                return jax.random.normal(key, x.shape) * x

        def made_then_noise(model, key, x):
            make = functools.partial(model.init, key)
            shapes = jax.eval_shape(make, x)
            return make(x), shapes, jax.random.uniform(key, (3,))  # JAX201

        def run():
            return made_then_noise(Model(), jax.random.key(0), jax.numpy.ones(3))
        """, True),
    Case("one key drawn from twice in a function traced for shapes and also jitted and run", """
        import jax

        def init(key):
            return jax.random.normal(key, (2,)) + jax.random.uniform(key, (2,))  # JAX201

        def run():
            shapes = jax.eval_shape(init, jax.random.key(0))
            return shapes, jax.jit(init)(jax.random.key(1))
        """, True),
    Case("one key drawn from twice in a function run for its values", """
        import jax
        def run():
            draw = lambda key: jax.random.normal(key, (2,)) + jax.random.uniform(key, (2,))  # JAX201
            return draw(jax.random.key(0))
        """, True),
    Case("attention key tensor handed to two functions", """
        import jax

        def forward(query, key, value, place):
            kept = place(key)
            return jax.nn.dot_product_attention(query, key, value), kept

        def run():
            q = k = v = jax.random.normal(jax.random.key(0), (2, 16, 4, 8))
            return forward(q, k, v, jax.numpy.asarray)
        """, False),
    Case("attention key tensor that a helper of the module multiplies", """
        import jax

        def apply_spe(keys, spe):
            return (spe * keys[..., None]).sum(axis=-1)

        def attend(query, key, value, kernel):
            key = apply_spe(key, query[..., None]) if query.ndim > 3 else key
            return kernel(query, key) + kernel(key, query) + value

        def attention(query, key, value):
            return attend(query, key, value, kernel=lambda a, b: a * b)

        def run():
            q = jax.random.normal(jax.random.key(0), (2, 16, 8))
            return jax.jit(attention)(*[q, q, q])
        """, False),
    Case("a key handed to a helper of the module that draws from it, twice", """
        import jax

        def noise(k, shape):
            return jax.random.normal(k, shape)

        def perturb(x, key, scale):
            return x + scale * noise(key, x.shape)

        def run():
            key = jax.random.key(0)
            x = jax.numpy.zeros(2)
            return perturb(x, key, 0.1) + perturb(x, key, 0.2)  # JAX201
        """, True),
    # ---- a key's name on an object that keeps a generator's state --------------------------
    Case("a stateful deviate advanced by every helper it is handed to", """
        import jax

        class State:
            def __init__(self, key):
                self.key = key

        class Deviate:
            def __init__(self, seed):
                self._state = seed._state if isinstance(seed, Deviate) else State(jax.random.key(seed))

            def normal(self):
                self._state.key, sub = jax.random.split(self._state.key)
                return jax.random.normal(sub)

        def count(rng):
            _rng = Deviate(rng)
            n = _rng.normal()
            rng._state = _rng._state
            return n

        def shoot(rng):
            return Deviate(rng).normal()

        def make(rng):
            return count(rng), shoot(rng)

        class Blob:
            def shoot(self, rng):
                return shoot(rng)

        def draw_many(objs, rng):
            # `obj.shoot` is out of sight: `rng` is an object by the module's use of the name
            return [obj.shoot(rng) for obj in objs]

        def run():
            rng = Deviate(1)
            return make(rng), draw_many([Blob(), Blob()], rng)
        """, False),
    Case("a NumPy generator named rng handed to two functions", """
        import jax
        import numpy as np

        def noisy(x, rng, sample):
            a = sample(rng)
            b = sample(rng)
            return x + jax.numpy.asarray(a - b) + rng.normal()

        def run():
            return noisy(1.0, np.random.default_rng(0), lambda g: g.integers(10))
        """, False),
    Case("a key read for its shape handed to two functions", """
        import jax

        def twice(rng, draw):
            print(rng.shape, rng.dtype)
            return draw(rng), draw(rng)  # JAX201

        def run():
            return twice(jax.random.key(0), jax.random.normal)
        """, True),
    Case("a key name drawn from in the module, an object elsewhere", """
        import jax

        class Box:
            pass

        def label(rng):
            rng.name = "box"
            return rng

        def draw(rng):
            return jax.random.normal(rng)

        def twice(rng):
            return draw_with(rng), draw_with(rng)  # JAX201

        def draw_with(key, sample=draw):
            return sample(key)

        def run():
            label(Box())
            return twice(jax.random.key(0))
        """, True),
    Case("a spent key carried back in a state record", """
        from typing import NamedTuple
        import jax

        class State(NamedTuple):
            x: jax.Array
            key: jax.Array

        def step(state):
            key, sub = jax.random.split(state.key)
            x = jax.random.normal(key)
            return State(x, key)  # JAX201

        def run():
            state = State(0.0, jax.random.key(0))
            for _ in range(2):
                state = step(state)
            return state
        """, True),
    # ---- a submodule's call runs its class's `__call__` ------------------------------------------
    Case("split key handed to a submodule whose __call__ ignores its key", """
        import jax

        class Mix:
            def __call__(self, x, key=None):
                return x * 2.0

        class Block:
            def __init__(self):
                self.mix = Mix()

            def __call__(self, x, key):
                k1, k2 = jax.random.split(key)
                x = self.mix(x, key=key)
                return x + jax.random.normal(k1, x.shape)

        def run():
            return Block()(jax.numpy.ones(3), jax.random.key(0))
        """, False),
    Case("submodule known from its field annotation ignores its key", """
        from typing import NamedTuple

        import jax

        class Mix:
            def __call__(self, x, key=None):
                if key is None:
                    return x
                return x * 2.0

        class Block(NamedTuple):
            mix: Mix

            def __call__(self, x, key):
                x = self.mix(x, key=key)
                return x + jax.random.normal(key, x.shape)

        def run():
            return Block(Mix())(jax.numpy.ones(3), jax.random.key(0))
        """, False),
    Case("submodule whose __call__ draws, called twice with one key", """
        import jax

        class Noise:
            def __call__(self, x, key):
                return x + jax.random.normal(key, x.shape)

        class Block:
            def __init__(self):
                self.noise = Noise()

            def __call__(self, x, key):
                x = self.noise(x, key=key)
                return self.noise(x, key=key)  # JAX201

        def run():
            return Block()(jax.numpy.ones(3), jax.random.key(0))
        """, True),
    Case("submodule that draws on a path its fields choose", """
        import jax

        class DropPath:
            def __init__(self, p):
                self.p = p

            def __call__(self, x, key):
                if self.p == 0:
                    return x
                return x * jax.random.bernoulli(key, 1 - self.p, x.shape)

        class Block:
            def __init__(self, p):
                self.drop = DropPath(p)

            def __call__(self, x, key):
                x = x + jax.random.normal(key, x.shape)
                return self.drop(x, key=key)  # JAX201

        def run():
            return Block(0.5)(jax.numpy.ones(3), jax.random.key(0))
        """, True),
    Case("submodule whose class is chosen at run time", """
        import jax

        class Identity:
            def __call__(self, x, key=None):
                return x

        class Noise:
            def __call__(self, x, key):
                return x + jax.random.normal(key, x.shape)

        class Block:
            def __init__(self, noisy):
                self.mix = Noise() if noisy else Identity()

            def __call__(self, x, key):
                x = self.mix(x, key=key)
                return x + jax.random.normal(key, x.shape)  # JAX201

        def run():
            return Block(True)(jax.numpy.ones(3), jax.random.key(0))
        """, True),
    # ---- a key already drawn from, handed to a helper that draws on some path -------------------
    Case("drawn key to a helper that draws where the data has a point", """
        import jax

        def pick(key, mask):
            if not mask.any():
                return None
            return jax.random.choice(key, mask.shape[0])

        def run():
            key = jax.random.key(0)
            jitter = jax.random.uniform(key, (2,))
            point = pick(key, jax.numpy.ones(3, bool))  # JAX201
            return jitter, point
        """, True),
    Case("key a helper consumed, then handed to one that splits it inside a loop", """
        import jax

        def create(rng):
            a, b = jax.random.split(rng)
            return jax.random.normal(a, (2,)) + jax.random.normal(b, (2,))

        def train_epoch(state, rng, loader):
            for batch in loader:
                rng, drop = jax.random.split(rng)
                state = state + jax.random.normal(drop, (2,)) * batch
            return state

        def run(loader=(1.0, 2.0)):
            rng = jax.random.key(0)
            state = create(rng)
            return train_epoch(state, rng, loader)  # JAX201
        """, True),
    Case("key a helper consumed, then handed to one whose flag the call turns off", """
        import jax

        def create(rng):
            return jax.random.normal(rng, (2,))

        def noisy(x, key, train):
            if train:
                x = x + jax.random.normal(key, x.shape)
            return x

        def run():
            key = jax.random.key(0)
            return noisy(create(key), key, train=False)
        """, False),
    Case("drawn key to a helper whose flag the call turns off", """
        import jax

        def noisy(x, key, train):
            if train:
                x = x + jax.random.normal(key, x.shape)
            return x

        def run():
            key = jax.random.key(0)
            init = jax.random.normal(key, (3,))
            return noisy(init, key, train=False)
        """, False),
    Case("helper that draws on some path, then the caller draws from a child", """
        import jax

        def pick(key, mask):
            if not mask.any():
                return None
            return jax.random.choice(key, mask.shape[0])

        def run():
            key, sub = jax.random.split(jax.random.key(0))
            jitter = jax.random.uniform(sub, (2,))
            return jitter, pick(key, jax.numpy.ones(3, bool))
        """, False),
    # ---- a key read from a record's field, tested against None ----------------------------------
    Case("key read from a carried record, drawn when present, handed back", """
        from typing import NamedTuple, Optional
        import jax

        class Carry(NamedTuple):
            x: jax.Array
            rng: Optional[jax.Array]

        draw = jax.nn.initializers.normal()

        def layer(carry):
            rng = carry.rng
            if rng is None:
                out = carry.x
            else:
                out = carry.x + draw(rng, (3,))
            return Carry(out, rng)  # JAX201

        def run():
            carry = Carry(jax.numpy.ones(3), jax.random.key(0))
            return layer(layer(carry))
        """, True),
    Case("key read from a carried record, split before it is handed back", """
        from typing import NamedTuple, Optional
        import jax

        class Carry(NamedTuple):
            x: jax.Array
            rng: Optional[jax.Array]

        draw = jax.nn.initializers.normal()

        def layer(carry):
            rng = carry.rng
            if rng is None:
                return carry
            rng, sub = jax.random.split(rng)
            return Carry(carry.x + draw(sub, (3,)), rng)

        def run():
            carry = Carry(jax.numpy.ones(3), jax.random.key(0))
            return layer(layer(carry))
        """, False),
    Case("key-named field compared with a string: a name, not a key", """
        import jax

        def pick(entry, table, log):
            key = entry.key
            if key == "params":
                return None
            log(key)
            return table.lookup(key)

        def run():
            return jax.random.normal(jax.random.key(0))
        """, False),
    # ---- a dict of keys bound to a name, then handed on ------------------------------------------
    Case("dict of keys bound to a name, handed on, then one of its keys drawn from", """
        import jax

        def run(sample=lambda rngs: [jax.random.normal(k, (2,)) for k in rngs.values()]):
            key, dropout = jax.random.split(jax.random.key(0))
            rngs = {"params": key, "dropout": dropout}
            noise = sample(rngs)
            return noise, jax.random.normal(key, (2,))  # JAX201
        """, True),
    Case("dict of keys bound to a name, its keys split off first", """
        import jax

        def run(sample=lambda rngs: [jax.random.normal(k, (2,)) for k in rngs.values()]):
            key, params, dropout = jax.random.split(jax.random.key(0), 3)
            rngs = {"params": params, "dropout": dropout}
            print(rngs)
            noise = sample(rngs)
            return noise, jax.random.normal(key, (2,))
        """, False),
    Case("constant seed in a loop", """
        import jax
        def run():
            total = 0.0
            for _ in range(3):
                key = jax.random.key(0)  # JAX204
                total = total + jax.random.normal(key)
            return total
        """, False,
        disagreement="each iteration makes a fresh key, so the checker sees no reuse; the "
        "numbers repeat all the same"),
    Case("a branch of a cond draws from a key of the function, drawn before", """
        import jax
        def run():
            key = jax.random.key(0)
            x = jax.random.normal(key)
            return jax.lax.cond(x > 0, lambda _: jax.random.normal(key), lambda _: x, None)  # JAX201
        """, True),
    Case("both branches of a cond draw from one key: one of them runs", """
        import jax
        def run():
            key, sub = jax.random.split(jax.random.key(0))
            x = jax.random.normal(sub)
            return jax.lax.cond(x > 0, lambda _: jax.random.normal(key), lambda _: jax.random.uniform(key), None)
        """, False),
    Case("a switch's branches draw from a key split off first", """
        import jax
        def run():
            key, sub = jax.random.split(jax.random.key(0))
            y = jax.lax.switch(1, [lambda: jax.random.normal(sub), lambda: jax.random.uniform(sub)])
            return y + jax.random.normal(key)
        """, False),
    Case("a loop's iterations that skip the draws with a continue", """
        import jax
        def run():
            rng = jax.random.key(0)
            total = 0.0
            for i in range(3):
                if i == 1:
                    continue
                noise_key, rng = jax.random.split(rng)  # JAX203
                total = total + jax.random.normal(noise_key) + jax.random.uniform(rng)
            return total
        """, True),
    Case("a loop whose iterations but the first skip the draw with a continue", """
        import jax
        def run():
            rng = jax.random.key(0)
            total = 0.0
            for i in range(3):
                if i != 0:
                    continue
                total = total + jax.random.normal(rng)
            return total
        """, False),
    Case("a loop that skips with a continue and splits a fresh key each iteration", """
        import jax
        def run():
            rng = jax.random.key(0)
            total = 0.0
            for i in range(3):
                if i == 1:
                    continue
                rng, sub = jax.random.split(rng)
                total = total + jax.random.normal(sub)
            return total
        """, False),
]


def linted(case: Case) -> set[tuple[int, str]]:
    source = textwrap.dedent(case.source)
    return {(f.start.row, f.code) for f in lint_source(source, "case.py", KEY_CODES)}


def marked(case: Case) -> set[tuple[int, str]]:
    source = textwrap.dedent(case.source)
    return {(row, code) for row, line in enumerate(source.splitlines(), 1) for code in MARK.findall(line)}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_linter(case):
    assert linted(case) == marked(case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_checker(case):
    jax = pytest.importorskip("jax")
    from jax.errors import KeyReuseError

    namespace: dict = {"__name__": "jaxlint_key_case"}
    exec(compile(textwrap.dedent(case.source), "<case>", "exec"), namespace)
    with jax.debug_key_reuse(True):
        try:
            namespace["run"]()
            raised = False
        except KeyReuseError:
            raised = True
    assert raised == case.checker_raises


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_disagreements_are_explained(case):
    reported = any(code in {"JAX201", "JAX202", "JAX203", "JAX206"} for _, code in marked(case))
    if reported != case.checker_raises:
        assert case.disagreement, "the linter and JAX's checker differ here: say why"


def test_fold_in_is_a_split_child():
    """The fact behind reporting `fold_in` after `split`: JAX derives the same key both ways,
    under its default key derivation (`jax_threefry_partitionable`)."""
    jax = pytest.importorskip("jax")
    assert jax.config.jax_threefry_partitionable
    key = jax.random.key(0)
    children = jax.random.key_data(jax.random.split(key, 4))
    for i in range(4):
        folded = jax.random.key_data(jax.random.fold_in(key, i))
        assert bool((folded == children[i]).all())
    # Folding in the loop index after splitting on the iteration before: at i == 1 the new
    # key is the previous iteration's second child.
    first, second = jax.random.split(key)
    assert bool((jax.random.key_data(jax.random.fold_in(key, 1)) == jax.random.key_data(second)).all())
    beyond = jax.random.key_data(jax.random.fold_in(key, 4))
    assert not any(bool((beyond == child).all()) for child in children)


@pytest.mark.parametrize("use", ["matmul", "multiply", "add", "power", "einsum", "dot", "attention"])
def test_keys_reject_array_math(use):
    """The fact behind a key-named value used in array math being data: JAX's keys support none of it."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    key = jax.random.key(0)
    keys = jax.random.split(key, 4)
    w = jnp.ones((4, 4))
    uses = {
        "matmul": lambda: keys @ w,
        "multiply": lambda: key * 2,
        "add": lambda: key + 1,
        "power": lambda: key ** 2,
        "einsum": lambda: jnp.einsum("i,ij->j", keys, w),
        "dot": lambda: jnp.dot(keys, w),
        "attention": lambda: jax.nn.dot_product_attention(
            jnp.ones((1, 4, 1, 8)), jax.random.split(key, (1, 4, 1, 8)), jnp.ones((1, 4, 1, 8))
        ),
    }
    with pytest.raises((TypeError, ValueError)):
        uses[use]()


@pytest.mark.parametrize("use", ["private read", "generator method", "store"])
def test_keys_have_no_object_state(use):
    """The fact behind a key-named value with attributes set or read being an object: a JAX key,
    typed or raw, has no such attributes, and under a transformation takes no new ones."""
    jax = pytest.importorskip("jax")

    def touch(key):
        if use == "private read":
            return key._state
        if use == "generator method":
            return key.normal(size=3)
        key._state = 1
        return key

    for key in (jax.random.key(0), jax.random.PRNGKey(0)):
        with pytest.raises(AttributeError):
            jax.jit(touch)(key)
        if use != "store":
            with pytest.raises(AttributeError):
                touch(key)


def test_an_attribute_stored_on_a_key_is_not_its_state():
    """Eagerly an array takes a new attribute, but no draw reads it: the numbers stay the same."""
    jax = pytest.importorskip("jax")
    key = jax.random.key(0)
    before = jax.random.normal(jax.random.clone(key))
    key._state = jax.random.key(1)
    assert bool(jax.random.normal(key) == before)
    assert not hasattr(jax.random.split(key)[0], "_state")


def test_array_attributes_are_jax_arrays():
    """`ARRAY_ATTRIBUTES` holds every public attribute of JAX's arrays and keys (the union over the
    JAX builds it was read from: a jaxlib may add one), so a key's own attribute is never taken
    for a sign of a generator object."""
    jax = pytest.importorskip("jax")
    from jaxlint.analysis.keys.key_objects import ARRAY_ATTRIBUTES

    def public(value):
        return {name for name in dir(value) if not name.startswith("_")}

    listed = public(jax.Array) | public(jax.random.key(0)) | public(jax.random.PRNGKey(0))
    assert listed <= ARRAY_ATTRIBUTES, sorted(listed - ARRAY_ATTRIBUTES)


OBJECT_CASES = (
    "a stateful deviate advanced by every helper it is handed to",
    "a NumPy generator named rng handed to two functions",
    "a key read for its shape handed to two functions",
    "a key name drawn from in the module, an object elsewhere",
)


def reported_through_the_command_line(cli, make_files, names) -> None:
    """The named cases, one file each, give through the command line's JSON what they mark."""
    sources = [c.source for c in CASES if c.name in names]
    assert len(sources) == len(names)
    got, expected = cli_reports(cli, make_files, sources, "JAX2")
    assert got == expected


def test_objects_with_key_names_through_the_command_line(cli, make_files):
    reported_through_the_command_line(cli, make_files, OBJECT_CASES)


NONE_DEFAULT_CASES = (
    "helper defaulting a None key, called twice with one key",
    "helper drawing only when given a key, called twice with one key",
    "helper defaulting a None key, called twice without one",
    "helper defaulting a None key, called with split keys",
    "helper rebinding its key outside the None test",
)


def test_helpers_defaulting_a_none_key_through_the_command_line(cli, make_files):
    reported_through_the_command_line(cli, make_files, NONE_DEFAULT_CASES)


def test_a_key_declared_by_its_annotation_in_a_module_without_jax_random(cli, make_files):
    """A parameter annotated as a PRNG key is one, though the module never calls `jax.random`
    (it hands the key to other objects' samplers): two of them given it draw the same numbers.
    A string parameter named `key` in the same module stays a dictionary key."""
    make_files({
        "mixture.py": """
            import chex


            def sample(key: chex.PRNGKey, n, mixture, components):
                mix = mixture.sample(sample_shape=n, seed=key)
                comp = components.sample(sample_shape=n, seed=key)
                return mix, comp


            def lookup(key: str, table, fallback):
                found = table.get(key)
                return found if found is not None else fallback(key)
            """,
    })
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX201", "mixture.py")
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX201", 7)]


def test_a_function_a_factory_made_is_named_as_the_call_spells_it():
    """The message names the consumer as the line that consumes the key writes it (`policy`),
    not as the def the factory made it from (`behavior_policy`), which the line does not show."""
    source = textwrap.dedent("""
        import jax

        def make_policy(scale):
            def behavior_policy(obs, key):
                return obs + scale * jax.random.normal(key, obs.shape)
            return behavior_policy

        def act(obs, key):
            policy = make_policy(0.1)
            action = policy(obs, key)
            return action + jax.random.uniform(key, obs.shape)
        """)
    (finding,) = lint_source(source, "case.py", KEY_CODES)
    assert finding.code == "JAX201"
    assert "`policy`" in finding.message and "behavior_policy" not in finding.message

