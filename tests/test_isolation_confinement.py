"""What confines an isolated tuner (issue 39): no network, every process it starts ended, reaped and charged
with its run, only its own code readable, and a tuner its sandboxed process cannot load refused before any
run (exit 2, nothing written)."""

from __future__ import annotations

import functools
import os
import shutil
import socket
import sys

import pytest

from bat.cli import EXIT_USAGE, main
from bat.core.errors import BatError
from bat.core.problem import Budget
from bat.registry import make_tuner
from bat.run.driver import run_tuner
from bat.run.targets import replay_target
from bat.testing import exploits as ex
from bat.tuner_adapters import seccomp
from bat.tuner_adapters.sandbox import Sandbox, landlock_abi

needs_landlock = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")

BESIDE = "from bat.testing.exploits import ReadBeside\n\n\nclass Beside(ReadBeside):\n    pass\n"


@functools.cache
def _target():
    return replay_target("coulomb")


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    """``tmp_path`` on the Python path, as ``PYTHONPATH=$PWD`` puts a tuner project's folder (docs/CI.md)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith(("beside_", "data_pkg", "needs_sibling", "sibling_"))]:
        del sys.modules[name]


@pytest.mark.skipif(not seccomp.available(), reason="no seccomp filter for this machine")
def test_the_network_filter_refuses_a_socket_of_every_family_and_keeps_socketpair():
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            seccomp.deny_network()
            left, right = socket.socketpair()
            left.send(b"x")
            code |= int(right.recv(1) != b"x")
            for family, kind in ((socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET, socket.SOCK_STREAM),
                                 (socket.AF_INET6, socket.SOCK_DGRAM), (socket.AF_UNIX, socket.SOCK_STREAM),
                                 (socket.AF_NETLINK, socket.SOCK_RAW)):
                try:
                    socket.socket(family, kind).close()
                    code |= 2
                except PermissionError:
                    pass
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_the_sandbox_line_says_what_is_open_and_what_ends_with_the_run(monkeypatch):
    line = Sandbox((), ()).describe()
    assert "(0 paths)" not in line and "every process it starts ended, reaped and charged" in line
    assert ("no network (seccomp" in line) == seccomp.available()
    monkeypatch.setattr(seccomp, "available", lambda: False)
    assert "the network open" in Sandbox(("/usr",), ()).describe()


@needs_landlock
def test_a_helper_that_escapes_the_process_group_is_ended_named_and_charged():
    tuner = make_tuner("isolate:bat.testing.exploits:SetsidHelper")
    result = run_tuner(tuner, _target(), budget=Budget(max_evals=5), seed=0, check_data=False)
    report = result.trace_meta["tuner_report"]
    (left,) = report["processes_left"]
    assert left["state"] != "Z" and not os.path.exists(f"/proc/{left['pid']}")
    assert f"python {left['pid']} running" in report["warning"]
    # its busy work, done after the last proposal, is charged at the end of the run
    assert report["charged_at_end_s"] >= 0.8 * ex.WORK_S * ex.TIME_PROPOSALS
    assert result.tuner_s == pytest.approx(report["tuner_cpu_s"])


@needs_landlock
def test_children_never_reaped_are_named_as_zombies_and_charged_at_each_proposal():
    tuner = make_tuner("isolate:bat.testing.exploits:ZombieWork")
    result = run_tuner(tuner, _target(), budget=Budget(max_evals=5), seed=0, check_data=False)
    report = result.trace_meta["tuner_report"]
    assert [p["state"] for p in report["processes_left"]] == ["Z"] * ex.TIME_PROPOSALS
    assert "zombie" in report["warning"]
    charged = result.trace["tuner_s"].iloc[1:]
    assert (charged >= 0.8 * ex.WORK_S).all(), list(charged)


@needs_landlock
def test_a_module_beside_the_data_folder_reads_only_its_own_file(on_path):
    (on_path / "beside_tuner.py").write_text(BESIDE)
    (on_path / "bat-data").mkdir()
    shutil.copy(_target().dataset_path, on_path / "bat-data" / "coulomb.parquet")
    optimum = ex.optimum_of(_target().dataset.frame, _target().space)
    from beside_tuner import Beside

    budget = Budget(max_evals=2)
    in_process = run_tuner(Beside(), _target(), budget=budget, seed=0, check_data=False)
    assert ex.judge(Beside, in_process.trace, in_process.trace_meta, _target().space, optimum) == "succeeded"
    tuner = make_tuner("isolate:beside_tuner:Beside")
    assert str(on_path / "beside_tuner.py") in tuner.sandbox.read and str(on_path) not in tuner.sandbox.read
    isolated = run_tuner(tuner, _target(), budget=budget, seed=0, check_data=False)
    assert isolated.evaluated == 1 and "warning" not in isolated.trace_meta["tuner_report"]
    assert ex.judge(Beside, isolated.trace, isolated.trace_meta, _target().space, optimum) == "blocked"


def test_a_package_folder_that_holds_data_is_refused_with_one_line(on_path, capsys):
    (on_path / "data_pkg").mkdir()
    (on_path / "data_pkg" / "__init__.py").write_text(BESIDE)
    shutil.copy(_target().dataset_path, on_path / "data_pkg" / "kept.parquet")
    with pytest.raises(BatError, match=r"data_pkg holds data \(.*kept\.parquet\)"):
        make_tuner("isolate:data_pkg:Beside")
    out = on_path / "t.parquet"
    code = main(["run", "--tuner", "data_pkg:Beside", "--benchmark", "coulomb", "--budget", "2", "--isolate",
                 "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == EXIT_USAGE and "\n" not in err and "holds data" in err and not out.exists()


@needs_landlock
def test_a_tuner_its_sandboxed_process_cannot_import_is_exit_2_before_any_run(on_path, capsys):
    # imports a sibling module: the harness finds it on the path, the sandbox grants only the tuner's own file
    (on_path / "sibling_helper.py").write_text("VALUE = 1\n")
    (on_path / "needs_sibling.py").write_text("import sibling_helper\n" + BESIDE)
    out = on_path / "t.parquet"
    code = main(["run", "--tuner", "needs_sibling:Beside", "--benchmark", "coulomb", "--budget", "2", "--isolate",
                 "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == EXIT_USAGE and not out.exists(), err
    assert "\n" not in err and "isolate:needs_sibling:Beside" in err and "sibling_helper" in err
    assert str(on_path / "needs_sibling.py") in err  # where its code was read from
    folder = on_path / "campaign"
    code = main(["compare", "--tuners", "mine=needs_sibling:Beside", "--benchmarks", "coulomb", "--budgets", "2",
                 "--repeats", "1", "--no-plots", "--isolate", "--out", str(folder)])
    assert code == EXIT_USAGE and not folder.exists()


@needs_landlock
def test_a_module_tuner_found_through_pythonpath_runs_isolated(on_path, capsys):
    (on_path / "beside_tuner.py").write_text(BESIDE)
    from test_cli_json import document

    doc = document(["run", "--tuner", "beside_tuner:Beside", "--benchmark", "coulomb", "--budget", "2",
                    "--isolate", "--out", str(on_path / "t.parquet")], capsys)
    assert doc["evaluations"] == 1 and doc["warning"] is None
    assert doc["processes_left"] == [] and doc["refused_after_return"] == 0


@needs_landlock
def test_compare_json_names_the_processes_a_run_left_and_they_are_gone(tmp_path, capsys):
    from test_cli_json import document

    doc = document(["compare", "--tuners", "helper=bat.testing.exploits:SetsidHelper", "--benchmarks", "coulomb",
                    "--budgets", "4", "--repeats", "1", "--no-plots", "--isolate", "--out", str(tmp_path / "c")],
                   capsys)
    (warned,) = doc["run_warnings"]
    assert warned["label"] == "helper" and "left 1 process(es) behind" in warned["warning"]
    (left,) = warned["processes_left"]
    assert not os.path.exists(f"/proc/{left['pid']}")


@needs_landlock
def test_an_isolated_program_is_granted_its_own_file_and_tunes(tmp_path):
    (tmp_path / "data.parquet").write_bytes(b"not read")
    program = tmp_path / "client.py"
    program.write_text("import sys\nfrom bat.protocol.remote import main\nsys.exit(main(['reference:random']))\n")
    tuner = make_tuner(f"isolate:exec:{sys.executable} {program}")
    assert str(program) in tuner.sandbox.read and str(tmp_path) not in tuner.sandbox.read
    result = run_tuner(tuner, _target(), budget=Budget(max_evals=3), seed=0, check_data=False)
    assert result.evaluated == 3 and "warning" not in result.trace_meta["tuner_report"]


def test_an_isolated_tuner_that_never_says_hello_is_exit_2_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    code = main(["run", "--tuner", f"exec:{sys.executable} -c 'import sys; sys.exit(3)'", "--benchmark", "coulomb",
                 "--budget", "2", "--isolate", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and "exited with status 3 before its hello" in err and not out.exists()


def test_the_users_pythonpath_reaches_the_isolated_child_after_its_code_links(tmp_path, monkeypatch):
    from bat.tuner_adapters.isolated import _environment

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["one", "", "two"]))
    monkeypatch.setenv("BAT_RESULTS", "datasets")
    env = _environment(tmp_path)
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path / "code"), "one", "two"]
    assert env["BAT_RESULTS"].startswith(str(tmp_path))


def test_the_bytecode_cache_is_granted_read_only_and_named_to_the_child_unless_it_touches_data(tmp_path,
                                                                                                monkeypatch):
    from bat.tuner_adapters import grants
    from bat.tuner_adapters.isolated import _environment

    cache, data = tmp_path / "pycache", tmp_path / "data"
    cache.mkdir()
    monkeypatch.setenv("BAT_DATA_DIR", str(data))
    monkeypatch.delenv("BAT_RESULTS", raising=False)
    monkeypatch.setattr(sys, "pycache_prefix", str(cache))
    assert grants.bytecode_cache() == str(cache.resolve()) and str(cache.resolve()) in grants._base()
    assert _environment(tmp_path / "scratch")["PYTHONPYCACHEPREFIX"] == str(cache.resolve())
    monkeypatch.setattr(sys, "pycache_prefix", str(data / "pycache"))  # inside the data folder
    (data / "pycache").mkdir(parents=True)
    assert grants.bytecode_cache() is None and "PYTHONPYCACHEPREFIX" not in _environment(tmp_path / "scratch")
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))  # holding the data folder
    assert grants.bytecode_cache() is None
    monkeypatch.setattr(sys, "pycache_prefix", None)
    assert grants.bytecode_cache() is None


@needs_landlock
@pytest.mark.parametrize("library", ["optuna", "smac", "kernel_tuner:genetic_algorithm"])
def test_the_library_tuners_run_isolated_to_their_budget(library):
    # SMAC reads /proc/meminfo and its own /proc/<pid>/maps; no library opens a socket
    pytest.importorskip(library.split(":")[0])
    result = run_tuner(make_tuner(f"isolate:{library}"), _target(), budget=Budget(max_evals=6), seed=0,
                       check_data=False)
    assert result.evaluated == 6 and "warning" not in result.trace_meta["tuner_report"], result.trace_meta
