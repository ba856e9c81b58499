"""`jaxlint check --dynamic`: confirm static findings by running the code with JAX in subprocesses.

Each file with findings gets one worker subprocess (several run in parallel) with a time limit,
contained as runner.py describes: its own session below a supervisor, resource limits, results
over a private pipe, and every process it started killed when it ends.
The worker imports the file under a unique module name (its `if __name__ == "__main__":` block
does not run at import), then for each finding:

1. probes the callable that contains the finding's line (its jit wrapper when it has one, a
   method of an instance built for the purpose, a module-level lambda, the function a factory
   returns, then module functions that call it), calling it twice with synthesized arguments;
   callables behind wrappers it does not know, or with computed static options, are left to step 2;
2. runs the program's own entry point: the `__main__` block, or a `main()` needing no arguments;

all under line-level instrumentation (which lines ran, which ran while JAX traced, compile
counts per call site, output and logging while tracing) and, for randomness findings, with
JAX's key-reuse checker on and legacy `jax.random.PRNGKey` keys routed to typed keys.

A finding is `confirmed` only when JAX misbehaves at that line for that reason (the tracer error
raised there, the key-reuse checker firing there, the compile count growing with the calls, the
side effect that ran only while tracing); `not-reproduced` when the line ran and nothing went
wrong; `inconclusive` otherwise (the line never ran, arguments could not be built, the worker
timed out or crashed). Static findings are never dropped.

Arguments come from, in order: factories declared in `pyproject.toml`, annotations (`jax.Array`,
jaxtyping such as `Float[Array, "b d"]`, `int`, `float`, `bool`), defaults, and parameter names
(`key`/`rng`/`*_key` get a PRNG key, `n_*`/`num_*`/`*_size` an int, `lr`/`eps` a float, other
names a small float32 array). A factory is declared as

    [tool.jaxlint.dynamic]
    "mypkg.train:train_step" = "tests.factories:train_step_args"
    "mypkg.model:Model.apply" = "tests.factories:model_apply_args"
    "mypkg.model:Model" = "tests.factories:model_init_args"

where the key is `module:qualified name` (module dotted from the project root, or the file's
stem), and the factory takes no arguments and returns the positional arguments as a tuple, or
`(args_tuple, kwargs_dict)` (so a pair of a tuple and a dict is always read that way: return
`((a_tuple, a_dict), {})` to pass those two positionally). For a method the factory gives the
arguments after `self`; a key naming a class gives the constructor's arguments.

JAX is only imported in the workers, never in the linter's process.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor, as_completed

from jaxlint.dynamic.processes import hidden
from jaxlint.dynamic.runner import Containment, max_parallel, run_file
from jaxlint.findings import Finding

__all__ = ["confirm"]


def confirm(
    findings: list[Finding],
    *,
    backend: str | None,
    timeout: float,
    settings: dict,
    show_progress: bool,
    sandboxed: bool = False,
) -> list[Finding]:
    """The same findings, in the same order, each with `confirmation` set.

    Raises ConfigError for a `[tool.jaxlint.dynamic]` setting it cannot read."""
    try:
        containment = Containment.configured(settings, timeout, sandboxed)
    except ValueError as exc:
        from jaxlint.config import ConfigError

        raise ConfigError(str(exc)) from None
    refused = containment.unavailable()
    verdicts: dict[int, dict] = {}
    by_file: dict[str, list[dict]] = {}
    for i, finding in enumerate(findings):
        reason = _not_runnable(finding) or refused
        if reason:
            verdicts[i] = {"status": "inconclusive", "detail": reason}
        else:
            by_file.setdefault(finding.path, []).append(
                {"index": i, "code": finding.code, "row": finding.start.row, "end_row": finding.end.row}
            )
    progress = _Progress(len(by_file), show_progress)
    with hidden(), ThreadPoolExecutor(max_workers=max_parallel(backend, len(by_file))) as pool:
        jobs = {pool.submit(run_file, path, rows, backend, timeout, settings, containment): rows
                for path, rows in by_file.items()}
        for job in as_completed(jobs):
            try:
                done = job.result()
            except Exception as exc:  # noqa: BLE001 - e.g. the worker could not be started
                reason = f"the dynamic run could not start: {type(exc).__name__}: {exc}"
                done = {row["index"]: {"status": "inconclusive", "detail": reason} for row in jobs[job]}
            verdicts.update(done)
            progress.file_done(sum(v["status"] == "confirmed" for v in done.values()))
    progress.close()
    return [f.with_(confirmation=verdicts[i]) for i, f in enumerate(findings)]


def _not_runnable(finding: Finding) -> str | None:
    if finding.category == 0:
        return "not a JAX finding: nothing to run"
    if finding.cell is not None or not finding.path.endswith(".py"):
        return "only .py files are run by --dynamic"
    return None


class _Progress:
    """A one-line "files done / findings confirmed" counter on stderr, redrawn in place."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled = total, enabled and total > 0
        self.done = self.confirmed = 0
        self._width = 0
        self._draw()

    def file_done(self, confirmed: int) -> None:
        self.done += 1
        self.confirmed += confirmed
        self._draw()

    def _draw(self) -> None:
        if self.enabled:
            text = f"jaxlint --dynamic: {self.done}/{self.total} files, {self.confirmed} findings confirmed"
            self._width = max(self._width, len(text))
            sys.stderr.write("\r" + text.ljust(self._width))
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()
