"""Writing a fixed file back: whole or not at all, and only over the text that was linted."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from typing import Protocol


class Encodable(Protocol):
    def encode(self) -> bytes: ...


class WriteError(Exception):
    """Fixes that were not written, and why: the file is left exactly as it was."""


def write_back(path: str, document: Encodable, original: bytes) -> None:
    """Replace the file with the fixed document, all at once, unless it changed since it was read as `original`.

    The new content goes to a temporary file in the same folder, which then replaces the
    file: a full disk or a crash leaves either the old file or the new one, never half of
    one. A symbolic link is kept and its target replaced; the file's mode is kept.
    """
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    try:
        data = document.encode()
    except UnicodeEncodeError as exc:
        raise WriteError(f"the fixed text cannot be written in the file's encoding: {exc.reason}") from None
    try:
        info = os.stat(target)
        if not os.access(target, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        with open(target, "rb") as handle:
            if handle.read() != original:
                raise WriteError("the file changed while it was being fixed, so the fixes were not written")
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".jaxlint-tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, stat.S_IMODE(info.st_mode))
            if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(temporary, info.st_uid, info.st_gid)
                except OSError:
                    pass  # only a privileged user can give a file away; the content still goes in
            os.replace(temporary, target)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise WriteError(f"cannot write the fixes: {exc.strerror or exc}") from None
