"""The first process of a dynamic run: starts the worker, waits for it, reports how it ended.

usage (from the runner): python -c BOOTSTRAP PACKAGE_PARENT CHANNEL_FD, with the request (the
channel's secret and the limits) as the first JSON line on stdin, then one line per file to decide
(a job), which this process hands to the worker through a pipe of its own. Stdin stays open until
the linter is done; its end takes the worker down.

It stands between the linter and the user's code. The worker's parent is this process, whose
standard streams are pipes to the linter, never the linter's own output; it ignores every signal
it can, so code that signals its parent (or its parent's process group) hits nothing; and it is
a child subreaper (Linux), so the worker's orphaned descendants stay below it where the linter
finds them. The worker gets its own session, its resource limits, and dies with this process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import traceback

from jaxlint.dynamic.channel import Channel
from jaxlint.dynamic.limits import Limits
from jaxlint.dynamic.processes import PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, prctl

FAILED = 70  # the worker's exit status when the check itself failed (its traceback is in the output)
IGNORED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGPIPE",
           "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF")


def main(argv: list[str]) -> None:
    request = json.loads(sys.stdin.buffer.readline())
    channel = Channel(int(argv[0]), request.pop("secret"))
    saved = _ignore_signals()
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the linter killed outright: go, and the worker with us
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    me = os.getpid()
    jobs, jobs_in = os.pipe()
    worker = os.fork()
    if worker == 0:
        try:
            os.close(jobs_in)
            _become_worker(request, channel, saved, me, jobs)
        except BaseException:  # noqa: BLE001 - the worker's own failure, shown in its output
            traceback.print_exc()
        os._exit(FAILED)
    os.close(jobs)
    channel.send(worker=worker)
    watcher = threading.Thread(target=_end_with_linter, args=(worker, jobs_in), daemon=True)
    watcher.start()
    status = _wait(worker)
    channel.send(exit=_ending(status))
    os.close(channel.fd)
    _wait(None)
    watcher.join()  # it ends the process


def _become_worker(request: dict, channel: Channel, saved: dict, supervisor: int, jobs: int) -> None:
    os.setsid()
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != supervisor:  # the supervisor died before the line above
        os._exit(FAILED)
    for sig, handler in saved.items():
        signal.signal(sig, handler)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.set_inheritable(channel.fd, False)  # the user's subprocesses do not get it
    os.set_inheritable(jobs, False)
    Limits.from_json(request.pop("limits")).apply()
    from jaxlint.dynamic import worker

    worker.main(request, channel, jobs)


def _ignore_signals() -> dict:
    saved = {}
    for name in IGNORED:
        sig = getattr(signal, name, None)
        if sig is not None:
            saved[sig] = signal.signal(sig, signal.SIG_IGN)
    return saved


def _wait(worker: int | None) -> int:
    """The worker's wait status (or, for None, nothing left to wait for); reaps the orphans this
    subreaper adopts on the way."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        if pid == worker:
            return status


def _ending(status: int) -> dict:
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return {"code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else status}


def _end_with_linter(worker: int, jobs: int) -> None:
    """Pass each job on stdin to the worker; when stdin reaches its end (the linter is done, or
    gone), take the worker's session down too."""
    with contextlib.suppress(OSError, ValueError):
        for line in iter(sys.stdin.buffer.readline, b""):
            view = memoryview(line)
            while view:
                view = view[os.write(jobs, view):]
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(worker, signal.SIGKILL)
    os._exit(0)
