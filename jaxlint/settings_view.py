"""`--show-settings`: the resolved settings for a run, as the user would write them."""

from __future__ import annotations

from jaxlint.analysis.knowledge.removed_apis import OLDEST_SUPPORTED_JAX, show
from jaxlint.config import TARGET_JAX, Config


def render(config: Config, selected: frozenset[str], paths: tuple[str, ...], opts: dict) -> str:
    files = ", ".join(str(p) for p in config.sources) or "(none: the defaults)"
    output_format = opts["output_format"] or config.output_format or "full"
    lines = [
        f"Settings for: {paths[0] if paths else '.'}",
        f"Configuration files: {files}",
        f"Project root: {config.root}",
        "",
        "[linter]",
        f"rules = {sorted(selected)}",
        f"per-file-ignores = {dict(config.per_file_ignores)}",
        f"options = {dict(config.options)}",
        f"target-jax-version = {config.options.get(TARGET_JAX, show(OLDEST_SUPPORTED_JAX))}",
        "",
        "[files]",
        f"exclude = {list(config.exclude)}",
        f"extend-exclude = {list(config.extend_exclude)}",
        f"respect-gitignore = {str(config.respect_gitignore).lower()}",
        f"force-exclude = {str(config.force_exclude).lower()}",
        f"cache-dir = {config.cache_dir or config.root / '.jaxlint_cache'}",
        "",
        "[output]",
        f"output-format = {output_format}",
        f"fix = {str(config.fix).lower()}",
        f"unsafe-fixes = {str(config.unsafe_fixes).lower()}",
        f"show-fixes = {str(config.show_fixes).lower()}",
        "",
        "[dynamic]",
        f"factories = {dict(config.dynamic)}",
    ]
    return "\n".join(lines) + "\n"
