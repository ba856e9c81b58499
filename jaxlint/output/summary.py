"""The closing lines people read after text output: how many findings, how many fixed, what `--fix` would do."""

from __future__ import annotations

from collections import Counter

from jaxlint.findings import Finding
from jaxlint.output import Report, display_path


def _plural(n: int, word: str, suffix: str = "s") -> str:
    return f"{n} {word}{'' if n == 1 else suffix}"


def _hidden_unsafe(findings: list[Finding], report: Report) -> int:
    """Fixes `--unsafe-fixes` would enable."""
    return (
        0
        if report.unsafe_fixes
        else sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")
    )


def check_summary(remaining: list[Finding], fixed: int, report: Report) -> str:
    """`Found N errors (F fixed, R remaining).` or `All checks passed!`, then what fixes are available."""
    total = len(remaining) + fixed
    if fixed:
        lines = [f"Found {_plural(total, 'error')} ({fixed} fixed, {len(remaining)} remaining)."]
    elif remaining:
        lines = [f"Found {_plural(total, 'error')}."]
    else:
        lines = ["All checks passed!"]
    applicable = sum(1 for f in remaining if report.fixable(f))
    hidden = _hidden_unsafe(remaining, report)
    unsafe = f"{_plural(hidden, 'unsafe fix', 'es')} available with `--fix --unsafe-fixes`"
    if applicable and hidden:
        lines.append(f"[*] {applicable} fixable with `--fix` ({unsafe}).")
    elif applicable:
        lines.append(f"[*] {applicable} fixable with `--fix`.")
    elif hidden:
        lines.append(f"{unsafe}.")
    return "".join(line + "\n" for line in lines)


def fixed_summary(fixed: int) -> str:
    """`Fixed N errors.` after `--fix-only` (nothing when nothing was fixed), as ruff."""
    return f"Fixed {_plural(fixed, 'error')}.\n" if fixed else ""


def diff_summary(would_fix: int, remaining: list[Finding], report: Report) -> str:
    """`Would fix N errors.` after `--diff`, with the fixes only `--unsafe-fixes` would add."""
    hidden = _hidden_unsafe(remaining, report)
    extra = f" ({_plural(hidden, 'additional fix', 'es')} available with `--unsafe-fixes`)" if hidden else ""
    if would_fix:
        return f"Would fix {_plural(would_fix, 'error')}{extra}.\n"
    if hidden:
        return f"No errors would be fixed ({_plural(hidden, 'fix', 'es')} available with `--unsafe-fixes`).\n"
    return ""


def fixed_by_file(fixed: dict[str, Counter]) -> str:
    """`--show-fixes`: what was fixed in each file."""
    total = sum(sum(c.values()) for c in fixed.values())
    if not total:
        return ""
    lines = [f"Fixed {_plural(total, 'error')}:"]
    for path in sorted(fixed):
        counts = fixed[path]
        if not counts:
            continue
        lines.append(f"- {display_path(path)}:")
        for (code, name), n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"    {n} × {code} ({name})")
    return "\n".join(lines) + "\n\n"
