"""JAX201: the same PRNG key consumed twice on one path."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, register
from jaxlint.rules.randomness import KeyFlowRule, child_of, path_of, split_text


@register
class KeyReuse(KeyFlowRule):
    code = "JAX201"
    name = "key-reuse"
    summary = "The same PRNG key is consumed twice on one path"
    what = """
        Checks for a PRNG key that is consumed a second time on one path: two samplers drawing
        from the same key, or one key handed to two functions that sample from it (`init(key)`
        then `dropout(key)`), in eager and traced code alike. Both draws get the same bits, so
        they are not independent, and training or sampling is silently biased. Split the key and
        give each part to one consumer.
        """
    decisions = """
        **Which values are keys.**

        - A value made by `jax.random.key`, `PRNGKey`, `split`, `fold_in` or `wrap_key_data`.
        - A name the code uses as one: a parameter passed to a sampler, or a name `key`, `rng`,
          `subkey`, `prng_key` or `*_rng`, unless the function uses it as a dictionary key or a
          string (an index, compared with `==`, formatted). Testing it against None (`if rng is
          None:`) is how an optional key is used, not a string.
        - A name of that kind taken out of a record: unpacked from it (`x, rng = carry`) or read
          from a field of a key's name (`rng = carry.rng`), the key a loop's state carries.
        - A key held on `self`, or on a parameter the function never rebinds (`state.key` of a
          state record passed in), followed within one function. A key held on a module's object
          or on a local object is not followed: its attribute may be a property that hands out a
          fresh key on every read.

        **A key-like name that the code shows to be data is not a key.** JAX's keys support none
        of the following, so the attention `key` of `query, key, value` is not a PRNG key:

        - a jaxtyping annotation of an array of numbers (`key: Float[Array, "b s h d"]`,
          `Int32[...]`, `Bool[...]`);
        - use as an operand of arithmetic (`query @ key.T`, `key * scale`), or as an argument of
          array math (`jnp.einsum`, `jnp.matmul`, `jnp.dot`, `jax.nn.dot_product_attention`);
        - passed to a function of the module that uses the parameter receiving it so
          (`apply_spe(key, spe)` with `def apply_spe(keys, spe): return spe * keys[..., None]`);
        - a parameter that every call in the module passes data (a sampler's draws,
          `jnp.ones(...)`, arithmetic);
        - a parameter whose default is a number or a string (`key=0`: an integer seed, which
          `jax.random` rejects as a key) that the function does not pass to a sampler.

        A name passed to a sampler is a key, whatever else the function does with it.

        **A key-like name that the code shows to be a generator object is not a key.** A key is
        an immutable array: a traced key takes no attribute, and no draw reads one. A value that
        does is a GalSim-style deviate, a NumPy `Generator` or a `PRNGSequence`, which advances
        on every draw. The evidence is an attribute stored on it (`rng._state = s`), or read
        from it that no JAX array has (`rng._state.split_one()`, `rng.normal(size=3)`,
        `rng.integers(10)`), in the function itself or in a function or class constructor of the
        module it is handed to.

        - A function of another module of the project that shows a parameter to be such an
          object does not consume what it is passed there.
        - When the module shows a parameter name to be such an object in one function, and never
          draws from a value of that name with `jax.random` nor makes one with a key call, a
          parameter of that name elsewhere in the module (a key by its name alone) is taken to
          be the same kind of object.

        **What consumes a key.**

        - A sampler (`jax.random.normal`, `bernoulli`, `randint`, ...).
        - A function of the same module that consumes the parameter the key is passed in.
        - A function of another module of the project that draws from the parameter, wherever
          the call is: a module that hands a key-named value to one is searched even if it never
          calls `jax.random` itself. One that draws from it on some path only, under a test the
          call does not decide, is not a first use: a fallback state built only when a flag
          holds, then `from_scratch(rng)` only when no state came back, share no draws.
        - A function whose `*args` or `**kwargs` collect the key (or a list, tuple or dict holding
          it), when it hands them on (`return self.apply_fn(variables, *args, **kwargs)`): what
          they collect is followed into that call as a named parameter would be.
        - Code outside `jax.random` known to draw from a key: an Equinox layer's `key=`, Flax
          NNX's `nnx.Rngs(key)`, a distribution's `sample(seed=key)`, an initialiser called with
          `(key, shape)`, a module's `init(key, x)`. A module that hands a key-named value to one
          of these is searched even if it never calls `jax.random`.
        - Any other function the key is passed to directly (`model.init(key, x)`). The name is
          evidence enough there when nothing says the value is data: code that takes a `key` it
          cannot see into draws from it (`Linear(d, d, key=key)`).
        - Constructing an object of a class of the project (`Sampler(key)`): it may draw from what
          it keeps later, in any method, so it consumes the keys passed to it, except a key
          `__init__` neither draws from nor splits and keeps only under an attribute no other
          method of the class reads (a manager that stores a key it never uses): nothing ever
          draws from that one.
        - A method called through `self` that the class inherits (`self.finalize(params, key)`):
          it is the one its bases define, searched depth first, left to right, through bases of
          the module and of the project's other modules, and it consumes what that definition
          consumes.
        - A submodule's call (`self.mix(x, key=key)`): it runs the `__call__` of the class the
          attribute holds. That class is known when every assignment to the attribute in the
          class's methods calls one class of the project (`self.mix = PartialMix(...)`), or,
          with none, from the field's annotation (`mix: PartialMix`). A key that `__call__`
          never draws from (it ignores it, or only tests it against None) is not consumed; one
          it draws from on some path is, since which path runs turns on the instance's fields.
          An attribute whose class is chosen at run time, or is another library's, is a call
          jaxlint cannot see, which consumes the key (see "Known limitations").
        - A record built around the key, a NamedTuple or dataclass of the module included
          (`return State(x, key=key)` after drawing from `key`): a state that carries a spent
          key back to its caller hands on a key already drawn from, which the caller's next step
          draws from again. A record rebuilt with a field changed (`state.replace(rng=key)`,
          `state._replace(key=key)`, `dataclasses.replace`) keeps the key and draws nothing:
          handed to other code (a checkpoint) it hands on no key; returned spent, also inside
          another record (`self.replace(state=new_state)`), it is reported where the key was put
          in, or, put in first and consumed after, where it is consumed. A copy that changes
          other fields (`ts = ts.replace(last_obs=obs)`) keeps the key; one that sets the field
          again (`ts.replace(rng=new_key)`) holds the new key instead. Reading the field back
          (`split(ts.rng)`) reads that key: drawn from before, it is reused, and the message
          names it as it was put in (`rng`), since a frozen record takes no split in place.
        - A function that returns a key it has consumed on every path, as its result or an item
          of the tuple it returns (`return key, params` after `jax.grad(loss)(params, key)`;
          `state = (params, key)` then `return state`), or on the paths through a branch (`if
          update_actor:`) the return does not test again, is reported at the return, whoever its
          callers are: the contract of a function handing a key back is that the caller draws
          from it next, so the caller's next draw repeats this one. Its callers take what it
          returns as a fresh key, so the one bug is reported once.
        - A function nested in this one that reads its keys, handed to code jaxlint cannot see
          (`actor.apply_gradient(loss_fn)`, or by keyword: `actor.apply_loss_fn(loss_fn=loss_fn)`),
          is taken to be called there: it consumes those keys
          as its own analysis finds, as a key handed over directly would be. Such a function reads
          a key when it runs, though, which may be later (a solver's term, kept and run after): a
          name the function around binds again after the hand-off may then hold another key, so
          that key is not counted as consumed there. Handed to a function jaxlint can see
          (`update_by_loss_grad(state, loss_fn)`), it is called there when that function calls
          the parameter it fills or hands it on to a call (`jax.value_and_grad(loss_fn)`); one
          that only keeps it (`registry.append(fn)`) does not call it.
        - A key given as an operand of `lax.cond(pred, f, g, key)` or `lax.switch(i, [f, g],
          key)` is handed to every branch, since JAX traces them all: it is consumed as the
          branch that consumes it most does, as a call of that branch would be (the branches
          given through a name, `branches = [keep]` then `branches.append(draw)`, are the items
          it is bound to and those added to it). Branches that
          ignore it (`def keep(_rng): return x`) leave it unused; where a branch is not a
          function of the module, the call is code jaxlint cannot see. A key the branches read
          from the function around them (`lax.cond(done, lambda _: reset(key), lambda _: s,
          None)`) is consumed at the call the same way: as the branch that consumes it most
          does, once, since one branch runs.
        - A tuple or list of keys written out in the call (`setup((key, actor_key, critic_key))`)
          hands each item to the parameter it fills; where the function reads the elements
          apart (`key, actor_key, critic_key = keys`), each item is consumed as its element is,
          so a key the function never touches stays fresh.
        - A function that draws from a key under a setting of the code around it, a test of
          names it neither takes nor binds (`if config.exploration_noise != 0:` in a policy a
          factory makes), consumes the key: every call takes that side while the setting holds.
          A test the call decides (`deterministic=True`) stays undecided, as above.
        - A function jaxlint can see that draws from a key on some of its paths only, under a test
          the call does not decide (`if cfg.fallback_to_scratch:`, `if train:` given a variable),
          consumes the key on those paths: a later use in the caller is reported as a reuse on
          them, as it is after a call into code jaxlint cannot see. Not where a condition around
          the later use tests what that function returned (`restored or fallback(cfg, key)`,
          `if state is None:`): which path it took then says whether the key is drawn again, and
          the two draws may exclude each other.
        - A function that consumes a key in the body of a loop, under no test (`for batch in
          loader: rng, drop_rng = jax.random.split(rng)`), consumes it: only a loop that never
          runs (over no batch) leaves it whole, which is not what the loop is for. A call that
          makes the loop run zero times (`n=0` for `range(n)`) consumes it not at all.
        - A function that returns a function of its own that reads the key (`return noisy_net if
          noisy else dense_net`, a closure drawing from the factory's `key`) hands the key on:
          the function it returns draws from it whenever it is called, so the factory's call
          consumes the key as a call of code jaxlint cannot see does.
        - A dict of keys bound to a name (`rngs = {"params": k1, "dropout": k2}`) and handed to a
          call hands that call its keys, as the literal itself would: `model.init(rngs, x)` then
          `Trainer(k1, ...)` gives `k1` to two consumers. So does a tuple or list of arguments
          bound to a name, handed on or spread (`args = (kind, rng, shape)` then
          `create_model(*args)`).
        - One key in two slots of a dict of named streams (Flax's `rngs={"dropout": k, "noise":
          k}`): each stream is derived from its key the same way, so the two draw the same
          numbers. A `params` slot is not counted here: the parameters stream draws only while
          parameters are made, when what the other streams draw is discarded
          (`init({"params": k, "dropout": k}, x)` makes the parameters `k` alone makes), and two
          slots of the dict an `init` is given repeat only numbers its discarded forward pass
          drew; the key is used twice all the same, which JAX207 reports.
        - `jax.random.split(key)` after `jax.random.fold_in(key, i)`: in JAX (with its default
          `jax_threefry_partitionable`), `fold_in(key, i)` is the same key as `split(key, n)[i]`
          (for `i` below `n`).

        **What does not consume a key.** Looking at a key consumes nothing, as in JAX's own
        checker: `jax.random.fold_in`, `jax.random.key_data`, `jax.random.clone`, `.shape`,
        `jax.debug.print`, comparisons and returning it are fine, and so is a name handed to an
        API that takes a name (`hk.get_state(key, ...)`, `hk.set_state(key, v)`: a Haiku state's
        name, whatever the variable is called). Nor does placing or reshaping
        it: `jax.device_put(key)`, `jnp.asarray(key)`, `jnp.stack(keys)`, `keys.reshape(n, -1)`
        hand back the same keys, and a use of the copy is a use of the key.

        **Only uses that both draw numbers are reported.** Two uses of one key repeat numbers when
        both draw (JAX 0.10.2): two draws from one key share a prefix whatever their distributions
        and shapes, and a draw from a split key is computed from the very words its children are
        made of (`bits(k)[i]` is the exclusive or of `split(k)[i]`'s two words). A split draws
        through its children: one whose children nobody draws from (overwritten or deleted
        before any read, or handed only to functions that keep or discard them) draws nothing,
        and neither does a function that only splits the key and hands back children its caller
        drops (`evaluator, (params, eval_keys) = evaluator_setup(key)` with `eval_keys` rebound
        before it is read), nor a draw whose numbers only serve as an `init`'s example inputs,
        made by `jax.random`, a function of the project or code not seen (`init_x =
        env.observation_space.sample(rng)`, then `network.init(rng, init_x)`: the parameters
        depend on shapes; a name bound to an `init`, or unpacked from what a
        function of the module returns with one at that position, `embed_init, proj_init =
        init_fns()`, is one; an `init` given only the example, a replay buffer's
        `buffer.init(timestep)`, takes it first; the numbers may reach it through names,
        unpacking and tree maps, and be otherwise read only for their shape). A reuse where
        one of the two uses draws nothing is JAX207's (off by default): JAX's checker still
        raises there.

        **Branches and flags.**

        - A key consumed in one branch of an `if` and again after the branches meet is reused on
          the path that took that branch, and is reported, unless the later use sits under a
          condition that tests one of the same names: `if train: ...` then `if not train: ...`
          are two exclusive cases. A use after an `if` whose other arm returns, raises, or leaves
          the loop (`if not restored: return params`) sits under that `if`'s condition too.
        - The later operands of `and` and `or` run as a branch on the first does: `params =
          restored or init_params(key)` consumes `key` when `restored` did not hold, so a draw
          from `key` after it is reported, and one under `if restored:` (or after `if not
          restored: return`) is not.
        - Two conditions test one thing when they read one of the same names, or the same
          attribute of one (`config.noise` twice): `if config.noise:` then `if config.dropout:`
          test different fields, both may hold, and a key drawn under each is reported.
        - A branch that a literal test rules out never runs (`if False:`, `x if False else
          None`): what it does to a key is not counted.
        - Draws each multiplied by a test of one value for a different constant
          (`randint(key, ...) * (kind == 0)`, then `randint(key, ...) * (kind == 1)`) are the
          branchless form of `if kind == 0: ... elif kind == 1: ...`: at most one product keeps
          its draw, and they are not reported. Masks that may both hold (`kind >= 0`) are.
        - A function that consumes its key only when a flag asks for it is not reported at its
          call sites, unless the key was drawn from, or handed to a call that consumes it, before
          the call: on the path that draws, the draw repeats (`uniform(key)` then
          `choose_point(key, mask)`, which draws where the mask holds a point; `init(rng)` then
          `train_epoch(state, rng, loader)`, which splits `rng` once the loader yields a batch). A flag the call gives as a literal is decided (`train=False`). A key
          split before the call is JAX202's.
        - A function that makes its own key when given None (`if key is None: key =
          jax.random.key(0)`, or `key = key if key is not None else jax.random.key(0)`) or a
          seed (`if isinstance(key, int): key = jax.random.key(key)`), or draws only when
          given a key (`if key is not None:`), consumes the key a call passes it, since that
          call does not take the branch that finds no key. A generator (`def key_iterator(key):
          while True: key, sub = split(key); yield sub`) consumes what it has consumed at
          each `yield`, though its loop never ends. A function whose every `return` puts one
          key at two places of a tuple (`return key, key`) hands its caller that key twice:
          `key, rng = random_split(rng)` binds both names to it. One key given to two
          parameters of a function seen that draws from both on every path (`mixup(key_0,
          key_0, x)`) is reused at that call. A comparison of a parameter with a number
          (`if alpha > 0:`) is decided where the call gives it a literal, or leaves it to a
          literal default, as a flag is.
        - A key handed to a Flax Linen run is not drawn from there: `m.apply(..., rngs={...})`,
          `state.apply_fn(..., rngs={...})` (the module's `apply` a `TrainState` holds),
          `m.init(key, x)` (or `init_with_output`) of a module the code declares as a
          `flax.linen.Module`, builds from a class deriving from one, or runs with `rngs=` in the
          same function. Flax gives every layer the key with a SHA-1 hash of the layer's module
          path and a per-call counter folded in (`jax.random.fold_in`, which JAX's checker does
          not count as a use of the key), so only two runs of one module draw the same numbers.
        - A function that hands its key to a Flax run consumes it there, in a module with no
          `jax.random` call as well: a caller that returns the key it passed makes its next
          step repeat the run's draws (the same dropout masks at every step). Keys given only
          when training (`rngs={"dropout": rng} if train else {}`) are given where the call
          decides the flag (`train` left to its default `True`, or passed as a literal).
        - Two runs of one module are reported (`m.apply(v, x, method=m.encode, rngs=r)` then
          `m.apply(v, z, method=m.decode, rngs=r)`); one key handed to runs of two different
          modules (one `rngs` dict for a VAE and the model trained on its codes), directly or
          through functions of the project (`Model.create(critic_def, inputs=[key, x])`, a class
          method of another module included), is not, except two `init`s of modules whose
          classes the project defines and that both make a parameter-drawing layer at one path
          (the module a helper initialises is the one its caller passes; a layer's class may
          come from any module of the project): Flax names a layer made without `name=` `{Class}_{n}`, counting per class in the order
          made, so an actor and a critic that each start with an `MLP` (or a `Dense`) both draw
          its parameters at `MLP_0`, the same numbers (a prefix where shapes differ). Where one
          of the two classes makes a module a Flax transform lifts (`nn.vmap(Critic, ...)`),
          whose layers it names and keys its own way, no path is known to be shared: the key is
          used twice and no numbers are shown to repeat, JAX207's.
        - Two `init`s of one module with one key build the same parameters twice: a copy, which
          is how a target network starts (`target = Model.create(critic_def, [critic_key, x])`
          after the critic), and is not reported. So are two `init`s of one module on the same
          inputs in any framework (`net.init(key, x)` twice for a Haiku `net`), none rebound in
          between.
        - A key drawn from, split or given to other code as well as to a Flax run repeats none
          of the run's numbers, and JAX's checker does not count the run as a use: JAX207's, off
          by default.

        **One order for several arrays.** One key permuting two different arrays
        (`jax.random.permutation(key, x)` then `jax.random.permutation(key, y)`, or `shuffle`)
        gives both the same order, which keeps their rows aligned: that is why such code uses
        the key twice, and a second key would break it. So does a function of the module whose
        only use of the key is to permute, called on each array or mapped over a tree
        (`tree_map(convert, storage)`, then `convert(advantages)`, where `convert` permutes with
        the key around it), and so do two calls of one function of the module that draws only
        positions from the key (a `randint` crop offset, an order), each given a different array
        (`crop(key, image)`, then `crop(key, mask)`: the mask stays on its image). Not reported,
        though JAX's checker raises there; a helper of another module, or one that splits the
        key and hands the children to a cropping function (`vmap(crop)(split(key, n), images)`),
        is not seen to draw only positions. Permuting (or cropping) the same array twice, two
        orders of a size (`permutation(key, n)`), two `choice`s (samples, not
        orders: two of different arrays are two correlated samples), and a function that also
        draws from the key (noise) are reported.
        """
    limits = (
        "Only two uses that both draw numbers are reported: a reuse where one use draws nothing is"
        " JAX207's, off by default.",
        "A key-like name the code shows to be data (an attention `key`) or a generator object is not"
        " a key.",
        "A later use under a condition testing one of the same names as the first is an exclusive"
        " case: not reported.",
        "Reuses on purpose are not reported: two `init`s of one module (a target network), one key"
        " permuting (or cropping) two different arrays (rows kept aligned).",
    ) + KeyFlowRule.limits
    why = """
        A key is a seed, not a stream: the same key always gives the same bits. Two draws from one
        key are not independent (the dropout mask is the same as the initialisation noise, the
        noise added to a sample is the noise that picked its timestep), which silently biases
        training and sampling. JAX's key reuse checker (`jax.config.update("jax_debug_key_reuse",
        True)`) raises `KeyReuseError` at the second use. Split the key and use each part once.
        The checker sees typed keys (`jax.random.key`); legacy `jax.random.PRNGKey` keys are
        reused just the same, it only cannot see them.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def corrupt(x, key):
            noise = jax.random.normal(key, x.shape) * 0.1
            drop = jax.random.bernoulli(key, 0.9, x.shape)  # JAX201
            return jnp.where(drop, x + noise, 0.0)
        """,
        """
        import jax

        def init(key, d_in, d_out):
            return {"w": jax.random.normal(key, (d_in, d_out)) * 0.1}

        def dropout(key, x, rate):
            return x * jax.random.bernoulli(key, 1 - rate, x.shape) / (1 - rate)

        def main(x):
            key = jax.random.key(0)
            params = init(key, 4, 2)
            h = dropout(key, x, 0.1)  # JAX201
            return h @ params["w"]
        """,
        """
        import jax
        import jax.numpy as jnp

        def q_sample(x0, t, key, betas):
            alpha_bar = jnp.cumprod(1.0 - betas)[t]
            noise = jax.random.normal(key, x0.shape)
            return jnp.sqrt(alpha_bar) * x0 + jnp.sqrt(1.0 - alpha_bar) * noise

        @jax.jit
        def diffusion_batch(x0, key, betas):
            t = jax.random.randint(key, (), 0, betas.shape[0])
            return q_sample(x0, t, key, betas)  # JAX201
        """,
        """
        import jax

        def train(model, x, seed):
            rng = jax.random.PRNGKey(seed)
            params = model.init(rng, x)
            return model.apply(params, x, rngs={"dropout": rng})  # JAX201
        """,
        """
        import jax

        def augment(x, key, train):
            if train:
                x = x + 0.1 * jax.random.normal(key, x.shape)
            keep = jax.random.bernoulli(key, 0.9, x.shape)  # JAX201
            return x * keep
        """,
        """
        import jax

        def random_card(key):
            key = jax.random.split(key)[0]
            card = jax.random.choice(key, 10)
            return card, key  # JAX201

        def draw_hand(key):
            first, key = random_card(key)
            second, key = random_card(key)
            return first + second, key
        """,
        """
        import equinox as eqx

        def autoencoder(key):
            encoder = eqx.nn.Linear(2, 4, key=key)
            decoder = eqx.nn.Linear(4, 2, key=key)  # JAX201
            return encoder, decoder
        """,
        """
        import flax.linen as nn

        class Actor(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(2)(nn.relu(nn.Dense(64)(x)))

        class Critic(nn.Module):
            @nn.compact
            def __call__(self, x):
                h = nn.relu(nn.Dense(64)(x))
                return nn.Dense(1)(h)

        def create(key, obs):
            actor = Actor().init(key, obs)
            critic = Critic().init(key, obs)  # JAX201
            return actor, critic
        """,
        """
        import jax

        def encode_decode(autoencoder, variables, x, key):
            key, noise = jax.random.split(key)
            z = autoencoder.apply(variables, x, method=autoencoder.encode, rngs={"noise": noise})
            y = autoencoder.apply(variables, z, method=autoencoder.decode, rngs={"noise": noise})  # JAX201
            return y, key
        """,
        """
        import jax

        def init_agent(rng, obs_dim, n_actions):
            # a random action, only to give the replay buffer its shapes
            action = jax.random.randint(rng, (), 0, n_actions)
            rng, _rng = jax.random.split(rng)  # JAX201
            params = {"w": jax.random.normal(_rng, (obs_dim, n_actions)) * 0.1}
            return params, action, rng
        """,
        """
        import jax

        def noisy_layer(w, x, key, train):
            if train:
                x = x + 0.1 * jax.random.normal(key, x.shape)
            key, sub = jax.random.split(key)  # JAX201
            keep = jax.random.bernoulli(sub, 0.9, x.shape)
            return (x * keep) @ w, key
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def corrupt(x, key):
            noise_key, drop_key = jax.random.split(key)
            noise = jax.random.normal(noise_key, x.shape) * 0.1
            drop = jax.random.bernoulli(drop_key, 0.9, x.shape)
            return jnp.where(drop, x + noise, 0.0)
        """,
        """
        import jax
        from jaxtyping import Array, Float

        def init(rng, d):
            return jax.random.normal(rng, (d, d)) / d

        def attention(query, key: Float[Array, "b s h d"], value, sharding):
            # the attention key tensor: data, not a PRNG key
            placed = jax.lax.with_sharding_constraint(key, sharding)
            return jax.nn.dot_product_attention(query, key, value), placed
        """,
        """
        import jax

        def sample(key, shape, kind):
            if kind == "normal":
                return jax.random.normal(key, shape)
            elif kind == "uniform":
                return jax.random.uniform(key, shape)
            return jax.random.laplace(key, shape)

        def noise(key, shape, heavy_tailed):
            if heavy_tailed:
                return jax.random.cauchy(key, shape)
            return jax.random.normal(key, shape)
        """,
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("training",))
        def mlp(params, x, rng, training=False):
            h = x @ params
            if training:
                h = jnp.where(jax.random.bernoulli(rng, 0.9, h.shape), h / 0.9, 0.0)
            return h

        def evaluate(params, x):
            rng = jax.random.key(0)
            train_out = mlp(params, x, rng, training=True)
            eval_out = mlp(params, x, rng, training=False)
            return train_out, eval_out
        """,
        """
        import jax

        def step_keys(key, step):
            data = jax.random.key_data(key)
            jax.debug.print("key {k} has shape {s}", k=data, s=key.shape)
            noise = jax.random.normal(jax.random.fold_in(key, step), (3,))
            dropout = jax.random.bernoulli(jax.random.fold_in(key, step + 1), 0.5, (3,))
            return noise, dropout
        """,
        """
        import jax

        def init_layers(rngs, sizes):
            rngs["params"], sub = jax.random.split(rngs["params"])
            w = jax.random.normal(sub, sizes)
            rngs["params"], sub = jax.random.split(rngs["params"])
            b = jax.random.normal(sub, sizes[-1:])
            return w, b

        def make(key):
            k1, k2, k3 = jax.random.split(key, 3)
            return jax.random.normal(k1), jax.random.normal(k2), k3
        """,
        """
        import jax

        class Deviate:
            def __init__(self, key):
                self.key = key

            def normal(self, shape):
                self.key, sub = jax.random.split(self.key)
                return jax.random.normal(sub, shape)

        def count(rng):
            rng.calls = getattr(rng, "calls", 0) + 1
            return rng.normal(())

        def shoot(objs, rng):
            # each `shoot` advances the deviate: the objects get different photons
            return [obj.shoot(rng) for obj in objs]

        def make(obj, rng):
            n = count(rng)
            return n, obj.shoot(rng)
        """,
        """
        import jax
        from mylib.util import is_prng_key

        def augment(x, key, train):
            assert is_prng_key(key)
            noise_key, keep_key = jax.random.split(key)
            if train:
                x = x + 0.1 * jax.random.normal(noise_key, x.shape)
            return x * jax.random.bernoulli(keep_key, 0.9, x.shape)

        def corrupt(x, key, train):
            if train:
                x = x + 0.1 * jax.random.normal(key, x.shape)
            if not train:
                x = x * jax.random.bernoulli(key, 0.9, x.shape)
            return x

        def same_draws_under_jit(key):
            eager = jax.random.normal(key, (3,))
            compiled = jax.jit(jax.random.normal, static_argnums=1)(key, (3,))
            assert (eager == compiled).all()
        """,
        """
        import flax.linen as nn
        import jax

        def build(critic_def: nn.Module, obs, seed):
            critic_key = jax.random.split(jax.random.key(seed))[1]
            critic = critic_def.init(critic_key, obs)
            target_critic = critic_def.init(critic_key, obs)  # a copy, on purpose
            return critic, target_critic

        def encode_then_train(vae, model, params, x, key):
            rngs = {"dropout": key}
            z = vae.apply(params["vae"], x, rngs=rngs)
            return model.apply(params["model"], z, rngs=rngs)  # another module: other paths
        """,
        """
        import haiku as hk
        import jax
        import jax.numpy as jnp

        class EvalManager:
            def __init__(self, config, rng):
                self.config = config
                self.rng = rng  # kept, never drawn from

            def steps(self):
                return self.config.steps

        def setup(forward, config, key):
            params = hk.transform(forward).init(key, jnp.ones((1, 3)))
            target = hk.transform(forward).init(key, jnp.ones((1, 3)))  # a copy, on purpose
            return params, target, EvalManager(config, key)

        def checkpointed(meta, key, save, steps):
            for _ in range(steps):
                key, sub = jax.random.split(key)
                save(jax.random.normal(sub, (3,)))
                meta = meta.replace(rng=key)  # the record keeps the key
                save(meta)
            return meta
        """,
    )
    demo = JaxDemo(
        """
        import jax

        def init(key, d_in, d_out):
            return {"w": jax.random.normal(key, (d_in, d_out)) * 0.1}

        def dropout(key, x, rate):
            return x * jax.random.bernoulli(key, 1 - rate, x.shape) / (1 - rate)

        def demo():
            key = jax.random.key(0)
            params = init(key, 4, 2)
            h = dropout(key, jax.numpy.ones((3, 4)), 0.1)
            return h @ params["w"]
        """,
        "key-reuse",
    )
    references = (
        "https://docs.jax.dev/en/latest/random-numbers.html",
        "https://docs.jax.dev/en/latest/jax.random.html#key-reuse-checking",
    )

    def check(self, module, report):
        for reuse in module.keys.reuses:
            if reuse.loop is not None or reuse.first is None or reuse.first.kind == "split" or not reuse.dependent:
                continue
            first, name, taken = reuse.first, reuse.name, reuse.renewal or ()
            if first.kind == "fold_in":
                report(
                    reuse.use.node,
                    f"PRNG key `{name}` is split after `jax.random.fold_in` derived a key from it "
                    f"on line {first.call.lineno}: `fold_in(key, i)` is the same key as `split(key, n)[i]`; "
                    "derive every key one way (split once, or fold in distinct data)",
                )
            elif reuse.use.kind == "slot":
                report(
                    reuse.use.node,
                    f"PRNG key `{name}` feeds {first.callee} and {reuse.use.callee} of one dict: each "
                    "stream is derived from its key the same way, so the two draw the same numbers; "
                    "split it and give each stream its own key",
                )
            elif reuse.use.kind == "held":
                report(
                    reuse.use.node,
                    f"PRNG key `{name}` is consumed by {first.callee} here after it was put in the value "
                    f"returned (line {reuse.use.put.lineno}): the caller's next draw from it repeats this "
                    f"one; draw here from a new key ({split_text(name)}, draw from `{child_of(name)}`)",
                )
            elif reuse.use.kind == "return":
                when = f" {path_of(module.tree, reuse.guard, first.call)}" if reuse.guard is not None else ""
                report(
                    reuse.use.node,
                    f"PRNG key `{name}` was consumed by {first.callee} on line {first.call.lineno}{when} and "
                    "is returned: the caller's next draw from it repeats this one; split it and return "
                    f"the new key ({split_text(name)}, draw from `{child_of(name)}`)",
                )
            elif reuse.partial and reuse.guard is None:
                report(
                    reuse.use.node,
                    f"PRNG key `{name}` is consumed here after {first.callee} on line {first.call.lineno}, "
                    "which draws from it on some of its paths: on those it is reused; split it before that "
                    f"call ({split_text(name, taken)}) and hand `{child_of(name, taken)}` to it",
                )
            elif reuse.guard is not None:
                report(
                    reuse.use.node,
                    f"PRNG key `{name}` is consumed here after {first.callee} on line "
                    f"{first.call.lineno} {'may have consumed' if reuse.partial else 'consumed'} it "
                    f"{path_of(module.tree, reuse.guard, first.call)}: on that "
                    f"path it is reused; split it ({split_text(name, taken)}) before the branch",
                )
            elif reuse.renewal is not None:
                # This line already splits (or renews) the key: the fix is at the first use.
                report(
                    reuse.use.node,
                    f"PRNG key `{name}` was already consumed by {first.callee} on line "
                    f"{first.call.lineno}; consuming it again draws correlated numbers: split it before "
                    f"that use, on line {first.call.lineno} ({split_text(name, taken)}), and use "
                    f"`{child_of(name, taken)}` there",
                )
            else:
                report(
                    reuse.use.node,
                    f"PRNG key `{name}` was already consumed by {first.callee} on line "
                    f"{first.call.lineno}; consuming it again draws correlated numbers: split it "
                    f"({split_text(name)}) and use each key once",
                )
