"""Configuration: find and read `[tool.jaxlint]` (or `jaxlint.toml`), validate it, and resolve rule selection."""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.9 and 3.10
    import tomli as tomllib

from jaxlint import dynamic_settings
from jaxlint.files import check_glob
from jaxlint.findings import PARSE_ERROR_CODE
from jaxlint.jax_versions import OLDEST_SUPPORTED_JAX, declared_jax_version, parse_version, show
from jaxlint.toml_keys import KeyPath, key_lines

# The JAX release the code must run on: the upgrade rules (JAX6xx) read it from the rule options.
TARGET_JAX = "target-jax-version"

# Looked for in this order in each directory, as ruff looks for .ruff.toml, ruff.toml, pyproject.toml.
CONFIG_NAMES = (".jaxlint.toml", "jaxlint.toml", "pyproject.toml")

# As ruff's defaults, plus jaxlint's own cache and byte-code folders.
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".jaxlint_cache",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

OUTPUT_FORMATS = (
    "full",
    "concise",
    "grouped",
    "json",
    "json-lines",
    "sarif",
    "github",
    "gitlab",
    "junit",
    "pylint",
    "azure",
    "rdjson",
)
# What `extension` may map a file extension to (as ruff's `--extension`).
LANGUAGES = ("python", "pyi", "ipynb")

_SELECTOR = re.compile(r"ALL|JAX[0-9]{0,3}")
_CATEGORY_DIGITS = range(7)  # JAX0xx … JAX6xx (docs/contract.md)


class ConfigError(Exception):
    """A configuration problem the user must fix: reported on stderr with exit status 2."""


@dataclass(frozen=True)
class Origin:
    """Where settings come from, to name in an error: a file and the line of each key in it, or a
    `--config` override."""

    label: str  # the file, or `--config '…'`
    table: KeyPath = ()  # the settings' own key path in the document: ("tool", "jaxlint") in pyproject.toml
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def at(self, key: KeyPath) -> str:
        """`FILE:LINE` of a key (of the key that holds it, in an inline table), else the label alone."""
        path = (*self.table, *key)
        while len(path) > len(self.table) and path not in self.lines:
            path = path[:-1]
        line = self.lines.get(path)
        return f"{self.label}:{line}" if line else self.label

    def unknown(self, key: KeyPath, known: Iterable[str]) -> str:
        return f"{self.at(key)}: unknown key `{key[-1]}`{self._in(key)}{_did_you_mean(key[-1], known)}"

    def invalid(self, key: KeyPath, reason: object) -> str:
        return f"{self.at(key)}: invalid value for `{key[-1]}`{self._in(key)}: {reason}"

    def _in(self, key: KeyPath) -> str:
        """` in [tool.jaxlint.options]`: the table that holds the key, as the file writes its header."""
        table = (*self.table, *key[:-1])
        return f" in [{'.'.join(table)}]" if table else ""


class _InTable(Exception):
    """A key of a table setting (`options`, `dynamic`) that is unknown, or whose value is not valid
    (`reason`): the setting's own check cannot say where the key is, so it says which."""

    def __init__(self, key: str, reason: str | None = None, known: Iterable[str] = ()):
        super().__init__(key)
        self.key, self.reason, self.known = key, reason, tuple(known)


@dataclass
class Selection:
    """One layer of rule selection (the config file's, then the command line's), as ruff layers them."""

    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.select is not None or bool(self.extend_select or self.ignore)


@dataclass
class Config:
    """Everything a run is configured with; `root` is the project root that relative patterns start from."""

    root: Path
    selection: Selection = field(default_factory=Selection)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    output_format: str | None = None
    cache_dir: Path | None = None
    respect_gitignore: bool = True
    force_exclude: bool = False
    fix: bool = False
    unsafe_fixes: bool = False
    show_fixes: bool = False
    fix_only: bool = False
    # Which rules' fixes may apply: a selection of its own (`fixable`, `extend-fixable`, `unfixable`).
    fixable: Selection = field(default_factory=Selection)
    extension: dict[str, str] = field(default_factory=dict)  # file extension -> language
    options: dict[str, Any] = field(default_factory=dict)
    dynamic: dict[str, Any] = field(default_factory=dict)
    # The selections of the files this one extends, base first: each is a layer under `selection`.
    extended_selections: list[Selection] = field(default_factory=list)
    sources: list[Path] = field(default_factory=list)  # the files read, base first

    @property
    def excludes(self) -> list[str]:
        return self.exclude + self.extend_exclude

    @property
    def selections(self) -> list[Selection]:
        """The configuration's selection layers in the order they apply (`extend`ed files first)."""
        return [*self.extended_selections, self.selection]


