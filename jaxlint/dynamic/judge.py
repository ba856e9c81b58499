"""Deciding, from one run, whether JAX misbehaved at a finding's line for the finding's reason.

`confirmed` needs JAX misbehaving there for that reason; `not-reproduced` needs the line to have
run where the bug would show, with a check that could have seen it go wrong, and nothing going
wrong: a tracing bug (JAX1xx) under a trace that gives the line abstract values; a key reuse
(JAX201/202/203/206) with every key the line used checked by JAX's key-reuse checker and none
of them the first use of a key reported reused elsewhere (JAX raises at the second use); a
recompilation (JAX303, JAX5xx) over enough calls of the program's own run; a purity bug only
where its effect is one a run shows (PURITY_EFFECTS). Anything else is `inconclusive`, saying why.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from jaxlint.dynamic import misses
from jaxlint.dynamic.locate import OUTPUT_CALLS, Source, header_span
from jaxlint.dynamic.runs import Failure, Run, unwrap_codes
from jaxlint.dynamic.writes import resolve

CONFIRMED, NOT_REPRODUCED, INCONCLUSIVE = "confirmed", "not-reproduced", "inconclusive"
TRACER_ERRORS = {
    "ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
    "TracerArrayConversionError", "NonConcreteBooleanIndexError",
}
TRACER_WORDS = re.compile(r"Traced<|tracer|concrete value|abstract value", re.I)
JIT_ARG_WORDS = re.compile(r"static_arg|argnums|argnames|hashable|abstract array|not a valid JAX type", re.I)
DONATED_TWICE = "previously donated in the same call"  # XLA's refusal of one buffer in two arguments
# a library refusing a traced value where it needs a Python one (Equinox's filter specs)
TRACED_REFUSED = re.compile(r"cannot be traced|traced array", re.I)
MIN_RECOMPILES = 3  # fewer compiles than this never count as a recompilation problem
UNROLL = 50  # executions of a line within one trace that count as a huge unrolled loop
# key findings JAX's key-reuse checker sees go wrong: a key consumed twice, in one call or across
# calls (a global or captured key in a jit is checked too); not a key made anew from a constant
# seed (JAX204) or a stateful NumPy/Python generator (JAX205)
KEY_REUSE_RULES = frozenset({"JAX201", "JAX202", "JAX203", "JAX206"})
# ... and those whose bug shows as "random" values that a compiled function returns again and again
# (a key baked in, a stateful generator drawn from while tracing); a stateful draw while tracing
# is itself JAX205's bug
FROZEN_RANDOMNESS_RULES, STATEFUL_RNG = frozenset({"JAX204", "JAX205", "JAX206"}), "JAX205"
STATIC_ARGUMENT_VARIES, TRACED_PYTHON_VALUE = "JAX303", "JAX310"
UNROLLED_LOOP, SIGNATURE_CHANGES = "JAX503", "JAX505"
# what a purity bug does that running the code shows: an error (item assignment on an array
# raises, traced or not), output while tracing (where the check listens), a write while tracing
# (whose object is looked at once the trace is over). A discarded result (JAX403), a write to a
# copy JAX made (JAX408), a host read (JAX409) or a stale global (JAX410) leave nothing a run
# shows, so they are never not-reproduced.
ERROR, OUTPUT, STATE, RNG = "error", "output", "state", "rng"
PURITY_EFFECTS = {"JAX401": ERROR, "JAX402": ERROR, "JAX404": OUTPUT, "JAX405": OUTPUT, "JAX406": STATE,
                  "JAX407": STATE}


@dataclass
class Verdict:
    status: str
    detail: str
    needs_reference: bool = False  # a run without jit would decide it
    needs_accelerator: bool = False  # this backend cannot show it; an accelerator's runtime could


@dataclass
class Target:
    """A finding as the judges see it."""

    code: str
    row: int
    span: set[int]  # rows that count as the finding's place
    declared: set[tuple[str, int]]  # functions the finding's line defines or wraps
    writes_state: bool
    source: Source
    signature: dict | None = None  # the signature change a JAX505 finding names (claims.signature_change)

    @classmethod
    def of(cls, source: Source, finding: dict) -> Target:
        """A finding as the linter hands it over (code, row, end_row, signature) in `source`."""
        span = source.span(finding["row"], finding.get("end_row"))
        return cls(code=finding["code"], row=finding["row"], span=span, declared=source.declared_codes(span),
                   writes_state=source.writes_outer_state(finding["row"]), source=source,
                   signature=finding.get("signature"))

    @property
    def category(self) -> int:
        return int(self.code[3])

    @property
    def declared_names(self) -> set[str]:
        return {name for name, _ in self.declared if name != "<lambda>"}


def judge(t: Target, run: Run, ref: Run | None = None) -> Verdict:
    """The verdict one run (with its jit-less reference, when there is one) gives a finding."""
    if run.setup:
        return _say(INCONCLUSIVE, run, run.setup)
    decide = {1: _tracing, 2: _randomness, 3: _jit_arguments, 4: _purity, 5: _recompilation}.get(t.category)
    if decide is None:
        return Verdict(INCONCLUSIVE, f"there is no dynamic check for {t.code}'s category")
    return decide(t, run, ref) or _fallback(t, run)


# -- per category ---------------------------------------------------------------------------


def _tracing(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    for f in _failures(run):
        if is_tracer_error(f) and f.innermost_lines() & t.span:
            return _say(CONFIRMED, run, f"JAX raised {f.type} at line {t.row}: {f.message}")
    abstract = _most(run.rec.abstract or {}, t.span)
    if abstract and not _interrupted(t, run):
        return _say(NOT_REPRODUCED, run, f"line {t.row} ran {_times(abstract)} under a JAX trace, with abstract "
                                         f"values, without error")
    return None


def _randomness(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    f = run.failure
    if f and "KeyReuseError" in f.classes and _key_reuse_lines(f) & t.span:
        return _say(CONFIRMED, run, f"JAX's key-reuse checker raised KeyReuseError {f.where()}: {f.message}")
    made = _constant_key(t, run)
    if made:
        return _say(CONFIRMED, run, made)
    effect = _side_effect(t, run, ref, RNG)
    if effect is not None and (effect.status == CONFIRMED or effect.needs_reference):
        return effect
    ran = _most(run.rec.lines, t.span)
    if ran and t.code in KEY_REUSE_RULES and not _interrupted(t, run):
        return _key_checker_saw(t, run)
    return None


def _key_checker_saw(t: Target, run: Run) -> Verdict | None:
    """What JAX's key-reuse checker saw of the line's keys: not-reproduced only when it checked
    every key the line used (typed keys, each used outside a trace or in a jit trace that was
    checked) and none was reused."""
    uses = run.rec.key_uses
    legacy = _most(uses["legacy"], t.span)
    if legacy:
        return _say(INCONCLUSIVE, run, f"line {t.row} handed legacy uint32 keys to jax.random {_times(legacy)}: "
                                       f"JAX's key-reuse checker cannot track them")
    unchecked = sorted(set().union(*(run.rec.unchecked_uses.get(line, set()) for line in t.span)))
    if unchecked:
        names = " and ".join(f"jax.random.{name}" for name in unchecked)
        return _say(INCONCLUSIVE, run, f"line {t.row} handed its key to {names}, which does not consume its key, "
                                       f"so JAX's key-reuse checker never checks it")
    typed = _most(uses["typed"], t.span)
    if not typed:
        return None
    if any(uses["typed"].get(line, 0) > uses["checked"].get(line, 0) for line in t.span):
        return _say(INCONCLUSIVE, run, f"line {t.row} used its keys while JAX traced, in a trace JAX's key-reuse "
                                       f"checker never checked (it checks a jit trace once the trace is done)"
                                       f"{_stopped(run)}")
    f = run.failure
    if f is not None and "KeyReuseError" in f.classes and _maybe_first_use(f, t):
        return _say(INCONCLUSIVE, run, f"line {t.row} used keys {_times(typed)}, and JAX's key-reuse checker then "
                                       f"raised KeyReuseError {f.where()}: {f.message}; it names the second use "
                                       f"of a key this line may have consumed first")
    routed = " (jax.random.PRNGKey made typed keys, which it tracks)" if run.rec.routing else ""
    return _say(NOT_REPRODUCED, run, f"line {t.row} used keys {_times(typed)} with JAX's key-reuse checker "
                                     f"on{routed} and no key was reused there")


def _jit_arguments(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    for f in _failures(run):
        if DONATED_TWICE in f.message and f.line in t.span:
            return _say(CONFIRMED, run, f"JAX refused to run the call at line {t.row}: {f.message}")
        if f.type in ("ValueError", "TypeError") and JIT_ARG_WORDS.search(f.message):
            synthesized_value = not run.faithful and "hashable" in f.message
            if not synthesized_value and _failure_is_about(t, run, f):
                return _say(CONFIRMED, run, f"JAX raised {f.said()}")
        if "has been deleted" in f.message and (f.line in t.span or _donated_here(t, f)):
            return _say(CONFIRMED, run, f"a donated buffer was used after the call: {f.said()}")
        if t.code == TRACED_PYTHON_VALUE and f.line in t.span and (is_tracer_error(f) or
                                                                   TRACED_REFUSED.search(f.message)):
            return _say(CONFIRMED, run, f"a value that must be a Python value while JAX traces was a traced one: "
                                        f"{f.said()}")
    if any("donated buffers were not usable" in w for w in run.rec.warnings):
        verdict = _say(INCONCLUSIVE, run, "the backend ignored the donation, so reuse of a donated buffer "
                                          "cannot be observed there")
        verdict.needs_accelerator = True  # donation is the runtime's: a backend that honours it can show it
        return verdict
    if not run.faithful and run.entry_key in t.declared and run.calls and not run.failure:
        return _say(INCONCLUSIVE, run, "the calls succeeded, but synthesized arguments cannot show how the "
                                       "program's own arguments behave")
    if t.code == STATIC_ARGUMENT_VARIES:  # a recompilation: only the compile counts speak to it
        return _recompiles(t, run, static_only=True)
    return None


def _purity(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    for f in _failures(run):
        if f.line in t.span:
            if f.type == "TypeError" and re.search(r"item assignment|immutable", f.message):
                return _say(CONFIRMED, run, f"JAX raised TypeError at line {t.row}: {f.message}")
            if "UnexpectedTracerError" in f.classes or "Leaked trace" in f.text:
                return _say(CONFIRMED, run, f"JAX raised {f.type} at line {t.row}: {f.message}")
            if is_tracer_error(f) and _writes_output(t):
                return _say(CONFIRMED, run, f"formatting a traced value for output raised {f.type} at line "
                                            f"{t.row} while JAX traced: {f.message}")
    leaked = _first(run.rec.writes.leaked, t.span)
    if leaked:
        return _say(CONFIRMED, run, f"line {t.row} stored {leaked} while JAX traced, and it still held it once the "
                                    f"trace was over: a leaked tracer")
    effect = PURITY_EFFECTS.get(t.code)
    if effect == ERROR:
        ran = _statement_times(t, run)
        if ran and not _interrupted(t, run):
            return _say(NOT_REPRODUCED, run, f"line {t.row} ran {_times(ran)} without error")
        return None
    return _side_effect(t, run, ref, effect)


def _recompilation(t: Target, run: Run, ref: Run | None) -> Verdict | None:
    if t.code == SIGNATURE_CHANGES:
        return _signature_changes(t, run)
    sessions = set().union(*(run.rec.sessions.get(line, set()) for line in t.span))
    per = _most(run.rec.traced, t.span) // len(sessions) if sessions else 0
    unrolled = f"; line {t.row} ran {_times(per)} per trace" if sessions else ""
    verdict = _recompiles(t, run, also=unrolled)
    if per >= UNROLL and (verdict is None or verdict.status != CONFIRMED):
        return _say(CONFIRMED, run, f"line {t.row} ran {per} times within a single trace: the Python loop is "
                                    f"unrolled into the compiled program")
    if t.code == UNROLLED_LOOP and not sessions and verdict is not None and verdict.status == NOT_REPRODUCED:
        # the compile counts speak to a changing bound, not to how far the loop unrolls
        return Verdict(INCONCLUSIVE, verdict.detail.replace(f" ({run.doing})", "")
                       + f", but line {t.row} never ran under a JAX trace, so its unrolling was not seen ({run.doing})")
    return verdict


def _fallback(t: Target, run: Run) -> Verdict:
    """No evidence either way: say how far the run got, and why what ran could not show the bug."""
    f = run.failure
    ran = _statement_times(t, run)
    if f and f.type == "RunTimeout":
        return _say(INCONCLUSIVE, run, f"{f.message} at line {f.line}" if f.line else f.message)
    if f and f.line in t.span:
        return _say(INCONCLUSIVE, run, f"line {t.row} raised {f.type} for another reason: {f.message}")
    if not ran:
        if f:
            return _say(INCONCLUSIVE, run, f"{f.said()}, before line {t.row} ran")
        return _say(INCONCLUSIVE, run, f"line {t.row} never ran")
    if not _most(run.rec.traced, t.span):
        return _say(INCONCLUSIVE, run, f"line {t.row} ran {_times(ran)}, only outside JAX transformations"
                                       f"{_stopped(run)}")
    if t.category == 1 and run.rec.abstract is None:
        return _say(INCONCLUSIVE, run, f"line {t.row} ran under a JAX trace, but this JAX does not tell whether the "
                                       f"trace gave it abstract values{_stopped(run)}")
    if t.category == 1 and not _most(run.rec.abstract, t.span):
        return _say(INCONCLUSIVE, run, f"line {t.row} ran only outside JAX transformations or under ones that keep "
                                       f"its values concrete (such as jax.grad){_stopped(run)}")
    return _say(INCONCLUSIVE, run, f"line {t.row} ran but showed nothing to judge by{_stopped(run)}")


# -- evidence -------------------------------------------------------------------------------


def _side_effect(t: Target, run: Run, ref: Run | None, effect: str | None) -> Verdict | None:
    """A Python side effect that happens while tracing only, so later (cached) calls skip it.
    `effect` is what the finding's bug does (OUTPUT, STATE, RNG; None: nothing a run shows)."""
    rec = run.rec
    if run.eager or not _most(rec.traced, t.span):
        return None
    if effect == OUTPUT and _most(rec.effects["staged"], t.span):
        return _say(CONFIRMED, run, f"line {t.row} wrote a jit tracer instead of a value while JAX traced "
                                    f"(it runs when the function is compiled, not when it is called)")
    witness, unseen = _witness(t, run, ref, effect)
    only, how = _trace_only(t, run, ref)
    if not witness:
        if effect == RNG:
            return None  # randomness findings are also about keys: let the key evidence speak
        if unseen:
            return _say(INCONCLUSIVE, run, f"line {t.row} ran under a JAX trace, but {unseen}")
        nothing = "wrote no output while tracing" if effect == OUTPUT else \
            "its writes left no tracer in an object that outlived the trace"
        return _say(NOT_REPRODUCED, run, f"line {t.row} ran under a JAX trace and {nothing}")
    if only is None:
        verdict = _say(INCONCLUSIVE, run, f"line {t.row} ran while tracing, too few times to tell whether "
                                          f"it runs on every call")
        verdict.needs_reference = ref is None
        return verdict
    if only:
        return _say(CONFIRMED, run, f"line {t.row} ran only while JAX traced ({how}) and {witness}, so "
                                    f"cached calls skip it")
    if unseen:
        return _say(INCONCLUSIVE, run, f"line {t.row} ran on every call ({how}), but {unseen}")
    return _say(NOT_REPRODUCED, run, f"line {t.row} ran on every call ({how}): JAX re-traced it each time")


