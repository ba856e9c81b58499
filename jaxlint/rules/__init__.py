"""The rules, one module each in a package per category. Importing a rule's module registers it
(`jaxlint.rule.register`); `all_rules` imports every one."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Iterator

from jaxlint import config
from jaxlint import rule as interface
from jaxlint.rule import Rule


def all_rules() -> dict[str, Rule]:
    """Every registered rule by code, in code order; the first call imports the rules' modules."""
    if not interface.REGISTRY:
        for info in pkgutil.walk_packages(__path__, __name__ + "."):
            importlib.import_module(info.name)
    return dict(sorted(interface.REGISTRY.items()))


def opt_in_codes() -> frozenset[str]:
    """The codes of the rules that are off unless selected by their code (`Rule.opt_in`)."""
    return frozenset(code for code, rule in all_rules().items() if rule.opt_in)


def iter_rules(codes: set[str] | None = None) -> Iterator[Rule]:
    for code, rule in all_rules().items():
        if codes is None or code in codes:
            yield rule


config.rule_codes = lambda: all_rules().keys()  # so a selector naming no rule is an error
