"""Golden results per rule: what the CLI's JSON says about each of the rule's bad examples.

Each rule's `tests/golden/CODE.json` holds, for every bad example, the findings' code, start,
end, message and fix, as `jaxlint check --output-format json` prints them. A change to any of
these shows up as a diff of that file. After an intended change, regenerate with
`JAXLINT_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py` and review the diff.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from jaxlint.linter import PARSE_ERROR_CODE
from jaxlint.rule import all_rules

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("JAXLINT_UPDATE_GOLDEN") == "1"
RULES = all_rules()
KEPT = ("code", "location", "end_location", "message", "fix")


def observed(cli, make_files, code: str) -> list[list[dict]]:
    results = []
    for index, example in enumerate(RULES[code].bad):
        name = f"example_{index}.py"
        make_files({name: textwrap.dedent(example)})
        outcome = cli(
            "check", "--isolated", "--no-cache", "--unsafe-fixes", "--select", code,
            "--output-format", "json", name,
        )
        assert outcome.code in (0, 1), outcome.stderr
        results.append([_kept(finding) for finding in outcome.json])
    return results


def _kept(finding: dict) -> dict:
    kept = {k: finding[k] for k in KEPT}
    if finding["code"] == PARSE_ERROR_CODE:
        # After the kind of error, the message is the interpreter's, which differs between Python versions.
        kept["message"] = ": ".join(kept["message"].split(": ")[:2])
    return kept


@pytest.mark.parametrize("code", sorted(c for c in RULES if RULES[c].bad))
def test_golden_results(cli, make_files, code):
    path = GOLDEN / f"{code}.json"
    got = observed(cli, make_files, code)
    if UPDATE:
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert path.exists(), f"no golden file for {code}: run with JAXLINT_UPDATE_GOLDEN=1"
    assert got == json.loads(path.read_text(encoding="utf-8"))


def test_no_stale_golden_files():
    assert {p.stem for p in GOLDEN.glob("*.json")} <= set(RULES)