def _witness(t: Target, run: Run, ref: Run | None, effect: str | None) -> tuple[str, str]:
    """What the line was seen doing outside the traced computation while JAX traced (empty when
    nothing), and what of it the check could not see (empty when it saw all the bug could do)."""
    rec = run.rec
    if effect == RNG:
        if t.code == STATEFUL_RNG and _most(rec.effects["rng"], t.span):
            return "it drew from a stateful random generator while tracing", ""
        if t.code in FROZEN_RANDOMNESS_RULES and ref is not None and _frozen(run, ref):
            return "the compiled function returned the same 'random' values on every call", ""
        return "", ""
    if effect == OUTPUT:
        witness = "it wrote output or logged while tracing" if _most(rec.effects["io"], t.span) else ""
        channels = set().union(*(rec.writes.channels.get(line, set()) for line in t.span))
        if channels == {"heard"}:
            return witness, ""
        return witness, "its output goes where the check does not listen (only standard output and error, " \
                        "and Python's logging, are heard)"
    writes = rec.writes
    outlived, unseen = _first(writes.outlived, t.span), _first(writes.unseen, t.span)
    if effect == STATE:
        if outlived:
            return f"it wrote to {outlived}, which outlived the trace", unseen
        if unseen:
            return ("it writes state that outlives the call" if t.writes_state else ""), unseen
        if _most(writes.inside, t.span):
            return "", ""
        return "", "none of its writes could be followed"
    return ("it writes state that outlives the call" if t.writes_state else ""), \
        f"what {t.code}'s bug does cannot be seen by running the code"


