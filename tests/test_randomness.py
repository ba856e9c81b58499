"""JAX2xx beyond the rules' own examples: realistic programs, marked inline, linted with every JAX2xx rule at once.

Every case is checked for exactly its marked findings (so a look-alike that one rule must
not report is also checked against its neighbours), and a few go through the command line's
JSON output as a user would see them.
"""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source
from jaxlint.rules import all_rules
from marks import family_marks

CODES = {code for code in all_rules() if code.startswith("JAX2")}
marked = family_marks(r"JAX2\d\d")

CASES = {
    "one key in two stream slots of an rngs dict": """
        import jax

        def train_step(model, params, x, rng):
            rng, step_rng = jax.random.split(rng)
            out = model.apply(params, x, rngs={"dropout": step_rng, "noise": step_rng})  # JAX201
            return out, rng

        def init(model, x, rng):
            # the params stream draws only while parameters are made; dropout's draws are dropped:
            # no numbers repeat, but the key is used twice
            return model.init({"params": rng, "dropout": rng}, x)  # JAX207

        def evaluate(model, params, x, rng):
            d, n = jax.random.split(rng)
            return model.apply(params, x, rngs={"dropout": d, "noise": n}), {"key": rng, "tag": "eval"}
        """,
    "a helper's parameter that callers pass a key is one, whatever its name": """
        import jax

        def step(model, x, k):
            return model.apply({}, x, rngs={"dropout": k})

        def shape_of(k):
            return k.shape

        def train(model, x):
            key = jax.random.PRNGKey(0)
            for epoch in range(3):
                x = step(model, x, key)  # JAX203
            for epoch in range(3):
                s = shape_of(key)  # only looks at the key
            sub = jax.random.PRNGKey(1)
            for epoch in range(3):
                sub, k = jax.random.split(sub)
                x = step(model, x, k)  # a fresh key each time
            return x, s
        """,
    "a nested function that hands the step's key to apply": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(state, batch, dropout_key):
            def loss_fn(params):
                out = state.apply_fn({"params": params}, batch, rngs={"dropout": dropout_key})
                return jnp.mean(out ** 2), out
            (loss, out), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
            return grads, out

        @jax.jit
        def eval_step(state, batch, key):
            def loss_fn(params):
                return jnp.mean(state.apply_fn({"params": params}, batch)), key.shape
            return loss_fn(state.params)

        def fit(state, batches):
            root = jax.random.PRNGKey(0)
            params_key, dropout_key = jax.random.split(root)
            masks = []
            for batch in batches:
                grads, out = train_step(state, batch, dropout_key)  # JAX203
                masks.append(out == 0)  # compares one draw with a constant: no check that two agree
                loss = eval_step(state, batch, params_key)  # its nested function only reads the shape
            return masks, loss
        """,
    "a lambda closing over a key, called for every weight": """
        import jax

        def make_layers(sizes, key=jax.random.PRNGKey(42)):
            small = lambda shape: jax.random.normal(key, shape) * 0.1
            weights = [small((sizes[0], sizes[1]))]
            biases = [small((sizes[0], 1))]  # JAX201
            return weights, biases
        """,
    "an integer seed named key is no key": """
        import random
        import jax

        def bernoulli(data, key):
            return jax.random.bernoulli(key, data)

        class Sampler:
            def __init__(self, n, shuffle, seed):
                self.order = list(range(n))
                if shuffle:
                    random.Random(seed).shuffle(self.order)

        class Loader:
            def __init__(self, key=0):
                self.train = Sampler(10, shuffle=True, seed=key)
                self.test = Sampler(4, shuffle=False, seed=key)

        def noise(shape, key=0):
            a = jax.random.normal(key, shape)
            b = jax.random.uniform(key, shape)  # JAX201
            return a + b
        """,
    "a tree map reached through a class body's alias": """
        import jax

        class ns:
            tmap = jax.tree_util.tree_map

        def noise(key, tree):
            return ns.tmap(lambda leaf: jax.random.normal(key, leaf.shape), tree)  # JAX203
        """,
    "flax init then dropout with the same key": """
        import jax

        def fit(model, x, seed=0):
            rng = jax.random.PRNGKey(seed)
            params = model.init(rng, x)
            for step in range(10):
                loss = model.apply(params, x, rngs={"dropout": rng})  # JAX201
            return loss
        """,
    "training loop done right": """
        import jax

        def fit(model, x, train_step, seed=0):
            rng = jax.random.PRNGKey(seed)
            rng, init_rng = jax.random.split(rng)
            params = model.init(init_rng, x)
            for step in range(10):
                rng, dropout_rng = jax.random.split(rng)
                params = train_step(params, x, dropout_rng)
            return params
        """,
    "shuffling with one key every epoch": """
        import jax

        def epochs(key, data, n_epochs):
            for epoch in range(n_epochs):
                order = jax.random.permutation(key, data.shape[0])  # JAX203
                yield data[order]
        """,
    "shuffling with a key per epoch": """
        import jax

        def epochs(key, data, n_epochs):
            for epoch in range(n_epochs):
                order = jax.random.permutation(jax.random.fold_in(key, epoch), data.shape[0])
                yield data[order]

        def epochs_split(key, data, n_epochs):
            for epoch_key in jax.random.split(key, n_epochs):
                yield data[jax.random.permutation(epoch_key, data.shape[0])]
        """,
    "method helpers share a key": """
        import jax

        class Augment:
            def crop(self, key, x):
                return x * jax.random.uniform(key, x.shape)

            def flip(self, key, x):
                return jax.numpy.where(jax.random.bernoulli(key), x[::-1], x)

            def __call__(self, key, x):
                x = self.crop(key, x)
                return self.flip(key, x)  # JAX201
        """,
    "sampling until accepted": """
        import jax

        def rejection(key, accept):
            while True:
                key, sub = jax.random.split(key)
                x = jax.random.normal(sub)
                if accept(x):
                    return x

        def first_valid(key, candidates):
            for c in candidates:
                if c is None:
                    continue
                return c + jax.random.normal(key)
        """,
    "haiku sequence and flax make_rng": """
        import jax
        import haiku as hk

        def forward(x):
            seq = hk.PRNGSequence(hk.next_rng_key())
            a = jax.random.normal(next(seq), x.shape)
            b = jax.random.normal(next(seq), x.shape)
            c = jax.random.normal(hk.next_rng_key(), x.shape)
            d = jax.random.normal(hk.next_rng_key(), x.shape)
            return a + b + c + d
        """,
    "attention key tensors are data, not keys": """
        import jax
        import jax.numpy as jnp
        from jaxtyping import Array, Float, Int32
        from mylib.sharding import kernel, shard

        def forward(query, key, value):
            spec = shard("bthd", tensor=key)
            return jax.nn.dot_product_attention(query, key, value), spec

        def annotated(query, key: Float[Array, "b s h d"], value):
            spec = shard("bshd", tensor=key)
            return kernel(query, key, value), spec

        def cast(query, key, value, dtype):
            key: Float[Array, "b s h d"] = key.astype(dtype)
            spec = shard(key)
            return kernel(query, key, value), spec

        def scores(query, key, value):
            spec = shard(key)
            return jnp.einsum("bqhd,bkhd->bhqk", query, key), kernel(key, value), spec

        def matmul(query, key):
            spec = shard(key)
            return kernel(query @ key.T), kernel(key), spec

        def token_ids(key: Int32[Array, "b t"], table):
            return shard(key), kernel(key)

        def seeded(x, rng, base):
            offset = rng + base  # an integer seed
            return shard(rng, offset), kernel(rng)

        def demo():
            q = k = v = jax.random.normal(jax.random.key(0), (2, 16, 4, 8))
            return forward(q, k, v)
        """,
    "key-named parameters given data by every caller": """
        import jax
        import jax.numpy as jnp
        from mylib.sharding import kernel, shard

        def forward(query, key, value):
            return shard(key), kernel(query, key, value)

        def layer(x, key):
            return shard(key), kernel(x, key)  # JAX201

        def demo():
            q = k = v = jax.random.normal(jax.random.key(0), (2, 16, 4, 8))
            ones = jnp.ones((2, 16, 4, 8))
            return forward(q, k, v), forward(q, ones, v), forward(q, k * 2.0, v)

        def train(x):
            key = jax.random.key(1)
            return layer(x, jnp.zeros(3)), layer(x, key)
        """,
    "key-named parameters that are keys": """
        import jax
        import jax.numpy as jnp
        from jaxtyping import Array, Key, PRNGKeyArray, UInt32
        from mylib.nn import Linear, init

        def drawn(key: jax.Array, x):
            a = jax.random.normal(key, x.shape)
            return a + jax.random.normal(key, x.shape)  # JAX201

        def drawn_and_added(key, x):
            noise = jax.random.normal(key, x.shape)
            offset = key * 2
            return noise + jax.random.normal(key, x.shape)  # JAX201

        def layers(key, d):
            return Linear(d, d, key=key), Linear(d, d, key=key)  # JAX201

        def typed(key: PRNGKeyArray, d):
            return init(key, d), init(key, d)  # JAX201

        def jaxtyped(key: Key[Array, ""], d):
            return init(key, d), init(key, d)  # JAX201

        def raw(key: UInt32[Array, "2"], d):
            return init(key, d), init(key, d)  # JAX201

        def looked_at(key, x):
            n = key.shape[0] * 2
            return init(key, n), init(key, n)  # JAX201
        """,
    "keys in a dict, split per use": """
        import jax

        def step(state):
            key, sub = jax.random.split(state["key"])
            noise = jax.random.normal(sub, (3,))
            state = dict(state, key=key)
            key, sub = jax.random.split(state["key"])
            return dict(state, key=key), noise + jax.random.normal(sub, (3,))
        """,
    "try and except each draw once": """
        import jax

        def draw(key, shape):
            try:
                return jax.random.normal(key, shape)
            except TypeError:
                return jax.random.normal(key, tuple(shape))
        """,
    "numpy and python random outside traced code": """
        import random
        import numpy as np
        import jax

        def make_batches(data, size):
            idx = np.random.permutation(len(data))
            random.shuffle(data)
            return [data[i] for i in idx[:size]]

        @jax.jit
        def scale(x, factor):
            return x * factor

        def main(x):
            return scale(x, np.random.uniform(0.5, 2.0))
        """,
    "numpy random in a scanned body and a jitted helper": """
        import numpy as np
        import jax
        from jax import lax

        def jitter(x):
            return x + np.random.normal()  # JAX205

        @jax.jit
        def run(xs):
            def body(c, x):
                return c + jitter(x), np.random.rand()  # JAX205
            return lax.scan(body, 0.0, xs)
        """,
    "constant seed inside a scan body": """
        import jax
        from jax import lax

        def walk(n):
            def step(pos, _):
                key = jax.random.key(0)  # JAX204
                return pos + jax.random.normal(key), pos
            return lax.scan(step, 0.0, None, length=n)
        """,
    "constant seed once, outside the loop": """
        import jax

        SEED = 0

        def main(xs):
            key = jax.random.key(SEED)
            params = jax.random.normal(jax.random.key(1), (3,))
            for x in xs:
                key, sub = jax.random.split(key)
                params = params + jax.random.normal(sub, (3,)) * x
            return params
        """,
    "a parameter named key that is a dictionary key": """
        import jax

        def lookup(table, key, default=None):
            if key in table:
                register(key)
                return fetch(table, key)
            return default

        def render(key: str):
            emit(key)
            return emit(key)

        def sample(rng, shape):
            return jax.random.normal(rng, shape)
        """,
    "a key parameter passed to an object twice": """
        import jax

        def rollout(policy, obs, key, n):
            for _ in range(n):
                obs = obs + policy.act(obs, key)  # JAX203
            return obs

        def evaluate(model, params, x, rng):
            a = model.apply(params, x, rng)
            return a + model.apply(params, -x, rng)  # JAX201

        def draw(key):
            return jax.random.normal(key)
        """,
    "keys kept on the instance": """
        import jax

        class Agent:
            def __init__(self, seed):
                self.key = jax.random.PRNGKey(seed)

            def explore(self, logits):
                a = jax.random.categorical(self.key, logits)
                noise = jax.random.normal(self.key, logits.shape)  # JAX201
                return a, noise

            def rollout(self, logits, n):
                for _ in range(n):
                    a = jax.random.categorical(self.key, logits)  # JAX203
                return a

            def act(self, logits):
                self.key, sub = jax.random.split(self.key)
                a = jax.random.categorical(sub, logits)
                self.key, sub = jax.random.split(self.key)
                return a, jax.random.normal(sub, logits.shape)

            def act_loop(self, logits, n):
                for _ in range(n):
                    self.key, sub = jax.random.split(self.key)
                    a = self.policy(sub, logits)
                return a

            def reseeded_between(self, logits):
                a = jax.random.categorical(self.key, logits)
                self.reseed()
                return a, jax.random.normal(self.key, logits.shape)
        """,
    "tests reuse keys on purpose": """
        import jax
        import unittest

        class SamplerTest(unittest.TestCase):
            def test_same_key_same_draws(self):
                key = jax.random.key(0)
                self.assertTrue((jax.random.normal(key) == jax.random.normal(key)).all())

        def test_deterministic():
            key = jax.random.PRNGKey(0)
            assert jax.random.uniform(key) == jax.random.uniform(key)
        """,
    "a branch draws from the key, then it is drawn from again": """
        import jax

        def augment(x, key, train):
            if train:
                x = x + 0.1 * jax.random.normal(key, x.shape)
            keep = jax.random.bernoulli(key, 0.9, x.shape)  # JAX201
            return x * keep

        def init(key, sizes, with_bias):
            if with_bias:
                w_key, b_key = jax.random.split(key)
                print(jax.random.normal(b_key, sizes[-1:]))
            return jax.random.normal(key, sizes)  # JAX202
        """,
    "a short-circuit operand draws from the key, then it is drawn from again": """
        import jax

        def init_params(key):
            return {"w": jax.random.normal(key, (3,))}

        def restore_or_init(restored, key):
            params = restored or init_params(key)
            noise = jax.random.uniform(key, (3,))  # JAX201
            return params, noise

        def maybe_drop(x, train, key):
            y = train and x * jax.random.bernoulli(key, 0.9, x.shape)
            return y, jax.random.normal(key, x.shape)  # JAX201

        def checked_then_drawn(ready, key):
            ok = ready() and init_params(key)
            if ok:
                return jax.random.uniform(key, (3,))  # JAX201
            return None

        def fresh_half(restored, key):
            key, sub = jax.random.split(key)
            params = restored or init_params(sub)
            return params, jax.random.uniform(key, (3,))

        def only_when_restored(restored, key):
            params = restored or init_params(key)
            if restored:
                return params, jax.random.uniform(key, (3,))
            return params, None

        def after_an_early_return(restored, key):
            params = restored or init_params(key)
            if not restored:
                return params, None
            return params, jax.random.uniform(key, (3,))

        def after_an_early_return_of_a_branch(restored, key):
            params = restored
            if not restored:
                params = init_params(key)
            if not restored:
                raise ValueError("nothing to fine-tune")
            return params, jax.random.uniform(key, (3,))
        """,
    "exclusive branches on one flag, and an imported predicate": """
        import jax
        from mylib.util import is_prng_key

        def corrupt(x, key, mode):
            assert is_prng_key(key)
            if mode == "noise":
                x = x + jax.random.normal(key, x.shape)
            if mode != "noise":
                x = x * jax.random.bernoulli(key, 0.9, x.shape)
            return x

        def checked(key):
            if not is_prng_key(key):
                raise TypeError("not a key")
            return jax.random.normal(key)
        """,
    "a constant seed in jitted step functions, whatever their names": """
        import jax
        import optax

        @jax.jit
        def train_step(w, x):
            key = jax.random.key(0)  # JAX204
            return w - 0.1 * jax.random.normal(key, w.shape) * x

        @jax.jit
        def update(w, x):
            key = jax.random.key(0)  # JAX204
            return w - 0.1 * jax.random.normal(key, w.shape) * x

        @jax.jit
        def retrieval_step(params, grads):
            noise = jax.random.normal(jax.random.key(1), ())  # JAX204
            return optax.apply_updates(params, grads * noise)

        @jax.jit
        def evaluation_noise(x):
            key = jax.random.key(0)
            return jax.random.normal(key, x.shape).mean()
        """,
    "a constant seed in a method the forward pass calls": """
        import jax
        import jax.numpy as jnp
        from flax import nnx

        def random_mask(shape):
            return jax.random.bernoulli(jax.random.key(1), 0.5, shape)  # JAX204

        def dummy_input(shape):
            return jnp.zeros(shape)

        class Masker(nnx.Module):
            def __init__(self, dim, rngs):
                self.encoder = nnx.Linear(dim, dim, rngs=rngs)
                self.probe = jax.random.normal(jax.random.key(0), (dim,))  # made once, at construction

            def __call__(self, x, rng, training=True):
                x = jnp.where(random_mask(x.shape), 0.0, x)
                return self.mask_and_encode(x, rng, training) + self.encoder(dummy_input(x.shape))

            def mask_and_encode(self, x, rng, training=True):
                if training:
                    keep = jax.random.bernoulli(jax.random.key(0), 0.5, x.shape)  # JAX204
                    x = jnp.where(keep, x, 0.0)
                return self.encoder(x)
        """,
    "a fixed evaluation key each epoch, noise carried from step to step": """
        import jax

        def fit(params, batches, update, evaluate):
            for batch in batches:
                params = update(params, batch)
                score = evaluate(params, jax.random.normal(jax.random.key(7), (3,)))
            return params, score

        def anneal(x, n):
            for _ in range(n):
                noise = jax.random.normal(jax.random.key(3), x.shape)  # JAX204
                x = 0.9 * x + 0.1 * noise
            return x
        """,
    "one key for every leaf": """
        import jax

        def noisy_grads(grads, key):
            return jax.tree_util.tree_map(lambda g: g + jax.random.normal(key, g.shape), grads)  # JAX203

        def shuffle_batch(batch, key):
            return jax.tree_util.tree_map(lambda v: jax.random.permutation(key, v), batch)
        """,
    "a module-level key baked into a jitted function": """
        import jax

        KEY = jax.random.PRNGKey(0)

        @jax.jit
        def add_noise(x):
            return x + jax.random.normal(KEY, x.shape)  # JAX206

        def init(shape):
            return jax.random.normal(KEY, shape)
        """,
    "fold_in on a key already split": """
        import jax

        def host_keys(seed, process_id):
            key = jax.random.PRNGKey(seed)
            rng, global_key = jax.random.split(key, 2)
            local_key = jax.random.fold_in(key, process_id)  # JAX202
            return rng, global_key, local_key

        def chain(key, n):
            for i in range(n):
                key = jax.random.fold_in(key, i)  # JAX202
                noise_key, drop_key = jax.random.split(key)
            return noise_key, drop_key

        def host_keys_fixed(seed, process_id):
            key = jax.random.PRNGKey(seed)
            global_key, local_key = jax.random.split(key)
            return global_key, jax.random.fold_in(local_key, process_id)
        """,
    "a helper seen draws from the key on some of its paths": """
        import jax

        def fallback_params(cfg, key):
            if cfg.fallback_to_scratch:
                return {"w": jax.random.normal(key, (3,))}
            return None

        def noisy(x, key, train):
            if not train:
                return x
            return x + jax.random.normal(key, x.shape)

        def setup(cfg, key):
            fallback = fallback_params(cfg, key)
            noise = jax.random.uniform(key, (3,))  # JAX201
            return fallback, noise

        def step(x, key, train):
            y = noisy(x, key, train)
            return y + jax.random.uniform(key, x.shape)  # JAX201

        def evaluate(x, key):
            y = noisy(x, key, train=False)  # the call decides: no draw
            return y + jax.random.uniform(key, x.shape)

        def restore_or_init(cfg, restored, key):
            params = restored or fallback_params(cfg, key)
            if params is None:  # what the helper returned says whether it drew
                params = {"w": jax.random.normal(key, (3,))}
            return params

        def restored_or_fresh(cfg, key):
            return fallback_params(cfg, key) or {"w": jax.random.normal(key, (3,))}
        """,
    "stateful generators drawn from in traced code": """
        import random
        import numpy as np
        import jax

        gen = np.random.default_rng(0)
        py = random.Random(0)

        @jax.jit
        def jitter(x):
            return x * gen.normal() + py.gauss(0.0, 1.0)  # JAX205
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    source = textwrap.dedent(CASES[name])
    found = {(f.start.row, f.code) for f in lint_source(source, "case.py", CODES)}
    assert found == marked(source)


def test_through_the_command_line(cli, make_files):
    make_files({name.replace(" ", "_") + ".py": source for name, source in CASES.items()})
    out = cli("check", "--output-format", "json", "--select", "JAX2", "--isolated", "--no-cache")
    got = {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in out.json}
    want = {  # JAX207 is on only where selected by its own code, not by `JAX2`
        (name.replace(" ", "_") + ".py", row, code)
        for name, source in CASES.items()
        for row, code in marked(textwrap.dedent(source)) if code != "JAX207"
    }
    assert got == want
    assert out.code == 1
    assert all(f["name"] and f["url"].endswith(f"{f['code']}.md") for f in out.json)


@pytest.mark.parametrize("code", sorted(CODES))
def test_each_rules_examples_against_the_whole_family(code):
    """A good example of one JAX2xx rule is quiet for all of them; a bad one shows only its marks."""
    rule = all_rules()[code]
    for example in rule.good:
        source = textwrap.dedent(example)
        assert not lint_source(source, "good.py", CODES)
    for example in rule.bad:
        source = textwrap.dedent(example)
        assert {(f.start.row, f.code) for f in lint_source(source, "bad.py", CODES)} == marked(source)


TEST_CODE = """
import jax
import unittest

class SamplerTest(unittest.TestCase):
    def test_shapes(self):
        key = jax.random.key(0)
        self.assertEqual(jax.random.normal(key, (2,)).shape, (2,))
        self.assertEqual(jax.random.uniform(key, (3,)).shape, (3,))

def test_init_then_apply(model, x):
    rng = jax.random.PRNGKey(0)
    params = model.init(rng, x)
    return model.apply(params, x, rngs={"dropout": rng})
"""


def test_test_functions_option():
    """Test code is not checked by default; `test-functions = ""` checks it, another pattern moves the line."""
    assert lint_source(TEST_CODE, "case.py", CODES) == []
    everything = lint_source(TEST_CODE, "case.py", CODES, {"test-functions": ""})
    assert {(f.start.row, f.code) for f in everything} == {(9, "JAX201"), (14, "JAX201")}
    only_classes = lint_source(TEST_CODE, "case.py", CODES, {"test-functions": "TestCase$"})
    assert {(f.start.row, f.code) for f in only_classes} == {(14, "JAX201")}


DATA_SOURCE = """
import jax

class Sampler:
    def test_data(self, key):
        x = jax.random.normal(key, (3,))
        return x, jax.random.uniform(key, (3,))

class SamplerTest:
    def test_data(self):
        key = jax.random.key(0)
        return jax.random.normal(key, (3,)), jax.random.normal(key, (3,))
"""


def test_a_method_named_as_a_test_is_one_only_in_a_test_class():
    """`Sampler.test_data` is the code a test calls (pytest collects `test*` methods only from
    test classes): its reuse is reported; the same reuse in `SamplerTest` is a test's own."""
    assert {(f.start.row, f.code) for f in lint_source(DATA_SOURCE, "data.py", CODES)} == {(7, "JAX201")}


def test_jax_rejects_the_data_sources_reuse():
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(DATA_SOURCE, "data.py", "exec"), namespace)
    with jax.debug_key_reuse(True), pytest.raises(jax.errors.KeyReuseError):
        namespace["Sampler"]().test_data(jax.random.key(0))


