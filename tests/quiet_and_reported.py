"""Quiet programs and the variants of them JAX rejects: what jaxlint says of each, and what JAX does.

A test module holds `QUIET` (name -> a program with a `demo()` JAX runs fine) and `REPORTED`
(name -> (program, the code jaxlint reports, the error JAX raises in `demo()`)), and takes
its four tests from `case_tests`.
"""

from __future__ import annotations

import sys
import textwrap
import types

import pytest


def codes(cli, make_files, text: str) -> list[str]:
    """The codes `jaxlint check` reports on `text` as a module of its own."""
    make_files({"m.py": text})
    return [f["code"] for f in cli("check", "--no-cache", "--output-format", "json", "m.py").json]


def run_under_jax(text: str):
    # A module of its own in `sys.modules` while it runs: dataclasses look their module up there.
    module = types.ModuleType("jaxlint_case")
    sys.modules[module.__name__] = module
    try:
        exec(compile(textwrap.dedent(text), "<case>", "exec"), module.__dict__)
        return module.demo()
    finally:
        del sys.modules[module.__name__]


def case_tests(quiet: dict, reported: dict, needs: tuple[str, ...] = ("jax",)):
    """The four tests of a module's cases: quiet ones stay quiet and trace under JAX; reported
    ones are reported and JAX rejects them with the named error. The JAX runs skip without the
    `needs` packages."""

    @pytest.mark.parametrize("case", sorted(quiet))
    def stays_quiet(cli, make_files, case):
        assert codes(cli, make_files, quiet[case]) == []

    @pytest.mark.parametrize("case", sorted(reported))
    def is_reported(cli, make_files, case):
        text, code, _ = reported[case]
        assert code in codes(cli, make_files, text)

    @pytest.mark.parametrize("case", sorted(quiet))
    def jax_traces_it(case):
        for package in needs:
            pytest.importorskip(package)
        run_under_jax(quiet[case])

    @pytest.mark.parametrize("case", sorted(reported))
    def jax_rejects_it(case):
        for package in needs:
            pytest.importorskip(package)
        text, _, error = reported[case]
        with pytest.raises(Exception) as info:
            run_under_jax(text)
        assert error in {cls.__name__ for cls in type(info.value).__mro__}, repr(info.value)

    return stays_quiet, is_reported, jax_traces_it, jax_rejects_it
