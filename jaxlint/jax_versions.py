"""JAX versions: how one is written, the oldest jaxlint supports, and the one a project targets.

The target is the oldest release the project's declared `jax` requirement admits.

Read, where they are simple to read, from the project folder's `pyproject.toml` (`[project]`
`dependencies` and `optional-dependencies`), `setup.cfg` (`install_requires`, `extras_require`),
`setup.py` (string literals, and f-strings of module-level string constants, in
`install_requires` and `extras_require`, or in the module-level lists they name) and `requirements*.txt`. A requirement's lower bound
is the version after `>=`, `==`, `~=` or `>`; a requirement without one admits any JAX and
says nothing. Of several requirements the lowest bound wins: the project claims to run there.
"""

from __future__ import annotations

import ast
import configparser
import re
import sys
from pathlib import Path
from typing import Iterable, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.9 and 3.10
    import tomli as tomllib

Version = Tuple[int, ...]

# The oldest JAX that `jaxlint --dynamic` runs with (pyproject's `dynamic` extra): the target
# JAX version when neither the configuration nor the project's requirements name one.
OLDEST_SUPPORTED_JAX: Version = (0, 4, 30)


def parse_version(text: str) -> Version:
    """`"0.4.30"` -> (0, 4, 30); ValueError for anything but dot-separated numbers."""
    parts = text.strip().split(".")
    if not text.strip() or not all(p.isdigit() for p in parts) or len(parts) > 4:
        raise ValueError(f"expected a JAX version such as 0.4.30, not {text!r}")
    return tuple(int(p) for p in parts)


def show(version: Version) -> str:
    return ".".join(str(p) for p in version)


# `jax`, extras, then comma-separated specifiers (environment markers after `;` are ignored).
_REQUIREMENT = re.compile(r"^\s*jax(?![\w.-])\s*(\[[^\]]*\])?\s*(?P<specs>[^;#@]*)", re.IGNORECASE)
_LOWER = re.compile(r"(>=|==|~=|===|>)\s*(?P<version>[0-9]+(\.[0-9]+)*)")


def lower_bound(requirement: str) -> Optional[Version]:
    """The lowest JAX version a PEP 508 requirement admits, if it is one for `jax` with a lower bound."""
    match = _REQUIREMENT.match(requirement)
    if match is None:
        return None
    specs = match.group("specs")
    bounds = [parse_version(m.group("version")) for m in _LOWER.finditer(specs)]
    return min(bounds) if bounds else None


def declared_jax_version(folder: Path) -> Optional[tuple[Version, str]]:
    """The lowest JAX the project in `folder` declares, and the file that says so."""
    found: list[tuple[Version, str]] = []
    for path, requirements in _declarations(folder):
        for requirement in requirements:
            bound = lower_bound(requirement)
            if bound is not None:
                found.append((bound, path.name))
    return min(found) if found else None


def _declarations(folder: Path) -> Iterable[tuple[Path, list[str]]]:
    readers = (
        ("pyproject.toml", _pyproject),
        ("setup.cfg", _setup_cfg),
        ("setup.py", _setup_py),
    )
    for name, read in readers:
        path = folder / name
        if path.is_file():
            try:
                yield path, read(path)
            except (OSError, ValueError, SyntaxError, UnicodeDecodeError, configparser.Error, tomllib.TOMLDecodeError):
                continue  # unreadable: the project declares nothing we can use there
    for path in sorted(folder.glob("requirements*.txt")):
        try:
            yield path, path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def _pyproject(path: Path) -> list[str]:
    with open(path, "rb") as handle:
        project = tomllib.load(handle).get("project", {})
    return _strings(project.get("dependencies", [])) + _strings(project.get("optional-dependencies", {}))


def _setup_cfg(path: Path) -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(path, encoding="utf-8")
    lines = []
    if parser.has_option("options", "install_requires"):
        lines += parser.get("options", "install_requires").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            lines += value.splitlines()
    return lines


def _setup_py(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    values = {  # module-level names, each with the value it is bound to (the last binding wins)
        target.id: statement.value
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        for target in statement.targets
        if isinstance(target, ast.Name)
    }
    constants = {
        name: value.value for name, value in values.items() if isinstance(value, ast.Constant) and isinstance(value.value, str)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "extras_require"):
            pending, seen = [node.value], set()
            while pending:  # the value, and the lists it names (`install_requires=REQUIRED + extra`)
                for item in ast.walk(pending.pop()):
                    text = _string(item, constants)
                    if text is not None:
                        found.append(text)
                    elif isinstance(item, ast.Name) and item.id in values and item.id not in seen:
                        seen.add(item.id)
                        pending.append(values[item.id])
    return found


def _string(node: ast.AST, constants: dict[str, str]) -> Optional[str]:
    """A string literal, or an f-string whose fields are module-level string constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name) and value.value.id in constants:
                parts.append(constants[value.value.id])
            else:
                return None
        return "".join(parts)
    return None
