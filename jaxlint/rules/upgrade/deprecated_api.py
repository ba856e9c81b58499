"""JAX603: a JAX API that the target JAX deprecates."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.upgrade import (
    UPGRADE_DECISIONS, UPGRADE_LIMITATIONS, UPGRADE_LIMITS, UPGRADE_OPTIONS, UPGRADE_REFERENCES, advice, where, subject, target_version, uses, versions,
)
from jaxlint.rules.upgrade.edits import fix_for


@register
class DeprecatedApi(Rule):
    code = "JAX603"
    name = "deprecated-jax-api"
    summary = "A JAX API the target JAX deprecates: it warns now and will be removed"
    what = """
        Checks for uses and imports of JAX APIs that are deprecated in the target JAX version
        and not yet removed: `jax.experimental.pjit.pjit` (use `jax.jit`),
        `jax.experimental.shard_map.shard_map` (use `jax.shard_map`),
        `jax.interpreters.pxla.thread_resources`, `jax.scipy.special.lpmn_values`,
        `jax.lax.psend`/`precv`, and Pallas names such as `pl.core_map` (use `pl.kernel`).
        Nothing is reported when the target JAX predates the deprecation.
        """
    why = """
        A deprecated API still works but emits a DeprecationWarning, and JAX's compatibility
        policy removes it after a deprecation period: the code breaks on a later release. Only a
        deprecation the target JAX has is reported, since the replacement may not exist before it.
        `pjit` and `jax.jit` take the same keyword arguments (`in_shardings`, `out_shardings`,
        `static_argnums`, ...); `jax.shard_map` renamed `check_rep` to `check_vma` and takes its
        arguments after the function as keywords.
        """
    fix_safety = """
        `pjit(f, in_shardings=..., out_shardings=...)`, and a bare `@pjit`, become `jax.jit(...)`:
        safe, since every argument after the function is a keyword that `jax.jit` takes too. A
        `pjit` passed positional shardings, or passed around, is left as it is. `shard_map` has no
        fix.
        """
    decisions = UPGRADE_DECISIONS
    options = UPGRADE_OPTIONS
    limitations = UPGRADE_LIMITATIONS
    limits = (
        "Nothing is reported while the target JAX predates the deprecation.",
    ) + UPGRADE_LIMITS
    references = UPGRADE_REFERENCES
    fixable = True
    example_options = {"target-jax-version": "0.8.0"}
    bad = (
        """
        # target-jax-version = "0.8.0"
        import jax.experimental.pjit

        def compile_step(step, shardings):
            return jax.experimental.pjit.pjit(step, in_shardings=shardings)  # JAX603
        """,
    )
    good = (
        """
        import jax

        def compile_step(step, shardings):
            return jax.jit(step, in_shardings=shardings)
        """,
        """
        import jax.experimental.pjit

        def compile_step(step, shardings):
            if jax.__version_info__ < (0, 8):  # checks the JAX version first
                return jax.experimental.pjit.pjit(step, in_shardings=shardings)
            return jax.jit(step, in_shardings=shardings)
        """,
    )
    demo = JaxDemo(
        source="""
        import warnings
        import jax
        import jax.numpy as jnp
        import jax.experimental.pjit

        def demo():
            jax.jit(lambda x: x + 1)(jnp.ones(2))  # the replacement runs
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                return jax.experimental.pjit.pjit(lambda x: x + 1)  # DeprecationWarning since JAX 0.8.0
        """,
        expect="raises:DeprecationWarning",
    )

    def check(self, module, report) -> None:
        target = target_version(module)
        for use in uses(module):
            api = use.api
            if api.removed is not None or api.deprecated is None or api.deprecated > target:
                continue
            message = f"{subject(module, use)} {versions(use)}: {advice(use, target)}"
            report(where(use), message, fix_for(module, use, target))
