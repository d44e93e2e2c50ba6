"""A Python client of the BAT protocol (docs/PROTOCOL.md), standard library only.

For a tuner that lives in another process or another virtual environment
(for example one pinned to an older library): this file imports nothing but
the standard library, so it can be copied next to the tuner when BAT itself
is not installed there. Its error type is therefore its own
(``ServerError``), not one of bat/core/errors.py.

Three ways to meet the server:

- ``Client.stdio()``: BAT started this process (``bat run --tuner exec:...``);
  the protocol runs on stdin/stdout, and file descriptor 1 is pointed at
  stderr so that a stray ``print`` cannot corrupt it;
- ``Client.spawn(["bat", "serve", ...])``: this process starts BAT;
- ``Client.connect(path)``: ``bat serve --socket PATH`` is listening.

Every method sends one request and returns its reply's content; an
``error`` reply raises ``ServerError``. ``exhausted`` and ``left`` follow the
budget as the latest reply stated it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from typing import IO, Any

PROTOCOL_VERSION = 2


class ServerError(Exception):
    """An ``error`` reply: its ``code``, the ``field`` at fault and the server's message."""

    def __init__(self, code: str, field: str | None, message: str) -> None:
        self.code, self.field, self.message = code, field, message
        super().__init__(f"{code}: {field + ': ' if field else ''}{message}")


class Client:
    """One connection to a BAT server (see the module docstring for the ways to open one)."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes], *, process: subprocess.Popen | None = None,
                 sock: socket.socket | None = None) -> None:
        self.reader, self.writer = reader, writer
        self.process, self.sock = process, sock
        self.problem: dict[str, Any] | None = None
        self.exhausted = False
        self.left: dict[str, Any] = {}

    @classmethod
    def stdio(cls) -> Client:
        """The protocol on this process's stdin and stdout; fd 1 then writes to stderr, a line at a time as
        stderr does (a print is not lost in a buffer when the program ends abruptly, ``os._exit``)."""
        protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(line_buffering=True)
        return cls(sys.stdin.buffer, protocol_out)

    @classmethod
    def spawn(cls, argv: list[str]) -> Client:
        """Start a server (``bat serve ...``) and speak to it on its stdin/stdout."""
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert process.stdin is not None and process.stdout is not None
        return cls(process.stdout, process.stdin, process=process)

    @classmethod
    def connect(cls, path: str) -> Client:
        """Connect to ``bat serve --socket PATH``."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        return cls(sock.makefile("rb"), sock.makefile("wb"), sock=sock)

    # -- requests --------------------------------------------------------------------
    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message``, return the reply; an error reply raises ServerError."""
        self.writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.writer.flush()
        line = self.reader.readline()
        if not line:
            raise ConnectionError("the server closed the connection")
        reply = json.loads(line)
        if reply.get("type") == "error":
            raise ServerError(reply["code"], reply.get("field"), reply["message"])
        if "exhausted" in reply:
            self.exhausted, self.left = reply["exhausted"], reply["left"]
        return reply

    def hello(self, tuner: str = "") -> dict[str, Any]:
        """The problem: parameters, constraints, budget, seed, objective (docs/PROTOCOL.md)."""
        self.problem = self.request({"type": "hello", "protocol": PROTOCOL_VERSION, "tuner": tuner})["problem"]
        return self.problem

    def evaluate(self, config: dict[str, Any], *, profiled: bool = False) -> dict[str, Any]:
        """The result of one configuration (``kind``, ``status``, ``objective``, ...)."""
        message: dict[str, Any] = {"type": "evaluate", "config": config}
        if profiled:
            message["profiled"] = True
        return self.request(message)["result"]

    def batch(self, configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Results of several configurations in order; those the budget no longer affords are ``refused``."""
        return self.request({"type": "batch", "configs": configs})["results"]

    def valid(self, configs: list[dict[str, Any]]) -> list[bool]:
        """Whether each configuration satisfies the constraints (nothing is evaluated or charged)."""
        return self.request({"type": "valid", "configs": configs})["valid"]

    def prior(self, gpu: str, offset: int = 0) -> dict[str, Any]:
        """One page of another GPU's measured data (protocol 2; the GPUs are hello's ``target.others``):
        ``configs`` (values in parameter order), ``status``, ``objective`` and ``next`` (the next page's offset,
        None after the last)."""
        return self.request({"type": "prior", "gpu": gpu, "offset": offset})

    def done(self) -> dict[str, Any]:
        """End the run; the server's summary of it."""
        return self.request({"type": "done"})["summary"]

    def close(self) -> None:
        """Close the connection (and wait for a server this client started)."""
        for stream in (self.writer, self.reader):
            with contextlib.suppress(OSError):
                stream.close()
        if self.sock is not None:
            self.sock.close()
        if self.process is not None:
            self.process.wait()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
