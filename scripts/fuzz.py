"""Long-running robustness fuzzing of jaxlint: generated programs and mutants of the rules' own examples.

Each program is linted as a module (suppression included), fixed until stable, round-tripped through
the cache's row format, and rendered in every output format. Any exception, a fix that leaves the
module unparsable, a finding outside the text, or output that is not valid JSON is a failure: the
program is written to the output folder and the run goes on.

    python scripts/fuzz.py --programs 100000 --out fuzz-failures

Generating a program with hypothesmith costs some fifty times linting it, hence the default share.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import sys
import textwrap
import time
import traceback
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxlint import cache, fixes
from jaxlint.output import FORMATS, Report, render
from jaxlint.rules import all_rules
from jaxlint.runner import LintSettings, Module, lint_document
from jaxlint.source import split_lines

RULES = all_rules()
PATH = os.path.abspath("fuzz.py")  # SARIF writes absolute file URIs
SETTINGS = LintSettings(codes=frozenset(RULES), unsafe_fixes=True)
EXAMPLES = [textwrap.dedent(e) for rule in RULES.values() for e in (*rule.bad, *rule.good)]
ODD = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r", "\r\n", "\t", "é", "\U0001f600"]


def check(text: str) -> None:
    """Raise AssertionError (or whatever jaxlint raises) if jaxlint mishandles `text`."""
    module = Module(text)
    findings = lint_document(module, PATH, SETTINGS).findings
    rows = len(split_lines(text)) + 1
    for f in findings:
        assert 1 <= f.start.row <= rows and 1 <= f.end.row <= rows, f
        assert f.start.column >= 1 and f.end.column >= 1, f
        assert [cache._load(cache._dump(f), PATH)] == [f], f
    report = Report(RULES, unsafe_fixes=True)
    for name in FORMATS:
        out = render(name, findings, report)
        if name == "json":
            json.loads(out)
        elif name == "json-lines":
            [json.loads(line) for line in out.split("\n")[:-1]]
    parsed = fixes.parses(text)
    fixed, remaining, _ = fixes.fix_until_stable(module, lambda d: lint_document(d, PATH, SETTINGS).findings, True)
    assert not parsed or fixes.parses(fixed.source), "a fix broke the module"
    fixes.unified_diff(text, fixed.source, PATH)


def mutant(rng: random.Random) -> str:
    """A rule example with lines duplicated, dropped, swapped, cut, or odd characters put in."""
    lines = split_lines(rng.choice(EXAMPLES), keepends=True) or ["\n"]
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        choice = rng.randrange(7)
        if choice == 0:
            lines.insert(i, lines[i])
        elif choice == 1 and len(lines) > 1:
            del lines[i]
        elif choice == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif choice == 3:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif choice == 4:
            lines.insert(i, rng.choice(["", "# ", "    # ", "s = '"]) + rng.choice(ODD) + "\n")
        elif choice == 5:
            at = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:at] + rng.choice(ODD) + lines[i][at:]
        else:
            lines.insert(i, lines[i][: len(lines[i]) - len(lines[i].lstrip())] + "@jax.jit\n")
    return "".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100_000, help="how many programs in all")
    parser.add_argument("--share-generated", type=float, default=0.1, help="the share from hypothesmith")
    parser.add_argument("--out", default="fuzz-failures", help="where failing programs are written")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # generated code is full of SyntaxWarnings
    os.makedirs(args.out, exist_ok=True)
    counts = {"generated": 0, "mutants": 0, "failures": 0}
    start = time.monotonic()

    def run(kind: str, text: str) -> None:
        counts[kind] += 1
        try:
            check(text)
        except Exception:
            counts["failures"] += 1
            name = os.path.join(args.out, f"{kind}-{counts[kind]}.py")
            with open(name, "w", encoding="utf-8", errors="surrogatepass", newline="") as handle:
                handle.write(text)
            with open(name + ".txt", "w", encoding="utf-8") as handle:
                handle.write(traceback.format_exc())
        done = counts["generated"] + counts["mutants"]
        if done % 1000 == 0:
            print(f"{done} programs, {counts['failures']} failures, {time.monotonic() - start:.0f} s", flush=True)

    generated = int(args.programs * args.share_generated)
    if generated:
        import hypothesmith

        @settings(
            max_examples=generated,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()))
        def generated_programs(program: str) -> None:
            run("generated", "import jax\n" + program)  # the import makes jaxlint analyse the module

        generated_programs()
    rng = random.Random(args.seed)
    while counts["generated"] + counts["mutants"] < args.programs:
        run("mutants", mutant(rng))
    print(json.dumps(dict(counts, seconds=round(time.monotonic() - start))))
    return 1 if counts["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
