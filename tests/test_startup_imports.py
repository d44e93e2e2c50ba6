"""What the quick commands import: heavy libraries load where they are used, not at start-up.

Each command runs in a fresh interpreter that then reports the modules it
holds. The check is on the set of modules (what a command pays for), never
on a time: whole-process times are measured in ``bench/startup_bench.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from bat.cli import main
    code = main(json.loads(sys.argv[1]))
    mine = ("bat", "analysis", "tuner_adapters", "benchmarks")
    ours = sorted(m for m in sys.modules if m.split(".")[0] in mine)
    other = sorted({m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - {"__main__", *mine})
    print(json.dumps({"code": code, "ours": ours, "other": other}), file=sys.stderr)
    """
)

#: the CLI's own libraries and what they bring (typer: rich, shellingham; rich: pygments, markdown-it). Not
#: pydantic: typer 0.29 parses every option through it, about 0.1 s more CPU per command (pyproject pins < 0.29)
CLI_LIBRARIES = {"typer", "rich", "annotated_doc", "shellingham", "pygments", "markdown_it", "mdurl", "attr"}
#: machinery that may show up in sys.modules (editable installs, setuptools' distutils shim, Cython's runtime)
INSTALL = {"_distutils_hack", "_sysconfigdata__linux_x86_64-linux-gnu", "cython_runtime",
           "sitecustomize", "usercustomize"}  # site's hooks: Debian's /usr/bin/python3 ships a sitecustomize
CLI_MODULES = {"bat", "bat.core", "bat.core.errors", "bat.core.atomic", "bat.cli", "bat.cli.console", "bat.cli.options",
               "bat.cli.output", "bat.core.quarantine",  # what a command drew on: a set of names, no import
               "bat.core.limits",  # the kind of every path written (bat.core.atomic): the standard library only
               *(f"bat.cli.{c}_cmd" for c in ("analyze", "check", "compare", "data", "hypertune", "inspect",
                                                "leaderboard", "list", "record", "run", "serve", "space", "verify"))}
SPACE_MODULES = {"bat.core.arithmetic", "bat.core.benchmark", "bat.core.catalogue", "bat.core.commandspec",
                 "bat.core.constraint_groups", "bat.core.expressions", "bat.core.indexed_config", "bat.core.limits",
                 "bat.core.plugins", "bat.core.space", "bat.core.spacefile", "bat.core.t1", "bat.benchmarks",
                 "bat.core.userdata"}  # the data folder's kind, checked when BAT_DATA_DIR names one (as here)


def imported(args: list[str]) -> tuple[set[str], set[str]]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(args)], capture_output=True, text=True,
                          timeout=120)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stderr[-2000:]
    other = {m for m in report["other"] if not m.startswith(("__editable__", "_cython_"))} - INSTALL
    return set(report["ours"]), other


def test_help_imports_the_cli_only() -> None:
    ours, other = imported(["--help"])
    assert ours == CLI_MODULES
    assert other <= CLI_LIBRARIES and "numpy" not in other


def test_space_imports_the_space_engine_and_numpy_only() -> None:
    ours, other = imported(["space", "gemm"])
    assert ours == CLI_MODULES | SPACE_MODULES
    assert other - CLI_LIBRARIES == {"numpy"}


def test_list_reads_dataset_footers_and_loads_no_tuner_or_table_library() -> None:
    ours, other = imported(["list"])
    # no NumPy or pyarrow: the Parquet footers of results/ are read by bat.core.parquetfooter, the benchmarks'
    # descriptions from their space files without building a space
    assert other <= CLI_LIBRARIES
    assert not {"bat.core.space", "bat.core.benchmark", "bat.core.dataset", "bat.core.problem"} & ours
    assert "bat.core.parquetfooter" in ours
    # the catalogue of tuner families, and the class of each tuner scheme (exec:..., isolate:...) for its summary
    assert {m for m in ours if m.startswith("bat.tuner_adapters")} == {
        "bat.tuner_adapters", "bat.tuner_adapters.catalogue", "bat.tuner_adapters.external",
        "bat.tuner_adapters.isolated", "bat.tuner_adapters.sandbox", "bat.tuner_adapters.grants",
        "bat.tuner_adapters.tree_clock"}
