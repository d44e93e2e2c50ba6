"""Nothing outlives BAT: timed-out steps with their escaped descendants, a killed backend's
processes and scratch folder, pool workers of a killed parent; and folder locks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from process_events import gone

from bat.backends.command import TAIL_BYTES, run_step
from bat.backends.scratch import PREFIX, sweep_stale
from bat.core.errors import FolderInUseError
from bat.core.lifetime import tagged_pids
from bat.core.locking import FolderLock

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tags are found through Linux /proc")
ROOT = Path(__file__).resolve().parents[1]


def wait_for(check, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return check()


@LINUX
def test_timeout_kills_a_descendant_that_left_the_session(tmp_path):
    late, pid_file = tmp_path / "late", tmp_path / "child.pid"
    script = 'setsid sh -c \'echo $$ > "$2"; sleep 1; touch "$1"\' sh "$1" "$2" & sleep 30'
    step = run_step(["sh", "-c", script, "sh", str(late), str(pid_file)], tmp_path, 0.5, tag="test-setsid/0/run")
    assert step.timed_out
    assert tagged_pids("test-setsid/") == []
    assert gone(pid_file)  # judged by the event (the child ended), not by a sleep
    assert not late.exists()


def test_output_is_kept_as_a_bounded_tail(tmp_path):
    step = run_step([sys.executable, "-c", "import sys; sys.stdout.write('x' * 50_000_000 + 'END')"],
                    tmp_path, 60)
    assert step.returncode == 0 and step.stdout.endswith("END") and len(step.stdout) == TAIL_BYTES
    assert list(tmp_path.iterdir()) == []  # the output went to an unnamed file


CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from bat.backends.command import command_backend
    from bat.core.benchmark import load_benchmark

    backend = command_backend(load_benchmark(Path(sys.argv[1])))
    print(backend._scratch.path, flush=True)
    backend.evaluate({"S": 1})
""")


def hanging_benchmark(tmp_path: Path) -> Path:
    import json

    raw = {"name": "hang", "parameters": [{"name": "S", "values": [1]}], "constraints": [], "problem_size": {},
           "command": {"run": "sh -c 'setsid sleep 300 & sleep 300'", "objective": "wall", "repeats": 1,
                       "time_limit_s": {"run": 600}}}
    path = tmp_path / "space.json"
    path.write_text(json.dumps(raw))
    return path


@LINUX
def test_kill_9_of_a_command_backend_leaves_no_process_and_no_folder(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(hanging_benchmark(tmp_path))],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    scratch = Path(proc.stdout.readline().strip())
    tag = scratch.name + "/"
    assert wait_for(lambda: len(tagged_pids(tag)) >= 3)  # sh, its sleep, the setsid sleep
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert wait_for(lambda: tagged_pids(tag) == [] and not scratch.exists())


@LINUX
def test_a_scratch_folder_without_owner_is_swept_at_the_next_start(tmp_path):
    stale, alive = tmp_path / f"{PREFIX}stale", tmp_path / f"{PREFIX}alive"
    stale.mkdir()
    (stale / "0-x").mkdir()
    sleeper = subprocess.Popen(["sleep", "300"], env={**os.environ, "BAT_STEP": f"{stale.name}/0/run0"})
    try:
        with FolderLock(alive, "test"):
            assert sweep_stale(tmp_path) == [stale]
            assert alive.exists() and not stale.exists()
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
    finally:
        sleeper.kill()


def test_a_folder_lock_names_its_holder_and_dies_with_it(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from bat.core.locking import FolderLock
        FolderLock({str(tmp_path)!r}, "x").acquire()
        print("held", flush=True)
        time.sleep(300)
    """)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderInUseError, match=f"in use by process {holder.pid} "):
            FolderLock(tmp_path, "--out").acquire()
    finally:
        holder.kill()
        holder.wait()
    with FolderLock(tmp_path, "--out"):  # kill -9 released it
        pass


@LINUX
def test_pool_workers_die_with_their_parent(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import concurrent.futures as cf, multiprocessing, os, time
        from bat.core.lifetime import die_with_parent
        if __name__ == "__main__":
            pool = cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"),
                                          initializer=die_with_parent, initargs=(os.getpid(),))
            pids = {f.result() for f in [pool.submit(os.getpid) for _ in range(8)]}
            print(" ".join(map(str, pids)), flush=True)
            time.sleep(300)
    """)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    workers = [int(p) for p in parent.stdout.readline().split()]
    assert workers
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()

    def gone(pid: int) -> bool:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return True
        return "State:\tZ" in status

    assert wait_for(lambda: all(gone(p) for p in workers))


def test_a_second_recording_into_one_journal_is_refused(tmp_path):
    from bat.core.errors import DatasetError
    from bat.run.recording.journal import Journal

    path = tmp_path / "d.parquet.journal.jsonl"
    first = Journal.create(path, {"benchmark": "x"})
    first.append({"id": 1})
    with pytest.raises(DatasetError, match="another BAT process is writing this journal"):
        Journal.open(path)
    first.close()
    with Journal.open(path) as second:  # free again
        assert [r["id"] for r in second.records] == [1]


@LINUX
def test_what_a_configuration_leaves_running_is_killed_when_it_is_done(tmp_path, monkeypatch):
    import json
    import tempfile

    from bat.backends.command import command_backend
    from bat.core.benchmark import load_benchmark

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    raw = {"name": "daemon", "parameters": [{"name": "S", "values": [1]}], "constraints": [], "problem_size": {},
           "command": {"run": "sh -c 'setsid sleep 300 & echo started'", "objective": "wall", "repeats": 1}}
    (tmp_path / "space.json").write_text(json.dumps(raw))
    backend = command_backend(load_benchmark(tmp_path / "space.json"))
    try:
        assert backend.evaluate({"S": 1}).ok
        assert tagged_pids(backend._scratch.tag + "/") == []
    finally:
        backend.close()
