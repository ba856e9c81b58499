"""The class of the instance an attribute of `self` holds, as the key flow follows submodule calls."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING
from jaxlint.analysis.engine.submodules import attribute_class, call_method, self_attributes

SOURCE = textwrap.dedent("""\
    import equinox as eqx


    class Mix:
        def __call__(self, x, key=None):
            return x


    class Other:
        pass


    class Block:
        assigned: eqx.nn.Conv2d
        annotated: Mix
        library: eqx.nn.Dropout
        chosen: Mix
        augmented: Mix
        unpacked: Mix
        given: Mix

        def __init__(self, flag, given, held: Mix, swapped: Mix):
            self.assigned = Mix()
            self.held = held
            swapped = Other()
            self.swapped = swapped
            self.library = eqx.nn.Dropout(0.1)
            self.chosen = Mix() if flag else Other()
            self.augmented = Mix()
            self.augmented += 1
            self.unpacked, self.other = Mix(), Other()
            self.given = given
            if flag:
                self.twice = Mix()
            else:
                self.twice = Other()

        def forward(self, x):
            self.assigned(x)
            self.annotated(x)
            self.library(x)
            self.chosen(x)
            self.augmented(x)
            self.unpacked(x)
            self.given(x)
            self.held(x)
            self.swapped(x)
            self.twice(x)
            self.forward(x)
    """)


def classes() -> dict[str, str | None]:
    tree = ast.parse(SOURCE)
    names = Names(tree, spelling=SPELLING)
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            named = attribute_class(names, node.func, self_attributes)
            found[node.func.attr] = ast.unparse(named) if named is not None else None
    return found


@pytest.mark.parametrize("attr, expected", [
    ("assigned", "Mix"),  # the assignment wins over the annotation it stands in for
    ("annotated", "Mix"),  # no assignment: the field's annotation
    ("library", "eqx.nn.Dropout"),
    ("chosen", None),  # a value chosen at run time
    ("augmented", None),
    ("unpacked", None),
    ("given", None),  # whatever the caller passed
    ("held", "Mix"),  # a parameter annotated with the class, stored as received
    ("swapped", None),  # the annotated parameter rebound before it is stored
    ("twice", None),  # two classes
    ("forward", None),  # a method, not an attribute
])
def test_the_attribute_class(attr, expected):
    assert classes()[attr] == expected


def test_only_an_undecorated_own_call_is_followed():
    tree = ast.parse("class A:\n    def __call__(self, x):\n        return x\n"
                     "class B:\n    @wrap\n    def __call__(self, x):\n        return x\n"
                     "class C(A):\n    pass\n")
    a, b, c = (n for n in tree.body if isinstance(n, ast.ClassDef))
    assert call_method(a) is a.body[0]
    assert call_method(b) is None
    assert call_method(c) is None