def _trace_only(t: Target, run: Run, ref: Run | None) -> tuple[bool | None, str]:
    rec = run.rec
    sessions = set().union(*(rec.sessions.get(line, set()) for line in t.span))
    sites: dict = {}
    for s in sessions:
        sites[rec.session_site[s]] = sites.get(rec.session_site[s], 0) + 1
    for site, traces in sites.items():
        calls = _site_calls(t, run, site)
        if traces < calls:
            return True, f"traced in {traces} of {_calls(calls)}" + (f" from line {site[1]}" if site else "")
    if ref is not None and not ref.setup:
        jit_runs, eager_runs = _most(rec.lines, t.span), _most(ref.rec.lines, t.span)
        if eager_runs > jit_runs:
            return True, f"{_times(jit_runs)} with jit, {_times(eager_runs)} without"
        if not ref.failure or _same_stop(run.failure, ref.failure):
            return False, f"{_times(jit_runs)} with and without jit"
    return None, ""


@dataclass
class _Compiles:
    """How often JAX compiled one function for a finding, and how often its call ran."""

    name: str
    place: tuple | None  # the (code, line) whose calls are counted; None for the probe's own calls
    compiles: int
    calls: int
    reasons: list[str]  # JAX's explanations of the cache misses that led to compilations

    @property
    def grew(self) -> bool:
        """Compiled on most calls, and more than a last odd-sized call or two would explain."""
        return self.calls > 0 and self.compiles >= MIN_RECOMPILES and 2 * self.compiles > self.calls

    def __str__(self) -> str:
        where = f" from line {self.place[1]}" if self.place else ""
        return f"{self.name} {_times(self.compiles)} in {_calls(self.calls)}{where}"