def test_test_functions_option_from_configuration(cli, make_files):
    make_files({"t.py": TEST_CODE})
    assert cli("check", "--select", "JAX2", "--no-cache").code == 0
    make_files({"pyproject.toml": '[tool.jaxlint.options]\ntest-functions = ""\n'})
    out = cli("check", "--select", "JAX2", "--no-cache", "--output-format", "json")
    assert out.code == 1
    assert {(f["location"]["row"], f["code"]) for f in out.json} == {(9, "JAX201"), (14, "JAX201")}


def test_branch_consumption_message_names_the_condition(cli, make_files):
    make_files({"a.py": textwrap.dedent(CASES["a branch draws from the key, then it is drawn from again"])})
    out = cli("check", "--select", "JAX2", "--no-cache", "--output-format", "json")
    messages = {f["location"]["row"]: f["message"] for f in out.json}
    assert "when `train` held" in messages[7] and "line 6" in messages[7]
    assert "when `with_bias` held" in messages[14] and "line 12" in messages[14]


def test_helper_consumption_message_names_the_helper_and_its_paths(cli, make_files):
    make_files({"a.py": textwrap.dedent(CASES["a helper seen draws from the key on some of its paths"])})
    out = cli("check", "--select", "JAX2", "--no-cache", "--output-format", "json")
    messages = {f["location"]["row"]: f["message"] for f in out.json}
    assert "`fallback_params` on line 15" in messages[16] and "some of its paths" in messages[16]
    assert "`noisy` on line 20" in messages[21]


