"""JAX602: a JAX API that was removed, where no name does the same."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.upgrade import (
    UPGRADE_DECISIONS, UPGRADE_LIMITATIONS, UPGRADE_LIMITS, UPGRADE_OPTIONS, UPGRADE_REFERENCES, advice, where, has_replacement, subject, target_version, uses,
    versions,
)


@register
class RemovedApiWithoutReplacement(Rule):
    code = "JAX602"
    name = "removed-jax-api-without-replacement"
    summary = "A JAX API that was removed and that no drop-in replacement takes over: the code must change"
    what = """
        Checks for uses and imports of JAX APIs that JAX has removed without a drop-in
        replacement: `jax.experimental.host_callback`, `jax.experimental.maps` and `xmap`,
        `jax.xla_computation`, `jax.lax.tie_in`, `jax.device_put_replicated`/`sharded`,
        `jax.lib.xla_bridge`/`xla_client`/`xla_extension`, `jax.util`,
        `jax.sharding.PositionalSharding`/`PmapSharding`, `jax.experimental.shard_alike`,
        `jax.tools.colab_tpu`, `jax.cloud_tpu_init`, `jax.custom_transforms`, `jax.config.FLAGS`,
        `jax.abstract_arrays`, `jnp.in1d`/`msort`/`NINF`/`issubsctype`, `pl.dot`, and internal
        names of `jax.core` and `jax.interpreters` with no public counterpart
        (`jax.core.is_concrete`, `jax.core.trace_ctx`).
        """
    why = """
        On a JAX release without the API, the import raises ImportError and the attribute
        AttributeError. Each message says what to write instead, from JAX's changelog: host
        callbacks became `jax.debug.callback` (which returns None, where `id_tap` returned its
        argument), `jax.pure_callback` and `jax.experimental.io_callback`; `xmap` became
        `jax.shard_map`; `jax.xla_computation(f)(*args)` became
        `jax.jit(f).lower(*args).compiler_ir('hlo')`; `jnp.in1d(x, y)` became `jnp.isin`, which
        keeps the shape of `x` where `in1d` flattened it. None of them is the same call with
        another name, so no fix is offered. A removal is reported whatever the target JAX version.
        """
    decisions = UPGRADE_DECISIONS
    options = UPGRADE_OPTIONS
    limitations = UPGRADE_LIMITATIONS
    limits = UPGRADE_LIMITS
    references = UPGRADE_REFERENCES
    bad = (
        """
        import jax
        from jax.experimental import host_callback as hcb  # JAX602

        def loss(w, x):
            y = hcb.id_tap(lambda v, _: print(v), x @ w)  # JAX602
            return jax.lax.tie_in(w, y).sum()  # JAX602
        """,
        """
        import jax.numpy as jnp

        def members(x, allowed):
            return jnp.in1d(x, allowed)  # JAX602
        """,
    )
    good = (
        """
        import jax

        def loss(w, x):
            y = x @ w
            jax.debug.callback(print, y)
            return y.sum()
        """,
        """
        import jax.numpy as jnp
        import numpy as np

        def members(x, allowed):
            return jnp.isin(jnp.ravel(x), allowed), np.in1d(np.ones(2), np.ones(1))
        """,
    )
    demo = JaxDemo(
        source="""
        import jax
        import jax.numpy as jnp

        def demo():
            jax.debug.callback(print, jnp.ones(2))  # the replacement runs
            from jax.experimental import host_callback  # ImportError since JAX 0.8.0
            return host_callback
        """,
        expect="raises:ImportError",
    )

    def check(self, module, report) -> None:
        target = target_version(module)
        for use in uses(module):
            if use.api.removed is None or has_replacement(use):
                continue
            report(where(use), f"{subject(module, use)} {versions(use)}, with no drop-in replacement: {advice(use, target)}")