def compile_counts(t: Target, run: Run) -> list[_Compiles]:
    """The compilations JAX reported of the functions a finding is about, per function and call
    place: those compiled by a call from the finding's line (on the stack when JAX compiled),
    those the line declares (`jax.jit(lambda ...)`, a def, a scan body), and those whose trace ran
    the line itself (a line inside a jitted function). Only compilations of the file's own code or
    of functions named as the file's count; JAX's compilations of single operations do not."""
    rec = run.rec
    here = set().union(*(rec.sessions.get(line, set()) for line in t.span))
    groups: dict[tuple, list] = {}
    for c in rec.compiled:
        if not c.mine(rec.names):
            continue
        at_line = [frame for frame in c.stack if frame[1] in t.span]
        declared = [rec.session_root[s][0] for s in c.sessions if rec.session_root[s] in t.declared]
        if at_line:
            place = at_line[0]
        elif declared or here.intersection(c.sessions):
            place = c.site
        else:
            continue
        name = declared[0] if declared else c.fun_name or rec.session_root[c.sessions[0]][0]
        groups.setdefault((name, place), []).append(c)
    return [_Compiles(name, place, len(cs), _site_calls(t, run, place), [c.reason for c in cs if c.reason])
            for (name, place), cs in groups.items()]


def _recompiles(t: Target, run: Run, static_only: bool = False, also: str = "") -> Verdict | None:
    """The verdict of the compile counts (with `static_only`, only of functions compiled with
    static arguments, whose values key the cache): confirmed when a function compiled again and
    again; not-reproduced only when the program's own run called it often enough to show that and
    it did not (saying `also`); inconclusive when counts were seen but cannot tell."""
    seen_any = sorted(compile_counts(t, run), key=lambda c: (-c.compiles, -c.calls))
    counts = [c for c in seen_any if not static_only or t.source.has_static_arguments(c.name)]
    for c in counts:
        if c.grew:
            return _say(CONFIRMED, run, f"JAX compiled {c}{_why(c)}")
    stopped = _stopped(run, ", then")
    seen = "; ".join(str(c) for c in counts[:2])
    if counts and not run.faithful:
        return _say(INCONCLUSIVE, run, f"JAX compiled {seen}, with synthesized arguments, which need not vary as "
                                       f"the program's own do{stopped}")
    if any(c.calls >= MIN_RECOMPILES for c in counts):
        return _say(NOT_REPRODUCED, run, f"JAX compiled {seen}{also}{stopped}")
    if counts:
        return _say(INCONCLUSIVE, run, f"JAX compiled {seen}: too few calls to show a recompilation{stopped}")
    if seen_any or t.declared:  # compiled, but not what this finding is about; or compiled elsewhere
        if t.declared_names and not seen_any:
            return _say(INCONCLUSIVE, run, f"{', '.join(sorted(t.declared_names))} was never compiled{stopped}")
        return None
    ran = _statement_times(t, run)
    if run.faithful and ran >= MIN_RECOMPILES and not _most(run.rec.traced, t.span) \
            and not any(frame[1] in t.span for c in run.rec.compiled for frame in c.stack):
        return _say(NOT_REPRODUCED, run, f"line {t.row} ran {_times(ran)} and started no jit compile")
    return None


