"""JAX6xx: upgrade — JAX APIs that were removed, or are deprecated, in the JAX the project targets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from jaxlint.jax_versions import OLDEST_SUPPORTED_JAX, Version, parse_version, show
from jaxlint.analysis.knowledge.removed_apis import CONSTANTS
from jaxlint.analysis.removed_api_uses import ApiUse, removed_api_uses
from jaxlint.rules.upgrade.edits import import_replacement

if TYPE_CHECKING:
    from jaxlint.analysis.module import ModuleFacts

TARGET_OPTION = "target-jax-version"

UPGRADE_OPTIONS = """
    `target-jax-version` (a setting of its own, or under `[tool.jaxlint.options]`): the oldest JAX
    the code must run on. Without it, the lowest version the project's `jax` requirement admits
    (`pyproject.toml` dependencies and optional dependencies, `setup.cfg`, `setup.py` with the
    lists its `install_requires` names, `requirements*.txt`), else 0.4.30, the oldest JAX
    `--dynamic` supports. A fix writes only a replacement that the target JAX has; `jax.tree_map`
    becomes `jax.tree.map` from 0.4.25 on and `jax.tree_util.tree_map` before. `jaxlint check
    --show-settings` prints the version in use.
    """

UPGRADE_DECISIONS = """
    - A use is an import of the name or of a module it lies in (`from jax import tree_map`,
      `import jax.experimental.host_callback as hcb`), or an expression that spells it through
      an import (`jax.tree_map`, `jnp.product`, `hcb.id_tap`); storing into `a.b.c` reads `a.b`.
    - A use through a name whose own import is reported is left to that import, which fails
      first, unless the member has advice of its own (`hcb.id_tap`).
    - Compatibility code is left alone: code that runs only on the JAX releases where the name
      exists. Under a test of the JAX version (`jax.__version_info__ < (0, 6)`,
      `version.parse(jax.__version__) >= version.parse("0.4.25")`, a tuple made of
      `jax.__version__`), each branch runs on the releases the test admits, read through `not`,
      `and`, `or`, chained comparisons and names bound once to the test or to the version, in
      the module or in another module of the project (`from .compat import OLD_JAX`,
      `compat.OLD_JAX`). A use there is reported only when those releases reach the one that
      removed the name (deprecated it, for JAX603), and the message names the first such
      release. A version compared as text is compared as Python compares text: `"0.10.0" <
      "0.4.26"`, so `if jax.__version__ < "0.4.26":` also runs on JAX 0.10.
    - A test that no span of releases says leaves both its branches alone: `hasattr(jax,
      "tree")`, `getattr(jax.tree, "map", None)`, `find_spec(...)`, another library's version,
      a slice of the version. So do the body of a `try` whose handler catches ImportError or
      AttributeError, such a handler when the `try` reaches for a name of JAX (the fallback to
      the old name), and the uses of a name imported in such code. The operands of `and`/`or`
      after such a test, and the code after an `if` on one whose branch returns or raises, are
      decided the same way.
    - An assignment to the name (`jax.tree_map = jax.tree_util.tree_map`, a compatibility
      patch) is not a use.
    """

UPGRADE_LIMITATIONS = """
    Names are followed through imports, not through assignments (`tm = jax.tree_map` is
    reported where it is written, not where `tm` is called) or `getattr`. A flag bound more
    than once (`HAS_TREE = True` in a `try`, `HAS_TREE = False` in its handler) is not read, so
    its branches are judged as any other code. The table of removed APIs covers the public APIs
    JAX's changelog lists and the internal names of `jax.core` and `jax.interpreters` that
    application code uses, name by name; a name JAX never had is not reported.
    """

# The decisions and limitations as one-line principles, for every page of the family.
UPGRADE_LIMITS = (
    "Names are followed through imports, not through assignments (`tm = jax.tree_map`) or `getattr`.",
    "Compatibility code is left alone: a branch a JAX version test keeps from the releases without the"
    " name, `hasattr` tests, `try` fallbacks.",
    "An assignment to the name (`jax.tree_map = ...`, a compatibility patch) is not a use.",
    "A flag bound more than once (`HAS_TREE = True` in a `try`, `False` in its handler) is not read: its"
    " branches are judged as any code.",
    "Only the names of its table are known: the public APIs JAX's changelog lists, and the internal"
    " names application code uses.",
)

UPGRADE_REFERENCES = (
    "[JAX changelog](https://docs.jax.dev/en/latest/changelog.html)",
    "[JAX API compatibility policy](https://docs.jax.dev/en/latest/api_compatibility.html)",
)


def target_version(module: "ModuleFacts") -> Version:
    """The target JAX from the rule options (the configuration fills it in), else the oldest supported."""
    value = module.options.get(TARGET_OPTION)
    try:
        return parse_version(value) if isinstance(value, str) else OLDEST_SUPPORTED_JAX
    except ValueError:
        return OLDEST_SUPPORTED_JAX


def uses(module: "ModuleFacts") -> Iterator[ApiUse]:
    return iter(removed_api_uses(module.names, module.source.text, module.project))


def has_replacement(use: ApiUse) -> bool:
    """Whether a name, or a call of the same arguments, does what the removed API did."""
    return bool(use.api.replacements) or use.api.call.startswith("at.")


def subject(module: "ModuleFacts", use: ApiUse) -> str:
    """What the message names: the import statement, or the name as used."""
    if use.statement is not None:
        return f"`{module.source.snippet(use.statement, 60)}` imports `{use.name}`, which"
    return f"`{use.name}`"


def versions(use: ApiUse) -> str:
    api = use.api
    tested = use.tested_on
    on = f"; the test of the JAX version around it lets it run on JAX {show(tested)}" if tested else ""
    if api.removed is None:
        return f"is deprecated since JAX {show(api.deprecated)} and will be removed{on}"
    deprecated = f" (deprecated since {show(api.deprecated)})" if api.deprecated else ""
    return f"was removed in JAX {show(api.removed)}{deprecated}{on}"


def where(use: ApiUse):
    """The node a finding points at: the imported name in an import (Python 3.10+ gives it a position), else the use."""
    if use.alias is not None and getattr(use.alias, "end_col_offset", None) is not None:
        return use.alias
    return use.node


def advice(use: ApiUse, target: Version) -> str:
    """What to write instead, under the target JAX."""
    api = use.api
    replacement = api.replacement(target)
    if replacement is not None and use.statement is not None and not api.call and replacement.name not in CONSTANTS:
        return f"import `{import_replacement(use, target)}`"
    if replacement is not None:
        extra = api.call[len("keyword:"):] if api.call.startswith("keyword:") else ""
        return f"use `{replacement.name + use.rest}`" + (f" with `{extra}`" if extra else "")
    if api.replacements:
        first = min(api.replacements, key=lambda r: r.since)
        return (
            f"use `{first.name + use.rest}` (from JAX {show(first.since)}; the target is {show(target)})"
            + (f", or {api.how}" if api.how else "")
        )
    return api.how or "remove it"
