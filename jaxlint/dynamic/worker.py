"""The dynamic check's worker: starts JAX once, then for each file it is given (a job) loads the file,
runs its code, and judges each finding.

Started by the supervisor (supervisor.py) with the request; jobs arrive one JSON line at a time on
a pipe, and the next is read only once the linter has the verdicts of the last. The whole state of
the current job is sent over the result channel after every step, so a worker killed mid-way
still reports what it decided; the user's prints go to a pipe of their own and cannot corrupt it.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time

from jaxlint.dynamic import accelerators
from jaxlint.dynamic.arguments import SHAPES
from jaxlint.dynamic.channel import LOST, Channel
from jaxlint.dynamic.judge import CONFIRMED, INCONCLUSIVE, NOT_REPRODUCED, Target, Verdict, judge
from jaxlint.dynamic.locate import Source
from jaxlint.dynamic.recorder import Recorder
from jaxlint.dynamic.runs import Run, capture
from jaxlint.dynamic.writes import watch

MAX_PROBED_ENTRIES = 4
MARGIN = 1.0  # seconds kept back for writing the result before the runner's own time limit


class Results:
    """The current phase and each finding's best verdict so far, sent whole over the result channel."""

    def __init__(self, channel: Channel):
        self.channel = channel
        self.phase_text = "starting"
        self.backend = ""
        self.job: int | None = None
        self.verdicts: dict[str, dict] = {}

    def begin(self, job: int) -> None:
        self.job, self.verdicts = job, {}

    def phase(self, text: str) -> None:
        self.phase_text = text
        self.write()

    def set(self, index: int, verdict: Verdict, final: bool, elsewhere: bool = False) -> None:
        self.verdicts[str(index)] = {"status": verdict.status, "detail": verdict.detail, "final": final}
        if elsewhere:  # a finding of another file
            self.verdicts[str(index)]["elsewhere"] = True
        if verdict.needs_accelerator:
            self.verdicts[str(index)]["needs_accelerator"] = True

    def write(self, **more) -> None:
        try:
            self.channel.send(state={"phase": self.phase_text, "backend": self.backend, "job": self.job,
                                     "verdicts": self.verdicts, **more})
        except OSError:  # the user's code closed or replaced the descriptor: nothing more can be reported
            os._exit(LOST)


class Case:
    """One finding being decided: its target and the verdicts gathered from runs so far."""

    def __init__(self, index: int, target: Target, via: str | None = None):
        self.index = index
        self.target = target
        self.via = via  # the entry point in another module that the finding says traces its code
        self.verdicts: list[tuple[Verdict, bool]] = []  # (verdict, from the user's own program)

    def add(self, verdict: Verdict, faithful: bool) -> None:
        self.verdicts.append((verdict, faithful))

    @property
    def confirmed(self) -> bool:
        return any(v.status == CONFIRMED for v, _ in self.verdicts)

    @property
    def decided(self) -> bool:
        return any(v.status != INCONCLUSIVE for v, _ in self.verdicts)

    def best(self) -> Verdict:
        for v, _ in self.verdicts:
            if v.status == CONFIRMED:
                return v
        negative = [(v, faithful) for v, faithful in self.verdicts if v.status == NOT_REPRODUCED]
        if negative:  # the user's own program speaks loudest, and its latest run most
            return max(reversed(negative), key=lambda p: p[1])[0]
        reasons: dict[str, str] = {}
        # one reason per event, whichever run showed it first, the user's own program's first
        for v, _ in sorted(self.verdicts, key=lambda p: not p[1]):
            reasons.setdefault(v.detail.rsplit(" (", 1)[0], v.detail)
        return Verdict(INCONCLUSIVE, "; ".join(list(reasons.values())[:3]))


