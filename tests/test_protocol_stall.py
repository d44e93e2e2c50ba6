"""Class 7 of issue 32 (and the protocol half of class 2): a peer that stalls ends its session within the
stated limits, an exec: tuner's process group ends with the run, and an over-long or too-deep line is a
parse_error after which the session goes on."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from refusal import run_in
from test_protocol_session import HELLO, SPACE, A, Toy, evaluate

from bat.core.limits import MAX_LINE_BYTES, MAX_NAME_CHARS
from bat.core.problem import Budget, Problem
from bat.core.trace import TraceRecorder, read_trace
from bat.protocol.pacing import Pacing, PeerStalled, paced_lines
from bat.protocol.server import Session


def session(pacing: Pacing) -> tuple[Session, TraceRecorder]:
    recorder = TraceRecorder(SPACE.names)
    problem = Problem(space=SPACE, backend=Toy(), budget=Budget(max_evals=3), observers=[recorder])
    return Session(problem, seed=1, pacing=pacing), recorder


def feed(chunks: list[tuple[float, bytes]]) -> int:
    """A pipe whose writer sends each chunk after its delay and then keeps the pipe open (a stalled peer)."""
    read, write = os.pipe()

    def writer() -> None:
        for delay, data in chunks:
            time.sleep(delay)
            os.write(write, data)
        time.sleep(8)
        os.close(write)

    threading.Thread(target=writer, daemon=True).start()
    return read


def line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize(("tail", "limit"), [(b"", "idle_s=0.5"), (b'{"type": "eva', "request_s=0.5")])
def test_a_stalled_client_ends_its_session_within_the_limit(tail, limit) -> None:
    fd = feed([(0, line(HELLO) + line(evaluate(A)) + tail)])
    sess, recorder = session(Pacing(idle_s=0.5, request_s=0.5))
    with os.fdopen(fd, "rb") as reader:
        outcome = sess.run(reader, io.BytesIO())
    # the writer closes its end 8 s later: without the limit the session would end "closed", not "stalled"
    assert outcome.ended == "stalled" and limit in outcome.stalled and "stalled" in outcome.report()["warning"]
    assert len(recorder.frame()) == 1  # the evaluation before the stall is in the trace


def test_a_slow_but_steady_client_is_served() -> None:
    fd = feed([(0.3, line(HELLO)), (0.3, line(evaluate(A))), (0.3, line({"type": "done"}))])
    sess, _ = session(Pacing(idle_s=2, request_s=2))
    with os.fdopen(fd, "rb") as reader:
        assert sess.run(reader, io.BytesIO()).ended == "done"


def test_an_over_long_line_is_a_parse_error_and_the_session_goes_on() -> None:
    big = b'{"type": "hello", "pad": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}\n'
    fd = feed([(0, big[: 1 << 20]), (0, big[1 << 20:] + line(HELLO) + line({"type": "done"}))])
    sess, _ = session(Pacing(idle_s=5, request_s=5))
    out = io.BytesIO()
    with os.fdopen(fd, "rb") as reader:
        outcome = sess.run(reader, out)
    replies = [json.loads(r) for r in out.getvalue().splitlines()]
    assert replies[0]["code"] == "parse_error" and replies[1]["type"] == "hello" and outcome.ended == "done"


def test_a_line_nested_too_deep_is_a_parse_error_and_the_session_goes_on() -> None:
    sess, _ = session(Pacing())
    out = io.BytesIO()
    lines = [b"[" * 100_000 + b"]" * 100_000 + b"\n", b'{"id": ' + b"9" * 5000 + b"}\n", line(HELLO),
             line({**HELLO, "tuner": "x" * (MAX_NAME_CHARS + 1)}), line({"type": "done"})]
    outcome = sess.run(iter(lines), out)
    replies = [json.loads(r) for r in out.getvalue().splitlines()]
    assert [r.get("code") for r in replies[:2]] == ["parse_error", "parse_error"]
    assert replies[2]["type"] == "hello" and replies[3]["field"] == "tuner" and outcome.ended == "done"


def test_pacing_limits_are_checked() -> None:
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="idle_s"):
            Pacing(idle_s=bad)
    with pytest.raises(PeerStalled):
        read, _write = os.pipe()
        list(paced_lines(os.fdopen(read, "rb"), Pacing(idle_s=0.2)))


STALLER = """
import json, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
open(sys.argv[1], "w").write(str(child.pid))
print(json.dumps({"type": "hello", "protocol": 1, "tuner": "staller"}), flush=True)
sys.stdin.readline()
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_an_exec_tuner_that_stalls_ends_the_run_and_its_children(tmp_path, monkeypatch) -> None:
    (tmp_path / "staller.py").write_text(STALLER)
    pid_file = tmp_path / "child.pid"
    code = run_in(tmp_path, monkeypatch, ["run", "-t", f"exec:{sys.executable} staller.py {pid_file}",
                                          "-O", "idle_s=5", "-b", "pnpoly", "--budget", "5", "-o", "t.parquet"])
    # the staller sleeps 300 s: the run ended at its idle limit (its trace says "stalled"); the limit leaves
    # room for the staller's start, which counts toward the wait for its hello
    assert code == 0
    _, meta = read_trace(tmp_path / "t.parquet")
    assert "stalled" in json.dumps(meta)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the tuner's background child outlived the run"


#: a silence limit no pause of the trickle below reaches, however loaded the machine: a reader that let each
#: byte restart the request's deadline would read the whole line and then stop at this limit, naming idle_s
TRICKLE_IDLE_S = 60.0


def test_a_request_trickled_a_byte_at_a_time_meets_a_whole_request_deadline() -> None:
    # each byte comes well within the silence limit (idle_s); the request as a whole is late (request_s): the
    # limit named says which deadline ended it, so no clock is read here
    fd = feed([(0.1, bytes([b])) for b in line(HELLO)])
    with pytest.raises(PeerStalled, match=r"request_s=0\.6"):
        list(paced_lines(fd, Pacing(idle_s=TRICKLE_IDLE_S, request_s=0.6)))


def test_the_isolated_reader_has_the_same_whole_request_deadline() -> None:
    from bat.tuner_adapters.isolated import GuardedReader

    fd = feed([(0.1, bytes([b])) for b in line(HELLO)])
    reader = GuardedReader(fd, TRICKLE_IDLE_S, lambda: "", request_s=0.6)
    assert list(reader) == []
    assert reader.reason.startswith("hung:") and "request_s=0.6" in reader.reason


def test_an_endless_line_ends_at_the_request_limit():
    """A peer that never stops sending one line (``bat serve < /dev/zero``) was always ready for select, so the
    rest of the over-long line was skipped forever; past request_s it ends the session (issue 43, class 4)."""
    read, write = os.pipe()
    stop = threading.Event()

    def endless() -> None:
        with os.fdopen(write, "wb") as out:
            try:
                while not stop.is_set():
                    out.write(b"\0" * 65536)
            except (BrokenPipeError, OSError):
                pass

    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    lines = paced_lines(read, Pacing(idle_s=5, request_s=0.5))
    try:
        assert len(next(lines)) == MAX_LINE_BYTES + 1  # the over-long line's head, answered parse_error
        with pytest.raises(PeerStalled, match="request_s"):
            next(lines)
    finally:
        stop.set()
        os.close(read)
        writer.join(timeout=10)
