"""The command line: `jaxlint check`, `server`, `rules` and `rule CODE` (the contract: docs/contract.md)."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Callable, Iterator

import click

from jaxlint import __version__, settings_view, timings
from jaxlint.buffers import lint_buffer
from jaxlint.cache import Cache, cache_directory
from jaxlint.callers import callers, importers, project_modules
from jaxlint.config import (
    OUTPUT_FORMATS,
    Config,
    ConfigError,
    Selection,
    LANGUAGES,
    apply_override,
    check_selector,
    find_config_file,
    known_codes,
    load_config,
    resolve_selection,
)
from jaxlint.dynamic_settings import DRIVERS as DRIVERS_SETTING
from jaxlint.files import SUFFIXES, PathPatterns, check_glob, discover, read_bytes
from jaxlint.findings import Finding
from jaxlint.linter import io_error
from jaxlint.output import (
    TEXT_FORMATS,
    Report,
    display_path,
    render,
    statistics,
    summary,
    use_colour,
)
from jaxlint.rules import all_rules, opt_in_codes
from jaxlint.runner import FileResult, LintSettings, Run, cache_key, lint_run, load_document
from jaxlint.source import SourceError
from jaxlint.suppression import UNUSED_NOQA_CODE, PerFileIgnores, apply_noqa, unused_message, with_noqa
from jaxlint.watch import WATCH_INTERVAL, watched_state

DRIVER_ARGS = "jaxlint.driver_args"
DRIVER_TIMEOUT = 600.0  # seconds for each driven run (a test suite, a configured command)
DRIVERS = ("probe", "pytest", "commands")


class Failure(click.ClickException):
    """A problem that stops the run with exit status 2: bad configuration, a missing extra, an internal error."""

    exit_code = 2


def _guard(command: Callable) -> Callable:
    """Turn configuration errors into exit 2, and any unexpected exception into exit 2 with its traceback."""

    @wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except ConfigError as exc:
            raise Failure(str(exc)) from None
        except BrokenPipeError:
            # The reader went away (`jaxlint check | head`): stop quietly, as other command-line tools do.
            _discard_stdout()
            sys.exit(1)
        except KeyboardInterrupt:
            # 130 (128 + SIGINT), as a shell reports a command stopped by Ctrl-C: 1 would mean "findings".
            click.echo("Interrupted.", err=True)
            sys.exit(130)
        except (click.exceptions.Exit, click.ClickException):
            raise
        except Exception as exc:
            import traceback

            traceback.print_exc(file=sys.stderr)
            raise Failure(f"internal error: {type(exc).__name__}: {exc}") from None

    return wrapper


def _discard_stdout() -> None:
    """Point standard output at the null device, so that the exit's final flush fails no more."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (an in-process runner)
        pass


@contextmanager
def _output() -> Iterator[None]:
    """Writing results: a full disk or a vanished terminal ends the run in one line, exit 2, no traceback."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        _discard_stdout()
        raise Failure(f"cannot write the output: {exc.strerror or exc}") from None


def _selectors(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str] | None:
    """Comma-separated, repeatable rule selectors (`--select JAX1,JAX201 --select JAX3`)."""
    if not values:
        return None
    selectors = [s.strip() for value in values for s in value.split(",")]
    try:
        return [check_selector(s) for s in selectors]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _pairs(values: tuple[str, ...], what: str) -> list[tuple[str, str]]:
    """`A:B` pairs, comma-separated and repeatable (`--per-file-ignores "tests/*:JAX2,*.ipynb:JAX1"`)."""
    pairs = []
    for value in values:
        for item in value.split(","):
            left, colon, right = item.strip().rpartition(":")
            if not (colon and left and right):
                raise click.BadParameter(f"expected {what}, not {item.strip()!r}")
            pairs.append((left, right))
    return pairs


def _per_file_ignores(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, list[str]] | None:
    if not values:
        return None
    table: dict[str, list[str]] = {}
    try:
        for pattern, selector in _pairs(values, "PATTERN:CODE"):
            table.setdefault(check_glob(pattern), []).append(check_selector(selector))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return table


def _extensions(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    mapping = {}
    for suffix, language in _pairs(values, "EXTENSION:LANGUAGE (such as ipy:ipynb)"):
        if language not in LANGUAGES:
            raise click.BadParameter(f"`{language}` is not one of {', '.join(LANGUAGES)}")
        mapping[suffix.lstrip(".")] = language
    return mapping


def _glob_patterns(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    try:
        return tuple(check_glob(value) for value in values)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


# Every command names its `short_help`: click would cut a summary taken from the docstring to the
# terminal's width, mid-sentence.
@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="jaxlint", message="%(prog)s %(version)s")
def main() -> None:
    """jaxlint: find JAX tracing, randomness, jit-argument, purity and recompilation bugs."""


class _CheckCommand(click.Command):
    """`check`, whose arguments after `--` go to the `--driver pytest` run."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            args, ctx.meta[DRIVER_ARGS] = args[:cut], args[cut + 1:]
        return super().parse_args(ctx, args)


