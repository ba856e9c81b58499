"""File discovery: walk the given paths for Python files and notebooks, honouring .gitignore and excludes."""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from jaxlint.source import split_lines

SUFFIXES = (".py", ".pyi", ".ipynb")
# Larger files are reported, not read: far past any hand-written module, and what parsing them would cost
# in memory (several times the text) could take the machine down.
MAX_FILE_BYTES = 128 * 1024 * 1024


def read_bytes(path: str) -> bytes:
    """A regular file's bytes. OSError for anything else: a FIFO (whose reader would wait forever), a
    device (`/dev/zero` never ends), or a file over MAX_FILE_BYTES."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # opening a FIFO must not wait for a writer
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = b"" if info.st_size > MAX_FILE_BYTES else handle.read(MAX_FILE_BYTES + 1)  # it may grow meanwhile
    if info.st_size > MAX_FILE_BYTES or len(data) > MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return data


# ---------------------------------------------------------------- glob patterns


def glob_to_regex(pattern: str, braces: bool = False) -> str:
    """A regular expression for a glob: `*` and `?` stay within one path segment, `**/` spans any number.

    `{a,b}` alternatives are understood when `braces` is set (config globs, as ruff's); gitignore has none.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            # A `]` right after `[` or `[!` is a member of the class, not its end.
            j = i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1
            end = pattern.find("]", j + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{" and braces:
            end = pattern.find("}", i)
            if end == -1:
                out.append(re.escape(c))
            else:
                choices = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(glob_to_regex(x, braces) for x in choices) + ")")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def check_glob(pattern: str) -> str:
    """`pattern` if it is a valid config glob; else a ValueError that says why (`[z-a]`: a reversed range)."""
    try:
        re.compile(glob_to_regex(pattern, braces=True))
    except re.error as exc:
        raise ValueError(f"invalid glob `{pattern}`: {exc}") from None
    return pattern


class PathPatterns:
    """Config globs (exclude, per-file-ignores) as ruff reads them.

    A pattern without a `/` matches a file or folder name anywhere; one with a `/` matches the
    path relative to the project root (or, when absolute, the absolute path).
    """

    def __init__(self, patterns: Iterable[str], root: Path):
        self.root = str(root)
        names, paths = [], []
        for pattern in patterns:
            pattern = pattern.removeprefix("./").rstrip("/")
            regex = f"(?:{glob_to_regex(pattern, braces=True)})"
            (paths if "/" in pattern else names).append(regex)
        self._name = re.compile("|".join(names)) if names else None
        self._path = re.compile("|".join(paths)) if paths else None

    def __bool__(self) -> bool:
        return bool(self._name or self._path)

    def match(self, path: str) -> bool:
        """Whether the absolute `path` matches a pattern."""
        if self._name and self._name.fullmatch(os.path.basename(path)):
            return True
        if self._path:
            rel = os.path.relpath(path, self.root).replace(os.sep, "/")
            return bool(self._path.fullmatch(rel) or self._path.fullmatch(path))
        return False

    def match_any_parent(self, path: str) -> bool:
        """Whether `path` or a folder above it (up to the root) matches: used for explicitly given paths."""
        rel = os.path.relpath(path, self.root)
        parts = [] if rel.startswith("..") else Path(rel).parts
        current = self.root
        for part in parts:
            current = os.path.join(current, part)
            if self.match(current):
                return True
        return self.match(path)


# ---------------------------------------------------------------- .gitignore


@dataclass(frozen=True)
class GitignoreRule:
    regex: re.Pattern
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the path below the .gitignore's folder, not the name only


@dataclass(frozen=True)
class Gitignore:
    """The rules of one .gitignore file, relative to its folder."""

    base: str
    rules: tuple[GitignoreRule, ...]
    invalid: tuple[str, ...] = ()  # patterns that match nothing because they cannot be read (`[z-a]`)

    def decide(self, path: str, name: str, is_dir: bool) -> bool | None:
        """True if ignored, False if re-included by a `!` rule, None if no rule matches."""
        rel = None
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.anchored:
                if rel is None:
                    rel = os.path.relpath(path, self.base).replace(os.sep, "/")
                hit = rule.regex.fullmatch(rel)
            else:
                hit = rule.regex.fullmatch(name)
            if hit:
                return not rule.negate
        return None


def parse_gitignore(text: str, base: str) -> Gitignore:
    """Read .gitignore syntax: comments, `!` negation, trailing `/` for folders, `/` anchoring, `**`."""
    rules, invalid = [], []
    for line in split_lines(text):
        if not line or line.startswith("#"):
            continue
        # Trailing spaces are dropped unless escaped with a backslash.
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        try:
            regex = re.compile(glob_to_regex(line.lstrip("/")))
        except re.error:
            invalid.append(line)  # git matches nothing with it, and neither does jaxlint
            continue
        rules.append(GitignoreRule(regex, negate, dir_only, anchored))
    return Gitignore(base, tuple(rules), tuple(invalid))


def read_gitignore(directory: str) -> Gitignore | None:
    """The .gitignore in `directory` (and, at a repository's top, .git/info/exclude), if any."""
    texts = []
    for name in (".git/info/exclude", ".gitignore"):
        try:
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as handle:
                texts.append(handle.read())
        except OSError:
            continue
    if not texts:
        return None
    ignore = parse_gitignore("\n".join(texts), directory)
    return ignore if ignore.rules or ignore.invalid else None


def _ignored(stack: tuple[Gitignore, ...], path: str, name: str, is_dir: bool) -> bool:
    # Deeper .gitignore files override shallower ones; within one file the last match wins.
    for ignore in reversed(stack):
        decision = ignore.decide(path, name, is_dir)
        if decision is not None:
            return decision
    return False


# ---------------------------------------------------------------- discovery


@dataclass
class Discovery:
    """What discovery found: files to lint, paths that could not be read (missing given paths, unreadable
    folders) with the reason, and warnings about what was skipped (a .gitignore pattern git would not read)."""

    files: list[str]
    missing: list[tuple[str, str]]
    warnings: list[str] = field(default_factory=list)


def discover(
    paths: Iterable[str],
    *,
    root: Path,
    excludes: Iterable[str],
    respect_gitignore: bool = True,
    force_exclude: bool = False,
    suffixes: Iterable[str] = SUFFIXES,
) -> Discovery:
    """The Python files and notebooks under `paths` (absolute, sorted, without duplicates).

    Files named explicitly are linted whatever their name, unless `force_exclude` applies the
    excludes to them too (pre-commit names every changed file). Folders are walked, skipping
    excluded and gitignored entries; symlinked folders are followed once, so loops end.
    """
    walker = _Walker(PathPatterns(excludes, root), respect_gitignore, tuple(suffixes))
    for given in paths:
        path = os.path.abspath(given)
        if force_exclude and walker.patterns and walker.patterns.match_any_parent(path):
            continue
        try:
            info = os.stat(path)
        except OSError as exc:  # missing, a dangling link, a symbolic link loop
            walker.missing.append((path, exc.strerror or str(exc)))
            continue
        if stat.S_ISDIR(info.st_mode):
            walker.walk(path)
        else:
            walker.files[path] = None  # even a FIFO or a device: reading it reports why it cannot be linted
    warnings = [
        f"{os.path.join(path, '.gitignore')}: ignoring the invalid pattern `{pattern}`"
        for path, ignore in walker.gitignores.items()
        if ignore is not None
        for pattern in ignore.invalid
    ]
    return Discovery(sorted(walker.files), sorted(walker.missing), warnings)


class _Walker:
    """One discovery's state: the files found, the folders seen (by device and inode), the .gitignore files read."""

    def __init__(self, patterns: PathPatterns, respect_gitignore: bool, suffixes: tuple[str, ...] = SUFFIXES):
        self.patterns = patterns
        self.suffixes = suffixes
        self.respect_gitignore = respect_gitignore
        self.files: dict[str, None] = {}
        self.missing: list[tuple[str, str]] = []
        self._seen_dirs: set[tuple[int, int]] = set()
        self.gitignores: dict[str, Gitignore | None] = {}

    def _gitignore(self, directory: str) -> Gitignore | None:
        if directory not in self.gitignores:
            self.gitignores[directory] = read_gitignore(directory)
        return self.gitignores[directory]

    def _enclosing(self, directory: str) -> tuple[Gitignore, ...]:
        """The .gitignore files of the folders above `directory`, up to its repository's top (if in one)."""
        parents = []
        current = directory
        while not os.path.exists(os.path.join(current, ".git")):
            parent = os.path.dirname(current)
            if parent == current:
                return ()  # outside a repository only the walked folders' own .gitignore files count
            current = parent
            parents.append(current)
        found = (self._gitignore(d) for d in reversed(parents))
        return tuple(g for g in found if g is not None)

    def walk(self, top: str) -> None:
        pending = [(top, self._enclosing(top) if self.respect_gitignore else ())]
        while pending:
            directory, stack = pending.pop()
            try:
                info = os.stat(directory)
            except OSError as exc:
                self.missing.append((directory, f"cannot read the folder: {exc.strerror or exc}"))
                continue
            if (info.st_dev, info.st_ino) in self._seen_dirs:
                continue
            self._seen_dirs.add((info.st_dev, info.st_ino))
            local = self._gitignore(directory) if self.respect_gitignore else None
            if local is not None:
                stack = stack + (local,)
            try:
                with os.scandir(directory) as scan:
                    entries = list(scan)
            except OSError as exc:
                # Said, not skipped: a project whose code cannot all be read has not passed.
                self.missing.append((directory, f"cannot read the folder: {exc.strerror or exc}"))
                continue
            for entry in entries:
                name = entry.name
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    continue
                if not is_dir and not name.endswith(self.suffixes):
                    continue
                if self.patterns and self.patterns.match(entry.path):
                    continue
                if stack and _ignored(stack, entry.path, name, is_dir):
                    continue
                if is_dir:
                    pending.append((entry.path, stack))
                elif entry.is_file():
                    self.files[entry.path] = None
