"""The command line: `jaxlint check`, `server`, `rules` and `rule CODE` (the contract: docs/contract.md)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
import time
import tokenize
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Callable, Iterator

import click

from jaxlint import __version__, settings_view
from jaxlint.buffers import lint_buffer
from jaxlint.cache import Cache, settings_key
from jaxlint.config import (
    OUTPUT_FORMATS,
    Config,
    ConfigError,
    Selection,
    apply_settings,
    check_known,
    check_selector,
    find_config_file,
    known_codes,
    load_config,
    parse_override,
    resolve_selection,
)
from jaxlint.files import PathPatterns, check_glob, discover
from jaxlint.findings import Finding
from jaxlint.linter import parse_error
from jaxlint.output import (
    TEXT_FORMATS,
    Report,
    display_path,
    render,
    statistics,
    summary,
    use_colour,
)
from jaxlint.rules import all_rules
from jaxlint.runner import FileResult, LintSettings, lint_files
from jaxlint.source import SourceError, decode
from jaxlint.suppression import UNUSED_NOQA_CODE, PerFileIgnores, apply_noqa, unused_message, with_noqa
from jaxlint.watch import WATCH_INTERVAL, watched_state

DEFAULT_CACHE_DIR = ".jaxlint_cache"
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


def _glob_patterns(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    try:
        return tuple(check_glob(value) for value in values)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


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


@main.command(cls=_CheckCommand)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--select",
    multiple=True,
    callback=_selectors,
    metavar="CODES",
    help="Rules to enable: codes or prefixes (JAX101, JAX1, ALL); replaces the configured selection.",
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
@click.option("-q", "--quiet", is_flag=True, help="Print findings, nothing else.")
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
@click.option("--no-cache", is_flag=True, help="Neither read nor write the results cache.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    envvar="JAXLINT_CACHE_DIR",
    default=None,
    help="Where to keep the results cache [default: .jaxlint_cache in the project].",
)
@click.option("--fix/--no-fix", default=None, help="Apply safe fixes and write the files back.")
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
    help="JAX backend for --dynamic [default: whatever JAX picks].",
)
@click.option(
    "--dynamic-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Time limit for --dynamic [default: 60].",
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
    reads_stdin = _reads_stdin(paths, opts)
    paths = paths or (".",)
    config = _configure((opts["stdin_filename"] or ".",) if reads_stdin else paths, opts)
    rules = all_rules()
    codes = known_codes(rules)
    cli_selection = Selection(
        opts["select"], opts["extend_select"] or [], (opts["ignore"] or []) + (opts["extend_ignore"] or [])
    )
    check_known(_all_selectors(config, cli_selection), codes)
    selected = resolve_selection([*config.selections, cli_selection], codes)
    if opts["show_settings"]:
        click.echo(settings_view.render(config, selected, paths, opts), nl=False)
        return
    if reads_stdin:
        status = _check_stdin(config, selected, rules, codes, opts)
        sys.exit(0 if opts["exit_zero"] else status)
    found = discover(
        paths,
        root=config.root,
        excludes=config.excludes,
        respect_gitignore=config.respect_gitignore,
        force_exclude=config.force_exclude,
    )
    for warning in found.warnings:
        click.echo(f"warning: {warning}", err=True)
    if opts["show_files"]:
        with _output():
            click.echo("".join(f"{display_path(p)}\n" for p in found.files), nl=False)
        return
    quiet = opts["quiet"]
    if not found.files and not found.missing and not quiet:
        click.echo("warning: No Python files found under the given path(s)", err=True)

    diff = opts["diff"]
    results = _lint(
        found.files,
        config,
        selected,
        rules,
        fix=config.fix and not diff,
        diff=diff,
        use_cache=not opts["no_cache"],
        cache_dir=opts["cache_dir"],
    )
    missing = [_unreadable(path, reason) for path, reason in found.missing]
    findings = _kept([f for r in results for f in r.findings or ()] + missing, config, selected, codes)
    if opts["dynamic"]:
        findings = _confirm(findings, found.files, config, opts, quiet)
        findings = _kept(_unsuppressed(findings), config, selected, codes)  # observed ones are new

    if opts["add_noqa"]:
        _add_noqa(findings, quiet)
        return

    for result in results:
        for warning in result.warnings:
            click.echo(f"warning: {display_path(result.path)}: {warning}", err=True)
    internal_errors = [r for r in results if r.error]
    for result in internal_errors:
        click.echo(f"error: failed to lint {display_path(result.path)}: {result.error}", err=True)
    unwritten = [r for r in results if r.write_error]
    for result in unwritten:
        click.echo(f"error: failed to fix {display_path(result.path)}: {result.write_error}", err=True)
    with _output():
        status = _print(results, findings, Report(rules, unsafe_fixes=config.unsafe_fixes), config, opts)
    if internal_errors:
        raise Failure(f"{len(internal_errors)} file(s) could not be linted because of an internal error")
    if unwritten:
        raise Failure(f"{len(unwritten)} file(s) could not be fixed; their findings are reported above")
    sys.exit(0 if opts["exit_zero"] else status)


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
    settings = LintSettings(
        codes=frozenset(selected & rules.keys()),
        options=config.options,
        known=frozenset(rules),
        fix=fix,
        diff=opts["diff"],
        unsafe_fixes=config.unsafe_fixes,
    )
    result = lint_buffer(data, path, settings)
    for warning in result.warnings:
        click.echo(f"warning: {display_path(path)}: {warning}", err=True)
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
    colour = not to_file and use_colour(sys.stderr if err else sys.stdout)
    report = dataclasses.replace(report, colour=colour)

    def emit(text: str) -> None:
        if to_file:
            written.append(text)
        else:
            click.echo(text, nl=False, err=err, color=colour)

    if opts["diff"]:
        emit("".join(r.diff for r in sorted(results, key=lambda r: r.path)))
        if not quiet:
            click.echo(summary.diff_summary(fixed_count, findings, report), err=True, nl=False)
        status = 1 if fixed_count else 0
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
        target = Path(opts["output_file"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(written), encoding="utf-8")
    return status


def _add_noqa(findings: list[Finding], quiet: bool) -> None:
    """Write `# noqa: CODE` for every finding on its line, as ruff's --add-noqa; the run then passes."""
    added = 0
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    for path, in_file in sorted(by_path.items()):
        if path.endswith(".ipynb") or not os.path.isfile(path):
            continue
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            text = decode(data)
        except SourceError:
            continue
        new_text, count = with_noqa(text, in_file)
        if count:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            with open(path, "wb") as handle:
                handle.write(new_text.encode(encoding))
            added += count
    if not quiet:
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
        apply_settings(config, parse_override(override), f"--config {override!r}")
    if opts["exclude"]:
        config.exclude = list(opts["exclude"])
    config.extend_exclude += opts["extend_exclude"]
    for flag in ("force_exclude", "respect_gitignore", "fix", "unsafe_fixes", "show_fixes"):
        if opts[flag] is not None:
            setattr(config, flag, opts[flag])
    return config


