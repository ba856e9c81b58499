"""Every configuration setting with its type, default, documentation and an example: `jaxlint config`."""

from __future__ import annotations

import json
from dataclasses import dataclass

from jaxlint.dynamic_settings import DEFAULT_MEMORY
from jaxlint.jax_versions import OLDEST_SUPPORTED_JAX, show


@dataclass(frozen=True)
class Setting:
    """One key of `[tool.jaxlint]` (or of one of its tables, `options.` and `dynamic.`)."""

    name: str
    value_type: str
    default: str  # as TOML would write it
    doc: str
    example: str

    def to_json(self) -> dict:
        """The fields `ruff config KEY --output-format json` prints."""
        scope = self.name.rpartition(".")[0] or None
        return {
            "doc": self.doc,
            "default": self.default,
            "value_type": self.value_type,
            "scope": scope,
            "example": self.example,
            "deprecated": None,
        }


def _option_defaults() -> dict[str, str]:
    # The defaults live with the code that reads them; imported here only when asked for.
    from jaxlint.analysis.knowledge.testing_code import DEFAULT_TEST_FILES, DEFAULT_TEST_FUNCTIONS
    from jaxlint.rules.recompilation.unrolled_loop import DEFAULT_THRESHOLD

    return {
        "unroll-threshold": str(DEFAULT_THRESHOLD),
        "test-functions": json.dumps(DEFAULT_TEST_FUNCTIONS),
        "test-files": json.dumps(DEFAULT_TEST_FILES),
        "memory-limit": json.dumps(f"{DEFAULT_MEMORY >> 30}GiB"),
    }


def option_defaults() -> dict[str, object]:
    """The rule options' defaults as values (what `--show-settings` shows for options left unset)."""
    return {f.name[len("options."):]: json.loads(f.default) for f in settings() if f.name.startswith("options.")}


def dynamic_defaults() -> dict[str, object]:
    """`--dynamic`'s settings' defaults as values."""
    return {f.name[len("dynamic."):]: json.loads(f.default) for f in settings() if f.name.startswith("dynamic.")}