@main.command(cls=_CheckCommand, short_help="Lint files and folders (default: the current folder).")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--select",
    multiple=True,
    callback=_selectors,
    metavar="CODES",
    help="Rules to enable: codes or prefixes (JAX101, JAX1, ALL); replaces the configured selection. "
    "JAX001 (a file that cannot be read or parsed) is reported whatever is selected, unless ignored.",
)
@click.option(
    "--extend-select",
    multiple=True,
    callback=_selectors,
    metavar="CODES",
    help="Rules to enable in addition to those selected.",
)
@click.option("--ignore", multiple=True, callback=_selectors, metavar="CODES", help="Rules to disable.")
@click.option(
    "--extend-ignore",
    multiple=True,
    callback=_selectors,
    metavar="CODES",
    help="Rules to disable in addition to those ignored.",
)
@click.option(
    "--output-format",
    type=click.Choice(OUTPUT_FORMATS),
    default=None,
    help="How to print findings [default: full].",
)
@click.option(
    "--fixable",
    multiple=True,
    callback=_selectors,
    metavar="CODES",
    help="Rules whose fixes may apply (default: all); replaces the configured `fixable`.",
)
@click.option(
    "--extend-fixable", multiple=True, callback=_selectors, metavar="CODES", help="Rules whose fixes may apply too."
)
@click.option(
    "--unfixable", multiple=True, callback=_selectors, metavar="CODES", help="Rules whose fixes never apply."
)
@click.option(
    "--per-file-ignores",
    multiple=True,
    callback=_per_file_ignores,
    metavar="PATTERN:CODE",
    help="Codes to ignore in the files a glob matches (comma-separated pairs); replaces the configured ones.",
)
@click.option(
    "--extend-per-file-ignores",
    multiple=True,
    callback=_per_file_ignores,
    metavar="PATTERN:CODE",
    help="Like --per-file-ignores, on top of the configured ones.",
)
@click.option(
    "--extension",
    multiple=True,
    callback=_extensions,
    metavar="EXT:LANGUAGE",
    help="Lint files with this extension as `python`, `pyi` or `ipynb`, such as `ipy:ipynb` (comma-separated).",
)
@click.option("--ignore-noqa", is_flag=True, help="Ignore every `# noqa` comment.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings, nothing else.")
@click.option(
    "-s", "--silent", is_flag=True, help="Print nothing (the exit status still says whether there are findings)."
)
@click.option("-v", "--verbose", is_flag=True, help="Say on standard error what the run does and how long it took.")
@click.option(
    "--timings",
    is_flag=True,
    help="Print on standard error where the run's time went: each stage, and each phase of linting the files "
    "(reading, parsing, each fact of the analysis, each rule).",
)
@click.option(
    "--color",
    "colour",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    help="Colour the text output: on a terminal (auto), always or never [default: auto].",
)
@click.option(
    "--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings."
)
@click.option("-e", "--exit-zero", is_flag=True, help="Exit with status 0 even when there are findings.")
@click.option(
    "--config",
    "config_args",
    multiple=True,
    metavar="PATH|KEY=VALUE",
    help="A config file to use instead of discovery, or a `key = value` TOML override (repeatable).",
)
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option("-n", "--no-cache", is_flag=True, help="Neither read nor write the results cache.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    envvar="JAXLINT_CACHE_DIR",
    default=None,
    help="Where to keep the results cache [default: .jaxlint_cache in the project].",
)
@click.option("--fix/--no-fix", default=None, help="Apply safe fixes and write the files back.")
@click.option(
    "--fix-only/--no-fix-only",
    default=None,
    help="Apply fixes, and neither report nor exit 1 for the findings left. Implies --fix.",
)
@click.option(
    "--unsafe-fixes/--no-unsafe-fixes", default=None, help="Apply (and offer) unsafe fixes as well."
)
@click.option("--diff", is_flag=True, help="Print a diff of what --fix would change instead of writing it.")
@click.option("--show-fixes/--no-show-fixes", default=None, help="List what was fixed, per file.")
@click.option(
    "--exclude",
    multiple=True,
    callback=_glob_patterns,
    metavar="GLOB",
    help="Patterns to skip, replacing the configured and default ones.",
)
@click.option(
    "--extend-exclude",
    multiple=True,
    callback=_glob_patterns,
    metavar="GLOB",
    help="Patterns to skip in addition to the excluded ones.",
)
@click.option(
    "--force-exclude/--no-force-exclude",
    default=None,
    help="Apply the excludes even to paths given on the command line.",
)
@click.option(
    "--respect-gitignore/--no-respect-gitignore",
    default=None,
    help="Skip files that .gitignore ignores [default: on].",
)
@click.option("--show-files", is_flag=True, help="Print the files that would be linted, and stop.")
@click.option(
    "--stdin-filename",
    metavar="PATH",
    default=None,
    help="Lint standard input as the file PATH (its configuration and per-file ignores apply).",
)
@click.option(
    "-o",
    "--output-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the findings to this file instead of standard output.",
)
@click.option(
    "--exit-non-zero-on-fix",
    is_flag=True,
    help="Exit with status 1 when --fix fixed something, even if nothing remains.",
)
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding.")
@click.option(
    "--show-settings", is_flag=True, help="Print the settings that apply to the first path, and stop."
)
@click.option("-w", "--watch", is_flag=True, help="Lint again whenever a file changes.")
@click.option(
    "--dynamic",
    is_flag=True,
    help="Try to confirm each finding by running the code with JAX. This executes your code, as you: "
    "never use it on code you do not trust.",
)
@click.option(
    "--backend",
    type=click.Choice(["cpu", "gpu", "tpu"]),
    default=None,
    help="Where --dynamic runs the code [default: the CPU, and an accelerator only for what the CPU cannot show].",
)
@click.option(
    "--dynamic-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Time limit for --dynamic [default: 60 per file probed; 600 per driven run].",
)
@click.option(
    "--sandbox",
    is_flag=True,
    help="Run --dynamic's workers in a bubblewrap sandbox (Linux, needs `bwrap`): read-only files, no network.",
)
@click.option(
    "--driver",
    "drivers",
    multiple=True,
    type=click.Choice(DRIVERS),
    help="How --dynamic runs the code: probe each finding's function (the default), run the project's "
    "tests (`pytest`; arguments after `--` go to pytest), or the configured `drivers` commands "
    "(the default too when any are configured). Repeatable.",
)
@_guard
def check(paths: tuple[str, ...], **opts) -> None:
    """Lint PATHS (files or folders; default: the current folder)."""
    if opts["watch"]:
        _watch(lambda: _check_once(paths, opts), paths or (".",))
    _check_once(paths, opts)