class Worker:
    """Decides a file's findings: import, then probes of the enclosing callables, then the entry point."""

    def __init__(self, request: dict, results: Results, deadline: float):
        from jaxlint.dynamic.runs import Executor

        self.path = request["path"]
        self.elsewhere = request.get("elsewhere", [])
        self.results = results
        source = Source.parse(self.path)
        self.ex = Executor(self.path, source, request.get("settings") or {}, request["root"], deadline,
                           results.backend, request["timeout"])
        self.cases = [Case(f["index"], Target.of(source, f), f.get("via")) for f in request["findings"]]
        self.ex.watched = watch(source, [c.target.row for c in self.cases if c.target.category == 4])

    def run(self) -> None:
        self.decide_here()
        self.decide_elsewhere()

    def decide_here(self) -> None:
        for case in self.cases:
            self.guard(case, self.import_pass)
        for case in self.cases:
            if not case.confirmed:
                self.guard(case, self.probe_pass)
            self.results.set(case.index, case.best(), final=case.confirmed)
        self.results.write()
        for case in self.cases:
            if not case.confirmed:
                self.guard(case, self.entry_pass)
            self.results.set(case.index, case.best(), final=True)
            self.results.write()

    def decide_elsewhere(self) -> None:
        """Findings of other linted files (`elsewhere` in the job) that an error raised here reached:
        an error raised through a call chain confirms the finding at its end, the innermost frame
        of a linted file, whichever file that is. Only confirmations are sent: the lines of other
        files are not recorded, so nothing else can be said of them here."""
        wanted: dict[str, list[dict]] = {}  # by real path: a module imported by name has its absolute path
        for f in self.elsewhere:
            wanted.setdefault(os.path.realpath(f["path"]), []).append(f)
        here = os.path.realpath(self.path)
        sources: dict[str, Source] = {}
        for run in self.ex.runs():
            path, filename = _innermost_file(run.error, {here, *wanted}) if run.error is not None else (None, None)
            if path is None or path == here:
                continue
            try:
                source = sources.get(path) or sources.setdefault(path, Source.parse(path))
            except (SyntaxError, ValueError, OSError):
                continue
            failure = capture(run.error, filename)
            there = Run(f"{run.label} in {os.path.basename(self.path)}", run.faithful, eager=run.eager,
                        rec=Recorder(path, self.ex.clean, set()), failure=failure, backend=run.backend)
            for f in wanted[path]:
                if str(f["index"]) in self.results.verdicts:
                    continue
                verdict = judge(Target.of(source, f), there)
                if verdict.status == CONFIRMED:
                    self.results.set(f["index"], verdict, final=True, elsewhere=True)
        self.results.write()

    def guard(self, case: Case, step) -> None:
        """Run one step for a finding; a failure of the check itself only affects that finding."""
        from jaxlint.dynamic.runs import RunTimeout

        try:
            step(case)
        except (Exception, RunTimeout) as exc:  # noqa: BLE001 - reported as this finding's verdict
            case.add(Verdict(INCONCLUSIVE, f"the dynamic check failed: {type(exc).__name__}: {exc}"), False)

    def import_pass(self, case: Case) -> None:
        keys = case.target.category == 2
        self.results.phase("importing the module")
        self.ex.module(keys)
        run = self.ex.import_runs[keys]
        verdict = judge(case.target, run)
        if verdict.status != INCONCLUSIVE or run.failure is not None:
            case.add(verdict, True)

    def probe_pass(self, case: Case) -> None:
        """Probe the callables that run the finding's line: the entry point the finding names first
        (the code is traced from there), then those of the file."""
        t = case.target
        named = self.ex.named_entry(case.via) if case.via else None
        for n, entry in enumerate(itertools.chain([named] if named else [], self.ex.entries(t.row))):
            if n >= MAX_PROBED_ENTRIES or self.ex.time_left() < 2:
                return
            run = self.try_entry(case, entry)
            made = None if case.decided else self.ex.returned_entry(entry, run, t.row)
            if made is not None:
                self.try_entry(case, made)
            if case.decided:
                return

    def try_entry(self, case: Case, entry):
        """Probe one callable, with each argument shape in turn until the finding's line is reached."""
        t = case.target
        keys = t.category == 2
        self.results.phase(entry.label)
        for profile in range(len(SHAPES)):
            run = self.ex.probe(entry, keys, profile, eager=False)
            verdict = judge(t, run)
            if verdict.needs_reference:
                verdict = judge(t, run, self.ex.probe(entry, keys, profile, eager=True))
            case.add(verdict, False)
            if case.confirmed:
                return run
            if run.setup or verdict.status != INCONCLUSIVE or (_reached(t, run) and not run.failure) \
                    or _out_of_time(run):
                break
        if keys and (_reached(t, run) or _key_failure(run)):
            case.add(judge(t, self.ex.probe(entry, keys, profile, eager=True)), False)
        return run

    def entry_pass(self, case: Case) -> None:
        t = case.target
        keys = t.category == 2
        imported = self.ex.import_runs.get(keys)
        if imported is not None and imported.failure is not None:
            return  # the entry point would import the module again: the import's failure is the reason
        label = self.ex.entry_label()
        if label is None:
            if not case.decided:
                case.add(Verdict(INCONCLUSIVE, "the file has no main() or __main__ block to run"), False)
            return
        self.results.phase(label)
        run = self.ex.entry_run(keys, eager=False)
        verdict = judge(t, run)
        if verdict.needs_reference:
            self.results.phase(f"{label} under jax.disable_jit()")
            verdict = judge(t, run, self.ex.entry_run(keys, eager=True))
        case.add(verdict, True)
        if keys and not case.confirmed and (_reached(t, run) or _key_failure(run)):
            self.results.phase(f"{label} under jax.disable_jit()")
            case.add(judge(t, self.ex.entry_run(keys, eager=True)), True)


