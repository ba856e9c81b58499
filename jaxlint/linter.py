"""Lint one module's text: parse, build the facts once, run the selected rules over them."""

from __future__ import annotations

from typing import Any, Mapping

from jaxlint.findings import Finding, Position
from jaxlint.report import Reporter
from jaxlint.rule import iter_rules
from jaxlint.source import Source, SourceError

PARSE_ERROR_CODE = "JAX001"
PARSE_ERROR_NAME = "syntax-error"

# Words without which a module cannot contain anything the rules look for: skipping the
# analysis of such files is what keeps large code bases cheap to lint.
_JAX_WORDS = ("jax", "flax", "equinox", "haiku", "optax", "chex")


def lint_source(
    text: str,
    path: str,
    codes: set[str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> list[Finding]:
    """Every finding of the selected rules (all when `codes` is None) in one module's text.

    Suppression comments are not applied here (see `jaxlint.suppression`).  A module that
    cannot be parsed yields a single JAX001 finding.
    """
    try:
        source = Source.parse(text, path)
    except SourceError as err:
        return [parse_error(path, err)]
    if not any(word in text for word in _JAX_WORDS):
        return []
    from jaxlint.analysis.module import ModuleFacts

    facts = ModuleFacts(source, dict(options or {}))
    findings: list[Finding] = []
    for rule in iter_rules(codes):
        reporter = Reporter(rule, source, path)
        rule.check(facts, reporter)
        findings.extend(reporter.findings)
    findings.sort(key=Finding.sort_key)
    return findings


def parse_error(path: str, err: SourceError) -> Finding:
    """The JAX001 finding for a file that could not be read or parsed."""
    where = Position(err.row, err.column)
    return Finding(
        code=PARSE_ERROR_CODE,
        name=PARSE_ERROR_NAME,
        message=f"Failed to parse: {err}",
        path=path,
        start=where,
        end=where,
        noqa_row=None,
    )
