"""`--show-settings`: the resolved settings for a run, as the user would write them, defaults included."""

from __future__ import annotations

from jaxlint.config import TARGET_JAX, Config
from jaxlint.jax_versions import OLDEST_SUPPORTED_JAX, show
from jaxlint.settings_reference import dynamic_defaults, option_defaults


def render(config: Config, selected: frozenset[str], fixable: frozenset[str], shown: str, opts: dict) -> str:
    """The settings that apply to `shown` (the first path, or standard input's file name)."""
    files = ", ".join(str(p) for p in config.sources) or "(none: the defaults)"
    output_format = opts["output_format"] or config.output_format or "full"
    options = {**option_defaults(), **config.options}
    lines = [
        f"Settings for: {shown}",
        f"Configuration files: {files}",
        f"Project root: {config.root}",
        "",
        "[linter]",
        f"rules = {sorted(selected)}",
        f"fixable = {sorted(fixable)}",
        f"per-file-ignores = {dict(config.per_file_ignores)}",
        f"ignore-noqa = {str(opts['ignore_noqa']).lower()}",
        f"options = {options}",
        f"target-jax-version = {config.options.get(TARGET_JAX, show(OLDEST_SUPPORTED_JAX))}",
        "",
        "[files]",
        f"exclude = {list(config.exclude)}",
        f"extend-exclude = {list(config.extend_exclude)}",
        f"extension = {dict(config.extension)}",
        f"respect-gitignore = {str(config.respect_gitignore).lower()}",
        f"force-exclude = {str(config.force_exclude).lower()}",
        f"cache-dir = {opts['cache_dir'] or config.cache_dir or config.root / '.jaxlint_cache'}",
        "",
        "[output]",
        f"output-format = {output_format}",
        f"fix = {str(config.fix).lower()}",
        f"fix-only = {str(config.fix_only).lower()}",
        f"unsafe-fixes = {str(config.unsafe_fixes).lower()}",
        f"show-fixes = {str(config.show_fixes).lower()}",
        "",
        "[dynamic]",
        f"settings = {({**dynamic_defaults(), **config.dynamic})}",
    ]
    return "\n".join(lines) + "\n"
