"""The keys of `[tool.jaxlint.dynamic]` and how their values read.

The configuration checks them on every run, `--dynamic` or not, so that a typo is reported where
it is written rather than when the code first runs; `jaxlint.dynamic` then reads them as checked.
"""

from __future__ import annotations

import re
from typing import Any, Callable

DRIVERS = "drivers"
MEMORY = "memory-limit"
SANDBOX = "sandbox"
DEFAULT_MEMORY = 8 << 30
SANDBOXES = ("none", "bwrap")

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
# An argument factory's key and value: `"module:qualified.name" = "module:factory"`.
_ENTRY = re.compile(r"[^:\s]+:[\w.]+")


def parse_memory(value: Any) -> int | None:
    """Bytes from `8GiB`, `512MB`, `2g` or an integer; None for `none` (no limit)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str):
        if value.strip().lower() == "none":
            return None
        m = _SIZE.fullmatch(value)
        if m and float(m.group(1)) > 0:
            return int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    raise ValueError(f'expected a size such as "8GiB" or "none", not {value!r}')


def _memory(value: Any) -> Any:
    parse_memory(value)
    return value


def _drivers(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise TypeError("expected a list of command strings")
    return value


def _sandbox(value: Any) -> str:
    if value not in SANDBOXES:
        raise ValueError(f"expected one of {', '.join(map(repr, SANDBOXES))}, not {value!r}")
    return value


def _factory(value: Any) -> str:
    if not isinstance(value, str) or not _ENTRY.fullmatch(value):
        raise ValueError(f'expected the factory as "module:function", not {value!r}')
    return value


KEYS: dict[str, Callable[[Any], Any]] = {DRIVERS: _drivers, MEMORY: _memory, SANDBOX: _sandbox}


def check_for(key: str) -> Callable[[Any], Any] | None:
    """How the value of `key` is checked; None for a key the table does not have. A key with a
    colon names a function whose arguments a factory builds (jaxlint.dynamic's docstring)."""
    return KEYS.get(key) or (_factory if ":" in key else None)
