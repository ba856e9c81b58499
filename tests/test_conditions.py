"""Where a branch runs, as far as tests of the version and of what exists decide it
(`engine.conditions`, with JAX's version tests from `knowledge.version_tests`)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jaxlint.analysis.engine.conditions import EVERYWHERE, OPAQUE, Reach, branches, single_value
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING
from jaxlint.analysis.knowledge.version_tests import JaxVersionTests


def reach(source: str) -> tuple[Reach, Reach]:
    """The reach of each outcome of the last `if` of the module."""
    tree = ast.parse(textwrap.dedent(source))
    names = Names(tree, None, SPELLING)
    test = [node for node in ast.walk(tree) if isinstance(node, ast.If)][-1].test
    return branches(test, names, names.module, JaxVersionTests())


HEAD = "import jax\nfrom packaging import version\n"


@pytest.mark.parametrize(
    "test, true, false",
    [
        ("jax.__version_info__ < (0, 4, 25)", ((None, (0, 4, 25)),), (((0, 4, 25), None),)),
        ("jax.__version_info__ >= (0, 6)", (((0, 6, 0), None),), ((None, (0, 6, 0)),)),
        # a shorter tuple sorts below every version it begins: `(0, 4, 33) <= (0, 4)` is false
        ("jax.__version_info__ <= (0, 4)", ((None, (0, 4, 0)),), (((0, 4, 0), None),)),
        ("jax.__version_info__ <= (0, 4, 33)", ((None, (0, 4, 34)),), (((0, 4, 34), None),)),
        # a parsed release is equal to its zero-padded form: `0.4 <= 0.4.0`
        ('version.parse(jax.__version__) <= version.parse("0.4")', ((None, (0, 4, 1)),), (((0, 4, 1), None),)),
        ("(0, 5) <= jax.version.__version_info__ < (0, 6)", (((0, 5, 0), (0, 6, 0)),), ((None, (0, 5, 0)), ((0, 6, 0), None))),
        ("not jax.__version_info__ < (0, 5)", (((0, 5, 0), None),), ((None, (0, 5, 0)),)),
        ("jax.__version_info__ < (0, 4) or jax.__version_info__ >= (0, 6)", ((None, (0, 4, 0)), ((0, 6, 0), None)), (((0, 4, 0), (0, 6, 0)),)),
    ],
)
def test_version_comparisons(test, true, false):
    assert reach(HEAD + f"if {test}:\n    pass\n") == (Reach(true), Reach(false))


def test_version_text_is_compared_as_text():
    # "0.10.0" < "0.4.26" as text: the branch runs on every 0.1x release too
    true, false = reach(HEAD + 'if jax.__version__ < "0.4.26":\n    pass\n')
    assert true.first_from((0, 6, 0)) == (0, 10, 0)
    assert false.first_from((0, 4, 26)) == (0, 4, 26) and false.first_from((0, 10, 0)) == (1, 0, 0)


@pytest.mark.parametrize(
    "test",
    [
        'hasattr(jax, "tree")',
        'getattr(jax.tree, "map", None)',
        "jax.__version__.startswith('0.3')",
        "jax.__version_info__[:2] >= (0, 4)",
        'version.parse(flax.__version__) < version.parse("0.8")',
    ],
)
def test_tests_no_span_says_are_opaque(test):
    assert reach(HEAD + "import flax\n" + f"if {test}:\n    pass\n") == (OPAQUE, OPAQUE)


@pytest.mark.parametrize("test", ['hasattr(x, "shape")', "x > 0", "len(jax.devices()) > 1"])
def test_other_tests_say_nothing(test):
    assert reach(HEAD + f"x = f()\nif {test}:\n    pass\n") == (EVERYWHERE, EVERYWHERE)


def test_names_bound_once_are_followed():
    source = HEAD + textwrap.dedent(
        """
        _V = tuple(map(int, jax.__version__.split(".")[:3]))
        OLD = _V < (0, 4, 25)
        NEW = not OLD
        if NEW:
            pass
        """
    )
    assert reach(source) == (Reach((((0, 4, 25), None),)), Reach(((None, (0, 4, 25)),)))


@pytest.mark.parametrize(
    "rebinding",
    [
        "OLD = False\n",  # bound twice
        "OLD += 1\n",
        "for OLD in range(2):\n    pass\n",
        "def reset():\n    global OLD\n    OLD = True\n",
        "import OLD\n",
    ],
)
def test_names_bound_more_than_once_are_not(rebinding):
    source = HEAD + "OLD = jax.__version_info__ < (0, 4, 25)\n" + rebinding + "if OLD:\n    pass\n"
    assert reach(source) == (EVERYWHERE, EVERYWHERE)


def test_single_value_is_per_scope():
    tree = ast.parse("X = 1\ndef f():\n    X = 2\n    return X\nclass C:\n    X = 3\n")
    names = Names(tree, None, SPELLING)
    (found_names, value, scope) = single_value(names, "X", names.module)
    assert value.value == 1 and scope is names.module and found_names is names
    function = names.scope_of(tree.body[1])
    assert single_value(names, "X", function)[1].value == 2
