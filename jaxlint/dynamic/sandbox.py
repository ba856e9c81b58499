"""The opt-in stronger sandbox for dynamic runs (Linux): bubblewrap (`bwrap`).

Inside it the run sees the whole file system read-only, a fresh, empty /tmp and /dev/shm, a
minimal /dev (plus the accelerators' device files), its own /proc, and no network; it lives in its
own process, IPC, UTS and (where the system allows) user namespaces, so the linter's processes are
not visible and cannot be signalled, and it dies with the linter. Chosen with `--sandbox` or
`sandbox = "bwrap"` in `[tool.jaxlint.dynamic]`; when bwrap cannot run, nothing is run unsandboxed.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys

from jaxlint.dynamic_settings import SANDBOX

ACCELERATORS = ("/dev/nvidia*", "/dev/accel*", "/dev/dri", "/dev/kfd", "/dev/vfio")


def chosen(settings: dict, requested: bool) -> str:
    """The sandbox to use (one of `dynamic_settings.SANDBOXES`, as the configuration checked it):
    `--sandbox` wins, then the setting; "none" when neither asks for one."""
    return "bwrap" if requested else settings.get(SANDBOX, "none")


def command(root: str, needed: tuple[str, ...] = ()) -> list[str]:
    """The bwrap command line that the run's own command is appended to; `needed` are the paths the
    run reads (the project, Python, the installed packages): those under /tmp are bound back in."""
    args = [
        _bwrap() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm", "--proc", "/proc",
        "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
    ]
    for path in sorted({os.path.realpath(p) for p in (root, *needed) if os.path.exists(p)}):
        if path == "/tmp" or path.startswith("/tmp/"):
            args += ["--ro-bind", path, path]
    args += ["--chdir", root]
    for pattern in ACCELERATORS:
        for path in sorted(glob.glob(pattern)):
            args += ["--dev-bind-try", path, path]
    return args


@functools.lru_cache(maxsize=None)
def unavailable() -> str | None:
    """Why bwrap cannot run here, or None when it can (tried once per process)."""
    if not sys.platform.startswith("linux"):
        return "the bwrap sandbox needs Linux"
    if _bwrap() is None:
        return "the bwrap sandbox needs bubblewrap, which is not installed (e.g. `apt-get install bubblewrap`)"
    try:
        probe = subprocess.run(command("/") + ["true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not start: {exc}"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"status {probe.returncode}"]
        return f"bwrap cannot make a sandbox here: {said[0][:200]}"
    return None


def _bwrap() -> str | None:
    return shutil.which("bwrap")
