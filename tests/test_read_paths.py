"""Every file read goes through the one path check, or says here why it need not (issue 43, class 3).

``bat.core.limits`` is the one checker: its readers (``read_text``, ``read_bytes``, ``loads`` on them) and its
checks (``regular_file``, ``check_kind``, and ``check_output`` built on it) refuse a FIFO, a device, a loop
of links or a file past its limit from its ``stat``. This test reads the source of every package with
``ast`` and lists each call that reads a file some other way (``open``, ``Path.read_text``/``read_bytes``,
``pq.read_table``/``read_schema``, ``pd.read_*``, ``json.load``, ``np.load``). Each must be either in a
function that calls one of the checks itself, or listed in ``OWN_FILES`` with the reason the path is not a
user's (BAT's own package data, ``/proc``, a file this process made). A new read that bypasses the
checker fails ``test_no_read_bypasses_the_path_check``; a listed one that went away fails
``test_the_list_of_own_files_is_current``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bat", "analysis", "tuner_adapters", "benchmarks")
CHECKER = "bat/core/limits.py"
#: calls that read a file by a path without the checker
RAW_READS = {"open", "read_text", "read_bytes", "read_table", "read_schema", "read_parquet", "read_csv",
             "read_json", "ParquetFile", "read_metadata", "loadtxt", "genfromtxt"}
#: calls that check a path's kind and size (bat.core.limits, or a thin wrapper of it)
CHECKS = {"regular_file", "check_kind", "check_output", "check_output_folder", "check_regular"}

#: why a path is not one a user gives -> the reads (file::function::call) that take it
OWN_FILES: dict[str, tuple[str, ...]] = {
    "a registered dataset, whose metadata Dataset.read_meta read through the checker when it was listed":
        ("bat/data/checks.py::_best_time::read_table",),
    "a step's output file in the backend's own scratch folder": ("bat/backends/command.py::_output::open",),
    "done.json that this build cache wrote": ("bat/backends/emulated/build.py::_load::read_text",),
    "Plotly's bundle, package data of the installed plotly package":
        ("bat/leaderboard/interactive.py::bundle::read_bytes",),
    "the emulator's own sources, package data": ("bat/backends/emulated/build.py::source_text::read_text",),
    "an entry of BAT's own compile cache": (
        "bat/backends/emulated/gate.py::check::read_text",
        "bat/toolchain/nvrtc.py::_cached::read_text",
    ),
    "/proc/driver/nvidia/version": ("bat/backends/live/device.py::device_info::read_text",),
    "bat.formats.kerneltuner.read_json, the bounded reader": (
        "bat/cli/data_cmd.py::import_::read_json",
        "bat/formats/importing.py::_read::read_json",
    ),
    "4 bytes of a path its callers found is_file()": ("bat/core/datasetmeta.py::is_parquet::open",),
    "64 bytes of a dataset its callers passed through check_regular": ("bat/core/datasetmeta.py::not_parquet::open",),
    "the footer of a dataset read_meta passed through check_regular": (
        "bat/core/datasetmeta.py::_arrow_metadata::read_schema",
        "bat/core/parquetfooter.py::key_value_metadata::open",
    ),
    "gpu_specs.json, package data": ("bat/core/gpus.py::all_gpu_facts::read_text",),
    "/proc/PID/environ": ("bat/core/lifetime.py::tagged_pids::open",),
    "the installed distribution's direct_url.json": ("bat/core/userdata.py::_installed_dirs::read_text",),
    "a registered dataset, listed through the checker (Dataset.read_meta)":
        ("bat/leaderboard/provenance.py::dataset_facts::read_bytes",),
    "a site file its caller passed through regular_file": ("bat/leaderboard/seal.py::digest::read_bytes",),
    "/proc/cpuinfo": ("bat/run/recording/command.py::host_cpu::read_text",),
    "Journal.open, which calls regular_file": (
        "bat/run/recording/engine.py::open_journal::open",
        "bat/run/recording/journal.py::read::open",
        "bat/run/recording/run_journal.py::open_checkpoint::open",
    ),
    "a temporary file this process creates": ("bat/run/recording/journal.py::create.write::open",),
    "an attack in the fair-play battery, not BAT": (
        "bat/testing/exploits.py::_gpu_of_file::read_schema",
        "bat/testing/exploits.py::probe::open",
        "bat/testing/exploits.py::steal::read_parquet",
        "bat/testing/exploits.py::tune::open",
    ),
    "the log file this helper made": ("bat/testing/other_process.py::outcomes::read_text",),
    "the log ncu wrote into our temporary folder": ("bat/toolchain/ncu.py::collect_counters::read_text",),
    "text in memory (io.StringIO), not a path": ("bat/toolchain/ncu.py::parse_ncu_csv::read_csv",),
    "-O transcript, written; check_output refused a special file when the tuner was made":
        ("tuner_adapters/external.py::tune::open",),
    "/proc/PID/stat": (
        "tuner_adapters/reaper.py::descendants::open",
        "tuner_adapters/tree_clock.py::_stat::open",
    ),
    "/proc/PID/status": ("tuner_adapters/tree_clock.py::_is_process::open",),
    "/proc/loadavg": ("tuner_adapters/tree_clock.py::_last_pid::open",),
}
OWN_READS = {tuple(read.split("::")) for reads in OWN_FILES.values() for read in reads}


def _bounded_names(tree: ast.Module) -> set[str]:
    """Names a module imports from the checker (its read_text is the bounded one)."""
    return {alias.asname or alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "bat.core.limits" for alias in node.names}


def _called(node: ast.AST) -> set[str]:
    """Names of everything ``node`` calls, by its last part."""
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            names.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return names


def _raw_reads() -> list[tuple[str, str, str, bool]]:
    """(file, function, call, whether the function calls a check itself) of every raw read."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == CHECKER:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            bounded = _bounded_names(tree)

            def visit(node: ast.AST, where: str, checked: bool, rel: str = rel, bounded: set[str] = bounded) -> None:
                for child in ast.iter_child_nodes(node):
                    inner, inner_checked = where, checked
                    if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                        inner = f"{where}.{child.name}" if where else child.name
                        inner_checked = bool(_called(child) & CHECKS)
                    if isinstance(child, ast.Call):
                        func = child.func
                        if isinstance(func, ast.Attribute):
                            owner = func.value.id if isinstance(func.value, ast.Name) else ""
                            raw = (func.attr in RAW_READS and owner not in ("limits", "os")) or (
                                func.attr == "load" and owner in ("json", "np", "numpy", "pickle"))
                            name = func.attr
                        else:
                            name = getattr(func, "id", "")
                            raw = name in RAW_READS and name not in bounded
                        if raw:
                            found.append((rel, inner, name, checked))
                    visit(child, inner, inner_checked)

            visit(tree, "", False)
    return found


def test_the_walk_finds_reads_of_each_kind():
    calls = {(f, c) for f, _, c, _ in _raw_reads()}
    assert {("bat/core/dataset.py", "read_table"), ("bat/core/trace.py", "read_table"),
            ("tuner_adapters/reaper.py", "open")} <= calls


def test_no_read_bypasses_the_path_check():
    bypass = sorted({(f, fn, c) for f, fn, c, checked in _raw_reads() if not checked} - OWN_READS)
    assert not bypass, ("these reads take a path without bat.core.limits' check (use its read_text/read_bytes "
                        f"or regular_file first, or list a file that is BAT's own in OWN_FILES): {bypass}")


def test_the_list_of_own_files_is_current():
    present = {(f, fn, c) for f, fn, c, _ in _raw_reads()}
    assert present >= OWN_READS, sorted(OWN_READS - present)
