"""Issue 32, class 8: one line means one line.

Every message goes through bat.cli.output, which shows a newline, a carriage return, any other
control character and the Unicode line separators in a value as an escape; the error path
(bat.cli.main) does the same. ``bat serve`` refuses its options before it prints anything.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bat.cli import EXIT_OK, EXIT_USAGE, main
from bat.cli.output import markup, one_line, progress_line

BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_one_line_never_breaks_a_line(text):
    shown = one_line(text)
    assert len(shown.splitlines()) <= 1 and not any(ch in shown for ch in BREAKS)
    assert one_line(text) == text or not text.isprintable()
    assert len(markup("x {} y", text).splitlines()) <= 1
    assert len(progress_line(text, 1, 2, 3.0).splitlines()) == 1


def test_a_newline_in_a_name_stays_in_its_error_line(capsys):
    assert main(["run", "-t", "evil\nerror: fake second line", "-b", "gemm"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "evil\\nerror: fake second line" in err


def test_a_newline_in_a_path_stays_in_its_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "a\nb.parquet"
    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "3", "-o", str(out)]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("trace: ")] == [f"trace: {tmp_path}/a\\nb.parquet"]


def test_serve_refuses_its_options_before_any_banner(tmp_path, capsys):
    taken = tmp_path / "taken.sock"
    taken.write_text("")
    assert main(["serve", "-b", "gemm", "--socket", str(taken), "-o", str(tmp_path / "t.parquet")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "--socket" in err
    transcript = tmp_path / "log.jsonl"
    transcript.write_text("")
    assert main(["serve", "-b", "gemm", "--transcript", str(transcript)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