BRANCH_PATHS = """
import jax


def before(rng, perturb):
    state = jax.random.normal(rng, (2,))
    if perturb:
        rng = jax.random.fold_in(rng, 1)
    return state, jax.random.uniform(rng, (2,))


def other_arm(key, train):
    if train:
        x = 0.0
    else:
        x = jax.random.normal(key, (2,))
    return x + jax.random.uniform(key, (2,))
"""


def test_branch_consumption_message_names_the_path_that_reuses(cli, make_files):
    # Drawn before the branch, the key is reused where the branch did not rebind it; drawn in the
    # `else` arm, where the condition did not hold.
    make_files({"a.py": BRANCH_PATHS})
    out = cli("check", "--select", "JAX2", "--no-cache", "--output-format", "json")
    messages = {f["location"]["row"]: f["message"] for f in out.json}
    assert "one of the paths through the branch on `perturb`" in messages[9]
    assert "when `train` did not hold" in messages[17]


def test_short_circuit_consumption_message_names_the_operand_that_chose(cli, make_files):
    # `a or f(key)` runs `f` when `a` did not hold, `a and f(key)` when it held.
    make_files({"a.py": textwrap.dedent(CASES["a short-circuit operand draws from the key, then it is drawn from again"])})
    out = cli("check", "--select", "JAX2", "--no-cache", "--output-format", "json")
    messages = {f["location"]["row"]: f["message"] for f in out.json}
    assert "when `restored` did not hold" in messages[9] and "`init_params` on line 8" in messages[9]
    assert "when `train` held" in messages[14] and "line 13" in messages[14]