# ---------------------------------------------------------------- finding and reading the file


def find_config_file(start: Path) -> Path | None:
    """The nearest `.jaxlint.toml`, `jaxlint.toml`, or `pyproject.toml` with a `[tool.jaxlint]` table."""
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            candidate = candidate_dir / name
            if not candidate.is_file():
                continue
            if name != "pyproject.toml" or _mentions_jaxlint(candidate):
                return candidate
    return None


def _mentions_jaxlint(pyproject: Path) -> bool:
    # A cheap look before parsing, so that a project's unrelated (even broken) pyproject.toml is skipped.
    try:
        text = pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "tool.jaxlint" in text and "jaxlint" in _read_toml(pyproject).get("tool", {})


def _read_toml(path: Path) -> dict[str, Any]:
    return _read_toml_text(path)[0]


def _read_toml_text(path: Path) -> tuple[dict[str, Any], str]:
    """The file's TOML, and its text (where the keys are written)."""
    try:
        text = path.read_bytes().decode("utf-8")
        return tomllib.loads(text), text
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not valid TOML: it is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def load_config(path: Path | None, *, search_from: Path, isolated: bool = False) -> Config:
    """The configuration from `path`, or from the nearest config file above `search_from`, or the defaults."""
    if isolated:
        return Config(root=Path.cwd())
    if path is None:
        path = find_config_file(search_from)
        if path is None:
            return _with_target_jax(Config(root=Path.cwd()), search_from)
    return _with_target_jax(_load_file(path.resolve(), ()), search_from)


def _settings_table(path: Path) -> tuple[dict[str, Any], Origin]:
    data, text = _read_toml_text(path)
    if path.name == "pyproject.toml":
        return data.get("tool", {}).get("jaxlint", {}), Origin(str(path), ("tool", "jaxlint"), key_lines(text))
    return data, Origin(str(path), (), key_lines(text))


def _load_file(path: Path, extending: tuple[Path, ...]) -> Config:
    """One file's configuration, on top of the file its `extend` names (as ruff's `extend`)."""
    data, origin = _settings_table(path)
    base = data.get("extend")
    if base is None:
        config = Config(root=path.parent)
    else:
        if not isinstance(base, str):
            raise ConfigError(origin.invalid(("extend",), "expected a path"))
        base_path = (path.parent / os.path.expandvars(os.path.expanduser(base))).resolve()
        if base_path == path or base_path in extending:
            raise ConfigError(f"{origin.at(('extend',))}: `extend` makes a cycle through {base_path}")
        if not base_path.is_file():
            raise ConfigError(f"{origin.at(('extend',))}: `extend` names {base_path}, which does not exist")
        config = _load_file(base_path, (*extending, path))
        # The extending file is the project's: its folder is the root, its selection the top layer.
        config.root = path.parent
        config.extended_selections.append(config.selection)
        config.selection = Selection()
    config.sources.append(path)
    apply_settings(config, {k: v for k, v in data.items() if k != "extend"}, origin)
    return config


def apply_settings(config: Config, data: dict[str, Any], origin: Origin) -> None:
    """Validate the settings table `data` and store it in `config`. An unknown key, in any table, and
    a value that cannot be read are ConfigErrors that say where they are written (as ruff's)."""
    for key, value in data.items():
        setting = _SETTINGS.get(key)
        if setting is None:
            if key == "extend":  # a real key, but only a file can name a file to read first
                raise ConfigError(f"{origin.at((key,))}: `extend` works only in a configuration file")
            raise ConfigError(origin.unknown((key,), _SETTINGS))
        check, store = setting
        try:
            store(config, check(value))
        except _InTable as exc:
            inner = (key, exc.key)
            raise ConfigError(
                origin.unknown(inner, exc.known) if exc.reason is None else origin.invalid(inner, exc.reason)
            ) from None
        except (TypeError, ValueError) as exc:
            raise ConfigError(origin.invalid((key,), exc)) from None