def _check_once(paths: tuple[str, ...], opts: dict) -> None:
    """One run of `check`: it ends by exiting with the status the findings call for."""
    if (opts["backend"] or opts["dynamic_timeout"] or opts["sandbox"] or opts["drivers"]) and not opts["dynamic"]:
        raise click.UsageError("--backend, --dynamic-timeout, --sandbox and --driver need --dynamic")
    opts["driver_args"] = click.get_current_context().meta.get(DRIVER_ARGS)
    if opts["driver_args"] is not None and "pytest" not in opts["drivers"]:
        raise click.UsageError("arguments after `--` are for --driver pytest")
    opts["quiet"] = opts["quiet"] or opts["silent"]  # silent is quiet, and prints no findings either
    started = time.perf_counter()
    if opts["timings"]:
        timings.start()
    reads_stdin = _reads_stdin(paths, opts)
    paths = paths or (".",)
    config = _configure((opts["stdin_filename"] or ".",) if reads_stdin else paths, opts)
    _verbose(opts, f"configuration: {', '.join(map(str, config.sources)) or 'none found: the defaults'}")
    rules = all_rules()
    codes = known_codes(rules)
    cli_selection = Selection(
        opts["select"], opts["extend_select"] or [], (opts["ignore"] or []) + (opts["extend_ignore"] or [])
    )
    selected = resolve_selection([*config.selections, cli_selection], codes, opt_in_codes())
    if opts["show_settings"]:
        shown = opts["stdin_filename"] or "-" if reads_stdin else paths[0]
        fixable = _fixable(config, opts, codes)
        click.echo(settings_view.render(config, selected, fixable, shown, opts), nl=False)
        return
    if reads_stdin:
        status = _check_stdin(config, selected, rules, codes, opts)
        _show_timings(opts, None)
        sys.exit(0 if opts["exit_zero"] else status)
    found = timings.run(
        "find files",
        discover,
        paths,
        root=config.root,
        excludes=config.excludes,
        respect_gitignore=config.respect_gitignore,
        force_exclude=config.force_exclude,
        suffixes=SUFFIXES + tuple(f".{suffix}" for suffix in config.extension),
    )
    for warning in found.warnings:
        _warn(opts, f"warning: {warning}")
    if opts["show_files"]:
        with _output():
            click.echo("".join(f"{display_path(p)}\n" for p in found.files), nl=False)
        return
    quiet = opts["quiet"]
    if not found.files and not found.missing and not quiet:
        click.echo("warning: No Python files found under the given path(s)", err=True)
    _verbose(opts, f"{len(found.files)} file(s) to lint")

    diff = opts["diff"]
    run = _lint(found.files, config, selected, rules, opts, fix=config.fix and not diff, diff=diff)
    results = run.reported()
    missing = [io_error(path, reason) for path, reason in found.missing]
    # What the files' traced calls cause in modules not checked is reported there, and never fixed.
    elsewhere = [f.with_(fix=None) for r in run.elsewhere for f in r.findings or ()]
    findings = _kept([f for r in results for f in r.findings or ()] + elsewhere + missing, config, selected, codes)
    if opts["dynamic"]:
        findings = _confirm(findings, found.files, config, opts, quiet)
        if not opts["ignore_noqa"]:
            findings = _unsuppressed(findings)
        findings = _kept(findings, config, selected, codes)  # observed ones are new
    _verbose(opts, f"linted in {time.perf_counter() - started:.2f}s")

    if opts["add_noqa"]:
        _add_noqa(findings, set(found.files), opts)
        return

    for result in results:
        for warning in result.warnings:
            _warn(opts, f"warning: {display_path(result.path)}: {warning}")
    internal_errors = [r for r in results + run.elsewhere if r.error]
    for result in internal_errors:
        click.echo(f"error: failed to lint {display_path(result.path)}: {result.error}", err=True)
    unwritten = [r for r in results if r.write_error]
    for result in unwritten:
        click.echo(f"error: failed to fix {display_path(result.path)}: {result.write_error}", err=True)
    with _output():
        status = timings.run(
            "output", _print, results, findings, Report(rules, unsafe_fixes=config.unsafe_fixes), config, opts
        )
    _show_timings(opts, run)
    if internal_errors:
        raise Failure(f"{len(internal_errors)} file(s) could not be linted because of an internal error")
    if unwritten:
        raise Failure(f"{len(unwritten)} file(s) could not be fixed; their findings are reported above")
    sys.exit(0 if opts["exit_zero"] else status)


