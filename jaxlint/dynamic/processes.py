"""The processes a dynamic run started, found through /proc (Linux), and how to stop every one of them.

A worker's descendants can leave its process group and session (`setsid`) and lose their parent
(double fork). They are still found: by a walk of parent links from the run's first process, taken
when the run ends and every half second while it runs; by the sessions those walks saw; and by a
marker in their environment. Only processes started after the run began are ever matched, so a
recycled process id or session id never points at an unrelated process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass

PROC = "/proc"
PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
MARKER = "JAXLINT_DYNAMIC_RUN"  # environment variable naming the run that started a process
SWEEP_ROUNDS = 50  # stop-and-rescan rounds before the final kill; a fork bomb is frozen long before
DEATH_WAIT = 2.0  # seconds to wait for killed processes to die
KILL_ROUNDS = 3


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    group: int
    session: int
    started: int  # clock ticks after boot: with the pid, names one process for its whole life
    zombie: bool


def available() -> bool:
    return os.path.isfile(os.path.join(PROC, "self", "stat"))


def read(pid: int) -> Process | None:
    try:
        with open(os.path.join(PROC, str(pid), "stat"), "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    fields = raw[raw.rfind(")") + 2:].split()
    try:
        return Process(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), fields[0] in ("Z", "X"))
    except (IndexError, ValueError):
        return None


def table() -> dict[int, Process]:
    """Every process this one can see."""
    out = {}
    try:
        names = os.listdir(PROC)
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            p = read(int(name))
            if p is not None:
                out[p.pid] = p
    return out


def has_environment(pid: int, name: str, value: str) -> bool:
    """Whether the process was started with name=value in its environment."""
    try:
        with open(os.path.join(PROC, str(pid), "environ"), "rb") as f:
            return f"{name}={value}".encode() in f.read().split(b"\0")
    except OSError:
        return False


class ProcessTree:
    """Everything descended from one process (the run's first), remembered as it grows."""

    def __init__(self, root: int, marker: str):
        self.root = root
        self.marker = marker
        first = read(root)
        self.since = first.started if first else 0
        self.seen: dict[int, int] = {}  # pid -> start time
        self.sessions: set[int] = set()
        self.spared: set = set()  # pids a sweep leaves alone (a worker that takes the next file)

    def snapshot(self) -> dict[int, Process]:
        """Record the current members (and their sessions); returns them."""
        found = self._members(table())
        for p in found.values():
            self.seen[p.pid] = p.started
            self.sessions.add(p.session)
        return found

    def _members(self, procs: dict[int, Process]) -> dict[int, Process]:
        children: dict[int, list[int]] = {}
        for p in procs.values():
            children.setdefault(p.ppid, []).append(p.pid)
        found: dict[int, Process] = {}
        stack = [self.root] if self.root in procs else []
        while stack:
            pid = stack.pop()
            if pid not in found:
                found[pid] = procs[pid]
                stack.extend(children.get(pid, ()))
        me = os.getpid()
        for p in procs.values():
            if p.pid in found or p.pid == me or p.started < self.since:
                continue
            if (self.seen.get(p.pid) == p.started or p.session in self.sessions
                    or has_environment(p.pid, MARKER, self.marker)):
                found[p.pid] = p
        for pid in _ancestors(procs, me) | self.spared:  # never the linter or what started it, whatever matched
            found.pop(pid, None)
        return found

    def sweep(self, spare: set = frozenset()) -> int:
        """Stop and kill every member but the `spare` ones, again while any is left (one born during
        a kill is caught by the next round), waiting briefly for them to die. Returns how many were
        killed."""
        self.spared = set(spare)
        try:
            return self._sweep()
        finally:
            self.spared = set()

    def _sweep(self) -> int:
        killed = 0
        for _ in range(KILL_ROUNDS):
            killed += self._stop_and_kill()
            # SIGKILL is delivered when a process next runs: wait (briefly) until all have died, so
            # that nothing the run started outlives the linter.
            waited = time.monotonic() + DEATH_WAIT
            while self.leftovers() and time.monotonic() < waited:
                time.sleep(0.01)
            if not self.leftovers():
                break
        return killed

    def _stop_and_kill(self) -> int:
        """Freeze every member and its process group (SIGSTOP: a stopped process cannot fork, and a
        whole group stops at once, so even a process that forks and exits in a loop is caught),
        rescan until nothing new appears, then SIGKILL them all."""
        procs = table()
        protected = {procs[pid].group for pid in _ancestors(procs, os.getpid()) | self.spared if pid in procs}
        stopped: set[int] = set()
        groups: set[int] = set()
        for _ in range(SWEEP_ROUNDS):
            members = self.snapshot()
            new_groups = {p.group for p in members.values() if p.group > 0} - groups - protected
            new = {p.pid for p in members.values() if not p.zombie} - stopped
            if not new and not new_groups:
                break
            for group in new_groups:
                _signal(-group, signal.SIGSTOP)
            for pid in new:
                _signal(pid, signal.SIGSTOP)
            groups |= new_groups
            stopped |= new
        for group in groups:
            _signal(-group, signal.SIGKILL)
        for pid in stopped:
            _signal(pid, signal.SIGKILL)
        return len(stopped)

    def leftovers(self) -> list[int]:
        """Members still alive (not zombies): empty after a successful sweep."""
        return sorted(p.pid for p in self.snapshot().values() if not p.zombie)


def _ancestors(procs: dict[int, Process], pid: int) -> set[int]:
    out = set()
    while pid in procs and pid not in out:
        out.add(pid)
        pid = procs[pid].ppid
    return out


def _signal(target: int, sig: int) -> None:
    """Signal a process, or (negative) a process group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if target < 0:
            os.killpg(-target, sig)
        else:
            os.kill(target, sig)


def prctl(option: int, value: int = 0) -> int | None:
    """A Linux process control (prctl(2)); None where there is none or it fails."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        result = ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except Exception:  # noqa: BLE001 - no libc to load: as if there were no prctl
        return None
    return None if result < 0 else result


@contextlib.contextmanager
def hidden():
    """While the block runs, this process is not dumpable (Linux): its /proc entries (open files,
    memory, environment) are closed to other processes of the same user, so code under a dynamic
    run cannot open the linter's output through /proc/PID/fd/1. Root is not held by this."""
    before = prctl(PR_GET_DUMPABLE)
    if before:
        prctl(PR_SET_DUMPABLE, 0)
    try:
        yield
    finally:
        if before:
            prctl(PR_SET_DUMPABLE, before)