def settings() -> list[Setting]:
    """Every setting, top-level keys first, then the keys of the `options` and `dynamic` tables."""
    defaults = _option_defaults()
    return [
        Setting(
            "extend", "str", "null",
            "Another configuration file to read first, as ruff's `extend`: its settings apply, then this "
            "file's on top (its selection is a layer under this file's). Relative to this file.",
            'extend = "../base.toml"',
        ),
        Setting(
            "select", "list[RuleSelector]", '["ALL"]',
            "The rules to enable: codes or prefixes (`JAX101`, `JAX1`, `ALL`). Replaces the selection of "
            "the files this one extends. A rule that is off by default (its page says so: `JAX207`) is "
            "turned on only by its own code, never by a prefix or `ALL`.",
            'select = ["JAX1", "JAX2"]',
        ),
        Setting(
            "extend-select", "list[RuleSelector]", "[]",
            "Rules to enable on top of those selected (a rule off by default by its own code only).",
            'extend-select = ["JAX207"]',
        ),
        Setting(
            "ignore", "list[RuleSelector]", "[]",
            "Rules to disable. Within a layer the most specific selector decides a code; an ignore wins a tie.",
            'ignore = ["JAX503"]',
        ),
        Setting(
            "extend-ignore", "list[RuleSelector]", "[]",
            "Rules to disable in addition to those ignored (the same as `ignore`, kept for flake8 habits).",
            'extend-ignore = ["JAX4"]',
        ),
        Setting(
            "fixable", "list[RuleSelector]", '["ALL"]',
            "The rules whose fixes `--fix` may apply. A finding of any other rule is reported without its fix.",
            'fixable = ["JAX0"]',
        ),
        Setting(
            "extend-fixable", "list[RuleSelector]", "[]",
            "Rules whose fixes may apply, on top of `fixable`.",
            'extend-fixable = ["JAX002"]',
        ),
        Setting(
            "unfixable", "list[RuleSelector]", "[]",
            "Rules whose fixes are never applied (the most specific selector decides, as for `ignore`).",
            'unfixable = ["JAX002"]',
        ),
        Setting(
            "exclude", "list[str]", "[" + ", ".join(f'"{p}"' for p in _default_excludes()) + "]",
            "Globs of files and folders to skip; replaces the defaults. Relative globs start at the "
            "project root.",
            'exclude = [".venv", "third_party"]',
        ),
        Setting(
            "extend-exclude", "list[str]", "[]",
            "Globs of files and folders to skip, in addition to `exclude`.",
            'extend-exclude = ["tests/fixtures"]',
        ),
        Setting(
            "per-file-ignores", "dict[str, list[RuleSelector]]", "{}",
            "Glob to codes or prefixes to ignore in the files it matches; a glob starting with `!` applies "
            "to the files it does not match.",
            '"tests/**" = ["JAX2"]\n"!src/**" = ["JAX5"]',
        ),
        Setting(
            "extend-per-file-ignores", "dict[str, list[RuleSelector]]", "{}",
            "Per-file ignores added to those of `per-file-ignores` (and of the files this one extends).",
            '"examples/*" = ["JAX1"]',
        ),
        Setting(
            "extension", "dict[str, Language]", "{}",
            "File extensions (without the dot) to lint as `python`, `pyi` or `ipynb` (a notebook); folders "
            "are walked for these extensions too.",
            'extension = { ipy = "ipynb" }',
        ),
        Setting(
            "output-format", "str", '"full"',
            "How findings are printed: full, concise, grouped, json, json-lines, sarif, github, gitlab, "
            "junit, pylint, azure, rdjson.",
            'output-format = "concise"',
        ),
        Setting(
            "cache-dir", "str", '".jaxlint_cache"',
            "Where the results cache is kept, relative to this file (`JAXLINT_CACHE_DIR` and `--cache-dir` "
            "win over it). The folder holds a `.gitignore`; `jaxlint clean` removes it.",
            'cache-dir = "~/.cache/jaxlint"',
        ),
        Setting(
            "respect-gitignore", "bool", "true",
            "Skip the files that `.gitignore` files (and `.git/info/exclude`) ignore.",
            "respect-gitignore = false",
        ),
        Setting(
            "force-exclude", "bool", "false",
            "Apply the excludes to files named on the command line too (pre-commit names every file).",
            "force-exclude = true",
        ),
        Setting(
            "fix", "bool", "false",
            "Apply safe fixes and write the files, as `--fix`.",
            "fix = true",
        ),
        Setting(
            "fix-only", "bool", "false",
            "Apply fixes, and report neither the findings left nor exit 1 for them, as `--fix-only`.",
            "fix-only = true",
        ),
        Setting(
            "unsafe-fixes", "bool", "false",
            "Apply (and offer) unsafe fixes too, as `--unsafe-fixes`.",
            "unsafe-fixes = true",
        ),
        Setting(
            "show-fixes", "bool", "false",
            "List what `--fix` fixed, per file.",
            "show-fixes = true",
        ),
        Setting(
            "target-jax-version", "str", json.dumps(show(OLDEST_SUPPORTED_JAX)),
            "The oldest JAX the code must run on, read by the upgrade rules (JAX6xx): a fix writes only a "
            "replacement that version has, and a deprecation is reported once it has it. Without it: the "
            "lowest version the project's `jax` requirement admits (pyproject.toml, setup.cfg, setup.py, "
            "requirements*.txt), else 0.4.30, the oldest JAX `--dynamic` supports.",
            'target-jax-version = "0.4.26"',
        ),
        Setting(
            "options", "dict[str, Any]", "{}",
            "Options read by the rules (see each rule's \"Options\" section): `options.unroll-threshold`, "
            "`options.test-functions`, `options.test-files`.",
            "[tool.jaxlint.options]\nunroll-threshold = 64",
        ),
        Setting(
            "options.unroll-threshold", "int", defaults["unroll-threshold"],
            "JAX503: a Python loop inside staged code with at least this many iterations is reported.",
            "unroll-threshold = 64",
        ),
        Setting(
            "options.test-functions", "str", defaults["test-functions"],
            "Randomness rules and JAX403: a regular expression; functions whose name matches, and the methods "
            "of classes whose name matches, are tests, where reusing a key on purpose is common, and are left alone.",
            "test-functions = '^test|^check_'",
        ),
        Setting(
            "options.test-files", "str", defaults["test-files"],
            "A regular expression; files whose name matches are test files: the randomness rules leave them "
            "alone, and a transformation a test applies to another module's function (`jax.jit(pipeline.step)`) "
            "is not followed into that module (the test shows the function survives it).",
            r"test-files = '^test_.*\.py$'",
        ),
        Setting(
            "dynamic", "dict[str, Any]", "{}",
            "Settings of `--dynamic`: argument factories (`\"module:function\" = \"module:factory\"`), "
            "`dynamic.drivers`, `dynamic.memory-limit`, `dynamic.sandbox`.",
            '[tool.jaxlint.dynamic]\n"mypkg.train:train_step" = "tests.factories:train_step_args"',
        ),
        Setting(
            "dynamic.drivers", "list[str]", "[]",
            "Commands `--dynamic` runs, from the project root, to drive the linted code (a script and its "
            "arguments, or `-m package.module ARGS`).",
            'drivers = ["scripts/train.py --steps 3"]',
        ),
        Setting(
            "dynamic.memory-limit", "str", defaults["memory-limit"],
            "The writable memory each `--dynamic` worker may use; \"none\" for no limit.",
            'memory-limit = "16GiB"',
        ),
        Setting(
            "dynamic.sandbox", "str", '"none"',
            "\"bwrap\" runs each `--dynamic` worker in a bubblewrap sandbox, as `--sandbox`.",
            'sandbox = "bwrap"',
        ),
    ]


def _default_excludes() -> tuple[str, ...]:
    from jaxlint.config import DEFAULT_EXCLUDE

    return DEFAULT_EXCLUDE


def find(name: str) -> Setting | None:
    return next((s for s in settings() if s.name == name), None)


def keys_under(scope: str) -> list[str]:
    """The keys directly in a scope ("" for the top level), tables listed by their name."""
    prefix = f"{scope}." if scope else ""
    return [
        s.name[len(prefix):]
        for s in settings()
        if s.name.startswith(prefix) and "." not in s.name[len(prefix):]
    ]


def describe(setting: Setting) -> str:
    """A setting as `ruff config KEY` prints one."""
    return (
        f"{setting.doc}\n\nDefault value: {setting.default}\nType: {setting.value_type}\n"
        f"Example usage:\n```toml\n{setting.example}\n```\n"
    )