def _show_timings(opts: dict, run: Run | None) -> None:
    """What `--timings` prints on standard error: the wall seconds of each step of the run in this
    process, then the CPU seconds of each phase of linting the files, summed over the files and the
    worker processes, per stage of the run (`runner.lint_run`), most first."""
    if not opts["timings"]:
        return
    steps = timings.stop()
    stages = run.stages if run is not None else {}
    phases: dict[str, float] = {}
    for stage in stages.values():
        timings.add(phases, stage.seconds)
    width = max(map(len, [*steps, *phases, "phase"])) + 2
    lines = ["timings: the run (wall seconds, this process)"]
    for step, seconds in sorted(steps.items(), key=lambda item: -item[1]):
        lines.append(f"  {step:<{width}}{seconds:9.3f}")
        if step == "lint":
            lines += [f"    {name:<{width - 2}}{stage.wall:9.3f}  ({stage.files} files)" for name, stage in stages.items()]
    if phases:
        total = sum(phases.values())
        lines.append("timings: linting the files (CPU seconds per phase, summed over the files and processes)")
        lines.append(f"  {'phase':<{width}}{''.join(f'{name:>10}' for name in stages)}{'total':>10}{'share':>8}")
        rows = [*sorted(phases.items(), key=lambda item: -item[1]), ("all", total)]
        for phase, seconds in rows:
            spent = [sum(s.seconds.values()) if phase == "all" else s.seconds.get(phase, 0.0) for s in stages.values()]
            lines.append(f"  {phase:<{width}}{''.join(f'{t:10.3f}' for t in spent)}{seconds:10.3f}{seconds / total:8.1%}")
    click.echo("\n".join(lines), err=True)


def _warn(opts: dict, text: str) -> None:
    """A warning on standard error, unless the run is silent."""
    if not opts["silent"]:
        click.echo(text, err=True)


def _verbose(opts: dict, text: str) -> None:
    """What `-v` shows of the run, on standard error."""
    if opts["verbose"]:
        click.echo(f"debug: {text}", err=True)