def _signature_changes(t: Target, run: Run) -> Verdict | None:
    """JAX505: confirmed when JAX explained a compilation of the function as the change the
    finding names (a keyword where a position was, or the reverse; a Python scalar, then an
    array): that is the bug however few the compilations. Not-reproduced only when a carry was
    seen coming back as an array (its call ran more often than its start) and nothing recompiled."""
    counts = sorted(compile_counts(t, run), key=lambda c: -c.compiles)
    claim = t.signature or {}
    for c in counts:
        for reason in c.reasons:
            kind = misses.kind(reason)
            if kind == misses.KEYWORD and claim.get("keyword") in misses.keywords(reason):
                why = f"`{claim['keyword']}` was passed by keyword in one call and by position in the other"
            elif kind == misses.WEAK_TYPE and "carry_start" in claim:
                why = "an argument was a weakly typed Python scalar, then an array"
            else:
                continue
            where = f" for the call at line {c.place[1]}" if c.place else ""
            return _say(CONFIRMED, run, f"JAX compiled {c.name} again{where} because {why} "
                                        f"(JAX: {misses.summary(reason)})")
    seen = "; ".join(str(c) for c in counts[:2])
    stopped = _stopped(run, ", then")
    start = claim.get("carry_start")
    if start is not None and run.faithful and sum(c.compiles for c in counts) <= 1:
        calls, starts = _statement_times(t, run), _statement_times(t, run, start)
        if 0 < starts < calls:  # some call had the carry back from an earlier one
            compiled = f"JAX compiled {seen}" if counts else "JAX compiled nothing there"
            return _say(NOT_REPRODUCED, run, f"line {t.row} ran {_times(calls)}, the carry started {_times(starts)} "
                                             f"(line {start}), so it came back as an array; {compiled}{stopped}")
    if counts:
        return _say(INCONCLUSIVE, run, f"JAX compiled {seen}, and explained no compilation as the change of "
                                       f"signature the finding names{stopped}")
    return None


