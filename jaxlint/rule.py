"""The rule interface, the registry of every rule, and the documentation pages each rule carries.

A rule is one small module under `jaxlint/rules/`: its code, name, message, its page (what
it does, in a few sentences / why is this bad / example / use instead / its limits, one line
each), the full account of how it decides and what it cannot see, its bad and good examples
as data, a runnable demonstration of what JAX does with the bad code, and a `check` that asks
the analysis questions and reports.  Tests, the `rules/` catalogue and the `docs/rules/` full
accounts are generated from these fields, so the code and its documentation cannot drift apart.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar

from jaxlint.findings import PARSE_ERROR_CODE
from jaxlint.suppression import UNUSED_NOQA_CODE

if TYPE_CHECKING:
    from jaxlint.analysis.module import ModuleFacts

CATEGORIES = {
    0: "linter",
    1: "tracing",
    2: "randomness",
    3: "jit-arguments",
    4: "purity",
    5: "recompilation",
    6: "upgrade",
}

REPOSITORY_URL = "https://github.com/jaxlint/jaxlint/blob/main"
DOCS_URL = REPOSITORY_URL + "/rules/{code}.md"
# Where each rule's full account lives, beside `rules/`: how it decides, what it cannot see.
DETAILS_FOLDER = "docs/rules"

# The findings no `# noqa` comment silences (`suppression.apply_noqa`): a file that cannot be
# parsed, and a directive that suppressed nothing.
NOT_SILENCED_BY_NOQA = frozenset({PARSE_ERROR_CODE, UNUSED_NOQA_CODE})


@dataclass(frozen=True)
class JaxDemo:
    """A complete module that shows, under real JAX, the failure a rule's page promises.

    `source` defines `demo()`.  `expect` says what running it shows:
      - "raises:NAME"      demo() raises an exception whose class is named NAME
                           (found on the exception's MRO, so `TypeError` matches subclasses);
      - "key-reuse"        demo() raises KeyReuseError with `jax_debug_key_reuse` on;
      - "trace-time-only"  a side effect in demo's jitted function ran on the first call only:
                           demo() returns (count_after_first_call, count_after_second_call);
      - "recompiles"       demo() returns the number of traces of one jitted function,
                           which must exceed 1.
    """

    source: str
    expect: str


class Rule:
    """Base class of every rule.  Subclasses set the class attributes and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    what: ClassVar[str]  # what it reports and why that matters: a few sentences, read in half a minute
    why: ClassVar[str]
    bad: ClassVar[tuple[str, ...]]  # examples that must be reported, marked inline `# JAXnnn`
    good: ClassVar[tuple[str, ...]]  # look-alikes that must stay quiet
    demo: ClassVar[JaxDemo | None] = None
    fix_safety: ClassVar[str | None] = None
    options: ClassVar[str | None] = None
    # The page's limitations: one line each, a principle of what the rule cannot see or where
    # it stays silent, not a case (the cases are in `decisions` and `limitations`).
    limits: ClassVar[tuple[str, ...]] = ()
    # Its full account (`docs/rules/CODE.md`, linked from the page):
    # how it decides, precisely: what counts, which look-alikes are deliberate and left alone
    decisions: ClassVar[str | None] = None
    limitations: ClassVar[str | None] = None  # what the analysis cannot see, stated plainly
    references: ClassVar[tuple[str, ...]] = ()
    fixable: ClassVar[bool] = False
    # Rule options the examples are linted with, where the default would not show the rule
    # (a deprecation the default target JAX version does not have yet).
    example_options: ClassVar[dict] = {}
    # Off unless a selector names its code exactly (`extend-select = ["JAX207"]`): a finding only
    # some projects want, whose page says which (`config.resolve_selection`).
    opt_in: ClassVar[bool] = False

    @property
    def category(self) -> str:
        return CATEGORIES[int(self.code[3])]

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    @property
    def details_url(self) -> str:
        return f"{REPOSITORY_URL}/{DETAILS_FOLDER}/{self.code}.md"

    def check(self, module: "ModuleFacts", report: Callable[..., None]) -> None:
        """Report, through `report(node, message, fix=None)`, what the module's facts show."""
        raise NotImplementedError

    def page(self) -> str:
        """The rule's page in Markdown (`jaxlint rule CODE` and `rules/CODE.md`): the same sections on
        every rule, in one order; Fix safety, Options and References only where the rule has them."""
        parts = [
            f"# {self.code}: {self.name}",
            "",
            f"Category: {self.category}. Autofix: {'yes' if self.fixable else 'no'}."
            + (" Off unless selected by its code." if self.opt_in else ""),
            "",
            "## What it does",
            _para(self.what),
            "## Why is this bad?",
            _para(self.why),
            "## Example",
            _code(self.bad[0]),
            "## Use instead",
            _code(self.good[0]),
        ]
        if self.fix_safety:
            parts += ["## Fix safety", _para(self.fix_safety)]
        parts += ["## How to silence", self._silencing()]
        if self.options:
            parts += ["## Options", _para(self.options)]
        parts += [
            "## Limitations",
            "".join(f"- {limit}\n" for limit in self.limits),
            f"How it decides, in full, and what it cannot see: [{DETAILS_FOLDER}/{self.code}.md]({self.details_url})\n",
        ]
        if self.references:
            parts += ["## References", "\n".join(f"- {r}" for r in self.references) + "\n"]
        return "\n".join(parts).rstrip() + "\n"

    def _silencing(self) -> str:
        """One line, the same for every rule: a comment on the line, some files, everywhere."""
        code = self.code
        line = "`# noqa` cannot silence it" if code in NOT_SILENCED_BY_NOQA else (
            f"`# noqa: {code}` at the end of the line it reports"
        )
        return (
            f"{line}; in `[tool.jaxlint]`, `per-file-ignores = {{ \"tests/**\" = [\"{code}\"] }}` "
            f"silences it in some files, `ignore = [\"{code}\"]` everywhere.\n"
        )

    def details(self) -> str:
        """The rule's full account in Markdown (`docs/rules/CODE.md`): how it decides, what it cannot see."""
        parts = [
            f"# {self.code}: {self.name}, in full",
            "",
            f"The rule's page, with its example and how to silence it, is `jaxlint rule {self.code}`"
            f" ([rules/{self.code}.md]({self.url})). This is its full account: each case it decides,"
            " and what the analysis cannot see.",
            "",
        ]
        if self.decisions:
            parts += ["## How it decides", _para(self.decisions)]
        if self.limitations:
            parts += ["## Known limitations", _para(self.limitations)]
        return "\n".join(parts).rstrip() + "\n"


def _para(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


def _code(text: str) -> str:
    return "```python\n" + textwrap.dedent(text).strip() + "\n```\n"


REGISTRY: dict[str, Rule] = {}


def register(cls: type[Rule]) -> type[Rule]:
    """Class decorator: add a rule to the registry (codes must be unique)."""
    if cls.code in REGISTRY:
        raise ValueError(f"duplicate rule code {cls.code}")
    REGISTRY[cls.code] = cls()
    return cls