def _reads_stdin(paths: tuple[str, ...], opts: dict) -> bool:
    """`-` as the only path, or `--stdin-filename` with no path, lints standard input (as ruff)."""
    if "-" in paths and len(paths) > 1:
        raise click.UsageError("`-` (standard input) cannot be combined with other paths")
    if opts["stdin_filename"] is not None and paths not in ((), ("-",)):
        raise click.UsageError("--stdin-filename names standard input's file: give no other path, or `-`")
    reads = paths == ("-",) or opts["stdin_filename"] is not None
    if reads and opts["dynamic"]:
        raise click.UsageError("--dynamic imports the linted files: it cannot check standard input")
    return reads


def _check_stdin(config: Config, selected: frozenset[str], rules, codes: list[str], opts: dict) -> int:
    """Lint standard input as the file `--stdin-filename` names; with --fix, print the fixed source."""
    name = opts["stdin_filename"]
    path = os.path.abspath(name) if name else "-"
    data = sys.stdin.buffer.read()
    fix = config.fix and not opts["diff"]
    if name and config.force_exclude and PathPatterns(config.excludes, config.root).match_any_parent(path):
        if fix:
            click.echo(data, nl=False)  # an excluded file passes through unchanged
        return 0
    settings = _lint_settings(config, selected, rules, opts, fix=fix, diff=opts["diff"])
    # The buffer's own results are never kept; those of the modules linted with it are.
    cache = None if opts["no_cache"] else _cache(config, settings, opts)
    result = lint_buffer(data, path, settings, _callers([path] if name else [], config), cache)
    if cache is not None:
        cache.save()
    for warning in result.warnings:
        _warn(opts, f"warning: {display_path(path)}: {warning}")
    findings = _kept(result.findings, config, selected, codes)
    file_result = FileResult(path, findings, fixed=result.fixed, diff=result.diff)
    report = Report(rules, unsafe_fixes=config.unsafe_fixes, buffers={path: result.fixed_data})
    if not fix:
        return _print([file_result], findings, report, config, opts)
    # As ruff: the fixed source is the output, what remains goes to standard error.
    click.echo(result.fixed_data, nl=False)
    return _print([file_result], findings, report, config, opts, err=True)


def _print(
    results: list[FileResult],
    findings: list[Finding],
    report: Report,
    config: Config,
    opts: dict,
    err: bool = False,
) -> int:
    """Print the findings (or the diffs, or the statistics) and the summary; the exit status they call for.

    `err` sends everything to standard error (standard output carries fixed source); `--output-file`
    sends what would go to standard output to that file, without colour.
    """
    quiet = opts["quiet"]
    fixed = {r.path: r.fixed for r in results if r.fixed}
    fixed_count = sum(sum(c.values()) for c in fixed.values())
    written: list[str] = []
    to_file = bool(opts["output_file"]) and not err
    wanted = {"always": True, "never": False}.get(opts["colour"])
    colour = not to_file and (use_colour(sys.stderr if err else sys.stdout) if wanted is None else wanted)
    report = dataclasses.replace(report, colour=colour)

    def emit(text: str) -> None:
        if opts["silent"]:
            return
        if to_file:
            written.append(text)
        else:
            click.echo(text, nl=False, err=err, color=colour)

    if opts["diff"]:
        emit("".join(r.diff for r in sorted(results, key=lambda r: r.path)))
        if not quiet:
            click.echo(summary.diff_summary(fixed_count, findings, report), err=True, nl=False)
        status = 1 if fixed_count else 0
    elif config.fix_only:  # as ruff: what was fixed, not what is left
        if (opts["output_format"] or config.output_format or "full") in TEXT_FORMATS and not quiet:
            if config.show_fixes:
                emit(summary.fixed_by_file(fixed))
            emit(summary.fixed_summary(fixed_count))
        status = 1 if opts["exit_non_zero_on_fix"] and fixed_count else 0
    else:
        output_format = opts["output_format"] or config.output_format or "full"
        if opts["statistics"]:
            emit(statistics.render(findings, report, as_json=output_format == "json"))
        else:
            emit(render(output_format, findings, report))
        if output_format in TEXT_FORMATS and not quiet:
            if config.show_fixes:
                emit(summary.fixed_by_file(fixed))
            emit(summary.check_summary(findings, fixed_count, report))
        status = 1 if findings or (opts["exit_non_zero_on_fix"] and fixed_count) else 0
    if opts["output_file"]:
        _write_output_file(Path(opts["output_file"]), "".join(written))
    return status


