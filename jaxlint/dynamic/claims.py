"""What a finding's message states that the dynamic check acts on, read back from the message the
linter wrote (the JSON contract has no field for it):

- the entry point that traces the finding's function from another module, as the linter appends
  it: "... (traced via `pkg.module.Class.method`)";
- the JAX API an upgrade finding (JAX6xx) names: "`jax.tree_map` was removed in JAX 0.6.0 ...",
  "`from jax.experimental import maps` imports `jax.experimental.maps`, which was removed ...",
  "... is deprecated since ...";
- the signature change a JAX505 finding names: a parameter bound by keyword where calls pass it by
  position ("`step` gets `scale` by keyword here and by position on line 12"), or a loop carry
  that starts as a Python number ("`total` starts as the Python number `0.0` (line 7) and ...").
"""

from __future__ import annotations

import re

TRACED_VIA = re.compile(r"\(traced via `(?P<entry>[\w.]+)`\)\s*$")
API_NAMED = re.compile(r"`(?P<name>[A-Za-z_][\w.]*)`(?:, which)? (?:was removed|is deprecated)")
KEYWORD = re.compile(r"`[\w.]+` gets `(?P<param>\w+)` by (?:keyword|position) here")
CARRY = re.compile(r"starts as the Python number `[^`]*` \(line (?P<line>\d+)\)")


def traced_via(message: str) -> str | None:
    """The dotted entry point (`pkg.module.function`) the message says traces the finding's code."""
    m = TRACED_VIA.search(message)
    return m.group("entry") if m else None


def api_named(message: str) -> str | None:
    """The dotted name of the removed or deprecated JAX API an upgrade finding's message names."""
    m = API_NAMED.search(message)
    return m.group("name") if m else None


def signature_change(message: str) -> dict | None:
    """What changes the signature, by the message: {"keyword": parameter} or {"carry_start": line}."""
    m = KEYWORD.search(message)
    if m:
        return {"keyword": m.group("param")}
    m = CARRY.search(message)
    return {"carry_start": int(m.group("line"))} if m else None
