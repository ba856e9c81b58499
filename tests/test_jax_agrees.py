"""Each rule's demonstration, run under real JAX: JAX fails the way the rule's page says.

The expectation (an exception class, a key-reuse error, a side effect that ran only while
tracing, a growing compile count) is checked against what JAX itself does, never against
text jaxlint wrote.
"""

from __future__ import annotations

import sys
import textwrap
import types

import pytest

from jaxlint.rules import all_rules

jax = pytest.importorskip("jax")

DEMOS = {code: rule.demo for code, rule in sorted(all_rules().items()) if rule.demo is not None}


def run_demo(source: str):
    module = types.ModuleType("jaxlint_demo")
    sys.modules[module.__name__] = module  # run as a module is: dataclasses (an Equinox module) look it up
    try:
        exec(compile(textwrap.dedent(source), "<demo>", "exec"), module.__dict__)
        return module.demo()
    finally:
        sys.modules.pop(module.__name__, None)


def exception_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


@pytest.mark.parametrize("code", sorted(DEMOS))
def test_jax_agrees(code):
    demo = DEMOS[code]
    kind, _, detail = demo.expect.partition(":")
    if kind == "raises":
        with pytest.raises(Exception) as info:
            run_demo(demo.source)
        assert detail in exception_names(info.value), f"JAX raised {type(info.value).__name__}: {info.value}"
    elif kind == "key-reuse":
        from jax.errors import KeyReuseError

        with jax.debug_key_reuse(True):
            with pytest.raises(KeyReuseError):
                run_demo(demo.source)
    elif kind == "trace-time-only":
        first, second = run_demo(demo.source)
        assert first >= 1 and second == first, (first, second)
    elif kind == "recompiles":
        assert run_demo(demo.source) > 1
    else:
        pytest.fail(f"unknown expectation {demo.expect!r}")
