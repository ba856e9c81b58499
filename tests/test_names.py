"""Name resolution: every import style, aliases, `functools.partial`, and shadowing."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING
from jaxlint.analysis.tracing.tracing import transform_of


def resolve(source: str, expression_line: int = -1) -> str | None:
    """Qualified name of the expression on the last line of `source`."""
    tree = ast.parse(textwrap.dedent(source))
    names = Names(tree, spelling=SPELLING)
    stmt = tree.body[expression_line]
    while isinstance(stmt, (ast.FunctionDef,)):
        stmt = stmt.body[-1]
    expr = stmt.value
    return names.qualname(expr)


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import jax\njax.numpy.where", "jax.numpy.where"),
        ("import jax.numpy as jnp\njnp.where", "jax.numpy.where"),
        ("from jax import numpy as jnp\njnp.where", "jax.numpy.where"),
        ("import jax.numpy\njax.numpy.where", "jax.numpy.where"),
        ("from jax.numpy import where\nwhere", "jax.numpy.where"),
        ("from jax.numpy import where as w\nw", "jax.numpy.where"),
        ("from jax import lax\nlax.scan", "jax.lax.scan"),
        ("from jax import random as jr\njr.split", "jax.random.split"),
        ("import jax\njit = jax.jit\njit", "jax.jit"),
        ("import jax\njax.tree_map", "jax.tree_util.tree_map"),
        ("import jax\njax.tree.map", "jax.tree_util.tree_map"),
        ("from jax.experimental.shard_map import shard_map\nshard_map", "jax.shard_map"),
        ("import numpy as np\nnp.random.normal", "numpy.random.normal"),
        ("range", "builtins.range"),
        ("from . import jnp\njnp.where", None),
        ("import jax.numpy as jnp\njnp = 3\njnp", None),
        ("import numpy as np\ndef f(np):\n    return np.sum", None),
        ("import numpy as np\ndef f():\n    np = object()\n    return np.sum", None),
        ("import numpy as np\ndef f():\n    return np.sum", "numpy.sum"),
        ("def f():\n    import jax.numpy as jnp\n    return jnp.sum", "jax.numpy.sum"),
        ("unknown_name.attr", None),
        # JAX's private implementation modules resolve to the public names they back.
        ("from jax._src import api\napi.jit", "jax.jit"),
        ("from jax._src import numpy as jnp\njnp.where", "jax.numpy.where"),
        ("from jax._src.numpy import lax_numpy\nlax_numpy.zeros", "jax.numpy.zeros"),
        ("from jax._src.numpy import ufuncs\nufuncs.sin", "jax.numpy.sin"),
        ("from jax._src.numpy import linalg\nlinalg.solve", "jax.numpy.linalg.solve"),
        ("from jax._src.lax import lax\nlax.add", "jax.lax.add"),
        ("from jax._src.lax import control_flow\ncontrol_flow.fori_loop", "jax.lax.fori_loop"),
        ("from jax._src.lax.control_flow.loops import scan\nscan", "jax.lax.scan"),
        ("from jax._src import random\nrandom.split", "jax.random.split"),
        ("from jax._src.custom_derivatives import custom_jvp\ncustom_jvp", "jax.custom_jvp"),
        ("from jax._src import ad_checkpoint\nad_checkpoint.remat", "jax.checkpoint"),
        ("from jax._src.scipy import special\nspecial.gammaln", "jax.scipy.special.gammaln"),
        ("from flax.linen.module import Module\nModule", "flax.linen.Module"),
        ("from flax.nnx.module import Module\nModule", "flax.nnx.Module"),
        ("from optax._src import base\nbase.GradientTransformation", "optax.GradientTransformation"),
        ("from equinox._module import Module\nModule", "equinox.Module"),
        # Aliases gathered in a class body (`class hk: Module = module.Module`).
        ("from haiku._src import module\nclass hk:\n    Module = module.Module\nhk.Module", "haiku.Module"),
        # Internal helpers the public namespace does not export stay unresolved.
        ("from jax._src.numpy import util\nutil.check_arraylike", "jax._src.numpy.util.check_arraylike"),
        ("from jax._src.lax import lax\nlax._const", "jax._src.lax.lax._const"),
    ],
)
def test_qualified_names(source, expected):
    assert resolve(source) == expected


def test_class_scope_is_not_visible_from_methods():
    source = """
    import jax.numpy as jnp
    class A:
        jnp = None
        def f(self):
            return jnp.sum
    """
    tree = ast.parse(textwrap.dedent(source))
    names = Names(tree, spelling=SPELLING)
    ret = tree.body[1].body[1].body[0]
    assert names.qualname(ret.value) == "jax.numpy.sum"


@pytest.mark.parametrize(
    "decorator,name,keywords",
    [
        ("jax.jit", "jax.jit", []),
        ("jit", "jax.jit", []),
        ("partial(jax.jit, static_argnums=(1,))", "jax.jit", ["static_argnums"]),
        ("functools.partial(jax.jit, static_argnames='cfg')", "jax.jit", ["static_argnames"]),
        ("jax.jit(static_argnames=('n',))", "jax.jit", ["static_argnames"]),
        ("api.jit(inline=True, static_argnums=(1,))", "jax.jit", ["inline", "static_argnums"]),
        ("partial(api.jit, static_argnums=(1,))", "jax.jit", ["static_argnums"]),
        ("eqx.filter_jit", "equinox.filter_jit", []),
        ("nnx.jit", "flax.nnx.jit", []),
        ("jax.vmap", "jax.vmap", []),
        ("partial(jax.vmap, in_axes=(0, None))", "jax.vmap", ["in_axes"]),
        ("functools.lru_cache", None, None),
    ],
)
def test_transforms_through_aliases_and_partial(decorator, name, keywords):
    source = f"""
    import functools
    from functools import partial
    import jax
    from jax import jit
    import equinox as eqx
    from flax import nnx
    from jax._src import api

    @{decorator}
    def f(x, n):
        return x
    """
    tree = ast.parse(textwrap.dedent(source))
    names = Names(tree, spelling=SPELLING)
    fn = tree.body[-1]
    transform = transform_of(fn.decorator_list[0], names)
    if name is None:
        assert transform is None
    else:
        assert transform.name == name
        assert sorted(transform.keywords) == keywords


def test_nonlocal_names_resolve_in_the_enclosing_function():
    source = """
    import numpy as np
    def outer():
        np = None
        def inner():
            nonlocal np
            return np.sum
        return inner
    """
    tree = ast.parse(textwrap.dedent(source))
    names = Names(tree, spelling=SPELLING)
    ret = tree.body[1].body[1].body[1]
    assert names.qualname(ret.value) is None  # the enclosing function's `np`, not the import


def test_the_walk_module_imports_on_its_own():
    # `names` builds on `walk`'s field tables: importing `walk` first must not meet a half-made `names`.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import jaxlint.analysis.engine.walk"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_attribute_spellings_include_the_aliases_that_resolve_to_a_name():
    from jaxlint.analysis.knowledge.spellings import attribute_spellings

    spellings = attribute_spellings(["jax.jit", "jax.checkpoint", "jax.tree_util.tree_map"])
    assert {"jit", "pjit", "checkpoint", "remat", "tree_map", "map"} <= spellings
    assert "reshape" not in spellings


def test_body_nodes_walks_the_statements_and_nested_decorators_not_nested_bodies():
    from jaxlint.analysis.engine.walk import body_nodes

    source = """
    def f(key):
        def top(a=default_of_top):
            in_top = 1
        if key:
            @decorator
            def nested(b=default_of_nested):
                in_nested = 2
            class Inner:
                in_class = 3
            g = lambda: in_lambda
        return key
    """
    fn = ast.parse(textwrap.dedent(source)).body[0]
    nodes = body_nodes(fn)
    seen = {n.id for n in nodes if isinstance(n, ast.Name)}
    # A def that is a statement of the body is walked whole; below that a def is its
    # decorators only, a lambda nothing, a class nothing.
    assert {"default_of_top", "in_top", "key", "decorator", "g"} <= seen
    assert not seen & {"default_of_nested", "in_nested", "in_class", "in_lambda"}
    assert len(nodes) == len({id(n) for n in nodes})


def test_expressions_parsed_from_strings_resolve_and_stay_alive():
    # The resolver caches answers by node identity: a parsed string annotation must outlive
    # the question, or a later node allocated at the same address would read its answer.
    names = Names(ast.parse("import jax.numpy as jnp\nimport numpy as np\n"), spelling=SPELLING)
    first = names.parse_expression("jnp.ndarray")
    assert names.qualname(first) == "jax.numpy.ndarray"
    assert names.parse_expression("jnp.ndarray") is first
    for _ in range(1000):  # churn allocations; each answer is still its own
        assert names.qualname(names.parse_expression("np.ndarray")) == "numpy.ndarray"
        assert names.qualname(names.parse_expression("jnp.ndarray")) == "jax.numpy.ndarray"
    assert names.parse_expression("not an expression(") is None


def test_words_are_what_the_code_spells_not_its_comments_or_strings():
    source = textwrap.dedent('''\
        """Uses tree_map."""
        import jax.experimental.host_callback as hcb
        from jax import numpy as jnp, lax
        from . import sibling
        from .pkg import *
        # jax.tree_map is gone
        x, y = jnp.product, "alltrue"
        z = hcb.id_tap(x.shape.rank)

        def f(a, *, key=None):
            global counter
            return lax.scan(a)

        class C(Base):
            attr: int = g(kw=1)
        ''')
    words = Names(ast.parse(source), spelling=SPELLING).words
    assert {"jax", "experimental", "host_callback", "hcb", "numpy", "jnp", "lax", "sibling", "pkg"} <= words
    assert {"x", "y", "product", "z", "id_tap", "shape", "rank", "scan", "a", "Base", "attr", "int", "g"} <= words
    assert not words & {"tree_map", "alltrue", "Uses", "is", "gone", "*", ""}