def test_jax_checker_sees_a_key_drawn_from_in_a_short_circuit_operand():
    """What JAX201 says of `params = restored or init_params(key)` followed by a draw from `key`:
    JAX's checker raises on the path where `restored` is empty and `init_params` ran, and not
    where it held, nor after an early return on the path that ran `init_params`."""
    jax = pytest.importorskip("jax")

    def init_params(key):
        return {"w": jax.random.normal(key, (3,))}

    def restore_or_init(restored, key):
        params = restored or init_params(key)
        return params, jax.random.uniform(key, (3,))

    def after_an_early_return(restored, key):
        params = restored or init_params(key)
        if not restored:
            return params, None
        return params, jax.random.uniform(key, (3,))

    with jax.debug_key_reuse(True):
        with pytest.raises(jax.errors.KeyReuseError):
            restore_or_init({}, jax.random.key(0))
        restore_or_init({"w": 1.0}, jax.random.key(0))
        after_an_early_return({}, jax.random.key(0))
        after_an_early_return({"w": 1.0}, jax.random.key(0))


# A mock in a test module returns fixed random numbers on purpose; a helper reuses a key.
TEST_MODULE = """
import jax

class TowerMock:
    def __call__(self, inputs):
        return jax.random.uniform(jax.random.PRNGKey(42), shape=[3])

def helper(key):
    a = jax.random.normal(key)
    b = jax.random.normal(key)
    return a + b
"""


