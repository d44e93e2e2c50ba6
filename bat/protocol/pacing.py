"""Lines from a protocol peer, paced: a client that stalls ends its session instead of hanging the run.

Two limits, each with a default and an option to change it (``bat serve
--idle-timeout/--request-timeout``; ``-O idle_s=... -O request_s=...`` for
an ``exec:`` tuner):

- ``idle_s`` (default 600 s): the longest wait for the first byte of the
  client's next request, counted from the server's last reply; the tuner's
  own thinking happens here, so the default is generous.
- ``request_s`` (default 60 s): the longest a request may take to arrive
  once its first byte has.

A line longer than ``MAX_LINE_BYTES`` (bat.core.limits) is not kept whole:
its first ``MAX_LINE_BYTES + 1`` bytes come through (the server answers
``parse_error``) and the rest is skipped. A breach of a time limit raises
``PeerStalled``; the session ends like a closed connection, with everything
evaluated so far in the trace and a warning naming the limit.

Hand-written on ``select`` and ``os.read``: a buffered file object's
``readline`` can neither time out nor stop at a length without losing the
bytes after it.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bat.core.errors import BatError
from bat.core.limits import MAX_LINE_BYTES

DEFAULT_IDLE_S = 600.0
DEFAULT_REQUEST_S = 60.0
_CHUNK = 1 << 16


class PeerStalled(BatError, TimeoutError):
    """A protocol peer that sent nothing within a limit of bat.protocol.pacing."""


@dataclass(frozen=True)
class Pacing:
    """The time limits on a peer's requests (seconds, > 0)."""

    idle_s: float = DEFAULT_IDLE_S
    request_s: float = DEFAULT_REQUEST_S

    def __post_init__(self) -> None:
        for name in ("idle_s", "request_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
                raise ValueError(f"{name}: expected seconds > 0, got {value!r}")


def paced_lines(stream: Any, pacing: Pacing) -> Iterator[bytes]:
    """The lines of ``stream`` (a file descriptor, or a stream with one) within ``pacing``; a stream without a
    file descriptor (a list, a BytesIO in a test) is read as it is, each line cut at MAX_LINE_BYTES + 1 bytes."""
    if isinstance(stream, int):
        yield from _fd_lines(stream, pacing)
        return
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        for line in stream:
            yield line[:MAX_LINE_BYTES + 1]
        return
    yield from _fd_lines(fd, pacing)


def _wait(fd: int, limit_s: float, why: str) -> None:
    if limit_s <= 0:  # past the deadline: a peer always ready (an endless line, /dev/zero) never stalls select
        raise PeerStalled(why)
    ready, _, _ = select.select([fd], [], [], limit_s)
    if not ready:
        raise PeerStalled(why)


def _fd_lines(fd: int, pacing: Pacing) -> Iterator[bytes]:
    buffer = bytearray()
    began: float | None = None  # when the first byte of the request being read arrived
    mid = (f"the client's request was not whole {pacing.request_s:g} s after its first byte "
           f"(limit request_s={pacing.request_s:g})")
    while True:
        newline = buffer.find(b"\n")
        if newline >= 0:
            line = bytes(buffer[:newline + 1])
            del buffer[:newline + 1]
            began = time.monotonic() if buffer.strip() else None
            yield line
            continue
        if len(buffer) > MAX_LINE_BYTES:
            yield bytes(buffer[:MAX_LINE_BYTES + 1])
            buffer = bytearray(_skip_line(fd, began or time.monotonic(), pacing, mid))
            began = time.monotonic() if buffer.strip() else None
            continue
        if began is None:
            _wait(fd, pacing.idle_s, f"the client sent nothing for {pacing.idle_s:g} s after the last reply "
                                     f"(limit idle_s={pacing.idle_s:g})")
        else:
            _wait(fd, max(0.0, began + pacing.request_s - time.monotonic()), mid)
        chunk = os.read(fd, _CHUNK)
        if not chunk:  # the end of the input
            if buffer.strip():
                yield bytes(buffer)
            return
        buffer += chunk
        if began is None and buffer.strip():
            began = time.monotonic()


def _skip_line(fd: int, began: float, pacing: Pacing, mid: str) -> bytes:
    """Read and drop the rest of an over-long line; what follows its newline comes back."""
    while True:
        _wait(fd, max(0.0, began + pacing.request_s - time.monotonic()), mid)
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b""
        newline = chunk.find(b"\n")
        if newline >= 0:
            return chunk[newline + 1:]
