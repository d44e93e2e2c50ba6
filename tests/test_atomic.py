"""Nothing overwritten, nothing torn: atomic publication of files, and `bat run`'s output names."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from bat.cli import main
from bat.core.atomic import check_output, publish, temporary_path, write_text
from bat.core.errors import OutputError
from bat.core.userdata import runs_dir

ROOT = Path(__file__).resolve().parents[1]


def test_a_failing_writer_leaves_neither_file_nor_temporary(tmp_path):
    def fail(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        publish(tmp_path / "x.json", fail)
    assert list(tmp_path.iterdir()) == []


def test_temporary_names_are_unique_and_hidden(tmp_path):
    names = {temporary_path(tmp_path / "x.parquet").name for _ in range(50)}
    assert len(names) == 50 and all(n.startswith(".x.parquet.") and n.endswith(".tmp") for n in names)


def test_no_overwrite_and_numbered_names(tmp_path):
    path = write_text(tmp_path / "r.txt", "first")
    with pytest.raises(OutputError, match="exists"):
        write_text(path, "second", overwrite=False)
    second = publish(path, lambda t: t.write_text("second"), numbered=True)
    third = publish(path, lambda t: t.write_text("third"), numbered=True)
    assert (second.name, third.name) == ("r-2.txt", "r-3.txt")
    assert path.read_text() == "first" and second.read_text() == "second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r-2.txt", "r-3.txt", "r.txt"]


def test_racing_writers_of_one_name_never_replace_each_other(tmp_path):
    path, barrier, won, lost = tmp_path / "r.txt", threading.Barrier(8), [], []

    def writer(k: int) -> None:
        def fill(tmp: Path) -> None:
            tmp.write_text(str(k))
            barrier.wait()
        try:
            publish(path, fill, overwrite=False)
            won.append(k)
        except OutputError:
            lost.append(k)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == 7 and path.read_text() == str(won[0])
    assert [p.name for p in tmp_path.iterdir()] == ["r.txt"]


def test_kill_9_while_writing_leaves_no_torn_file(tmp_path):
    target = tmp_path / "big.bin"
    script = textwrap.dedent(f"""
        import time
        from bat.core.atomic import publish
        def slow(tmp):
            with open(tmp, "wb") as fh:
                fh.write(b"x" * 1000)
                fh.flush()
                print("writing", flush=True)
                time.sleep(60)
        publish({str(target)!r}, slow)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout.readline().strip() == "writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not target.exists()
    leftovers = list(tmp_path.iterdir())
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".big.bin.")


def test_check_writable_refuses_folders_files_in_the_way_and_existing_files(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is a folder"):
        check_output(tmp_path)
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_output(tmp_path / "f" / "x.parquet")
    with pytest.raises(OutputError, match="--force"):
        check_output(tmp_path / "f", overwrite=False)
    assert check_output(tmp_path / "new" / "deeper" / "x.parquet") == tmp_path / "new" / "deeper" / "x.parquet"
    assert not (tmp_path / "new").exists()


def test_run_names_hold_what_tells_runs_apart_and_never_replace(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    base = ["run", "-t", "reference:random", "-b", "pnpoly", "-s", "7"]
    for extra in (["-n", "30"], ["-n", "31"], ["-n", "30"], ["--time-budget", "5"], ["-n", "30", "-O", "batch=4"]):
        assert main([*base, *extra]) == 0
    names = sorted(p.name for p in runs_dir().iterdir())
    assert names == ["pnpoly_RTX_3090_replay_reference_random_batch=4_n30_s7.parquet",
                     "pnpoly_RTX_3090_replay_reference_random_n30_s7-2.parquet",
                     "pnpoly_RTX_3090_replay_reference_random_n30_s7.parquet",
                     "pnpoly_RTX_3090_replay_reference_random_n31_s7.parquet",
                     "pnpoly_RTX_3090_replay_reference_random_t5s_s7.parquet"]
    out = tmp_path / "mine.parquet"
    assert main([*base, "-n", "5", "-o", str(out)]) == 0
    before = out.stat().st_mtime_ns
    time.sleep(0.01)
    capsys.readouterr()
    assert main([*base, "-n", "6", "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.stat().st_mtime_ns == before
    assert main([*base, "-n", "6", "-o", str(out), "--force"]) == 0
    assert out.stat().st_mtime_ns != before
