"""``bat serve``: one problem served over the BAT protocol (docs/PROTOCOL.md) to a tuner in another process.

The protocol runs on stdin/stdout (a client that started BAT) or, with
``--socket PATH``, on a Unix socket that one client connects to. Everything
BAT prints goes to stderr (file descriptor 1 included, while serving on
stdout). The run is an ordinary ``bat run``: same target, budget, seed and
trace.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import typer

from bat.cli.options import MAX_EVALUATIONS, MAX_SECONDS, MAX_SEED, positive_finite
from bat.cli.output import say_err, warn


def serve(
    benchmark: str = typer.Option(..., "--benchmark", "-b", help="Benchmark name or path to a space JSON."),
    gpu: str = typer.Option(None, "--gpu", "--gpus",
                           help="GPU whose recorded data to replay (default: RTX_3090)."),
    budget: int = typer.Option(100, "--budget", "-n", min=1, max=MAX_EVALUATIONS,
                               help="Distinct valid configurations to evaluate."),
    time_budget: float = typer.Option(None, "--time-budget", max=MAX_SECONDS, callback=positive_finite,
                                      help="Simulated seconds (compile + run) instead."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, max=MAX_SEED,
                             help="Run seed; the client's seed in hello is drawn from it."),
    out: Path = typer.Option(None, "--out", "-o", help="Trace file (Parquet); default <data folder>/runs/<...>.parquet "
                                                       "as `bat run` names it."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out or --transcript file."),
    backend: str = typer.Option("auto", "--backend", help="auto, or a backend of `bat list backends`."),
    socket_path: Path = typer.Option(None, "--socket", help="Serve one client on this Unix socket instead of "
                                                            "stdin/stdout."),
    transcript: Path = typer.Option(None, "--transcript", help="Write every message, both ways, to this file "
                                                               "(JSON lines)."),
    name: str = typer.Option("external", "--name", help="The tuner's name in the trace."),
    idle_timeout: float = typer.Option(600.0, "--idle-timeout", max=MAX_SECONDS, callback=positive_finite,
                                       help="Seconds the client may send nothing after a reply before the "
                                            "session ends (bat.protocol.pacing)."),
    request_timeout: float = typer.Option(60.0, "--request-timeout", max=MAX_SECONDS, callback=positive_finite,
                                          help="Seconds one request may take to arrive once begun."),
) -> None:
    """Serve one tuning problem over the BAT protocol to a tuner in another process or language."""
    from bat.core.atomic import check_output
    from bat.core.errors import BatError
    from bat.core.problem import Budget
    from bat.core.trace import write_trace
    from bat.core.userdata import check_writable, runs_dir
    from bat.protocol.server import StreamTuner
    from bat.run.driver import run_tuner
    from bat.run.naming import run_name
    from bat.run.targets import TargetRequest, make_target

    target, how = make_target(benchmark, backend=backend, request=TargetRequest(gpu=gpu))
    b = Budget(max_evals=None if time_budget else budget, max_time_s=time_budget)
    numbered = out is None
    if out is None:
        out = runs_dir() / run_name(target, name, [], b, seed)
    check_output(check_writable(out), overwrite=force or numbered, what="--out")  # all before anything is written
    if transcript is not None:
        check_output(check_writable(transcript), overwrite=force, what="--transcript")
    if socket_path is not None:
        _check_socket(socket_path)
    say_err("[bold]{}[/]: {}", how, target.backend.describe())
    settings = {"benchmark": target.benchmark, "gpu": target.gpu, "backend": target.backend.name,
                "budget": {"evaluations": b.max_evals, "seconds": b.max_time_s}, "seed": seed}
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(transcript, "w")) if transcript else None
        if log is not None:
            log.write(json.dumps({"from": "bat", "settings": settings}) + "\n")
        reader, writer = stack.enter_context(_socket(socket_path) if socket_path else _stdio())
        say_err("serving {}/{}, budget {}, seed {}", target.benchmark, target.gpu, b.describe(), seed)
        result = run_tuner(StreamTuner(reader=reader, writer=writer, transcript=log, idle_s=idle_timeout,
                                       request_s=request_timeout), target, budget=b,
                           seed=seed, tuner_name=name)
    target.backend.close()
    report = result.trace_meta.get("tuner_report", {})
    if not report.get("client") and not result.evaluated:
        raise BatError(f"the client sent nothing (no hello, no request; the session {report.get('ended')}): "
                       "no trace written")
    result.trace_path = write_trace(result.trace, result.trace_meta, out, overwrite=force, numbered=numbered)
    say_err("client {}: {} evaluations, {} rejected, {} repeats; ended: {}", report.get("client") or "(no hello)",
            result.evaluated, result.rejected, result.repeated, report.get("ended"))
    if "warning" in report:
        warn("{}", report["warning"])
    if result.best is not None:
        say_err("best time: {:.4f} ms", result.best.objective_ms)
    say_err("trace: {}", result.trace_path)


@contextlib.contextmanager
def _stdio() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """The protocol on stdin and the real stdout; fd 1 and sys.stdout write to stderr meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield sys.stdin.buffer, protocol_out
    finally:
        protocol_out.close()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def _socket(path: Path) -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """Listen on a Unix socket at ``path``, serve the first client that connects, remove the socket.

    The socket is bound and listening under a temporary name first and then renamed, so a client
    that sees ``path`` can connect at once.
    """
    import socket  # here, not at the top: every bat command imports this module, one command serves

    from bat.core.errors import BatError

    _check_socket(path)

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    pending = path.with_name(f".{path.name}.{os.getpid()}.binding")
    try:
        try:
            server.bind(str(pending))
            server.listen(1)
            pending.rename(path)
        except OSError as exc:
            raise BatError(f"--socket {path}: {exc.strerror or exc}") from exc
        say_err("listening on {}", path)
        conn, _ = server.accept()
        with conn, conn.makefile("rb") as reader, conn.makefile("wb") as writer:
            yield reader, writer
    finally:
        server.close()
        pending.unlink(missing_ok=True)
        path.unlink(missing_ok=True)


#: bytes of a Unix socket's path (sun_path holds 108 with its terminating zero), its temporary name included
MAX_SOCKET_PATH = 107


def _check_socket(path: Path) -> None:
    """Everything binding ``path`` needs, checked before the first line is printed."""
    from bat.core.atomic import check_output_folder
    from bat.core.errors import BatError

    if path.exists() or path.is_symlink():
        raise BatError(f"--socket {path}: the file exists (another server, or a stale socket to remove)")
    check_output_folder(path.parent, what=f"--socket {path}: folder")
    if not path.parent.is_dir():  # bind creates no folder
        raise BatError(f"--socket {path}: the folder {path.parent} does not exist")
    pending = path.with_name(f".{path.name}.{os.getpid()}.binding")
    if len(os.fsencode(pending)) > MAX_SOCKET_PATH:
        raise BatError(f"--socket {path}: a path of {len(os.fsencode(path))} bytes, too long for a Unix socket "
                       f"(with its temporary name at most {MAX_SOCKET_PATH}); use a shorter one")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
