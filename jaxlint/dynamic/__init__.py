"""`jaxlint check --dynamic`: confirm static findings by running the code with JAX in subprocesses.

Where: on the CPU by default, each file with findings in a worker subprocess of its own (several
run in parallel), with JAX_PLATFORMS=cpu so that none opens an accelerator; with an accelerator
`--backend` (or for a verdict the CPU cannot give), in one worker that opens the accelerator once
and takes the files in turn (accelerators.py says how the accelerator is found, runner.py how a
worker whose device another process holds is started again). Every worker has a time limit per
file and is contained as runner.py describes: its own session below a supervisor, resource limits,
results over a private pipe, and every process a file started killed when that file is done.
The worker imports the file under a unique module name (its `if __name__ == "__main__":` block
does not run at import; a notebook's code cells run as one module), then for each finding:

1. probes the entry point in another module that the finding's message says traces it ("traced
   via `pkg.module.step`"), then the callable that contains the finding's line (its jit wrapper
   when it has one, a method of an instance built for the purpose, a module-level lambda, the
   function a factory returns, then module functions that call it), calling each twice with
   synthesized arguments; callables behind wrappers it does not know, or with computed static
   options, are left to step 2;
2. runs the program's own entry point: the `__main__` block, or a `main()` needing no arguments;

all under line-level instrumentation (which lines ran, which ran while JAX traced and whether
with abstract values, the compilations JAX reports with the call stack that caused them and its
explanation of each cache miss, output and logging while tracing, what the objects written by a
purity finding's line held once the trace was over: writes.py) and, for randomness findings, with JAX's key-reuse checker on and legacy `jax.random.PRNGKey`
keys routed to typed keys. An error that one file's code raised through a function of another
linted file also judges that file's findings, at the innermost linted frame. An upgrade
finding (JAX6xx) runs no code of the user's: the name it reports is looked up in the installed
JAX (names.py).

A finding is `confirmed` only when JAX misbehaves at that line for that reason (the tracer error
raised there, the key-reuse checker firing there, the compile count growing with the calls or
JAX explaining a compilation as the signature change the finding names, a tracer left in an
object written there, the side effect that ran only while tracing); `not-reproduced` only when
the line ran where the bug would show and the check could have seen it go wrong (judge.py: a
tracing error under a trace with abstract values; a key reuse where the checker checked every
key the line used; a recompilation in the program's own run, with enough calls to show it; a
purity bug whose effect a run shows); `inconclusive` otherwise (the line never ran or ran only
where the bug cannot show, arguments could not be built, the worker timed out or crashed).
Static findings are never dropped.

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

from jaxlint.dynamic import accelerators, names
from jaxlint.dynamic.claims import signature_change, traced_via
from jaxlint.dynamic.processes import hidden
from jaxlint.dynamic.runner import Containment, job, max_parallel, merge, run_jobs, worker_env
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
    detect=accelerators.detect,
) -> list[Finding]:
    """The same findings, in the same order, each with `confirmation` set.

    Without `backend`, every file runs on the CPU, in parallel workers: what the checks look at
    (tracer errors, the key-reuse checker, side effects while tracing, compile counts, donated
    buffers) is the same on every backend, and the CPU starts in a second where a TPU takes ten
    and admits one process. A finding the CPU cannot show (a donation it ignored) runs again on
    the accelerator JAX would pick (`detect`), when there is one. With an accelerator `backend`,
    every file runs there, in one worker that takes the files in turn. `settings` are those of
    `[tool.jaxlint.dynamic]`, as the configuration checked them."""
    containment = Containment.configured(settings, timeout, sandboxed)
    refused = containment.unavailable()
    # an upgrade finding's name is looked up in JAX (no code of the user's runs), while the workers run
    upgrades = {i: f for i, f in enumerate(findings) if f.category == 6}
    lookup = ThreadPoolExecutor(max_workers=1)
    looked_up = lookup.submit(names.confirm_names, upgrades, timeout, worker_env("cpu"))
    verdicts: dict[int, dict] = {}
    by_file: dict[str, list[dict]] = {}
    cells = _Cells()
    for i, finding in enumerate(findings):
        if i in upgrades:
            continue
        reason = _not_runnable(finding) or refused or cells.unreadable(finding)
        if reason:
            verdicts[i] = {"status": "inconclusive", "detail": reason, "backend": None}
        else:
            by_file.setdefault(finding.path, []).append(cells.row(i, finding))
    elsewhere = [{**row, "path": path} for path, rows in by_file.items() if path.endswith(".py") for row in rows]
    jobs = [job(path, rows, timeout, settings, elsewhere) for path, rows in by_file.items()]
    progress = _Progress(len(jobs), show_progress)
    with hidden():
        if backend in (None, "cpu"):
            verdicts.update(_on_cpu(jobs, timeout, containment, progress))
            again = [{**j, "findings": [f for f in j["findings"] if verdicts[f["index"]].get("needs_accelerator")]}
                     for j in jobs]
            again = [j for j in again if j["findings"]]
            accelerator = detect() if again and backend is None else None
            if accelerator is not None:
                merge(verdicts, run_jobs(again, accelerator.backend, timeout, containment))
        else:
            merge(verdicts, run_jobs(jobs, backend, timeout, containment, report=progress.job_done))
    progress.close()
    verdicts.update(looked_up.result())
    lookup.shutdown()
    out = []
    for i, f in enumerate(findings):
        verdict = {k: v for k, v in verdicts[i].items() if k not in ("needs_accelerator", "elsewhere")}
        out.append(f.with_(confirmation=cells.in_cell(f, verdict)))
    return out


def _on_cpu(jobs: list[dict], timeout: float, containment: Containment, progress: _Progress) -> dict:
    """Verdicts of every job, each file in a worker of its own, several at once."""
    verdicts: dict[int, dict] = {}
    with ThreadPoolExecutor(max_workers=max_parallel(len(jobs))) as pool:
        running = {pool.submit(run_jobs, [j], "cpu", timeout, containment): j for j in jobs}
        for done in as_completed(running):
            try:
                got = done.result()
            except Exception as exc:  # noqa: BLE001 - e.g. the worker could not be started
                reason = f"the dynamic run could not start: {type(exc).__name__}: {exc}"
                got = {f["index"]: {"status": "inconclusive", "detail": reason, "backend": None}
                       for f in running[done]["findings"]}
            merge(verdicts, got)
            progress.job_done(got)
    return verdicts


def _not_runnable(finding: Finding) -> str | None:
    if finding.category == 0:
        return "not a JAX finding: nothing to run"
    if not finding.path.endswith((".py", ".ipynb")):
        return "only .py files and notebooks are run by --dynamic"
    return None


class _Cells:
    """Notebook findings name a cell and a row within it; the worker runs the code cells as one
    module (locate.module_text): rows go there as module rows and come back in the cell's terms."""

    def __init__(self):
        self._notebooks: dict = {}

    def _notebook(self, path: str):
        if path not in self._notebooks:
            from jaxlint.notebook import Notebook
            from jaxlint.source import SourceError

            try:
                with open(path, "rb") as f:
                    self._notebooks[path] = Notebook.parse(f.read())
            except (OSError, SourceError) as exc:
                self._notebooks[path] = exc
        return self._notebooks[path]

    def unreadable(self, finding: Finding) -> str | None:
        if finding.cell is None:
            return None
        notebook = self._notebook(finding.path)
        return f"the notebook could not be read: {notebook}" if isinstance(notebook, Exception) else None

    def row(self, index: int, finding: Finding) -> dict:
        start, end = finding.start.row, finding.end.row
        signature = signature_change(finding.message)
        if finding.cell is not None:
            notebook = self._notebook(finding.path)
            start, end = notebook.module_row(finding.cell, start), notebook.module_row(finding.cell, end)
            if signature and "carry_start" in signature:
                signature = {"carry_start": notebook.module_row(finding.cell, signature["carry_start"])}
        return {"index": index, "code": finding.code, "row": start, "end_row": end, "via": traced_via(finding.message),
                "signature": signature}

    def in_cell(self, finding: Finding, verdict: dict) -> dict:
        notebook = self._notebooks.get(finding.path)
        if finding.cell is None or not verdict.get("detail") or isinstance(notebook, Exception) or notebook is None:
            return verdict
        return {**verdict, "detail": notebook.rows_in_cell(verdict["detail"], finding.cell)}


class _Progress:
    """A one-line "files done / findings confirmed" counter on stderr, redrawn in place."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled = total, enabled and total > 0
        self.done = self.confirmed = 0
        self._width = 0
        self._draw()

    def job_done(self, verdicts: dict) -> None:
        self.done += 1
        self.confirmed += sum(v["status"] == "confirmed" for v in verdicts.values())
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