def test_test_files_option(cli, make_files):
    """Files pytest collects (and conftest.py) are test code by default; `test-files` changes which."""
    make_files({"models_test.py": TEST_MODULE, "test_models.py": TEST_MODULE, "conftest.py": TEST_MODULE,
                "models.py": TEST_MODULE})
    out = cli("check", "--select", "JAX2", "--no-cache", "--output-format", "json")
    assert {(f["filename"].rsplit("/", 1)[-1], f["code"]) for f in out.json} == {("models.py", "JAX201")}
    make_files({"pyproject.toml": '[tool.jaxlint.options]\ntest-files = ""\n'})
    out = cli("check", "--select", "JAX2", "--no-cache", "--output-format", "json")
    assert {f["filename"].rsplit("/", 1)[-1] for f in out.json} == {
        "models_test.py", "test_models.py", "conftest.py", "models.py"
    }


def test_test_patterns_must_be_regular_expressions(cli, make_files):
    make_files({"m.py": TEST_MODULE, "pyproject.toml": '[tool.jaxlint.options]\ntest-files = "(unclosed"\n'})
    out = cli("check", "--no-cache")
    assert out.code == 2
    assert "test-files" in out.stderr


def test_jax_rejects_an_integer_as_a_key():
    # Why a parameter defaulting to `0` is a seed and not a key: `jax.random` rejects it.
    jax = pytest.importorskip("jax")
    with pytest.raises(TypeError, match="invalid PRNG key"):
        jax.random.normal(0, (2,))


