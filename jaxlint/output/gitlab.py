"""`--output-format gitlab`: GitLab code quality JSON (a `codequality` report artifact of a CI job)."""

from __future__ import annotations

import hashlib
import os
from collections import Counter

from jaxlint.findings import Finding
from jaxlint.output import Report, json_text, valid_unicode


def _project_path(path: str) -> str:
    """The path relative to the repository (CI_PROJECT_DIR, else the working folder), as GitLab shows it."""
    root = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    relative = os.path.relpath(path, root) if os.path.isabs(path) else path
    return valid_unicode(relative.replace(os.sep, "/"))


def render(findings: list[Finding], report: Report) -> str:
    issues = []
    seen: Counter = Counter()
    for f in findings:
        path = _project_path(f.path)
        # Stable across runs and line moves: the same finding keeps its fingerprint, so GitLab can say
        # which findings a merge request adds or fixes; the counter separates identical ones.
        key = (path, f.cell, f.code, f.message)
        seen[key] += 1
        fingerprint = hashlib.sha256(repr((*key, seen[key])).encode("utf-8")).hexdigest()[:32]
        issues.append(
            {
                "type": "issue",
                "check_name": f.code,
                "description": f"{f.code}: {f.message}",
                "categories": ["Bug Risk"],
                "severity": "major",
                "fingerprint": fingerprint,
                "location": {"path": path, "lines": {"begin": f.start.row, "end": f.end.row}},
            }
        )
    # JSON may hold DEL raw, but a report read in a terminal or a log should not: escape it too.
    text = json_text(issues)
    return text + "\n"
