"""Lint one module's text: parse, build the facts once, run the selected rules over them."""

from __future__ import annotations

import ast
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from jaxlint import timings
from jaxlint.analysis.knowledge.entry_points import ENTRY_POINTS
from jaxlint.analysis.knowledge.jax_api import MODELLED_PACKAGES
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.project.project import IncomingCall, Project
from jaxlint.findings import IO_ERROR_NAME, PARSE_ERROR_CODE, PARSE_ERROR_NAME, Finding, Position
from jaxlint.report import Reporter
from jaxlint.rules import iter_rules
from jaxlint.source import Source, SourceError


@dataclass
class Linted:
    """One module's findings, and what following its traced calls into the project found."""

    findings: list[Finding]
    calls: set[IncomingCall] = field(default_factory=set)  # traced calls into other project modules
    deps: set[str] = field(default_factory=set)  # the other project modules its analysis read
    warnings: list[str] = field(default_factory=list)  # analyses cut short: findings may be missing


# JAX's update syntax marks a module that handles JAX arrays it got from elsewhere.
_WORDS = set(MODELLED_PACKAGES) | {name.split(".", 1)[0] for name in ENTRY_POINTS} | {".at["}
# A word that contains another (`blackjax`) adds nothing; "jax" first, as most modules that
# match do so on it, and each word that does not match costs a scan of the whole text.
_LINTED_IF_NAMED = tuple(
    sorted((w for w in _WORDS if not any(o != w and o in w for o in _WORDS)), key=lambda w: (w != "jax", w))
)