def _write_output_file(path: Path, text: str) -> None:
    """`-o PATH`: the output written there, its folders made; a path that cannot be is named, with why
    (the system says only "File exists" of a file where a folder must be)."""
    blocker = next((folder for folder in path.parents if folder.exists() and not folder.is_dir()), None)
    if blocker is not None:
        raise Failure(f"cannot write the output to {path}: {blocker} is a file, not a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise Failure(f"cannot write the output to {path}: {exc.strerror or exc}") from None


def _add_noqa(findings: list[Finding], checked: set[str], opts: dict) -> None:
    """Write `# noqa: CODE` for every finding on its line (in its cell, in a notebook), as ruff's
    --add-noqa; the run then passes. A file that cannot take them is named on standard error, and
    so is a file that was not checked (a finding a checked file's traced call causes there): only
    the files checked are written."""
    from jaxlint.write import WriteError, write_back

    added = 0
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    for path, in_file in sorted(by_path.items()):
        if not os.path.isfile(path):
            continue
        if path not in checked:
            _warn(opts, f"warning: {display_path(path)}: no `# noqa` added: the file was not among those checked")
            continue
        try:
            data = read_bytes(path)
            document = load_document(path, data, any(f.cell is not None for f in in_file))
            noted, count = document.with_noqa(in_file, with_noqa)
            if count:
                write_back(path, noted, data)
        except (OSError, SourceError, WriteError) as exc:
            _warn(opts, f"warning: {display_path(path)}: no `# noqa` added: {exc}")
            continue
        added += count
    if not opts["quiet"]:
        click.echo(f"Added {added} noqa directive{'' if added == 1 else 's'}.", err=True)
    sys.exit(0)


def _watch(run: Callable[[], None], paths: tuple[str, ...]) -> None:
    """Run, then run again whenever a Python file, notebook or config file under `paths` changes; Ctrl-C stops."""
    click.echo("Starting linter in watch mode...", err=True)
    try:
        while True:
            before = watched_state(paths)
            try:
                run()
            except SystemExit:
                pass
            except click.ClickException as exc:
                exc.show()
            except ConfigError as exc:  # a configuration half-edited: say so and wait for the next save
                click.echo(f"error: {exc}", err=True)
            click.echo("Watching for file changes.", err=True)
            while watched_state(paths) == before:
                time.sleep(WATCH_INTERVAL)
            click.echo("File change detected...", err=True)
    except KeyboardInterrupt:
        sys.exit(0)


def _configure(paths: tuple[str, ...], opts: dict) -> Config:
    """The configuration file's settings (or the defaults), then the command line's on top."""
    files = [v for v in opts["config_args"] if "=" not in v or Path(v).is_file()]
    overrides = [v for v in opts["config_args"] if v not in files]
    if len(files) > 1:
        raise click.UsageError("--config names more than one file")
    if files and not Path(files[0]).is_file():
        raise Failure(f"config file not found: {files[0]}")
    explicit = Path(files[0]) if files else None
    try:
        search_from = Path(paths[0]).resolve()
    except (OSError, RuntimeError):  # a symbolic link loop (RuntimeError before Python 3.13): found later
        search_from = Path(os.path.abspath(paths[0]))
    if explicit is None and not opts["isolated"] and find_config_file(search_from) is None:
        search_from = Path.cwd()  # a path outside any project: the working folder's config applies, as ruff's
    config = load_config(explicit, search_from=search_from, isolated=opts["isolated"])
    for override in overrides:
        apply_override(config, override)
    if opts["exclude"]:
        config.exclude = list(opts["exclude"])
    config.extend_exclude += opts["extend_exclude"]
    for flag in ("force_exclude", "respect_gitignore", "fix", "fix_only", "unsafe_fixes", "show_fixes"):
        if opts[flag] is not None:
            setattr(config, flag, opts[flag])
    config.fix = config.fix or config.fix_only
    if opts["per_file_ignores"] is not None:
        config.per_file_ignores = opts["per_file_ignores"]
    for pattern, selectors in (opts["extend_per_file_ignores"] or {}).items():
        config.per_file_ignores.setdefault(pattern, []).extend(selectors)
    config.extension.update(opts["extension"])
    return config


def _lint_settings(config: Config, selected, rules, opts: dict, **run) -> LintSettings:
    """What every file is linted with; `run` says whether to fix, diff or hash contents for the cache."""
    codes = known_codes(rules)
    fixable = _fixable(config, opts, codes)
    return LintSettings(
        codes=frozenset(selected & rules.keys()),
        options=config.options,
        known=frozenset(rules),
        unsafe_fixes=config.unsafe_fixes,
        fixable=None if fixable == frozenset(codes) else fixable,
        ignore_noqa=opts["ignore_noqa"],
        extension=tuple(sorted(config.extension.items())),
        timings=opts["timings"],
        **run,
    )


def _fixable(config: Config, opts: dict, codes: list[str]) -> frozenset[str]:
    """The codes whose fixes may apply: the configuration's `fixable` layer, then the command line's."""
    cli = Selection(opts["fixable"], opts["extend_fixable"] or [], opts["unfixable"] or [])
    return resolve_selection([config.fixable, cli], codes)


def _lint(files, config, selected, rules, opts: dict, *, fix: bool, diff: bool) -> Run:
    """Lint the files, through the cache unless fixing (a fix run must see and write the files
    themselves), with the findings their traced calls cause in the project's other modules."""
    use_cache = not (opts["no_cache"] or fix or diff)
    settings = _lint_settings(config, selected, rules, opts, fix=fix, diff=diff, hash_contents=use_cache)
    cache = _cache(config, settings, opts) if use_cache else None
    modules = timings.run(
        "project modules", project_modules, files, excludes=config.excludes, root=config.root,
        respect_gitignore=config.respect_gitignore,
    )
    callers = timings.run("project modules", importers, files, modules)
    run = timings.run("lint", lint_run, files, settings, cache, callers=callers, elsewhere=modules)
    if cache is not None:
        cache.save()
    return run


def _cache(config: Config, settings: LintSettings, opts: dict) -> Cache:
    cache = Cache(cache_directory(config.cache_dir, config.root, opts["cache_dir"]).resolve(), cache_key(settings))
    _verbose(opts, f"results cache: {cache.directory}")
    return cache


def _callers(files: list[str], config: Config) -> list[str]:
    """The project's modules that may call into `files`: linted with them, not reported."""
    return callers(files, excludes=config.excludes, root=config.root, respect_gitignore=config.respect_gitignore)


def _kept(
    findings: list[Finding], config: Config, selected: frozenset[str], codes: list[str]
) -> list[Finding]:
    """The selected findings that no per-file ignore covers, in path and position order."""
    ignores = PerFileIgnores(config.per_file_ignores, config.root, codes)
    kept = [f for f in findings if f.code in selected and not (ignores and f.code in ignores.ignored(f.path))]
    return sorted(kept, key=Finding.sort_key)


def _confirm(findings: list[Finding], files, config: Config, opts: dict, quiet: bool) -> list[Finding]:
    """Hand the findings to the dynamic confirmer; if it fails, say so and keep the static findings."""
    import importlib.util

    if importlib.util.find_spec("jax") is None:
        raise Failure("--dynamic needs JAX, which is not installed: install jaxlint's `dynamic` extra "
                      "(in a checkout of jaxlint: pip install '.[dynamic]')")
    try:
        from jaxlint.dynamic import confirm
    except ImportError as exc:
        raise Failure(
            f"--dynamic is unavailable: {exc} (it needs JAX: install the `dynamic` extra)"
        ) from None
    commands = config.dynamic.get(DRIVERS_SETTING, [])
    kinds = opts["drivers"] or (("probe", "commands") if commands else ("probe",))
    output_format = opts["output_format"] or config.output_format or "full"
    show_progress = not quiet and output_format in TEXT_FORMATS and _stderr_is_terminal()
    try:
        if "probe" in kinds:
            findings = confirm(
                findings,
                backend=opts["backend"],
                timeout=opts["dynamic_timeout"] or 60.0,
                settings={k: v for k, v in config.dynamic.items() if k != DRIVERS_SETTING},
                show_progress=show_progress,
                sandboxed=opts["sandbox"],
            )
        from jaxlint.dynamic.driver import command_driver, drive, pytest_driver

        drivers = [pytest_driver(list(opts["driver_args"] or []))] if "pytest" in kinds else []
        drivers += [command_driver(c) for c in commands] if "commands" in kinds else []
        if drivers:
            findings = drive(findings, [str(Path(f).resolve()) for f in files], drivers,
                             root=str(config.root), backend=opts["backend"],
                             timeout=opts["dynamic_timeout"] or DRIVER_TIMEOUT, show_progress=show_progress)
    except Exception as exc:  # the static findings stand on their own
        click.echo(f"warning: dynamic confirmation failed: {type(exc).__name__}: {exc}", err=True)
    return findings


def _unsuppressed(findings: list[Finding]) -> list[Finding]:
    """The findings, less observed ones (found by running the code) that a `# noqa` covers."""
    observed: dict[str, list[Finding]] = {}
    for f in findings:
        if (f.confirmation or {}).get("status") == "observed":
            observed.setdefault(f.path, []).append(f)
    dropped: set[int] = set()
    for path, group in observed.items():
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        kept = {id(f) for f in apply_noqa(group, text)}
        dropped.update(id(f) for f in group if id(f) not in kept)
        # A directive that the static pass found unused, but that suppressed what the run observed, is used.
        used = {(f.start.row if f.noqa_row is None else f.noqa_row, f.code) for f in group if id(f) not in kept}
        dropped.update(
            id(f) for f in findings
            if f.path == path and f.code == UNUSED_NOQA_CODE
            and any(f.start.row == row and f.message == unused_message([code]) for row, code in used)
        )
    return [f for f in findings if id(f) not in dropped]


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def _rule_entry(rule) -> dict:
    """A rule as `jaxlint rules --output-format json` lists it."""
    return {
        "code": rule.code,
        "name": rule.name,
        "category": rule.category,
        "summary": rule.summary,
        "fixable": rule.fixable,
        "url": rule.url,
    }


@main.command("rules", short_help="List every rule.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", help="Table or JSON.")
@_guard
def rules_command(output_format: str) -> None:
    """List every rule: code, name, category, autofix, summary."""
    rules = list(all_rules().values())
    if output_format == "json":
        rows = [_rule_entry(r) for r in rules]
        with _output():
            click.echo(json.dumps(rows, indent=2))
        return
    table = [("CODE", "NAME", "CATEGORY", "FIX", "SUMMARY")]
    table += [(r.code, r.name, r.category, "[*]" if r.fixable else "", r.summary) for r in rules]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    with _output():
        for row in table:
            click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])