def _unreadable(path: str, reason: str) -> Finding:
    """A path on the command line that cannot be read: JAX001 with the system's reason, as ruff's E902."""
    return parse_error(path, SourceError(reason)).with_(message=reason)


def _all_selectors(config: Config, cli: Selection) -> list[str]:
    selectors = []
    for layer in (*config.selections, cli):
        selectors += (layer.select or []) + layer.extend_select + layer.ignore
    for codes in config.per_file_ignores.values():
        selectors += codes
    return selectors


def _lint(files, config, selected, rules, *, fix, diff, use_cache, cache_dir) -> list[FileResult]:
    """Lint the files, through the cache unless fixing (a fix run must see and write the files themselves)."""
    cache = None
    if use_cache and not (fix or diff):
        directory = Path(cache_dir) if cache_dir else config.cache_dir or config.root / DEFAULT_CACHE_DIR
        cache = Cache(directory.resolve(), settings_key(selected, config.options))
    settings = LintSettings(
        codes=frozenset(selected & rules.keys()),
        options=config.options,
        known=frozenset(rules),
        hash_contents=cache is not None,
        fix=fix,
        diff=diff,
        unsafe_fixes=config.unsafe_fixes,
    )
    results = lint_files(files, settings, cache)
    if cache is not None:
        cache.save()
    return results


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
    commands = config.dynamic.get("drivers", [])
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        raise Failure("[tool.jaxlint.dynamic] drivers must be a list of command strings")
    kinds = opts["drivers"] or (("probe", "commands") if commands else ("probe",))
    output_format = opts["output_format"] or config.output_format or "full"
    show_progress = not quiet and output_format in TEXT_FORMATS and _stderr_is_terminal()
    try:
        if "probe" in kinds:
            findings = confirm(
                findings,
                backend=opts["backend"],
                timeout=opts["dynamic_timeout"] or 60.0,
                settings={k: v for k, v in config.dynamic.items() if k != "drivers"},
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
    except ConfigError:
        raise
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


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", help="Table or JSON.")
@_guard
def rules_command(output_format: str) -> None:
    """List every rule: code, name, category, autofix, summary."""
    rules = list(all_rules().values())
    if output_format == "json":
        rows = [
            {
                "code": r.code,
                "name": r.name,
                "category": r.category,
                "summary": r.summary,
                "fixable": r.fixable,
                "url": r.url,
            }
            for r in rules
        ]
        with _output():
            click.echo(json.dumps(rows, indent=2))
        return
    table = [("CODE", "NAME", "CATEGORY", "FIX", "SUMMARY")]
    table += [(r.code, r.name, r.category, "[*]" if r.fixable else "", r.summary) for r in rules]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    with _output():
        for row in table:
            click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])


@main.command("rule")
@click.argument("code")
@click.option(
    "--output-format", type=click.Choice(["text", "json"]), default="text", help="The page, or JSON."
)
@_guard
def rule_command(code: str, output_format: str) -> None:
    """Print a rule's documentation: what it does, why it is bad, an example, what to use instead."""
    rule = all_rules().get(code.upper())
    if rule is None:
        raise Failure(f"unknown rule code {code!r} (see `jaxlint rules`)")
    if output_format == "json":
        click.echo(
            json.dumps(
                {
                    "code": rule.code,
                    "name": rule.name,
                    "category": rule.category,
                    "summary": rule.summary,
                    "fixable": rule.fixable,
                    "url": rule.url,
                    "explanation": rule.page(),
                },
                indent=2,
            )
        )
    else:
        with _output():
            click.echo(rule.page(), nl=False)


@main.command("server")
@_guard
def server_command() -> None:
    """Run the language server for editors (LSP over standard input and output)."""
    try:
        from jaxlint.server.app import serve
    except ImportError as exc:
        raise Failure(f"`jaxlint server` is unavailable: {exc} (install the `server` extra)") from None
    serve()