def test_keys_through_helpers_and_closures_repeat_under_jax():
    """What the cases above claim, run: a key handed on through a helper's parameter, or read by
    a nested loss function, gives the same dropout mask on every step; a lambda closing over a
    key draws the same numbers at every call."""
    jax = pytest.importorskip("jax")
    nn = pytest.importorskip("flax.linen")
    jnp = jax.numpy
    model = nn.Dropout(0.5, deterministic=False)

    def step(x, k):
        return model.apply({}, x, rngs={"dropout": k})

    @jax.jit
    def train_step(x, dropout_key):
        def loss_fn(y):
            out = model.apply({}, y, rngs={"dropout": dropout_key})
            return jnp.sum(out), out

        (_, out), _ = jax.value_and_grad(loss_fn, has_aux=True)(x)
        return out

    key, x = jax.random.PRNGKey(0), jnp.ones(64)
    assert bool((step(x, key) == step(x, key)).all())
    assert bool((train_step(x, key) == train_step(x, key)).all())
    small = lambda shape: jax.random.normal(key, shape)  # noqa: E731
    assert bool((small((3, 1)) == small((3, 1))).all())


def test_jax_checker_sees_a_key_a_helper_draws_from_on_some_paths():
    """What JAX201 says of a helper that draws from the key only under a test its caller does not
    decide (`cfg.fallback_to_scratch`), followed by a draw in the caller: JAX's checker raises on
    the path where the helper drew, and not on the other."""
    jax = pytest.importorskip("jax")

    def fallback_params(fallback_to_scratch, key):
        if fallback_to_scratch:
            return {"w": jax.random.normal(key, (3,))}
        return None

    def setup(fallback_to_scratch, key):
        fallback = fallback_params(fallback_to_scratch, key)
        return fallback, jax.random.uniform(key, (3,))

    with jax.debug_key_reuse(True):
        with pytest.raises(jax.errors.KeyReuseError):
            setup(True, jax.random.key(0))
        setup(False, jax.random.key(0))


