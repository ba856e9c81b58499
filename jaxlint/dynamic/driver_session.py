"""The instrumented process of a driven run (the project's tests, or a configured command).

JAX's checkers are switched on for the whole run: the key-reuse checker (with legacy
`jax.random.PRNGKey` keys routed to typed keys, which it tracks), `jax_check_tracer_leaks`, and
`jax_explain_cache_misses`. Each test (or command) is one run, recorded per linted file as in the
per-file worker; at its end every static finding is judged against it, and what the run showed
that no static finding covers is kept as an observed event. The result file holds both.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
from collections import Counter

from jaxlint.dynamic import accelerators
from jaxlint.dynamic import recorder as rec_mod
from jaxlint.dynamic.driver_events import RECOMPILATION_RULES, observed_events
from jaxlint.dynamic.judge import CONFIRMED, INCONCLUSIVE, NOT_REPRODUCED, Target, Verdict, compile_counts, judge, \
    key_ids
from jaxlint.dynamic.locate import Source
from jaxlint.dynamic.runs import Failure, Run, capture
from jaxlint.dynamic.writes import watch

REQUEST_ENV = "JAXLINT_DRIVER_REQUEST"
BUSY_EXIT = 75  # the exit status of a run whose accelerator another process holds


class Case:
    """One static finding and its verdicts over the driven runs."""

    def __init__(self, index: int, target: Target):
        self.index, self.target = index, target
        self.confirmed: Verdict | None = None
        self.negative: Verdict | None = None
        self.reasons: list[str] = []
        self.reached = False

    def add(self, verdict: Verdict) -> None:
        if verdict.status == CONFIRMED:
            self.confirmed = self.confirmed or verdict
        elif verdict.status == NOT_REPRODUCED:
            self.negative = verdict  # the latest run speaks, as for the program's own entry point
        elif len(self.reasons) < 3 and verdict.detail.rsplit(" (", 1)[0] not in {
            r.rsplit(" (", 1)[0] for r in self.reasons
        }:
            self.reasons.append(verdict.detail)

    def verdict(self, runs: int, noun: str) -> dict:
        best = self.confirmed or self.negative
        if best is not None:
            return {"status": best.status, "detail": best.detail}
        if not self.reached:
            return {"status": INCONCLUSIVE, "detail": f"line {self.target.row} never ran in the driven {noun}"
                    if runs else "nothing was run"}
        return {"status": INCONCLUSIVE, "detail": "; ".join(self.reasons) or "nothing to judge by"}


class _Fanout:
    """Stands in for the recorder module's ACTIVE recorder: passes each hook to every file's recorder."""

    def __init__(self, session: Session):
        self.session = session
        self.warnings: list[str] = []

    def note_effect(self, kind: str, staged: bool = False) -> None:
        for rec in self.session.recorders.values():
            rec.note_effect(kind, staged)
        if staged and kind == "io":
            self.session.note_staged_output()

    def note_key(self, seed) -> None:
        rec = self.session.innermost_recorder()
        if rec is not None:
            rec.note_key(seed)

    def note_key_use(self, function: str, typed: bool) -> None:
        for rec in self.session.recorders.values():
            rec.note_key_use(function, typed)

    def note_trace_start(self) -> None:
        for rec in self.session.recorders.values():
            rec.note_trace_start()

    def note_trace(self, fun_name) -> None:
        for rec in self.session.recorders.values():
            rec.note_trace(fun_name)

    def note_miss(self, reason: str) -> None:
        self.session.note_miss(reason)
        for rec in self.session.recorders.values():
            rec.note_miss(reason)

    def note_key_check(self) -> None:
        for rec in self.session.recorders.values():
            rec.note_key_check()

    def note_compile(self) -> None:
        for rec in self.session.recorders.values():
            rec.note_compile()


class Session:
    """Runs of one driven process: the linted files, the findings to judge and what was observed."""

    def __init__(self, request: dict, label: str):
        import jax

        self.jax = jax
        self.label = label  # "test" or "command"
        self.result_path = request["result"]
        self.sources: dict[str, Source] = {}
        for path in request["files"]:
            try:
                self.sources[os.path.realpath(path)] = Source.parse(path)
            except (SyntaxError, ValueError, OSError):
                continue
        self.paths = {os.path.realpath(p): p for p in request["files"]}
        self.cases: dict[str, list[Case]] = {}
        for f in request["findings"]:
            source = self.sources.get(os.path.realpath(f["path"]))
            if source is None:
                continue
            self.cases.setdefault(os.path.realpath(f["path"]), []).append(Case(f["index"], Target.of(source, f)))
        self.watched = {real: watch(self.sources[real], [c.target.row for c in cases if c.target.category == 4])
                        for real, cases in self.cases.items()}
        self.static = {(os.path.realpath(f["path"]), f["row"], int(f["code"][3])) for f in request["findings"]}
        self.names = {real: source.function_names() for real, source in self.sources.items()}
        self._by_code_path: dict = {}
        try:
            self.backend = jax.default_backend()
        except RuntimeError as exc:
            said = f"{type(exc).__name__}: {exc}"
            if not accelerators.busy(said):
                raise
            _write_json(self.result_path, {"busy": said})  # another process holds the device: the linter tries again
            os._exit(BUSY_EXIT)
        self.clean = rec_mod.trace_clean_function()
        self.run_count = 0
        self.recorders: dict[str, rec_mod.Recorder] = {}
        self.failures: list[BaseException] = []
        self.misses: list[dict] = []
        self.staged: Counter = Counter()
        self.observed: dict[tuple, dict] = {}
        self._run_label = ""
        self._switch_on()

    # -- instrumentation ----------------------------------------------------------------------

    def _switch_on(self) -> None:
        rec_mod.install_hooks(sink_output=False)  # JAX's explanations of its cache misses among them
        rec_mod.ROUTE_KEYS[0] = True
        self.jax.config.update("jax_debug_key_reuse", True)
        self.jax.config.update("jax_check_tracer_leaks", True)

    def begin(self, label: str) -> None:
        """Start recording one run (a test, the collection of tests, a command)."""
        self._run_label = label
        # The leak checker searches the heap with gc.get_referrers after every trace; what existed
        # before this run cannot hold its tracers, so moving it out of the collector's sight (after
        # collecting what is already garbage) keeps each search to the objects the run made.
        gc.collect()
        gc.freeze()
        self.recorders = {real: rec_mod.Recorder(source.path, self.clean, self.names[real], self.watched.get(real))
                          for real, source in self.sources.items()}
        self._by_code_path = {}
        self.failures, self.misses = [], []
        self.staged = Counter()
        rec_mod.ACTIVE = _Fanout(self)
        sys.settrace(self._on_call)
        threading.settrace(self._on_call)

    def _on_call(self, frame, event, arg):
        rec = self._recorder_for(frame.f_code.co_filename)
        return rec._on_call(frame, event, arg) if rec is not None else None

    def _recorder_for(self, filename: str):
        try:
            return self._by_code_path[filename]
        except KeyError:
            rec = self.recorders.get(os.path.realpath(filename))
            if rec is not None:
                rec.path = filename  # the path the file was imported by, which its code objects carry
            self._by_code_path[filename] = rec
            return rec

    def _linted_frames(self, frame):
        """The frames of linted files on the stack, from `frame` outwards."""
        while frame is not None:
            if self._recorder_for(frame.f_code.co_filename) is not None:
                yield frame
            frame = frame.f_back

    def innermost_recorder(self):
        frame = next(self._linted_frames(sys._getframe(1)), None)
        return self._recorder_for(frame.f_code.co_filename) if frame is not None else None

    def innermost_line(self) -> tuple[str, int] | None:
        """The linted file and line of the innermost linted frame on the current stack."""
        frame = next(self._linted_frames(sys._getframe(1)), None)
        return (os.path.realpath(frame.f_code.co_filename), frame.f_lineno) if frame is not None else None

    def note_failure(self, exc: BaseException) -> None:
        self.failures.append(exc)

    def note_miss(self, reason: str) -> None:
        """A jit cache miss, with JAX's reason, at the innermost linted call site outside any trace,
        with the outermost linted frame: the call into the linted code from outside it (kept alive
        with the miss until the run ends, so no later frame takes its id)."""
        frames = list(self._linted_frames(sys._getframe(1)))
        if not frames:
            return
        site = frames[0]
        info = self._recorder_for(site.f_code.co_filename)._frames.get(id(site))
        if info is None or not info.traced:  # a jit called inside another trace is not a call site
            self.misses.append({"path": os.path.realpath(site.f_code.co_filename), "row": site.f_lineno,
                                "code": site.f_code, "entry": frames[-1], "reason": reason})

    def note_staged_output(self) -> None:
        if self.clean(None):
            return
        place = self.innermost_line()
        if place is not None:
            self.staged[place] += 1

    # -- judging ------------------------------------------------------------------------------

    def end(self) -> None:
        """Stop recording the current run; judge every finding against it and keep what it observed."""
        sys.settrace(None)
        threading.settrace(None)
        rec_mod.ACTIVE = None
        self.run_count += 1
        label = f"running {self.label} {self._run_label}"
        runs: dict[str, Run] = {}
        for real, rec in self.recorders.items():
            rec.settle()
            failure = self._failure(rec.path)
            runs[real] = Run(label, faithful=True, rec=rec, failure=failure, backend=self.backend)
        covered = set()  # call sites whose compilations a static finding is judged by
        for real, cases in self.cases.items():
            run = runs.get(real)
            if run is None:
                continue
            for case in cases:
                if case.target.code in RECOMPILATION_RULES:
                    covered.update((real, c.place[1]) for c in compile_counts(case.target, run) if c.place)
                if not _touched(case.target, run):
                    continue
                case.reached = case.reached or any(run.rec.lines.get(line) for line in case.target.span)
                try:
                    case.add(judge(case.target, run))
                except Exception as exc:  # noqa: BLE001 - a failure of the check affects only this finding
                    case.add(Verdict(INCONCLUSIVE, f"the dynamic check failed: {type(exc).__name__}: {exc}"))
        failures = [self._innermost_failure(exc) for exc in self.failures]
        for event in observed_events(self.sources, runs, failures, self.misses, self.staged, self.static, covered):
            key = (event["code"], event["path"], event["row"])
            if key not in self.observed:
                event["detail"] = f"{event['detail']} ({label} on {self.backend})"
                self.observed[key] = event
        self.recorders, self.failures, self.misses = {}, [], []
        self.write()

    def _failure(self, path: str) -> Failure | None:
        for exc in self.failures:
            failure = capture(exc, path)
            if failure.frames or any(c.frames for c in failure.chain):
                return failure
        return None

    def _innermost_failure(self, exc: BaseException) -> tuple[str, Failure, set, bool]:
        """(real path, failure captured in that file, every linted (real path, row) of the traceback,
        whether its key was handed in from outside) for the innermost linted frame of the traceback."""
        places, tb = [], exc.__traceback__
        while tb is not None:
            filename = tb.tb_frame.f_code.co_filename
            if self._recorder_for(filename) is not None:
                places.append((filename, tb.tb_lineno))
            tb = tb.tb_next
        if not places:  # raised outside the linted files: its message may still name them (leaks)
            return "", capture(exc, ""), set(), True
        filename = places[-1][0]
        return (os.path.realpath(filename), capture(exc, filename), {(os.path.realpath(p), r) for p, r in places},
                self._handed_in(exc))

    def _handed_in(self, exc: BaseException) -> bool:
        """The key the innermost linted frame holds came from code outside the linted files (a test
        calling a correct function twice with one key): the reuse is not the linted code's."""
        frames, tb = [], exc.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        linted = [f for f in frames if self._recorder_for(f.f_code.co_filename) is not None]
        held = key_ids(linted[-1]) if linted else set()
        holders = [f for f in frames if held & key_ids(f)]
        return bool(holders) and self._recorder_for(holders[0].f_code.co_filename) is None

    def write(self) -> None:
        noun = "tests" if self.label == "test" else self.label
        verdicts = {str(c.index): c.verdict(self.run_count, noun) for cases in self.cases.values() for c in cases}
        out = {"runs": self.run_count, "backend": self.backend, "verdicts": verdicts,
               "observed": [{**e, "path": self.paths.get(e["path"], e["path"])} for e in self.observed.values()]}
        _write_json(self.result_path, out)


def _touched(t: Target, run: Run) -> bool:
    """The run reached the finding's line or failed inside its file: worth judging."""
    return run.failure is not None or any(run.rec.lines.get(line) for line in t.span)


def _write_json(path: str, data: dict) -> None:
    """Replace the file at once, so the linter never reads half of it."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def load_request() -> dict | None:
    path = os.environ.get(REQUEST_ENV)
    if not path:
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)