@main.command("rule", short_help="Print a rule's documentation.")
@click.argument("code", required=False)
@click.option("--all", "every", is_flag=True, help="Every rule's page.")
@click.option(
    "--output-format", type=click.Choice(["text", "json"]), default="text", help="The page, or JSON."
)
@_guard
def rule_command(code: str | None, every: bool, output_format: str) -> None:
    """Print a rule's documentation (or, with --all, every rule's): what it does, why it is bad, an
    example, what to use instead."""
    if (code is None) != every:
        raise click.UsageError("give a rule's code, or --all")
    if every:
        rules = list(all_rules().values())
    else:
        rule = all_rules().get(code.upper())
        if rule is None:
            raise Failure(f"unknown rule code {code!r} (see `jaxlint rules`)")
        rules = [rule]
    with _output():
        if output_format == "text":
            click.echo("\n".join(r.page() for r in rules), nl=False)
            return
        pages = [{**_rule_entry(r), "explanation": r.page()} for r in rules]
        click.echo(json.dumps(pages if every else pages[0], indent=2))


@main.command("version", short_help="Print jaxlint's version.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", help="Text or JSON.")
def version_command(output_format: str) -> None:
    """Print jaxlint's version."""
    if output_format == "json":
        click.echo(json.dumps({"version": __version__, "commit_info": None}, indent=2))
    else:
        click.echo(f"jaxlint {__version__}")


