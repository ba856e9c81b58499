"""The result channel from a dynamic run back to the linter: one JSON record a line over a private pipe.

The pipe is created by the linter and reaches the run only as an inherited file descriptor (no
path exists to find it by). Every record carries a per-run secret that the linter sends on the
run's stdin; records without it are ignored, so code that writes to every descriptor or file it
can find cannot forge a verdict. What this cannot stop: the user's module runs in the same
interpreter as the worker, so a module written to read the worker's memory could find the secret.
"""

from __future__ import annotations

import hmac
import json
import os
import threading

MAX_RECORD = 64 << 20  # a longer line is not a record of ours: it is dropped unread
LOST = 71  # the worker's exit status when it can no longer write to the channel


class Channel:
    """The writing end, held by the supervisor and the worker."""

    def __init__(self, fd: int, secret: str):
        self.fd = fd
        self._secret = secret

    def send(self, **record) -> None:
        data = (json.dumps({"secret": self._secret, **record}, default=str) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


class ChannelReader:
    """The linter's end: reads records on a thread, keeping the latest of each kind."""

    def __init__(self, fd: int, secret: str):
        self.fd = fd
        self._secret = secret
        self.records: dict[str, object] = {}  # kind -> latest value ("state", "worker", "exit")
        self.ended = threading.Event()  # the worker's exit was reported
        self.updated = threading.Event()  # a record came in (cleared by whoever waits for the next)
        self.ignored = 0  # lines without the secret: forged or garbled
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        pieces: list[bytes] = []  # the line read so far
        size = 0
        with os.fdopen(self.fd, "rb", buffering=0) as stream:
            for chunk in iter(lambda: stream.read(1 << 16), b""):
                if b"\n" not in chunk:
                    pieces.append(chunk)
                    size += len(chunk)
                    if size > MAX_RECORD:
                        pieces, size = [], 0
                        self.ignored += 1
                    continue
                *lines, rest = b"".join(pieces + [chunk]).split(b"\n")
                for line in lines:
                    self._accept(line)
                pieces, size = [rest], len(rest)

    def _accept(self, line: bytes) -> None:
        try:
            record = json.loads(line)
            secret = record.pop("secret")
            if not isinstance(secret, str) or not hmac.compare_digest(secret, self._secret):
                raise ValueError
        except (ValueError, KeyError, TypeError, AttributeError):
            self.ignored += 1
            return
        for kind, value in record.items():
            self.records[kind] = value
        if "exit" in record:
            self.ended.set()
        self.updated.set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
