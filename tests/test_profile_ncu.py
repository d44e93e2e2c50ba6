"""Parsing Nsight Compute CSV into counters, and the error paths of collecting them.

No GPU is here, so the ncu output below is a FIXTURE WRITTEN TO NCU'S
DOCUMENTED CSV LAYOUT (``ncu --csv --metrics ...``, "details" page: one row
per kernel launch and metric, quoted, values with thousands separators),
not a recorded ncu run. ``collect_counters`` is exercised end to end with a
stand-in ``ncu`` script that writes this fixture to the log file it is given.
"""

from __future__ import annotations

import os
import stat

import pytest

from bat.core.counters import METRICS, SPEC_METRICS
from bat.core.errors import BackendError, DatasetError, MissingDependencyError
from bat.toolchain.ncu import collect_counters, parse_ncu_csv

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
          '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def fixture_csv(values: dict[str, str], launches: int = 1) -> str:
    lines = ["==PROF== Connected to process 4242 (/usr/bin/python3)", HEADER]
    for launch in range(launches):
        for name, value in values.items():
            lines.append(f'"{launch}","4242","python3","127.0.0.1","coulomb_kernel","1","7","(16, 4, 1)",'
                         f'"(16, 64, 256)","0","7.5","Command line profiler metrics","{name}","","{value}"')
    lines.append("==PROF== Disconnected from process 4242")
    return "\n".join(lines) + "\n"


FULL = {m: "1,234,567" if m.endswith(".sum") else "42.5" for m in SPEC_METRICS}


def test_parse_full_output():
    (launch,) = parse_ncu_csv(fixture_csv(FULL))
    assert launch.kernel == "coulomb_kernel" and launch.missing == ()
    assert launch.counters[METRICS["DRAM_RT"]] == 1234567.0   # thousands separators removed
    assert launch.counters[METRICS["SM_E"]] == 42.5
    assert set(launch.counters) == set(SPEC_METRICS)
    assert len(parse_ncu_csv(fixture_csv(FULL, launches=3))) == 3


def test_missing_and_unavailable_metrics_are_named_never_zero():
    partial = dict(FULL)
    del partial[METRICS["DRAM_RT"]]
    partial[METRICS["SM_E"]] = "n/a"
    (launch,) = parse_ncu_csv(fixture_csv(partial))
    assert set(launch.missing) == {METRICS["DRAM_RT"], METRICS["SM_E"]}
    assert METRICS["SM_E"] not in launch.counters and METRICS["DRAM_RT"] not in launch.counters


def test_output_without_csv_is_an_error():
    with pytest.raises(DatasetError, match="no ncu CSV header"):
        parse_ncu_csv("==PROF== No kernels were profiled.\n", where="run.log")


def fake_ncu(tmp_path, text: str, rc: int = 0):
    data = tmp_path / "out.csv"
    data.write_text(text)
    script = tmp_path / "ncu"
    script.write_text("#!/bin/sh\n"
                      'while [ "$#" -gt 0 ]; do if [ "$1" = "--log-file" ]; then cp "' + str(data) + '" "$2"; fi; '
                      "shift; done\n"
                      f"echo 'stand-in ncu' >&2\nexit {rc}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.skipif(os.name != "posix", reason="the stand-in ncu is a POSIX shell script")
def test_collect_counters_with_a_stand_in_ncu(tmp_path):
    got = collect_counters(["./app", "--size", "256"], ncu=fake_ncu(tmp_path, fixture_csv(FULL)),
                           kernel="coulomb")
    assert got.counters[METRICS["L2_WT"]] == 1234567.0 and got.wall_s > 0
    partial = dict(FULL)
    del partial[METRICS["TEX_U"]]
    with pytest.raises(BackendError, match=METRICS["TEX_U"].replace(".", r"\.")):
        collect_counters(["./app"], ncu=fake_ncu(tmp_path, fixture_csv(partial)))
    allowed = collect_counters(["./app"], ncu=fake_ncu(tmp_path, fixture_csv(partial)), allow_missing=True)
    assert allowed.missing == (METRICS["TEX_U"],)
    with pytest.raises(BackendError, match="exited with 3"):
        collect_counters(["./app"], ncu=fake_ncu(tmp_path, fixture_csv(FULL), rc=3))


def test_missing_ncu_is_a_clear_error():
    with pytest.raises(MissingDependencyError, match="not on PATH"):
        collect_counters(["./app"], ncu="ncu-that-does-not-exist-here")
