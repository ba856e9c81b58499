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

from jaxlint.rules import all_rules

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("JAXLINT_UPDATE_GOLDEN") == "1"
RULES = all_rules()
# JAX001's message is CPython's own SyntaxError text, which changes between Python versions.
GOLDEN_CODES = sorted(c for c in RULES if RULES[c].bad and c != "JAX001")
KEPT = ("code", "location", "end_location", "message", "fix")


def observed(cli, make_files, code: str) -> list[list[dict]]:
    results = []
    for index, example in enumerate(RULES[code].bad):
        name = f"example_{index}.py"
        make_files({name: textwrap.dedent(example)})
        overrides = [a for k, v in RULES[code].example_options.items() for a in ("--config", f"{k} = {v!r}")]
        outcome = cli(
            "check", "--isolated", "--no-cache", "--unsafe-fixes", "--select", code,
            "--output-format", "json", *overrides, name,
        )
        assert outcome.code in (0, 1), outcome.stderr
        results.append([{k: finding[k] for k in KEPT} for finding in outcome.json])
    return results


@pytest.mark.parametrize("code", GOLDEN_CODES)
def test_golden_results(cli, make_files, code):
    path = GOLDEN / f"{code}.json"
    got = observed(cli, make_files, code)
    if UPDATE:
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert path.exists(), f"no golden file for {code}: run with JAXLINT_UPDATE_GOLDEN=1"
    assert got == json.loads(path.read_text(encoding="utf-8"))


def test_no_stale_golden_files():
    assert {p.stem for p in GOLDEN.glob("*.json")} <= set(GOLDEN_CODES)
