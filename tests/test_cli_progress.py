"""Progress in logs: off a terminal, long commands print a plain line to stderr at most every 10 s."""

from __future__ import annotations

import re

import pytest

from bat.cli import EXIT_OK, main, output
from bat.cli.output import ProgressLog, progress_line

LINE = re.compile(r"^(?P<label>.+): (?P<done>\d+)/(?P<total>\d+) \((?P<pct>\d+)%\), (?P<elapsed>\d+) s elapsed, "
                  r"about (?P<left>\d+) s left$")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_at_most_every_ten_seconds_with_done_total_elapsed_and_time_left():
    clock, lines = Clock(), []
    log = ProgressLog("runs", lines.append, clock=clock)
    for k in range(1, 101):  # one update per second for 100 s
        clock.now += 1.0
        log.update(k, 100)
    assert len(lines) == 10  # at 10, 20, ..., 100 s
    first = LINE.match(lines[0])
    assert first and first["label"] == "runs" and first["done"] == "10" and first["total"] == "100"
    assert first["elapsed"] == "10" and first["left"] == "90"  # 10 s for 10 of 100: about 90 s left
    assert LINE.match(lines[-1])["left"] == "0"


def test_fractions_and_unknown_totals():
    assert progress_line("optuna on gemm/RTX_3090", 0.25, 1.0, 30.0) == \
        "optuna on gemm/RTX_3090: 25%, 30 s elapsed, about 90 s left"
    assert progress_line("runs", 3, None, 5.0) == "runs: 3 done, 5 s elapsed"
    assert progress_line("a\nb", 0, 4, 1.0) == "a\\nb: 0/4 (0%), 1 s elapsed, time left unknown"


@pytest.mark.parametrize("command", [
    ["run", "-t", "reference:random", "-b", "pnpoly", "-n", "30"],
    ["compare", "-t", "reference:random", "-b", "pnpoly", "--budgets", "5", "-r", "3", "--no-plots"],
])
def test_long_commands_log_progress_off_a_terminal_and_quiet_silences_it(command, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(output, "PROGRESS_EVERY_S", 0.0)  # every update prints: no waiting in a test
    monkeypatch.chdir(tmp_path)
    assert main([*command, "-o", "a"]) == EXIT_OK
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "elapsed" in line]
    shape = re.compile(r"^.+: (\d+/\d+ \(\d+%\)|\d+%|\d+ done), \d+ s elapsed"
                       r"(, about \d+ s left|, time left unknown)?$")
    assert lines and all(shape.match(line) for line in lines), lines
    assert any("s left" in line for line in lines)
    assert main([*command, "-o", "b", "--quiet"]) == EXIT_OK
    assert "elapsed" not in capsys.readouterr().err


def test_a_new_phase_is_named_at_once_and_counts_from_its_own_start():
    clock, lines = Clock(), []
    log = ProgressLog("analyze gemm", lines.append, clock=clock)
    for k in range(1, 31):  # a slow first phase: 30 s for all of it
        clock.now += 1.0
        log.update(k / 30, 1.0, phase="data checks")
    clock.now += 1.0
    log.update(0.0, 1.0, phase="importance")  # the next phase: a line at once, naming it
    assert lines[-1] == "analyze gemm, importance: 0%, 0 s elapsed, time left unknown"
    clock.now += 10.0
    log.update(0.5, 1.0, phase="importance")
    assert lines[-1] == "analyze gemm, importance: 50%, 10 s elapsed, about 10 s left"


def test_time_left_follows_a_phase_whose_steps_grow_costlier():
    """A tuner whose k-th proposal costs k units (Optuna's TPE grows so): elapsed = c k^2. At 22 % the
    estimate must be near the true 19.7 x elapsed, not the 3.5 x a constant rate gives."""
    clock, lines = Clock(), []
    log = ProgressLog("optuna on gemm", lines.append, clock=clock, every_s=1e9)
    n = 1000
    for k in range(1, 221):
        clock.now += k * 0.01
        log.update(k, n)
    elapsed = clock.now - log.start
    true_left = sum(k * 0.01 for k in range(221, n + 1))
    assert 0.8 * true_left <= log.time_left(elapsed) <= 1.2 * true_left
    steady = ProgressLog("random on gemm", lines.append, clock=(c := Clock()), every_s=1e9)
    for k in range(1, 221):
        c.now += 0.5
        steady.update(k, n)
    assert abs(steady.time_left(c.now - steady.start) - 0.5 * (n - 220)) < 1.0
