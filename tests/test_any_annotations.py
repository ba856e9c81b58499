"""A parameter annotated `Any` says no more than one without annotation: a framework's traced
method (or a jitted function) given arrays there receives tracers, and a Python branch on them
fails. Each framework, the model in the same module as its use or in another one, the branch
and its staged twin; JAX agrees on each."""

from __future__ import annotations

from module_matrix import Program, Twins, matrix_tests

IMPORTS = "from typing import Any\n\nimport jax\nimport jax.numpy as jnp\n"
BRANCH = "        return x * 2 if count > 0 else x  {mark}\n"
STAGED = "        return jnp.where(count > 0, x * 2, x)\n"

MODELS = {
    "jax": (
        """
        @jax.jit
        def step(carry: Any):
            x, count = carry
        {body}""",
        "def demo():\n    return step((jnp.ones(3), jnp.asarray(1)))\n",
        ("step",),
        "jax",
    ),
    "linen": (
        """
        import flax.linen as nn

        class Step(nn.Module):
            @nn.compact
            def __call__(self, carry: Any):
                x, count = carry
                x = nn.Dense(3)(x)
        {body}""",
        "def demo():\n    carry = (jnp.ones(3), jnp.asarray(1))\n    model = Step()\n"
        "    return jax.jit(model.apply)(model.init(jax.random.key(0), carry), carry)\n",
        ("Step",),
        "flax",
    ),
    "nnx": (
        """
        from flax import nnx

        class Step(nnx.Module):
            def __init__(self, rngs):
                self.dense = nnx.Linear(3, 3, rngs=rngs)

            def __call__(self, carry: Any):
                x, count = carry
                x = self.dense(x)
        {body}""",
        "from flax import nnx\n\n@nnx.jit\ndef run(model, carry):\n    return model(carry)\n\n"
        "def demo():\n    return run(Step(nnx.Rngs(0)), (jnp.ones(3), jnp.asarray(1)))\n",
        ("Step",),
        "flax",
    ),
    "haiku": (
        """
        import haiku as hk

        def step(carry: Any):
            x, count = carry
            x = hk.Linear(3)(x)
        {body}""",
        "def demo():\n    carry = (jnp.ones(3), jnp.asarray(1))\n"
        "    return jax.jit(model.apply)(model.init(jax.random.key(0), carry), carry)\n",
        ("model",),
        "haiku",
    ),
    "equinox": (
        """
        import equinox as eqx

        class Step(eqx.Module):
            linear: eqx.nn.Linear

            def __init__(self, key):
                self.linear = eqx.nn.Linear(3, 3, key=key)

            def __call__(self, carry: Any):
                x, count = carry
                x = self.linear(x)
        {body}""",
        "import equinox as eqx\n\n@eqx.filter_jit\ndef run(model, carry):\n    return model(carry)\n\n"
        "def demo():\n    return run(Step(jax.random.key(0)), (jnp.ones(3), jnp.asarray(1)))\n",
        ("Step",),
        "equinox",
    ),
}


def _definitions(template: str, body: str) -> str:
    depth = 8 if "class " in template else 4
    line = body.strip("\n").strip()
    text = template.replace("        {body}", " " * (8 + depth) + line + "\n")
    if "haiku" in template:
        text += "\n        model = hk.without_apply_rng(hk.transform(step))\n"
    return text


def _twins() -> dict[str, Twins]:
    twins = {}
    for framework, (template, use, names, needs) in MODELS.items():
        bug = _definitions(template, BRANCH.replace("{mark}", "# JAX101"))
        clean = _definitions(template, STAGED)
        twins[framework] = Twins(
            Program(IMPORTS, bug, use, names), Program(IMPORTS, clean, use, names), "TracerBoolConversionError", needs
        )
    return twins


(test_any_parameters_across_frameworks_and_modules, test_jax_traces_any_parameters) = matrix_tests(_twins())
