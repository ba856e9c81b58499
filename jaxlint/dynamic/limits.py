"""Resource limits for a dynamic worker: memory, CPU time, processes, open files.

Chosen by the linter (from `[tool.jaxlint.dynamic]` and the time limit) and applied by the worker
to itself before it loads any user code. On Linux memory is capped with RLIMIT_DATA, which counts
the memory a process can write to but not address space it only reserves: accelerator runtimes
(like AddressSanitizer) reserve far more address space than they use, which RLIMIT_AS counts
against them. JAX on CPU starts with about 1.5 GiB of address space and under 1 GiB of writable
memory. Memory on an accelerator is not covered.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from dataclasses import asdict, dataclass, replace

from jaxlint.dynamic_settings import DEFAULT_MEMORY, MEMORY, parse_memory

OPEN_FILES = 4096
PROCESS_MARGIN = 4096  # threads and processes the worker may add to what the user already runs


def describe_memory(size: int) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} bytes"


@dataclass(frozen=True)
class Limits:
    memory: int | None  # bytes of writable memory, None for no limit
    cpu_seconds: int  # CPU time of all the worker's threads together
    processes: int | None  # RLIMIT_NPROC, None to leave it as it is
    open_files: int

    @classmethod
    def for_run(cls, settings: dict, timeout: float) -> Limits:
        memory = parse_memory(settings.get(MEMORY, DEFAULT_MEMORY))
        # Threads of one process share its CPU clock: allow every core busy for the whole time
        # limit, so this only ever stops a worker whose linter is gone.
        cpu = math.ceil(timeout) * (os.cpu_count() or 1) + 10
        return cls(memory, cpu, _process_limit(), OPEN_FILES)

    def for_jobs(self, jobs: int) -> Limits:
        """The limits of a worker that decides `jobs` files in turn: their CPU time adds up."""
        return replace(self, cpu_seconds=self.cpu_seconds * max(1, jobs))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Limits:
        return cls(**data)

    def apply(self) -> None:
        """Lower this process's limits (never raise them); a limit the system refuses is skipped."""
        import resource

        memory = getattr(resource, "RLIMIT_DATA" if sys.platform == "linux" else "RLIMIT_AS", None)
        # CPU: SIGXCPU (which the runner names) at the soft limit, SIGKILL a little later.
        wanted = [(memory, self.memory, self.memory), (resource.RLIMIT_CPU, self.cpu_seconds, self.cpu_seconds + 5),
                  (resource.RLIMIT_NOFILE, self.open_files, self.open_files),
                  (getattr(resource, "RLIMIT_NPROC", None), self.processes, self.processes)]
        for which, soft, hard in wanted:
            if which is None or soft is None:
                continue
            with contextlib.suppress(ValueError, OSError):
                old_soft, old_hard = resource.getrlimit(which)
                if old_hard != resource.RLIM_INFINITY:
                    hard = min(hard, old_hard)
                soft = min(soft, hard) if old_soft == resource.RLIM_INFINITY else min(soft, old_soft, hard)
                resource.setrlimit(which, (soft, hard))


def _process_limit() -> int | None:
    """RLIMIT_NPROC counts every thread of the user, not only the worker's: cap what the worker may
    add on top of what the user runs now. Root is not held by it, so it is left alone there."""
    if sys.platform != "linux" or os.geteuid() == 0:
        return None
    uid, threads = os.getuid(), 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, KeyError):
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                threads += int(fields["Threads"])
    return threads + PROCESS_MARGIN + 64 * (os.cpu_count() or 1)
