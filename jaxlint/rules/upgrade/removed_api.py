"""JAX601: a JAX API that was removed, where a replacement does the same."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.upgrade import (
    UPGRADE_DECISIONS, UPGRADE_LIMITATIONS, UPGRADE_LIMITS, UPGRADE_OPTIONS, UPGRADE_REFERENCES, advice, where, has_replacement, subject, target_version, uses,
    versions,
)
from jaxlint.rules.upgrade.edits import fix_for


@register
class RemovedApi(Rule):
    code = "JAX601"
    name = "removed-jax-api"
    summary = "A JAX API that was removed: the code fails on current JAX; its replacement is exact"
    what = """
        Checks for uses and imports of JAX APIs that JAX has removed and that another name
        replaces: `jax.tree_map` and the other top-level `jax.tree_*` functions,
        `jax.ops.index_update`/`index_add`, `jnp.product`/`cumproduct`/`sometrue`/`alltrue`/
        `row_stack`/`trapz`/`round_`, `jnp.DeviceArray`, `jax.random.KeyArray`/`shuffle`/
        `threefry_2x32`, `jax.experimental.stax`/`optimizers`/`enable_x64`, the experimental
        spellings of `Mesh`, `PartitionSpec`, `NamedSharding` and `with_sharding_constraint`,
        `from jax.config import config`, `jax.lib.xla_bridge.get_backend`, the `jax.core` names
        that moved to `jax.extend.core` and `jax.errors`, the Pallas TPU semaphore functions that
        moved to `jax.experimental.pallas`, `jax.interpreters.batching.not_mapped` (now `None`)
        and others.
        """
    why = """
        On a JAX release without the name, the import raises ImportError and the attribute
        AttributeError: the program stops before it computes anything. A removal is reported
        whatever the target JAX version, because a project whose requirement admits the newer
        releases will meet it (pin JAX below the removal, or ignore the rule, to keep old code as
        it is). The replacement the message names is the one JAX's changelog gives, as it exists in
        the target JAX: `jax.tree.map` from JAX 0.4.25, `jax.tree_util.tree_map` before it;
        `x.at[idx].set(y)` for `jax.ops.index_update(x, idx, y)`; `jax.random.permutation(key, x,
        independent=True)` for `jax.random.shuffle(key, x)`, the same shuffle. Each row of the
        table (`jaxlint/analysis/knowledge/removed_apis.py`) carries its evidence: the changelog
        entry, or JAX's source at the release tag or in the released wheel, for the name and for
        its replacement.
        """
    fix_safety = """
        The fix writes the replacement where the name is used, through a name the module already
        imports (`jnp.product` becomes `jnp.prod`), adding `import jax` when the replacement needs
        it and the name `jax` is free, or the import of the module that holds the replacement
        when `import jax` does not load it (`import jax.extend.backend`); an import of the
        removed name imports the replacement under the same local name (`from jax import
        tree_map` becomes `from jax.tree_util import tree_map`), keeping every comment and
        importing nothing the block imports already, so the code using it does not change. It is
        offered only when the target JAX has the replacement. `x.at[idx].set(y)` is safe where
        `x` is shown to be a JAX array (`index_update` also took NumPy arrays, which have no
        `.at`), unsafe elsewhere. The other fixes are safe, except where the replacement is
        another class (`jax.random.KeyArray`/`PRNGKeyArray`, `jax.interpreters.xla.DeviceArray`,
        `ShardedDeviceArray`: an `isinstance` test against `jax.Array` answers otherwise) or
        keeps only part of the module (`jax.linear_util`): unsafe.
        """
    decisions = UPGRADE_DECISIONS
    options = UPGRADE_OPTIONS
    limitations = UPGRADE_LIMITATIONS
    limits = UPGRADE_LIMITS
    references = UPGRADE_REFERENCES
    fixable = True
    bad = (
        """
        import jax
        import jax.numpy as jnp

        def step(params, grads, lr):
            return jax.tree_map(lambda p, g: p - lr * g, params, grads)  # JAX601

        def total(x):
            return jnp.product(x)  # JAX601

        def bump(x, i):
            return jax.ops.index_add(x, i, 1.0)  # JAX601
        """,
        """
        from jax import tree_map, tree_leaves  # JAX601
        from jax.experimental import stax  # JAX601

        init, apply = stax.serial(stax.Dense(8))
        sizes = tree_map(lambda x: x.size, tree_leaves({"a": 1}))
        """,
        """
        import jax.numpy as jnp

        def is_array(x):
            return isinstance(x, jnp.DeviceArray)  # JAX601
        """,
        """
        import jax

        # compared as text, "0.10.0" < "0.4.26": this runs on JAX 0.10 too
        if jax.__version__ < "0.4.26":
            tree_map = jax.tree_map  # JAX601
        else:
            tree_map = jax.tree.map
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        def step(params, grads, lr):
            return jax.tree.map(lambda p, g: p - lr * g, params, grads)

        def total(x):
            return jnp.prod(x)

        def bump(x, i):
            return x.at[i].add(1.0)
        """,
        """
        import jax

        try:
            from jax import tree_map  # JAX before 0.4.26
        except ImportError:
            from jax.tree_util import tree_map

        tree_leaves = jax.tree_leaves if hasattr(jax, "tree_leaves") else jax.tree_util.tree_leaves
        """,
        """
        import jax

        OLD_JAX = jax.__version_info__ < (0, 4, 25)  # jax.tree_map exists on every release before
        tree_map = jax.tree_map if OLD_JAX else jax.tree.map
        """,
        """
        import numpy as np
        from jax import tree_util

        def total(x, tree_map=tree_util.tree_map):
            return np.product(x), tree_map(abs, x)
        """,
    )
    demo = JaxDemo(
        source="""
        import jax
        import jax.numpy as jnp

        def demo():
            params = {"w": jnp.ones(3)}
            jax.tree.map(lambda p: p * 0.5, params)  # the replacement runs
            return jax.tree_map(lambda p: p * 0.5, params)  # AttributeError since JAX 0.6.0
        """,
        expect="raises:AttributeError",
    )

    def check(self, module, report) -> None:
        target = target_version(module)
        for use in uses(module):
            if use.api.removed is None or not has_replacement(use):
                continue
            message = f"{subject(module, use)} {versions(use)}: {advice(use, target)}"
            report(where(use), message, fix_for(module, use, target))
