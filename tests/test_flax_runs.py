"""A key handed to Flax Linen runs: only two runs of one module draw the same numbers (JAX201).

The facts the rule's page states are checked against Flax and JAX where they are installed."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source
from marks import family_marks

marked = family_marks(r"JAX2\d\d")
CODES = {"JAX201", "JAX202", "JAX203", "JAX207"}

CASES = {
    "one rngs dict for two modules": """
        import jax

        def encode_then_train(vae, model, params, x, key):
            key, dropout = jax.random.split(key)
            z = vae.apply(params["vae"], x, method=vae.reparametrize, rngs={"dropout": dropout})
            return model.apply(params["model"], z, rngs={"dropout": dropout}), key
        """,
    "a helper running one module, then another module": """
        import jax

        def main(patch_pca, model, images, key):
            def encode(images, rng):
                return patch_pca.apply({}, images, method=patch_pca.encode, rngs=rng)

            _, rng_dropout = jax.random.split(key)
            rng_dropout = {"dropout": rng_dropout}
            tokens = encode(images, rng_dropout)
            return model.apply({}, tokens, rngs=rng_dropout)
        """,
    "two inits of one module: a target network": """
        import flax.linen as nn
        import jax

        class Critic(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(1)(x)

        def build(obs, seed):
            rng, critic_key = jax.random.split(jax.random.PRNGKey(seed))
            critic_def = Critic()
            critic = critic_def.init(critic_key, obs)
            target = critic_def.init(critic_key, obs)
            return critic, target, rng
        """,
    "inits of two modules given one key, through a helper": """
        import flax.linen as nn
        import jax

        def create(model_def: nn.Module, key, x):
            return model_def.init(key, x)

        def build(critic_def, value_def, obs, seed):
            rng, key = jax.random.split(jax.random.PRNGKey(seed))
            critic = create(critic_def, key, obs)
            value = create(value_def, key, obs)
            target = create(value_def, key, obs)
            return critic, value, target, rng
        """,
    "inits of two modules given one key through a helper, both making an MLP_0": """
        import flax.linen as nn
        import jax

        class MLP(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(8)(x)

        class Actor(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(2)(MLP()(x))

        class Value(nn.Module):
            @nn.compact
            def __call__(self, x):
                return MLP()(x)

        class Critic(nn.Module):
            @nn.compact
            def __call__(self, x):
                return MLP(name="torso")(x)

        def create(model_def: nn.Module, inputs):
            return model_def.init(*inputs)

        def build(obs, seed):
            rng = jax.random.PRNGKey(seed)
            actor = create(Actor(), [rng, obs])
            critic = create(Critic(), [rng, obs])  # JAX207 (its MLP sits at `torso`: other paths)
            value = create(Value(), [rng, obs])  # JAX201
            return actor, critic, value
        """,
    "inits of two modules given one key, one of them lifted by nn.vmap": """
        import flax.linen as nn
        import jax

        class Critic(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(1)(x)

        class DoubleCritic(nn.Module):
            @nn.compact
            def __call__(self, x):
                VmapCritic = nn.vmap(Critic, variable_axes={"params": 0}, split_rngs={"params": True},
                                     in_axes=None, axis_size=2)
                return VmapCritic()(x)

        class Actor(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(2)(x)

        def build(obs, seed):
            rng = jax.random.PRNGKey(seed)
            actor = Actor().init(rng, obs)
            critics = DoubleCritic().init(rng, obs)  # JAX207
            return actor, critics
        """,
    "two runs of one module draw the same numbers": """
        import jax

        def encode_decode(autoencoder, variables, x, key):
            key, noise = jax.random.split(key)
            z = autoencoder.apply(variables, x, method=autoencoder.encode, rngs={"noise": noise})
            y = autoencoder.apply(variables, z, method=autoencoder.decode, rngs={"noise": noise})  # JAX201
            return y, key
        """,
    "one module run twice through a helper": """
        import jax

        def loss(model, params, x, rng):
            return model.apply({"params": params}, x, rngs={"dropout": rng})

        def twice(m, params, x, rng):
            rng, sub = jax.random.split(rng)
            return loss(m, params, x, sub) + loss(m, params, x, sub), rng  # JAX201
        """,
    "a key drawn from and handed to a Flax run: the run's keys are folded": """
        import jax

        def noisy(model, params, x, rng):
            y = model.apply({"params": params}, x, rngs={"dropout": rng})
            return y + jax.random.normal(rng, y.shape)  # JAX207
        """,
    "a Flax init, then a split of the same key: no child is a key the init draws with": """
        import flax.linen as nn
        import jax

        def train(network: nn.Module, x, rng):
            params = network.init(rng, x)
            rng, sub = jax.random.split(rng)  # JAX207
            return params, sub
        """,
    "the same dropout key in every step of a loop": """
        import jax

        def fit(model, params, batches, seed):
            rng = jax.random.PRNGKey(seed)
            for x in batches:
                params = model.apply(params, x, rngs={"dropout": rng})  # JAX203
            return params
        """,
    "a TrainState's apply_fn runs its module": """
        import jax

        def twice(state, x, rng):
            a = state.apply_fn({"params": state.params}, x, rngs={"dropout": rng})
            b = state.apply_fn({"params": state.params}, x, rngs={"dropout": rng})  # JAX201
            return a + b

        def split_between(state, x, rng):
            rng, dropout = jax.random.split(rng)
            a = state.apply_fn({"params": state.params}, x, rngs={"dropout": dropout})
            b = state.apply_fn({"params": state.params}, x, rngs={"dropout": rng})
            return a + b
        """,
    "a key put in a dict of streams after its split is used where it is written": """
        import jax

        def init_weights(module, rng, x):
            params_rng, dropout_rng = jax.random.split(rng)
            rngs = {"params": params_rng, "dropout": rng}  # JAX202
            return module.init(rngs, x)

        def handed_after_split(module, rng, x):
            rngs = {"params": rng}
            params_rng, dropout_rng = jax.random.split(rng)
            return module.init(rngs, x), dropout_rng  # JAX202
        """,
    "one key for the parameters and the dropout stream of an init": """
        import jax

        def init_weights(module, rng, x):
            init_rng, dropout_rng = jax.random.split(rng)
            return module.init({"params": init_rng, "dropout": init_rng}, x), dropout_rng  # JAX207

        def three_streams_for_init(module, rng, x):
            streams = {"params": rng, "dropout": rng, "noise": rng}  # JAX207
            return module.init(streams, x)

        def abstract_init(module, rng, x):
            return jax.eval_shape(module.init, {"params": rng, "dropout": rng, "noise": rng}, x)  # JAX207

        def three_streams_applied(module, variables, rng, x):
            return module.apply(variables, x, rngs={"params": rng, "dropout": rng, "noise": rng})  # JAX207  # JAX201

        def split_between_streams(module, rng, x):
            init_rng, dropout_rng = jax.random.split(rng)
            return module.init({"params": init_rng, "dropout": dropout_rng}, x)
        """,
    "a Haiku init is no Flax run": """
        import haiku as hk
        import jax

        def build(forward, x, seed):
            net = hk.transform(forward)
            key = jax.random.PRNGKey(seed)
            params = net.init(key, x)
            noise = jax.random.normal(key, x.shape)  # JAX201
            return params, noise

        def target(forward, x, seed):
            net = hk.transform(forward)
            key = jax.random.PRNGKey(seed)
            params = net.init(key, x)
            target_params = net.init(key, x)  # a copy, as for a Flax module
            return params, target_params
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    source = textwrap.dedent(CASES[name])
    found = {(f.start.row, f.code) for f in lint_source(source, "case.py", CODES)}
    assert found == marked(source)


flax = pytest.importorskip("flax")


def _modules():
    import flax.linen as nn
    import jax

    class Noisy(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dropout(0.5, deterministic=False)(nn.Dense(4)(x))

        def root_key(self):
            return self.make_rng("dropout")

    class Other(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.Dense(4, name="proj")(x)
            return nn.Dropout(0.5, deterministic=False, name="drop")(h)

    return jax, Noisy, Other


def test_flax_folds_the_module_path_into_the_key():
    jax, Noisy, Other = _modules()
    import jax.numpy as jnp

    key, x = jax.random.PRNGKey(0), jnp.ones((1, 4))
    first = Noisy().init(key, x)["params"]["Dense_0"]["kernel"]
    copy = Noisy().init(key, x)["params"]["Dense_0"]["kernel"]
    other = Other().init(key, x)["params"]["proj"]["kernel"]
    assert jnp.array_equal(first, copy)  # two inits of one module: a copy
    assert not jnp.array_equal(first, other)  # another module's layers sit at other paths
    identity = {"params": {"Dense_0": {"kernel": jnp.eye(4), "bias": jnp.zeros(4)}}}
    identity_other = {"params": {"proj": {"kernel": jnp.eye(4), "bias": jnp.zeros(4)}}}
    masks = [Noisy().apply(identity, jnp.ones((1, 64, 4)), rngs={"dropout": key}) for _ in range(2)]
    assert jnp.array_equal(masks[0], masks[1])  # two runs of one module draw the same numbers
    elsewhere = Other().apply(identity_other, jnp.ones((1, 64, 4)), rngs={"dropout": key})
    assert not jnp.array_equal(masks[0], elsewhere)
    # The key a layer draws from is neither the key given nor a child a split or small fold_in makes.
    drawn = Noisy().apply(identity, method=Noisy.root_key, rngs={"dropout": key})
    made = [key, *jax.random.split(key, 4), *(jax.random.fold_in(key, i) for i in range(4))]
    assert not any(jnp.array_equal(drawn, k) for k in made)


def test_modules_making_a_submodule_at_one_path_draw_its_parameters_alike():
    # The case's own program: the value critic's `MLP_0` is the actor's, weight for weight; the
    # critic's, at `torso`, is not.
    import jax.numpy as jnp

    program: dict = {}
    exec(textwrap.dedent(CASES["inits of two modules given one key through a helper, both making an MLP_0"]), program)
    actor, critic, value = program["build"](jnp.ones((1, 4)), 0)
    first_layer = actor["params"]["MLP_0"]["Dense_0"]["kernel"]
    assert jnp.array_equal(first_layer, value["params"]["MLP_0"]["Dense_0"]["kernel"])
    assert not jnp.array_equal(first_layer, critic["params"]["torso"]["Dense_0"]["kernel"])


def test_jax_checker_does_not_count_a_flax_run_as_a_use():
    jax, Noisy, Other = _modules()
    import jax.numpy as jnp
    KeyReuseError = jax.errors.KeyReuseError

    x = jnp.ones((1, 4))
    with jax.debug_key_reuse(True):
        key = jax.random.key(0)
        variables = Noisy().init(key, x)
        Other().init(key, x)
        Noisy().apply(variables, x, rngs={"dropout": key})
        jax.random.split(key)
        with pytest.raises(KeyReuseError):
            jax.random.normal(key)


UPDATES = """\
    import jax


    def update_actor(key, actor, batch):
        def loss_fn(params):
            out = actor.apply_fn({"params": params}, batch, training=True, rngs={"dropout": key})
            return out.mean()

        grads = jax.grad(loss_fn)(actor.params)
        return actor.apply_gradients(grads=grads)


    def evaluate(key, actor, batch):
        return actor.apply_fn({"params": actor.params}, batch)
    """

LEARNER = """\
    import jax
    from pkg.updates import evaluate, update_actor


    @jax.jit
    def update(rng, actor, batch):
        actor = update_actor(rng, actor, batch)
        return rng, actor  # JAX201


    @jax.jit
    def update_split(rng, actor, batch):
        rng, key = jax.random.split(rng)
        actor = update_actor(key, actor, batch)
        return rng, actor


    @jax.jit
    def score(rng, actor, batch):
        return rng, evaluate(rng, actor, batch)
    """


def test_a_helper_whose_only_draws_are_flax_runs_consumes_its_key(cli, make_files):
    """A module with no `jax.random` call whose function hands its key to a Flax run (`rngs=`)
    still answers for that key: returning it makes the caller's next step repeat the run's draws."""
    root = make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/updates.py": UPDATES, "pkg/learner.py": LEARNER})
    findings = cli("check", "--no-cache", "--output-format", "json", "pkg/learner.py").json
    assert {(f["location"]["row"], f["code"]) for f in findings} == marked(LEARNER)
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax
    from flax.training.train_state import TrainState

    class Noisy(nn.Module):
        @nn.compact
        def __call__(self, x, training: bool = False):
            return nn.Dropout(0.5, deterministic=not training)(nn.Dense(64)(x))

    import sys
    sys.path.insert(0, str(root))
    try:
        from pkg import learner
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            del sys.modules[name]
    x = jnp.ones((1, 4))
    module = Noisy()
    state = TrainState.create(apply_fn=module.apply, params=module.init(jax.random.key(0), x)["params"], tx=optax.sgd(0.1))
    masks = {}
    for step in (learner.update, learner.update_split):
        rng, first = step(jax.random.key(1), state, x)
        _, second = step(rng, state, x)  # the next step, given the key the first returned
        masks[step.__name__] = [jax.tree_util.tree_leaves(s.params) for s in (first, second)]
    returned, split = masks["update"], masks["update_split"]
    assert all(jnp.array_equal(a, b) for a, b in zip(*returned))  # the same dropout masks: the same update
    assert not all(jnp.array_equal(a, b) for a, b in zip(*split))


# The keys a run is given only when training: a call that leaves `train` to its default (or
# passes a literal) decides which arm of the conditional expression the run gets.
TRAIN_ONLY = """
    import jax

    class Agent:
        def __init__(self, state):
            self.state = state

        def forward(self, x, rng, train=True):
            return self.state.apply_fn(
                {"params": self.state.params}, x, rngs={"dropout": rng} if train else {}, train=train
            )

        def loss(self, x, rng):
            noise = jax.random.normal(rng, x.shape)
            return self.forward(x + noise, rng)
    """


def test_a_run_given_keys_only_when_training_reads_the_arm_the_call_decides():
    conditional = textwrap.dedent(TRAIN_ONLY)
    plain = conditional.replace('rngs={"dropout": rng} if train else {}', 'rngs={"dropout": rng}')
    evaluating = conditional.replace("self.forward(x + noise, rng)", "self.forward(x + noise, rng, train=False)")

    def found(source: str) -> set:
        return {(f.start.row, f.code) for f in lint_source(source, "case.py", CODES)}

    assert found(conditional) == found(plain) != set()
    assert found(evaluating) == set()  # no key reaches the run