@main.command("clean", short_help="Remove the results cache.")
@click.option("-v", "--verbose", is_flag=True, help="Name each cache removed.")
@_guard
def clean_command(verbose: bool) -> None:
    """Remove the results cache: the configured one and every `.jaxlint_cache` folder under the current folder."""
    from jaxlint.clean import clean

    config = load_config(None, search_from=Path.cwd())
    directory = cache_directory(config.cache_dir, config.root)
    for removed in clean(Path.cwd(), directory):
        if verbose:
            click.echo(f"Removing cache at: {display_path(str(removed))}", err=True)


@main.command("config", short_help="List the settings, or describe one.")
@click.argument("key", required=False)
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", help="Text or JSON.")
@_guard
def config_command(key: str | None, output_format: str) -> None:
    """List the settings of `[tool.jaxlint]`, or describe one KEY (`options.unroll-threshold`): its doc,
    default, type and an example."""
    from jaxlint import settings_reference as reference

    scope = "" if key is None else key
    nested = reference.keys_under(scope)
    setting = reference.find(key) if key is not None else None
    if setting is None and not nested:
        raise click.BadParameter(f"no setting is called {key!r} (see `jaxlint config`)", param_hint="KEY")
    with _output():
        if nested and output_format == "json":
            click.echo(json.dumps(nested, indent=2))
        elif nested:
            click.echo("".join(f"{name}\n" for name in nested), nl=False)
        elif output_format == "json":
            click.echo(json.dumps(setting.to_json(), indent=2))
        else:
            click.echo(reference.describe(setting), nl=False)


@main.command("server", short_help="Run the language server for editors.")
@_guard
def server_command() -> None:
    """Run the language server for editors (LSP over standard input and output)."""
    try:
        from jaxlint.server.app import serve
    except ImportError as exc:
        raise Failure(f"`jaxlint server` is unavailable: {exc} (install the `server` extra)") from None
    serve()