def test_one_key_in_two_flax_streams_draws_the_same_numbers():
    """What JAX201 says of `rngs={"dropout": k, "noise": k}`: Flax derives each stream's keys
    from its key the same way, so the two streams are one; and of `{"params": k, "dropout": k}`
    given to `init`: the parameters are those the params key alone makes, whatever the other
    streams are given."""
    jax = pytest.importorskip("jax")
    nn = pytest.importorskip("flax.linen")
    jnp = jax.numpy

    class Noisy(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Dense(3)(x)
            a = jax.random.normal(self.make_rng("dropout"), x.shape)
            b = jax.random.normal(self.make_rng("noise"), x.shape)
            return a, b

    k = jax.random.key(0)
    variables = Noisy().init({"params": k, "dropout": k, "noise": k}, jnp.ones(2))
    a, b = Noisy().apply(variables, jnp.ones(2), rngs={"dropout": k, "noise": k})
    assert (a == b).all()
    for others in ({"dropout": jax.random.key(1), "noise": k}, {"dropout": jax.random.key(1), "noise": jax.random.key(2)}):
        other = Noisy().init({"params": k, **others}, jnp.ones(2))
        same = jax.tree.map(lambda u, v: bool((u == v).all()), variables, other)
        assert all(jax.tree.leaves(same))


def test_a_constant_seed_in_a_method_the_forward_pass_calls_repeats_every_step():
    """What JAX204 says of `jax.random.key(0)` in a method the forward pass calls: the jitted
    step draws the same mask whatever key it is given."""
    jax = pytest.importorskip("jax")
    nnx = pytest.importorskip("flax.nnx")
    jnp = jax.numpy

    class Masker(nnx.Module):
        def __init__(self, dim, rngs):
            self.encoder = nnx.Linear(dim, dim, rngs=rngs)

        def __call__(self, x, rng):
            return self.mask_and_encode(x, rng)

        def mask_and_encode(self, x, rng):
            keep = jax.random.bernoulli(jax.random.key(0), 0.5, x.shape)
            return jnp.where(keep, x, 0.0)

    @nnx.jit
    def step(model, x, rng):
        return model(x, rng)

    model, x = Masker(8, nnx.Rngs(0)), jnp.ones(8)
    first, second = step(model, x, jax.random.key(1)), step(model, x, jax.random.key(2))
    assert bool((first == second).all()) and 0 < int((first == 0).sum()) < 8