def _did_you_mean(key: str, known: Iterable[str]) -> str:
    """`; did you mean `select`?` for the known key closest to a misspelt one, if one is close."""
    close = difflib.get_close_matches(key.lower().replace("_", "-"), known, n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def apply_override(config: Config, text: str) -> None:
    """A `--config "KEY = VALUE"` override, read as one line of TOML (as ruff's --config accepts) and
    checked as a configuration file's settings are."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"--config {text!r} is neither a file nor a valid `key = value` TOML pair: {exc}"
        ) from None
    apply_settings(config, data, Origin(f"--config {text!r}"))


# ---------------------------------------------------------------- validating values


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("expected a list of strings")
    return list(value)


def _globs(value: Any) -> list[str]:
    return [check_glob(pattern) for pattern in _strings(value)]


def _selectors(value: Any) -> list[str]:
    return [check_selector(selector) for selector in _strings(value)]


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("expected true or false")
    return value


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def _table(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError("expected a table")
    return dict(value)


def _output_format(value: Any) -> str:
    if value not in OUTPUT_FORMATS:
        raise ValueError(f"expected one of {', '.join(OUTPUT_FORMATS)}")
    return value


def _extension(value: Any) -> dict[str, str]:
    mapping = {}
    for suffix, language in _table(value).items():
        if language not in LANGUAGES:
            raise ValueError(f"`{suffix}` maps to {language!r}: expected one of {', '.join(LANGUAGES)}")
        mapping[suffix.lstrip(".")] = language
    return mapping


def _per_file_ignores(value: Any) -> dict[str, list[str]]:
    return {check_glob(pattern): _selectors(codes) for pattern, codes in _table(value).items()}


def _positive_integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected a positive integer, not {value!r}")
    return value


def _pattern(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a regular expression, not {value!r}")
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a regular expression ({exc}): {value!r}") from None
    return value


def _jax_version(value: Any) -> str:
    return show(parse_version(_string(value)))


# The rule options, each with the check of its value: any other key is a typo that stops the run
# (`jaxlint config options` documents them). The rules read each in either spelling.
RULE_OPTIONS: dict[str, Callable[[Any], Any]] = {
    "unroll-threshold": _positive_integer,
    "unroll_threshold": _positive_integer,
    "test-functions": _pattern,
    "test_functions": _pattern,
    "test-files": _pattern,
    "test_files": _pattern,
    TARGET_JAX: _jax_version,
}


def _keyed(
    check_for: Callable[[str], Callable[[Any], Any] | None], known: Iterable[str]
) -> Callable[[Any], dict]:
    """The check of a table of named settings: every key one it has (`check_for` gives its value's
    check), every value valid; `known` are the keys to suggest for a misspelt one."""

    def check(value: Any) -> dict[str, Any]:
        table = _table(value)
        for key, item in table.items():
            check_item = check_for(key)
            if check_item is None:
                raise _InTable(key, known=known)
            try:
                check_item(item)
            except (TypeError, ValueError) as exc:
                raise _InTable(key, reason=str(exc)) from None
        return table

    return check


# A misspelt option is pointed to the spelling the documentation uses.
_options = _keyed(RULE_OPTIONS.get, [k for k in RULE_OPTIONS if "_" not in k])
_dynamic = _keyed(dynamic_settings.check_for, dynamic_settings.KEYS)


def _set_target_jax(config: Config, value: str) -> None:
    config.options = {**config.options, TARGET_JAX: value}


def _set_options(config: Config, value: dict[str, Any]) -> None:
    # `target-jax-version` is a setting of its own that rides with the rule options: a table of
    # options set after it must not drop it.
    kept = {TARGET_JAX: config.options[TARGET_JAX]} if TARGET_JAX in config.options else {}
    config.options = {**value, **kept}


def _with_target_jax(config: Config, search_from: Path) -> Config:
    """Without a `target-jax-version` setting, the project's declared `jax` requirement decides
    it (read in the configuration's folder, else in the nearest folder above the linted path
    that declares one), else the oldest JAX that `--dynamic` supports."""
    if TARGET_JAX in config.options:
        return config
    start = search_from if search_from.is_dir() else search_from.parent
    folders = [config.root] if config.sources else [start, *start.parents]
    for folder in folders:
        declared = declared_jax_version(folder)
        if declared is not None:
            config.options = {**config.options, TARGET_JAX: show(declared[0])}
            return config
    config.options = {**config.options, TARGET_JAX: show(OLDEST_SUPPORTED_JAX)}
    return config


def _set(name: str) -> Callable[[Config, Any], None]:
    return lambda config, value: setattr(config, name, value)


def _set_in_selection(name: str) -> Callable[[Config, Any], None]:
    def store(config: Config, value: list[str]) -> None:
        if name == "select":
            config.selection.select = value
        else:
            getattr(config.selection, name).extend(value)

    return store


def _set_in_fixable(name: str) -> Callable[[Config, Any], None]:
    def store(config: Config, value: list[str]) -> None:
        if name == "select":
            config.fixable.select = value
        else:
            getattr(config.fixable, name).extend(value)

    return store


def _update_per_file_ignores(config: Config, value: dict[str, list[str]]) -> None:
    for pattern, codes in value.items():
        config.per_file_ignores.setdefault(pattern, []).extend(codes)


def _set_cache_dir(config: Config, value: str) -> None:
    config.cache_dir = config.root / os.path.expanduser(value)


_SETTINGS: dict[str, tuple[Callable[[Any], Any], Callable[[Config, Any], None]]] = {
    "select": (_selectors, _set_in_selection("select")),
    "extend-select": (_selectors, _set_in_selection("extend_select")),
    "ignore": (_selectors, _set_in_selection("ignore")),
    "extend-ignore": (_selectors, _set_in_selection("ignore")),
    "exclude": (_globs, _set("exclude")),
    "extend-exclude": (_globs, _set("extend_exclude")),
    "per-file-ignores": (_per_file_ignores, _set("per_file_ignores")),
    "extend-per-file-ignores": (_per_file_ignores, _update_per_file_ignores),
    "output-format": (_output_format, _set("output_format")),
    "cache-dir": (_string, _set_cache_dir),
    "respect-gitignore": (_boolean, _set("respect_gitignore")),
    "force-exclude": (_boolean, _set("force_exclude")),
    "fix": (_boolean, _set("fix")),
    "unsafe-fixes": (_boolean, _set("unsafe_fixes")),
    "show-fixes": (_boolean, _set("show_fixes")),
    "fix-only": (_boolean, _set("fix_only")),
    "fixable": (_selectors, _set_in_fixable("select")),
    "extend-fixable": (_selectors, _set_in_fixable("extend_select")),
    "unfixable": (_selectors, _set_in_fixable("ignore")),
    "extension": (_extension, _set("extension")),
    "options": (_options, _set_options),
    "dynamic": (_dynamic, _set("dynamic")),
    TARGET_JAX: (_jax_version, _set_target_jax),
}


# ---------------------------------------------------------------- rule selection


def check_selector(selector: str) -> str:
    """The selector in upper case: `ALL`, `JAX`, a category prefix (`JAX1`), a prefix within one, or a
    rule's code, in any case. Anything else is a ValueError that says why (a typo worth stopping for)."""
    upper = selector.upper()
    if not _SELECTOR.fullmatch(upper):
        reason = "expected ALL, JAX, a prefix such as JAX1 or a rule's code"
    elif len(upper) > 3 and upper != "ALL" and int(upper[3]) not in _CATEGORY_DIGITS:
        reason = f"no such category (the categories are JAX0 to JAX{_CATEGORY_DIGITS[-1]})"
    elif len(upper) == len(PARSE_ERROR_CODE) and upper not in _known():
        reason = "no rule has that code (see `jaxlint rules`)"
    else:
        return upper
    raise ValueError(f"unknown rule selector `{selector}`: {reason}")


# The codes of the rules that exist. Configuration sits below the rules, so the rules' package
# hands this over when it is imported (`jaxlint.rules`); until then no full code is known to exist.
rule_codes: Callable[[], Iterable[str]] = tuple


def _known() -> list[str]:
    return known_codes(rule_codes())


def _matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


def known_codes(rule_codes: Iterable[str]) -> list[str]:
    """Every code a selection ranges over: the registered rules' and the parse error's."""
    return sorted({PARSE_ERROR_CODE, *rule_codes})


def resolve_selection(
    layers: Iterable[Selection], codes: list[str], opt_in: Iterable[str] = (),
) -> frozenset[str]:
    """The selected codes after applying each layer in turn, as ruff does.

    Within a layer the most specific selector that matches a code decides it (an ignore
    wins a tie); a layer with `select` starts afresh, one without it edits the previous
    result. The parse error (JAX001) stays on unless an ignore turns it off, because a
    file that cannot be read must never pass silently. A code of `opt_in` (a rule off by
    default, `Rule.opt_in`) starts off, and only a selector that is the code itself turns it
    on, as ruff's `explicit-preview-rules` does: `ALL`, `JAX` or a prefix leave it off.
    """
    opt_in = frozenset(opt_in)
    selected: set[str] = {code for code in codes if code not in opt_in}
    for layer in layers:
        if not layer:
            continue
        entries = [(s, True) for s in (layer.select or [])]
        entries += [(s, True) for s in layer.extend_select]
        entries += [(s, False) for s in layer.ignore]
        base = {PARSE_ERROR_CODE} if layer.select is not None else selected
        result = set()
        for code in codes:
            # (specificity, is-an-ignore): the largest decides, so an ignore wins a tie.
            ranks = [
                (_specificity(s), not on) for s, on in entries
                if _matches(s, code) and (not on or code not in opt_in or s == code)
            ]
            if (not max(ranks)[1]) if ranks else code in base:
                result.add(code)
        selected = result
    return frozenset(selected)


def codes_matching(selectors: Iterable[str], codes: list[str]) -> frozenset[str]:
    """The known codes that any of `selectors` matches (used for per-file ignores)."""
    return frozenset(c for c in codes for s in selectors if _matches(s, c))