def _why(c: _Compiles) -> str:
    return f" (JAX: {misses.summary(c.reasons[-1])})" if c.reasons else ""



def _constant_key(t: Target, run: Run) -> str | None:
    """A key made from the same constant seed on repeated calls of the program."""
    if not run.faithful:
        return None
    made = [k for k in run.rec.keys if k.line in t.span and k.seed is not None]
    eager: dict[int, int] = {}
    for k in made:
        if k.session is None:
            eager[k.seed] = eager.get(k.seed, 0) + 1
    for seed, n in eager.items():
        if n >= 2:
            return f"line {t.row} made the same PRNG key (seed {seed}) {n} times: each call draws the same numbers"
    for k in made:
        if k.session is not None:
            site = run.rec.session_site[k.session]
            calls = _site_calls(t, run, site)
            if calls >= 2 and calls > len({m.session for m in made if m.session is not None}):
                return (f"line {t.row} made a PRNG key from constant seed {k.seed} while tracing; the compiled "
                        f"function reuses that key on all {calls} calls")
    return None


def _key_reuse_lines(f: Failure) -> set[int]:
    """Lines a KeyReuseError points at: the innermost frame, the operation's source (under jit), and
    callers that handed the very same key object down to it; never the key's first use, which JAX
    also reports in a chained exception."""
    lines = {f.line} if f.frames else set()
    for cause in f.chain:
        if "first used" not in cause.text and cause.frames:
            lines.update(line for line, _ in cause.frames)
    if f.frames:
        keys = key_ids(f.frames[-1][1])
        for line, frame in reversed(f.frames[:-1]):
            if not keys & key_ids(frame):
                break
            lines.add(line)
    return lines