def _innermost_file(exc: BaseException, paths: set[str]) -> tuple[str | None, str | None]:
    """The file among `paths` (real paths) of the innermost frame, of those files, that `exc` was
    raised through: its real path and the name its code objects carry."""
    found, tb = (None, None), exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        real = os.path.realpath(filename)
        if real in paths:
            found = (real, filename)
        tb = tb.tb_next
    return found


def _reached(t: Target, run) -> bool:
    return run.rec is not None and any(run.rec.lines.get(line) for line in t.span)


def _out_of_time(run) -> bool:
    return run.failure is not None and run.failure.type == "RunTimeout"


def _key_failure(run) -> bool:
    return run.failure is not None and "KeyReuseError" in run.failure.classes


def _prepare(job: dict, base_path: list[str]) -> None:
    """Make the process look like the user running the job's file from its project root, importing
    from the file's own import path (imports.py)."""
    path, root = job["path"], job["root"]
    sys.argv = [path]
    sys.path[:] = [e for e in job.get("import_path", []) if e not in base_path] + base_path
    for entry in (root, os.path.dirname(path)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    os.environ["PYTHONPATH"] = os.pathsep.join(job.get("import_path", []))
    os.chdir(root)


def main(request: dict, channel: Channel, jobs: int) -> None:
    started = time.monotonic()
    results = Results(channel)
    results.phase("starting JAX")
    try:
        import jax

        results.backend = jax.default_backend()
    except Exception as exc:  # noqa: BLE001 - no JAX, the requested backend is missing, or its device is busy
        platforms = os.environ.get("JAX_PLATFORMS")
        wanted = f" with JAX_PLATFORMS={platforms} (is that backend installed?)" if platforms else ""
        said = f"{type(exc).__name__}: {exc}".rstrip(": ")
        results.phase_text = "done"
        results.write(failed=f"JAX could not start{wanted}: {said}", busy=accelerators.busy(said))
        os._exit(0)
    from jaxlint.dynamic.recorder import install_hooks

    install_hooks()
    base_path = list(sys.path)
    with os.fdopen(jobs, "rb") as lines:
        for n, line in enumerate(iter(lines.readline, b"")):
            job = json.loads(line)
            # the first job's time limit counts from the start, as the linter's does
            deadline = (started if n == 0 else time.monotonic()) + max(1.0, job["timeout"] - MARGIN)
            results.begin(n)
            _prepare(job, base_path)
            try:
                worker = Worker(job, results, deadline)
            except (SyntaxError, ValueError, OSError) as exc:
                _give_up(job, results, f"the file could not be read: {type(exc).__name__}: {exc}")
            else:
                worker.run()
            results.phase("done")
    os._exit(0)  # skip the user's atexit handlers and non-daemon threads


def _give_up(job: dict, results: Results, reason: str) -> None:
    for f in job["findings"]:
        results.set(f["index"], Verdict(INCONCLUSIVE, reason), final=True)
