"""Framework entry points: calls that hand a function to a library which runs it under a transformation.

Nothing in the calling module transforms these functions, yet in practice they always run
traced: Haiku runs a transformed function inside `init`/`apply`, optax calls a gradient
transformation's `update` (and a learning-rate schedule) inside the user's jitted step,
NumPyro and BlackJAX trace models and log-densities inside their jitted samplers.  Like
the `__call__` of a Flax or Equinox module (and bodies given to Flax NNX's own loops), such a function is analysed with its array
arguments traced and its Python-typed or defaulted arguments left as they are (a NumPyro
model's arguments all as its caller passes them: `CLOSES_OVER_ARGUMENTS`); the
context is abstract (a Python `if` on an argument raises) but not staged, since whether
the caller jits is not known here.
"""

from __future__ import annotations

# callee -> the positions and keyword names of the functions it runs traced.
ENTRY_POINTS: dict[str, tuple[tuple[int, str], ...]] = {
    "haiku.transform": ((0, "f"),),
    "haiku.transform_with_state": ((0, "f"),),
    "haiku.without_apply_rng": ((0, "f"),),
    "optax.GradientTransformation": ((0, "init"), (1, "update")),
    "optax.GradientTransformationExtraArgs": ((0, "init"), (1, "update")),
    "optax.stateless": ((0, "f"),),
    "optax.stateless_with_tree_map": ((0, "f"),),
    "flax.nnx.scan": ((0, "f"),),
    "flax.nnx.while_loop": ((0, "cond_fun"), (1, "body_fun")),
    "flax.nnx.fori_loop": ((2, "body_fun"),),
    # chex's assertion factory calls the assertion's jittable version only when its arguments
    # hold tracers (`chex.chexify` checks them inside the trace).
    "chex._src.asserts_internal.chex_assertion": ((1, "jittable_assert_fn"),),
    "numpyro.infer.NUTS": ((0, "model"),),
    "numpyro.infer.HMC": ((0, "model"),),
    "numpyro.infer.SA": ((0, "model"),),
    "numpyro.infer.BarkerMH": ((0, "model"),),
    "numpyro.infer.SVI": ((0, "model"), (1, "guide")),
    "numpyro.infer.Predictive": ((0, "model"),),
    "blackjax.nuts": ((0, "logdensity_fn"),),
    "blackjax.hmc": ((0, "logdensity_fn"),),
    "blackjax.mala": ((0, "logdensity_fn"),),
    "blackjax.rmh": ((0, "logdensity_fn"),),
    "blackjax.window_adaptation": ((1, "logdensity_fn"),),
    "blackjax.meads_adaptation": ((0, "logdensity_fn"),),
}

# Samplers that close over the model's arguments: a model runs with the values its caller hands
# to `mcmc.run(key, *args)`, `svi.run(key, steps, *args)` or `Predictive(model)(key, *args)`,
# concrete, while only its sample sites are traced; `MCMC(..., jit_model_args=True)` makes
# them arguments of the compiled sampler, traced (`MODEL_ARGUMENTS_JITTED`).
CLOSES_OVER_ARGUMENTS = frozenset({
    "numpyro.infer.NUTS", "numpyro.infer.HMC", "numpyro.infer.SA", "numpyro.infer.BarkerMH",
    "numpyro.infer.SVI", "numpyro.infer.Predictive",
})
MODEL_ARGUMENTS_JITTED = "jit_model_args"

# Pallas calls that run a kernel (or a body inside one) traced, and the positions and keyword
# names of the functions they take. A kernel's positional parameters are references to its
# operands, outputs and scratch buffers (`Ref`s), not arrays: it loads from them
# (`x = x_ref[...]`, a traced array) and stores into them (`o_ref[...] = y`, not a mutation of
# an array).
KERNEL_CALLS: dict[str, tuple[tuple[int, str], ...]] = {
    "jax.experimental.pallas.pallas_call": ((0, "kernel"),),
    "jax.experimental.pallas.tpu.emit_pipeline": ((0, "body"),),
    "jax.experimental.pallas.run_scoped": ((0, "f"),),
    # A kernel over a mesh: its body takes the operands', outputs' and scratch references.
    "jax.experimental.pallas.kernel": ((0, "body"),),
    "jax.experimental.pallas.mosaic_gpu.kernel": ((0, "body"),),
}
# Of those, the ones that pass each parameter a pytree of references (one per scratch type
# given), not one reference.
REF_TREE_CALLS = frozenset({"jax.experimental.pallas.run_scoped"})

# Decorator factories whose decorator calls the function at once, where it is defined, under
# a trace of its own (`@pl.when(i == 0)` stages the body under a `lax.cond`; `@pl.loop(0, n)`
# under a loop, passing a traced index).
RUN_AT_DEFINITION = frozenset({"jax.experimental.pallas.when", "jax.experimental.pallas.loop"})

# A function given to one of these packages' functions by one of these keywords, or as its
# first argument (an optimizer's learning rate, `scale_by_schedule`'s step size, `stateless`'s
# update), runs inside the step that applies the transformation: traced.
SCHEDULE_KEYWORDS: dict[str, frozenset[str]] = {
    "optax.": frozenset({"learning_rate", "step_size"}),
}

# Methods of a function decorated with these that register rules run under differentiation,
# with, per rule argument, where the primal's `nondiff_argnums` arguments (static) arrive:
# LEADING, before the rest (`jvp(*nondiff, primals, tangents)`, `bwd(*nondiff, res, g)`),
# or ALIGNED, where the primal has them (`fwd` takes the primal's own arguments).
LEADING, ALIGNED = "leading", "aligned"
RULE_REGISTRATIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "jax.custom_jvp": {"defjvp": (LEADING,)},
    "jax.custom_vjp": {"defvjp": (ALIGNED, LEADING)},
}


def entry_functions(callee: str, args: list, keywords: dict, table: dict = ENTRY_POINTS) -> list:
    """The expressions a call to `callee` passes as functions that the framework runs traced."""
    out = []
    for index, keyword in table.get(callee, ()):
        arg = args[index] if index < len(args) else keywords.get(keyword)
        if arg is not None:
            out.append(arg)
    for prefix, names in SCHEDULE_KEYWORDS.items():
        if callee.startswith(prefix):
            out.extend(value for name, value in keywords.items() if name in names)
            if callee not in table and args:
                out.append(args[0])  # `optax.sgd(schedule)`, `optax.scale_by_schedule(fn)`
    return out