def _maybe_first_use(f: Failure, t: Target) -> bool:
    """Whether the finding's line may be where the key a KeyReuseError reports was first used: JAX
    names that place in a chained exception; without one, any line may be."""
    first = [cause for cause in f.chain if "first used" in cause.text]
    return not first or any(line in t.span for cause in first for line, _ in cause.frames)


def key_ids(frame) -> set[int]:
    """Ids of the typed PRNG keys a frame's locals hold."""
    import jax

    ids = set()
    for value in frame.f_locals.values():
        dtype = getattr(value, "dtype", None)
        try:
            if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
                ids.add(id(value))
        except TypeError:
            continue
    return ids


def _failure_is_about(t: Target, run: Run, f: Failure) -> bool:
    """The failure is at the finding's line, or at a call of a function the finding's line declares."""
    if f.line in t.span:
        return True
    if not f.frames:
        return run.entry_key in t.declared
    line, frame = f.frames[-1]
    for call in t.source.calls_at(line):
        callee = resolve(call.func, frame)
        for code in unwrap_codes(callee):
            if code.co_filename == t.source.path and (code.co_name, code.co_firstlineno) in t.declared:
                return True
    return False


def _donated_here(t: Target, f: Failure) -> bool:
    """A deleted array in the failing frame was passed, under the same name, to a call on the
    finding's line and that name was not rebound before the failing line."""
    if not f.frames:
        return False
    line, frame = f.frames[-1]
    deleted = {name for name, v in frame.f_locals.items() if _is_deleted(v)}
    for row in sorted(t.span):
        for call in t.source.calls_at(row):
            for arg in call.args:
                if isinstance(arg, ast.Name) and arg.id in deleted and row < line \
                        and not t.source.rebound_between(arg.id, row, line):
                    return True
    return False


def _is_deleted(value) -> bool:
    try:
        return bool(value.is_deleted())
    except Exception:  # not a jax array
        return False