def lint_source(
    text: str,
    path: str,
    codes: set[str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> list[Finding]:
    """Every finding of the selected rules (all when `codes` is None) in one module's text, linted alone.

    Suppression comments are not applied here (see `jaxlint.suppression`).  A module that
    cannot be parsed yields a single JAX001 finding.
    """
    return lint_module(text, path, codes, options).findings


def lint_module(
    text: str,
    path: str,
    codes: set[str] | None = None,
    options: Mapping[str, Any] | None = None,
    project: Project | None = None,
    incoming: Iterable[IncomingCall] = (),
) -> Linted:
    """`lint_source`, following calls into the project's other modules when given the `project`,
    with `incoming` traced calls from them analysed as entry points."""
    try:
        source, names = parse_module(text, path, project)
    except SourceError as err:
        return Linted([parse_error(path, err)])
    return lint_parsed(source, names, path, codes, options, project, incoming)


def parse_module(text: str, path: str, project: Project | None = None) -> tuple[Source, Names | None]:
    """The module's parsed source, and its names when the project has built them already
    (parsed once per process). SourceError if it cannot be parsed."""
    loaded = project.loaded(path) if project is not None else None
    if loaded is not None and loaded.source.text == text:
        return loaded.source, loaded.names
    return Source.parse(text, path), None


def module_facts(*args, **kwargs):
    """`ModuleFacts(*args, **kwargs)`, imported on first use: a run that analyses no module (none
    names a modelled library) does not pay for the analysis's imports."""
    from jaxlint.analysis.module import ModuleFacts

    return ModuleFacts(*args, **kwargs)


def lint_parsed(
    source: Source,
    names: Names | None,
    path: str,
    codes: set[str] | None = None,
    options: Mapping[str, Any] | None = None,
    project: Project | None = None,
    incoming: Iterable[IncomingCall] = (),
) -> Linted:
    """`lint_module` of a module `parse_module` parsed."""
    incoming = tuple(incoming)
    text = source.text
    # A module that names no modelled library (nor one whose entry points trace the functions
    # handed to it, as NumPyro's samplers do) and uses no `.at[...]` update has nothing to lint
    # (what keeps large code bases cheap), unless traced calls from other modules enter it.
    if not incoming and not any(word in text for word in _LINTED_IF_NAMED):
        return Linted([])
    link = project.link(path) if project is not None else None
    # The project reaching back into this module reads the tree and names linted here.
    itself = project.linting(path, source, lambda: facts.names) if project is not None else nullcontext()
    with itself:
        # The project's calls of a framework module only ever make its parameters untraced, which
        # removes findings and traced calls into other modules: the search across the project for
        # them is made only where the module has such a finding or call without it.
        facts = module_facts(source, dict(options or {}), link, incoming, names, path, search_callers=False)
        findings = _run_rules(facts, codes, source, path)
        if facts.callers_asked and (link is not None and link.calls or any(_traced_family(f) for f in findings)):
            facts.release()
            link = project.link(path) if project is not None else None
            facts = module_facts(source, dict(options or {}), link, incoming, names, path)
            findings = _run_rules(facts, codes, source, path)
        if facts.traced_via:
            spans = facts.traced_via_spans()
            traced = [f for f in findings if _entry_point(f, spans)]
            if traced:
                # What the module reports without those traces (a key reused whether traced or not)
                # is not because of them: only the rest names the entry point.
                alone = module_facts(source, dict(options or {}), project.link(path), (), names, path, elsewhere=False)
                eager = {_identity(f) for f in _run_rules(alone, {f.code for f in traced}, source, path)}
                alone.release()
                findings = _name_entry_points(findings, spans, eager)
    findings.sort(key=Finding.sort_key)
    warnings = [cut_short_warning(fn, why) for fn, why in facts.cut_short()]
    timings.run("release", facts.release)
    if link is None:
        return Linted(findings, warnings=warnings)
    return Linted(findings, link.calls, link.deps - {path}, warnings)


def _traced_family(finding: Finding) -> bool:
    """Whether a finding may depend on what is traced (the upgrade rules' and the linter's do not)."""
    return finding.code[3] not in "06"


def cut_short_warning(fn: Any, why: str) -> str:
    """What the user is told of a function whose analysis stopped early: findings in it may be missing."""
    if isinstance(fn, ast.Module):
        return f"the analysis of the module's own statements was cut short ({why}); findings in them may be missing"
    name = getattr(fn, "name", "<lambda>")
    return f"the analysis of `{name}` (line {fn.lineno}) was cut short ({why}); findings in it may be missing"


def _run_rules(facts: Any, codes: set[str] | None, source: Source, path: str) -> list[Finding]:
    findings: list[Finding] = []
    for rule in iter_rules(codes):
        reporter = Reporter(rule, source, path)
        timings.run(f"{rule.code} {rule.name}", rule.check, facts, reporter)
        findings.extend(reporter.findings)
    return findings


def _entry_point(finding: Finding, spans: list[tuple[int, int, str]]) -> str | None:
    """The entry point tracing the innermost function traced only from another module around a finding."""
    row = finding.start.row
    around = [(last - first, entry) for first, last, entry in spans if first <= row <= last]
    return min(around)[1] if around else None


def _identity(finding: Finding) -> tuple:
    return (finding.code, finding.start, finding.end)


def _name_entry_points(
    findings: list[Finding], spans: list[tuple[int, int, str]], eager: set[tuple]
) -> list[Finding]:
    """A finding in a function traced only from another module names the entry point that traces it,
    unless the module reports it without that trace too (`eager`)."""
    out = []
    for finding in findings:
        entry = _entry_point(finding, spans)
        if entry is not None and _identity(finding) not in eager:
            finding = finding.with_(message=f"{finding.message} (traced via `{entry}`)")
        out.append(finding)
    return out


def io_error(path: str, reason: str) -> Finding:
    """The JAX001 finding, named `io-error`, for a path that cannot be read at all (missing, a folder
    without read permission, not a regular file): its message is the reason, as ruff's E902."""
    start = Position(1, 1)
    return Finding(code=PARSE_ERROR_CODE, name=IO_ERROR_NAME, message=reason, path=path, start=start, end=start,
                   noqa_row=None)


def parse_error(path: str, err: SourceError) -> Finding:
    """The JAX001 finding for a file that was read but is not Python: not text in its encoding, not
    valid syntax, or too deeply nested."""
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
