"""A container the code rebinds: `del d[k]` on a donated dict reads no buffer (JAX304); a donated
dict read after the `del` is still reported. JAX agrees."""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source

DONATED = """
import jax


def update(state, batch):
    return {"w": state["w"] - 0.1 * batch.sum(), "b": state["b"]}


train_step = jax.jit(update, donate_argnums=(0,))


def train(state, batch):
    new_state = train_step(state, batch)
    del state["w"]
    return new_state
"""

READ_AFTER = DONATED.replace("    return new_state\n", '    return new_state, state["b"] + 1\n')

def _rows(source: str, code: str) -> set[int]:
    return {f.start.row for f in lint_source(source, "case.py", {code})}


def test_deleting_an_entry_of_a_donated_dict_reads_nothing():
    assert _rows(DONATED, "JAX304") == set()
    assert _rows(READ_AFTER, "JAX304") == {15}


def test_jax_agrees():
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(textwrap.dedent(DONATED), namespace)
    batch = jax.numpy.ones(3)
    state = {"w": jax.numpy.ones(3), "b": jax.numpy.zeros(3)}
    new_state = namespace["train"](state, batch)  # the `del` reads no deleted buffer
    assert "w" not in state and float(new_state["w"][0]) < 1.0
    state = {"w": jax.numpy.ones(3), "b": jax.numpy.zeros(3)}
    exec(textwrap.dedent(READ_AFTER), namespace)
    # The error class depends on whether `+` on this shape was already compiled in the process
    # (ValueError from the executable, RuntimeError from a fresh dispatch): both say "deleted".
    with pytest.raises((RuntimeError, ValueError), match="deleted"):
        namespace["train"](state, batch)  # the entry left in the dict was donated