def _writes_output(t: Target) -> bool:
    """The finding's line calls `print` or a logging method: a tracer error there came from showing a
    traced value while tracing."""
    for row in t.span:
        for call in t.source.calls_at(row):
            func = call.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in OUTPUT_CALLS:
                return True
    return False


def _frozen(run: Run, ref: Run) -> bool:
    import numpy as np

    def same(a, b):
        return len(a) == len(b) and all(
            np.array_equal(x, y) if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) else x == y
            for x, y in zip(a, b)
        )

    return (len(run.outputs) >= 2 and same(run.outputs[0], run.outputs[1])
            and len(ref.outputs) >= 2 and not same(ref.outputs[0], ref.outputs[1]))


def _site_calls(t: Target, run: Run, site: tuple | None) -> int:
    """How often the statement at a call site ran in its own frame (the probe's calls when None)."""
    return run.calls if site is None else statement_runs(run.rec, t.source, site)


def statement_runs(rec, source: Source, site: tuple) -> int:
    """How often the statement at `site` ((code, line)) ran in frames of `code`: its most run line,
    less the returns to a line from later lines of the statement (a call written over several lines
    comes back to its first line once the arguments are evaluated)."""
    code, line = site
    stmt = source.statement_at(line)
    lo, hi = header_span(stmt) if stmt is not None else (line, line)

    def runs(n: int) -> int:
        return rec.code_lines.get((code, n), 0) - sum(rec.back.get((code, n, m), 0) for m in range(n + 1, hi + 1))

    return max(runs(n) for n in range(lo, hi + 1))


def is_tracer_error(f: Failure) -> bool:
    """A concrete value was needed where a tracer was (not a tracer leaking out: that is purity)."""
    if "UnexpectedTracerError" in f.classes or re.search(r"\bleak|escape", f.text):
        return False
    if TRACER_ERRORS & set(f.classes):
        return True
    return f.type in ("IndexError", "TypeError", "ValueError") and bool(
        TRACER_WORDS.search(f.message) or "Shapes must be 1D sequences of concrete values" in f.message
    )


def _same_stop(a: Failure | None, b: Failure | None) -> bool:
    """Both runs stopped at the same place, so their line counts are comparable."""
    return a is not None and b is not None and (a.type, a.line) == (b.type, b.line)


def _failures(run: Run) -> list[Failure]:
    return run.failure.all() if run.failure else []


def _interrupted(t: Target, run: Run) -> bool:
    """The run's failure went through the finding's line: its last run there did not finish."""
    return run.failure is not None and any(line in t.span for line, _ in run.failure.frames)


def _stopped(run: Run, lead: str = ";") -> str:
    """How the run ended, when it failed: where, and whether JAX was tracing there."""
    f = run.failure
    if f is None:
        return ""
    traced = " while JAX traced," if f.line is not None and run.rec.traced.get(f.line) else ""
    return f"{lead} the run stopped{traced} with {f.said()}"


def _statement_times(t: Target, run: Run, row: int | None = None) -> int:
    """How often the finding's statement (or the one at `row`) ran (a statement over several lines
    comes back to its first line once: that is not a second run)."""
    rows = t.span if row is None else t.source.span(row)
    events = _most(run.rec.lines, rows)
    codes = {code for code, line in run.rec.code_lines if line in rows}
    runs = sum(statement_runs(run.rec, t.source, (code, min(rows))) for code in codes)
    return min(events, runs) if codes else events


def _first(found: dict, lines):
    """The value `found` holds for the first of `lines` it has one for."""
    return next((found[line] for line in sorted(lines) if line in found), None)


def _most(counter, lines) -> int:
    return max((counter.get(line, 0) for line in lines), default=0)


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _calls(n: int) -> str:
    return "1 call" if n == 1 else f"{n} calls"


def _say(status: str, run: Run, event: str) -> Verdict:
    """A verdict whose detail is what happened, then how the code was run."""
    return Verdict(status, f"{event} ({run.doing})")
