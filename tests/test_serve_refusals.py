"""``bat serve`` refuses before it prints or writes anything, and refuses a session that carried nothing
(issue 43, classes 5 and 7): a client that sends nothing left an empty trace and exit 0; a socket path whose
folder is missing or that is too long for a Unix socket failed after "no GPU found, replaying" was printed."""

from __future__ import annotations

import io
import sys

import pytest
from refusal import run_in


def _stderr_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


@pytest.mark.parametrize(("sent", "code"), [(b"", 2), (b'{"type": "hello", "protocol": 1, "tuner": "t"}\n', 0)],
                         ids=["nothing", "hello-only"])
def test_a_client_that_sends_nothing_leaves_no_trace(sent, code, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(sent)))
    assert run_in(tmp_path, monkeypatch, ["serve", "-b", "pnpoly", "-n", "2", "-o", "t.parquet"]) == code
    lines = _stderr_lines(capsys)
    if code:
        assert lines[-1] == "error: the client sent nothing (no hello, no request; the session closed): no trace " \
                            "written"
    assert (tmp_path / "t.parquet").exists() == (code == 0)


@pytest.mark.parametrize(("socket", "says"), [("nodir/x.sock", "does not exist"), ("s" * 110, "too long")])
def test_a_socket_that_cannot_be_bound_is_refused_before_any_line(socket, says, tmp_path, monkeypatch, capsys):
    assert run_in(tmp_path, monkeypatch, ["serve", "-b", "pnpoly", "--socket", socket]) == 2
    lines = _stderr_lines(capsys)
    assert len(lines) == 1 and lines[0].startswith(f"error: --socket {socket}") and says in lines[0]
    assert not (tmp_path / "nodir").exists() and not list(tmp_path.glob("s*"))
