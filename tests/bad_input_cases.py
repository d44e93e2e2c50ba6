"""The bad-input battery's table: one row per mistake a user can make, in every command and input format.

A row gives the command line (run in a fresh folder that holds the row's
files), the text its one-line error must contain (the option, file, key or
value at fault) and the exit status (2: a user mistake). The files are
made by the builders below from the repository's own benchmarks and data.
"""

from __future__ import annotations

import copy
import gzip
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PNPOLY_DATA = ROOT / "results" / "bat2-kerneltuner" / "pnpoly_RTX_3090.parquet"
Builder = Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    """A command line, the culprit its error must name, the files it needs, its exit status."""

    id: str
    argv: tuple[str, ...]
    culprit: str
    files: dict[str, Any] = field(default_factory=dict)  # name -> text, bytes or builder(path)
    code: int = 2
    env: dict[str, str] = field(default_factory=dict)


# -- builders ---------------------------------------------------------------------------------
def _space() -> dict[str, Any]:
    return json.loads((ROOT / "benchmarks" / "pnpoly" / "space.json").read_text())


def space(change: Callable[[dict[str, Any]], Any]) -> str:
    """The pnpoly space file with ``change`` applied (kernel and launch dropped: none of them matters)."""
    raw = _space()
    raw.pop("kernel")
    raw.pop("launch")
    change(raw)
    return json.dumps(raw)


def constraint(expr: Any) -> str:
    return space(lambda s: s.update(constraints=[{"expr": expr, "why": "test"}]))


def command(section: Any) -> str:
    return space(lambda s: s.update(command=section))


def run_command(**changes: Any) -> str:
    return command({"run": "true", "objective": "wall", **changes})


def dataset(change: Callable[[Any], Any]) -> Builder:
    """A copy of the pnpoly RTX 3090 dataset with ``change(dataset)`` applied."""
    def build(path: Path) -> None:
        from bat.dataset import Dataset

        ds = Dataset.load(PNPOLY_DATA)
        change(ds)
        ds.save(path)
    return build


def parquet_without(column: str) -> Builder:
    def build(path: Path) -> None:
        import pyarrow.parquet as pq

        table = pq.read_table(PNPOLY_DATA)
        pq.write_table(table.drop_columns([column]), path)
    return build


def cache(change: Callable[[dict[str, Any]], Any] = lambda c: None, *, gz: bool = False,
          truncate: int | None = None) -> Builder:
    """The pnpoly data as a Kernel Tuner cache, changed, optionally gzip-compressed and cut short."""
    def build(path: Path) -> None:
        from bat.dataset import Dataset
        from bat.importers.kerneltuner import to_cache

        raw = to_cache(Dataset.load(PNPOLY_DATA))
        raw["cache"] = dict(list(raw["cache"].items())[:20])
        change(raw)
        data = json.dumps(raw).encode()
        if gz:
            data = gzip.compress(data)
        path.write_bytes(data[:truncate] if truncate else data)
    return build


def t4(change: Callable[[dict[str, Any]], Any]) -> Builder:
    def build(path: Path) -> None:
        from bat.dataset import Dataset
        from bat.importers.t4 import to_t4

        raw = to_t4(Dataset.load(PNPOLY_DATA))
        raw["results"] = raw["results"][:20]
        change(raw)
        path.write_text(json.dumps(raw))
    return build


def ktt(change: Callable[[dict[str, Any]], Any]) -> Builder:
    def build(path: Path) -> None:
        src = ROOT / "results" / "ktt-coulomb" / "coulomb_RTX_2080_Ti.parquet"
        from bat.dataset import Dataset
        from bat.importers.ktt import to_ktt

        raw = to_ktt(Dataset.load(src))
        raw["Results"] = raw["Results"][:10]
        change(raw)
        path.write_text(json.dumps(raw))
    return build


def baseline(change: Callable[[list[dict[str, Any]]], Any]) -> str:
    obs = [{"label": "r", "benchmark": "pnpoly", "gpu": "RTX_3090", "budget": 10, "perf": 0.5, "repeat": r}
           for r in range(3)]
    change(obs)
    return json.dumps({"observations": obs})


def copy_of(src: Path) -> Builder:
    return lambda path: shutil.copy(src, path)


def setitem(path: str, value: Any) -> Callable[[Any], None]:
    """Set ``a.b[0].c`` in a nested structure (a change for the builders)."""
    def change(raw: Any) -> None:
        *head, last = _path(path)
        target = raw
        for key in head:
            target = target[key]
        target[last] = value
    return change


def delitem(path: str) -> Callable[[Any], None]:
    def change(raw: Any) -> None:
        *head, last = _path(path)
        target = raw
        for key in head:
            target = target[key]
        del target[last]
    return change


def _path(text: str) -> list[Any]:
    return [int(p) if p.lstrip("-").isdigit() else p for p in text.replace("[", ".").replace("]", "").split(".")]


def first_cache_record(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    return lambda raw: change(next(iter(raw["cache"].values())))


def set_meta(**values: Any) -> Callable[[Any], None]:
    return lambda ds: [setattr(ds.meta, k, v) for k, v in values.items()]


def deep(raw: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(raw)


# -- the table ----------------------------------------------------------------------------------
RUN = ("run", "-t", "reference:random", "-b", "pnpoly", "-n", "5")
DS = "ds.parquet"
BASE = ("compare", "-t", "r=reference:random", "-b", "pnpoly", "--gpus", "RTX_3090", "--budgets", "10",
        "--repeats", "2", "--no-plots", "-o", "cmp")
IMPORT = ("import", "in.json", "-o", "out.parquet")
IMPORT_GZ = ("import", "in.json.gz", "-o", "out.parquet")
HUGE = json.dumps({"name": "huge", "constraints": [], "problem_size": {},
                   "parameters": [{"name": f"p{i}", "values": list(range(1000))} for i in range(7)]})
NOT_UTF8 = b'{"name": "caf\xe9", "parameters": []}'

CASES: list[Case] = [
    # usage: commands and options (typer)
    Case("no-such-command", ("nosuch",), "nosuch"),
    Case("run-missing-tuner", ("run", "-b", "pnpoly"), "--tuner"),
    Case("run-missing-benchmark", ("run", "-t", "reference:random"), "--benchmark"),
    Case("run-unknown-option", (*RUN, "--foo"), "--foo"),
    Case("run-budget-0", (*RUN, "--budget", "0"), "--budget"),
    Case("run-budget-negative", (*RUN, "--budget", "-5"), "--budget"),
    Case("run-budget-fraction", (*RUN, "--budget", "2.5"), "--budget"),
    Case("run-budget-word", (*RUN, "--budget", "many"), "--budget"),
    Case("run-time-budget-0", (*RUN, "--time-budget", "0"), "--time-budget"),
    Case("run-time-budget-negative", (*RUN, "--time-budget", "-1"), "--time-budget"),
    Case("run-time-budget-nan", (*RUN, "--time-budget", "nan"), "--time-budget"),
    Case("run-time-budget-inf", (*RUN, "--time-budget", "inf"), "--time-budget"),
    Case("run-seed-negative", (*RUN, "--seed", "-1"), "--seed"),
    Case("run-seed-word", (*RUN, "--seed", "x"), "--seed"),
    Case("run-unknown-tuner", ("run", "-t", "nope", "-b", "pnpoly"), "'nope'"),
    Case("run-unknown-benchmark", ("run", "-t", "reference:random", "-b", "nope"), "'nope'"),
    Case("run-unknown-gpu", (*RUN, "--gpu", "H100"), "'H100'"),
    Case("run-unknown-backend", (*RUN, "--backend", "nope"), "'nope'"),
    Case("run-command-backend-without-command", (*RUN, "--backend", "command"), "command"),
    Case("run-tuner-option-not-pair", (*RUN, "-O", "batch"), "'batch'"),
    Case("run-tuner-option-unknown", (*RUN, "-O", "nosuch=1"), "'nosuch'"),
    Case("run-tuner-option-wrong-type", (*RUN, "-O", "batch=many"), "batch"),
    Case("run-tuner-module-missing", ("run", "-t", "nosuchmod.x:Y", "-b", "pnpoly"), "nosuchmod"),
    Case("run-tuner-class-missing", ("run", "-t", "bat.errors:Nope", "-b", "pnpoly"), "Nope"),
    Case("run-tuner-not-a-tuner", ("run", "-t", "bat.errors:BatError", "-b", "pnpoly"), "BatError"),
    Case("run-out-is-folder", (*RUN, "-o", "sub"), "sub", {"sub/keep": "x"}),
    Case("run-out-exists", (*RUN, "-o", "t.parquet"), "t.parquet", {"t.parquet": "old"}),
    Case("run-out-below-file", (*RUN, "-o", "f.txt/t.parquet"), "f.txt", {"f.txt": "x"}),
    Case("run-space-path-missing", ("run", "-t", "reference:random", "-b", "nope.json"), "nope.json"),
    Case("run-exec-program-missing", ("run", "-t", "exec:no-such-prog-xyz", "-b", "pnpoly"), "no-such-prog-xyz"),
    Case("run-arguments-for-a-plain-tuner", (*RUN, "--", "extra"), "arguments after --"),
    Case("serve-missing-benchmark", ("serve",), "--benchmark"),
    Case("serve-unknown-benchmark", ("serve", "-b", "nope"), "'nope'"),
    Case("serve-budget-0", ("serve", "-b", "pnpoly", "--budget", "0"), "--budget"),
    Case("serve-time-budget-nan", ("serve", "-b", "pnpoly", "--time-budget", "nan"), "--time-budget"),
    Case("serve-seed-negative", ("serve", "-b", "pnpoly", "--seed", "-1"), "--seed"),
    Case("serve-socket-exists", ("serve", "-b", "pnpoly", "--socket", "s.sock"), "--socket", {"s.sock": "x"}),
    Case("serve-transcript-exists", ("serve", "-b", "pnpoly", "--transcript", "t.jsonl"), "--transcript",
         {"t.jsonl": "old"}),
    Case("serve-out-exists", ("serve", "-b", "pnpoly", "-o", "t.parquet"), "t.parquet", {"t.parquet": "old"}),
    Case("list-unknown", ("list", "nope"), "nope"),
    Case("space-unknown", ("space", "nope"), "'nope'"),
    Case("space-missing-file", ("space", "missing.json"), "missing.json"),
    Case("import-missing-argument", ("import",), "'file'"),
    Case("import-missing-file", ("import", "missing.json", "-o", "o.parquet"), "missing.json"),
    Case("import-file-is-folder", ("import", "sub", "-o", "o.parquet"), "sub", {"sub/x": "x"}),
    Case("export-missing-arguments", ("export",), "'dataset'"),
    Case("export-missing-to", ("export", DS, "-o", "x.json"), "--to", {DS: copy_of(PNPOLY_DATA)}),
    Case("export-unknown-format", ("export", DS, "--to", "nope", "-o", "x.json"), "--to", {DS: copy_of(PNPOLY_DATA)}),
    Case("export-missing-dataset", ("export", "missing.parquet", "--to", "t4", "-o", "x.json"), "missing.parquet"),
    Case("export-out-exists", ("export", DS, "--to", "t4", "-o", "x.json"), "x.json",
         {DS: copy_of(PNPOLY_DATA), "x.json": "{}"}),
    Case("export-out-folder", ("export", DS, "--to", "kernel_tuner", "-o", "sub"), "sub",
         {DS: copy_of(PNPOLY_DATA), "sub/x": "x"}),
    Case("inspect-no-config", ("inspect", "-b", "gemm"), "--config"),
    Case("inspect-config-bad-json", ("inspect", "-b", "gemm", "-c", "{bad"), "--config"),
    Case("inspect-config-not-pairs", ("inspect", "-b", "gemm", "-c", "MWG"), "MWG"),
    Case("inspect-config-incomplete", ("inspect", "-b", "gemm", "-c", "MWG=64"), "--config"),
    Case("inspect-config-unknown-name", ("inspect", "-b", "pnpoly", "-c",
                                         "between_method=0,block_size_x=32,tile_size=1,use_method=0,FOO=1"), "FOO"),
    Case("inspect-config-value-outside", ("inspect", "-b", "pnpoly", "-c",
                                          "between_method=0,block_size_x=33,tile_size=1,use_method=0"), "33"),
    Case("inspect-seed-negative", ("inspect", "-b", "gemm", "--random", "--seed", "-1"), "--seed"),
    Case("inspect-unknown-benchmark", ("inspect", "-b", "nope", "--random"), "'nope'"),
    Case("inspect-command-benchmark", ("inspect", "-b", "matmul_c", "--random"), "matmul_c"),
    Case("record-neither-all-nor-sample", ("record", "-b", "matmul_c"), "--all"),
    Case("record-both-all-and-sample", ("record", "-b", "matmul_c", "--all", "--sample", "5"), "--sample"),
    Case("record-sample-0", ("record", "-b", "matmul_c", "--sample", "0"), "--sample"),
    Case("record-timeout-0", ("record", "-b", "matmul_c", "--all", "--timeout", "0"), "--timeout"),
    Case("record-timeout-nan", ("record", "-b", "matmul_c", "--all", "--timeout", "nan"), "--timeout"),
    Case("record-max-minutes-nan", ("record", "-b", "matmul_c", "--all", "--max-minutes", "nan"), "--max-minutes"),
    Case("record-max-minutes-negative", ("record", "-b", "matmul_c", "--all", "--max-minutes", "-1"),
         "--max-minutes"),
    Case("record-workers-negative", ("record", "-b", "matmul_c", "--all", "--workers", "-1"), "--workers"),
    Case("record-repeats-0", ("record", "-b", "matmul_c", "--all", "--repeats", "0"), "--repeats"),
    Case("record-limit-0", ("record", "-b", "matmul_c", "--all", "--limit", "0"), "--limit"),
    Case("record-unknown-size", ("record", "-b", "matmul_c", "--all", "--size", "huge"), "--size"),
    Case("record-seed-negative", ("record", "-b", "matmul_c", "--sample", "3", "--seed", "-1"), "--seed"),
    Case("record-unknown-benchmark", ("record", "-b", "nope", "--all"), "'nope'"),
    Case("record-counters-on-command", ("record", "-b", "matmul_c", "--all", "--counters"), "--counters"),
    Case("record-out-folder", ("record", "-b", "matmul_c", "--all", "-o", "sub"), "sub", {"sub/x": "x"}),
    Case("record-out-exists", ("record", "-b", "matmul_c", "--all", "-o", "d.parquet"), "d.parquet",
         {"d.parquet": "old"}),
    Case("record-resume-without-journal", ("record", "-b", "matmul_c", "--all", "--resume", "-o", "d.parquet"),
         "d.parquet"),
    Case("analyze-nothing-named", ("analyze",), "--benchmark"),
    Case("analyze-unknown-benchmark", ("analyze", "-b", "nope", "--no-importance"), "nope"),
    Case("analyze-unknown-speedup", ("analyze", "-b", "pnpoly", "--speedup", "nope"), "nope"),
    Case("analyze-unknown-centrality", ("analyze", "-b", "pnpoly", "--centrality", "nope"), "nope"),
    Case("analyze-unknown-neighbourhood", ("analyze", "-b", "pnpoly", "--neighbourhood", "nope"), "nope"),
    Case("analyze-iterations-0", ("analyze", "-b", "pnpoly", "--iterations", "0"), "--iterations"),
    Case("analyze-repeats-1", ("analyze", "-b", "pnpoly", "--repeats", "1"), "--repeats"),
    Case("analyze-seed-negative", ("analyze", "-b", "pnpoly", "--seed", "-1"), "--seed"),
    Case("analyze-unknown-gpu", ("analyze", "-b", "pnpoly", "--gpus", "H100", "--no-importance"), "H100"),
    Case("analyze-missing-trace", ("analyze", "-b", "pnpoly", "--no-importance", "--trace", "t.parquet"),
         "t.parquet"),
    Case("analyze-trace-not-parquet", ("analyze", "-b", "pnpoly", "--no-importance", "--trace", "t.parquet"),
         "t.parquet", {"t.parquet": "not parquet"}),
    Case("analyze-trace-is-a-dataset", ("analyze", "-b", "pnpoly", "--no-importance", "--trace", DS), DS,
         {DS: copy_of(PNPOLY_DATA)}),
    Case("analyze-out-is-file", ("analyze", "-b", "pnpoly", "--no-importance", "-o", "f.txt"), "f.txt",
         {"f.txt": "x"}),
    Case("analyze-report-exists", ("analyze", "-b", "pnpoly", "--no-importance", "-o", "rep"), "report.md",
         {"rep/report.md": "old"}),
    Case("compare-no-tuners", ("compare", "-b", "pnpoly"), "--tuners"),
    Case("compare-unknown-tuner", ("compare", "-t", "nope", "-b", "pnpoly"), "'nope'"),
    Case("compare-empty-label", ("compare", "-t", "=reference:random", "-b", "pnpoly"), "--tuners"),
    Case("compare-duplicate-labels", ("compare", "-t", "x=reference:random,x=reference:grid", "-b", "pnpoly"),
         "labels"),
    Case("compare-budget-0", (*BASE, "--budgets", "0"), "--budgets"),
    Case("compare-budget-word", (*BASE, "--budgets", "ten"), "--budgets"),
    Case("compare-budget-negative", (*BASE, "--budgets", "-5"), "--budgets"),
    Case("compare-repeats-0", (*BASE, "--repeats", "0"), "--repeats"),
    Case("compare-seed-negative", (*BASE, "--seed", "-1"), "--seed"),
    Case("compare-alpha-2", (*BASE, "--alpha", "2"), "--alpha"),
    Case("compare-alpha-nan", (*BASE, "--alpha", "nan"), "--alpha"),
    Case("compare-cles-negative", (*BASE, "--cles-threshold", "-0.1"), "--cles-threshold"),
    Case("compare-cles-nan", (*BASE, "--cles-threshold", "nan"), "--cles-threshold"),
    Case("compare-workers-0", (*BASE, "--workers", "0"), "--workers"),
    Case("compare-unknown-preset", (*BASE, "--preset", "nope"), "nope"),
    Case("compare-remeasure-negative", (*BASE, "--remeasure", "-1"), "--remeasure"),
    Case("compare-unknown-backend", (*BASE, "--backend", "nope"), "nope"),
    Case("compare-unknown-benchmark", ("compare", "-t", "reference:random", "-b", "nope"), "nope"),
    Case("compare-unknown-gpu", ("compare", "-t", "reference:random", "-b", "pnpoly", "--gpus", "H100"), "H100"),
    Case("compare-scheduler-no-port", (*BASE, "--scheduler", "nonsense"), "--scheduler"),
    Case("compare-scheduler-unknown-scheme", (*BASE, "--scheduler", "foo://x:1"), "--scheduler"),
    Case("compare-out-is-file", (*BASE, "-o", "f.txt"), "f.txt", {"f.txt": "x"}),
    # space files (bat space FILE): JSON and structure
    Case("space-not-json", ("space", "s.json"), "s.json", {"s.json": "{"}),
    Case("space-empty-file", ("space", "s.json"), "s.json", {"s.json": ""}),
    Case("space-not-utf8", ("space", "s.json"), "s.json", {"s.json": NOT_UTF8}),
    Case("space-top-level-list", ("space", "s.json"), "s.json", {"s.json": "[]"}),
    Case("space-folder-without-space-json", ("space", "sub"), "sub", {"sub/x": "x"}),
    Case("space-missing-name", ("space", "s.json"), "'name'", {"s.json": space(delitem("name"))}),
    Case("space-missing-parameters", ("space", "s.json"), "'parameters'", {"s.json": space(delitem("parameters"))}),
    Case("space-missing-constraints", ("space", "s.json"), "'constraints'",
         {"s.json": space(delitem("constraints"))}),
    Case("space-missing-problem-size", ("space", "s.json"), "'problem_size'",
         {"s.json": space(delitem("problem_size"))}),
    Case("space-unknown-key", ("space", "s.json"), "colour", {"s.json": space(setitem("colour", 1))}),
    Case("space-name-not-string", ("space", "s.json"), "name", {"s.json": space(setitem("name", 7))}),
    Case("space-parameters-not-list", ("space", "s.json"), "parameters", {"s.json": space(setitem("parameters", {}))}),
    Case("space-parameters-empty", ("space", "s.json"), "parameters", {"s.json": space(setitem("parameters", []))}),
    Case("space-parameter-not-object", ("space", "s.json"), "parameters[0]",
         {"s.json": space(setitem("parameters[0]", 5))}),
    Case("space-parameter-no-values", ("space", "s.json"), "parameters[0]",
         {"s.json": space(delitem("parameters[0].values"))}),
    Case("space-values-not-list", ("space", "s.json"), "parameters[1].values",
         {"s.json": space(setitem("parameters[1].values", "many"))}),
    Case("space-values-empty", ("space", "s.json"), "parameters[1].values",
         {"s.json": space(setitem("parameters[1].values", []))}),
    Case("space-value-duplicate", ("space", "s.json"), "parameters[0].values[1]",
         {"s.json": space(setitem("parameters[0].values", [1, 1]))}),
    Case("space-value-bool", ("space", "s.json"), "parameters[0].values[0]",
         {"s.json": space(setitem("parameters[0].values", [True, 2]))}),
    Case("space-value-object", ("space", "s.json"), "parameters[0].values[0]",
         {"s.json": space(setitem("parameters[0].values", [{"a": 1}]))}),
    Case("space-value-null", ("space", "s.json"), "parameters[0].values[0]",
         {"s.json": space(setitem("parameters[0].values", [None]))}),
    Case("space-parameter-name-not-identifier", ("space", "s.json"), "parameters[0].name",
         {"s.json": space(setitem("parameters[0].name", "block size"))}),
    Case("space-parameter-name-keyword", ("space", "s.json"), "parameters[0].name",
         {"s.json": space(setitem("parameters[0].name", "lambda"))}),
    Case("space-parameter-name-function", ("space", "s.json"), "parameters[0].name",
         {"s.json": space(setitem("parameters[0].name", "min"))}),
    Case("space-parameter-name-duplicate", ("space", "s.json"), "parameters[1].name",
         {"s.json": space(setitem("parameters[1].name", "between_method"))}),
    Case("space-too-many-configurations", ("space", "s.json"), "64-bit", {"s.json": HUGE}),
    Case("space-problem-size-not-object", ("space", "s.json"), "problem_size",
         {"s.json": space(setitem("problem_size", [1]))}),
    Case("space-problem-size-string", ("space", "s.json"), "problem_size.n_points",
         {"s.json": space(setitem("problem_size.n_points", "big"))}),
    Case("space-constants-bad-name", ("space", "s.json"), "constants",
         {"s.json": space(setitem("constants", {"a b": 1}))}),
    Case("space-constraints-not-list", ("space", "s.json"), "constraints",
         {"s.json": space(setitem("constraints", "x > 1"))}),
    Case("space-constraint-no-expr", ("space", "s.json"), "constraints[0]",
         {"s.json": space(setitem("constraints", [{"why": "x"}]))}),
    Case("space-published-not-object", ("space", "s.json"), "published",
         {"s.json": space(setitem("published", 5))}),
    Case("space-launch-bad-expression", ("space", "s.json"), "launch",
         {"s.json": space(setitem("launch", {"grid": ["nope"], "block": ["1"]}))}),
    # constraint expressions
    Case("expr-not-string", ("space", "s.json"), "constraints[0].expr", {"s.json": constraint(5)}),
    Case("expr-empty", ("space", "s.json"), "constraints[0].expr", {"s.json": constraint(" ")}),
    Case("expr-syntax-error", ("space", "s.json"), "constraints[0].expr", {"s.json": constraint("tile_size >")}),
    Case("expr-unknown-name", ("space", "s.json"), "`tile`", {"s.json": constraint("tile > 1")}),
    Case("expr-attribute", ("space", "s.json"), "tile_size.__class__",
         {"s.json": constraint("tile_size.__class__ == 1")}),
    Case("expr-import", ("space", "s.json"), "__import__", {"s.json": constraint("__import__('os') == 1")}),
    Case("expr-lambda", ("space", "s.json"), "lambda", {"s.json": constraint("(lambda: 1)() == 1")}),
    Case("expr-subscript", ("space", "s.json"), "subscript", {"s.json": constraint("[1][0] == tile_size")}),
    Case("expr-other-call", ("space", "s.json"), "open", {"s.json": constraint("open('x') == 1")}),
    Case("expr-f-string", ("space", "s.json"), "f-string", {"s.json": constraint("f'{tile_size}' == '1'")}),
    Case("expr-walrus", ("space", "s.json"), "assignment", {"s.json": constraint("(y := tile_size) > 1")}),
    Case("expr-comprehension", ("space", "s.json"), "`sum`",
         {"s.json": constraint("sum(x for x in [1]) > 1")}),
    Case("expr-keyword-argument", ("space", "s.json"), "positional", {"s.json": constraint("min(tile_size, b=1) > 0")}),
    Case("expr-min-one-argument", ("space", "s.json"), "number of arguments",
         {"s.json": constraint("min(tile_size) > 0")}),
    Case("expr-ceil-div-outside-launch", ("space", "s.json"), "ceil_div",
         {"s.json": constraint("ceil_div(tile_size, 2) > 0")}),
    Case("expr-bitwise-operator", ("space", "s.json"), "operator", {"s.json": constraint("tile_size & 1 == 0")}),
    Case("expr-is-comparison", ("space", "s.json"), "comparison", {"s.json": constraint("tile_size is 1")}),
    Case("expr-bool-literal", ("space", "s.json"), "literal", {"s.json": constraint("tile_size == True")}),
    Case("expr-int-against-string", ("space", "s.json"), "cannot order", {"s.json": constraint("tile_size < 'a'")}),
    Case("expr-tower-2-2-64", ("space", "s.json"), "4096 bits", {"s.json": constraint("2**2**64 > tile_size")}),
    Case("expr-tower-9-9-9", ("space", "s.json"), "4096 bits", {"s.json": constraint("9**9**9 > tile_size")}),
    Case("expr-float-overflow", ("space", "s.json"), "OverflowError",
         {"s.json": constraint("10**400 * 1.5 > tile_size")}),
    Case("expr-float-power-overflow", ("space", "s.json"), "OverflowError",
         {"s.json": constraint("2.0 ** (tile_size * 1000) > 1")}),
    Case("expr-complex-power", ("space", "s.json"), "fractional power",
         {"s.json": constraint("(-tile_size) ** 0.5 > 1")}),
    Case("expr-100000-terms", ("space", "s.json"), "nested too deeply",
         {"s.json": constraint(" + ".join(["tile_size"] * 100_000) + " > 1")}),
    Case("expr-deep-brackets", ("space", "s.json"), "constraints[0].expr",
         {"s.json": constraint("(" * 5000 + "tile_size" + ")" * 5000 + " > 1")}),
    # command sections
    Case("command-not-object", ("space", "s.json"), "command", {"s.json": command("make")}),
    Case("command-unknown-key", ("space", "s.json"), "command.build", {"s.json": run_command(build="make")}),
    Case("command-missing-run", ("space", "s.json"), "'run'", {"s.json": command({"compile": "cc x.c"})}),
    Case("command-run-not-string", ("space", "s.json"), "command.run", {"s.json": run_command(run=["a"])}),
    Case("command-unbalanced-quote", ("space", "s.json"), "command.run", {"s.json": run_command(run="echo 'x")}),
    Case("command-unknown-placeholder", ("space", "s.json"), "{TILE}", {"s.json": run_command(run="prog {TILE}")}),
    Case("command-unbalanced-brace", ("space", "s.json"), "command.run",
         {"s.json": run_command(run="prog {tile_size")}),
    Case("command-attribute-placeholder", ("space", "s.json"), "command.run",
         {"s.json": run_command(run="prog {tile_size.real}")}),
    Case("command-sh-c-placeholder", ("space", "s.json"), "would be parsed as code",
         {"s.json": run_command(run="sh -c 'prog {tile_size}'")}),
    Case("command-sh-ec-placeholder", ("space", "s.json"), "would be parsed as code",
         {"s.json": run_command(run="sh -ec 'prog {tile_size}'")}),
    Case("command-bash-lc-placeholder", ("space", "s.json"), "would be parsed as code",
         {"s.json": run_command(run="bash -lc 'prog {tile_size}'")}),
    Case("command-env-sh-c-placeholder", ("space", "s.json"), "would be parsed as code",
         {"s.json": run_command(compile="env sh -c 'cc -DT={tile_size} x.c'")}),
    Case("command-env-split-string", ("space", "s.json"), "would be parsed as code",
         {"s.json": run_command(run="env -S 'prog {tile_size}'")}),
    Case("command-python-c-placeholder", ("space", "s.json"), "would be parsed as code",
         {"s.json": run_command(verify="python3 -c 'assert {tile_size}'")}),
    Case("command-parameter-named-dir", ("space", "s.json"), "'dir'",
         {"s.json": space(lambda s: (s["parameters"][0].update(name="dir"),
                                     s.update(command={"run": "true"})))}),
    Case("command-objective-not-wall", ("space", "s.json"), "command.objective",
         {"s.json": run_command(objective="cpu")}),
    Case("command-objective-bad-regex", ("space", "s.json"), "command.objective.regex",
         {"s.json": run_command(objective={"regex": "time=(["})}),
    Case("command-objective-two-groups", ("space", "s.json"), "command.objective.regex",
         {"s.json": run_command(objective={"regex": "(a)(b)"})}),
    Case("command-objective-unknown-unit", ("space", "s.json"), "command.objective.unit",
         {"s.json": run_command(objective={"regex": "t=(.*)", "unit": "h"})}),
    Case("command-repeats-0", ("space", "s.json"), "command.repeats", {"s.json": run_command(repeats=0)}),
    Case("command-repeats-string", ("space", "s.json"), "command.repeats", {"s.json": run_command(repeats="3")}),
    Case("command-limit-negative", ("space", "s.json"), "command.time_limit_s.run",
         {"s.json": run_command(time_limit_s={"run": -1})}),
    Case("command-limit-unknown-step", ("space", "s.json"), "command.time_limit_s.link",
         {"s.json": run_command(time_limit_s={"link": 5})}),
    Case("command-program-not-on-path", ("run", "-t", "reference:random", "-b", "s.json", "-n", "2"),
         "no-such-program-xyz", {"s.json": run_command(run="no-such-program-xyz {tile_size}")}),
    # datasets and traces
    Case("dataset-not-parquet", ("export", DS, "--to", "t4", "-o", "x.json"), DS, {DS: "not parquet"}),
    Case("dataset-without-metadata", ("export", DS, "--to", "t4", "-o", "x.json"), DS,
         {DS: lambda p: __import__("pyarrow.parquet").parquet.write_table(
             __import__("pyarrow").table({"a": [1]}), p)}),
    Case("dataset-without-times", ("export", DS, "--to", "t4", "-o", "x.json"), "times_ms",
         {DS: parquet_without("times_ms")}),
    Case("dataset-without-status", ("export", DS, "--to", "kernel_tuner", "-o", "x.json"), "status",
         {DS: parquet_without("status")}),
    Case("dataset-space-hash-mismatch", RUN, "space hash",
         {"res/pnpoly_RTX_3090.parquet": dataset(set_meta(space_hash="f" * 64))}, env={"BAT_RESULTS": "res"}),
    Case("dataset-corrupt-in-results", RUN, "pnpoly_RTX_3090.parquet",
         {"res/pnpoly_RTX_3090.parquet": "not parquet"}, env={"BAT_RESULTS": "res"}),
    Case("dataset-parameter-mismatch", RUN, "parameters",
         {"res/pnpoly_RTX_3090.parquet": dataset(lambda ds: setattr(ds, "frame", ds.frame.rename(
             columns={"tile_size": "tile"})) or setattr(ds, "parameters", ("between_method", "block_size_x",
                                                                         "tile", "use_method")))},
         env={"BAT_RESULTS": "res"}),
    # baselines of the gate
    Case("baseline-missing", (*BASE, "--baseline", "b.json"), "b.json"),
    Case("baseline-not-json", (*BASE, "--baseline", "b.json"), "b.json", {"b.json": "{"}),
    Case("baseline-not-utf8", (*BASE, "--baseline", "b.json"), "b.json", {"b.json": b"\xff\xfe{"}),
    Case("baseline-no-observations", (*BASE, "--baseline", "b.json"), "observations", {"b.json": "{}"}),
    Case("baseline-observations-not-list", (*BASE, "--baseline", "b.json"), "observations",
         {"b.json": '{"observations": 5}'}),
    Case("baseline-observation-not-object", (*BASE, "--baseline", "b.json"), "observations[0]",
         {"b.json": '{"observations": [5]}'}),
    Case("baseline-perf-null", (*BASE, "--baseline", "b.json"), "observations[0].perf",
         {"b.json": baseline(lambda o: o[0].update(perf=None))}),
    Case("baseline-perf-string", (*BASE, "--baseline", "b.json"), "observations[1].perf",
         {"b.json": baseline(lambda o: o[1].update(perf="good"))}),
    Case("baseline-perf-nan", (*BASE, "--baseline", "b.json"), "observations[2].perf",
         {"b.json": baseline(lambda o: o[2].update(perf=float("nan")))}),
    Case("baseline-perf-negative", (*BASE, "--baseline", "b.json"), "observations[0].perf",
         {"b.json": baseline(lambda o: o[0].update(perf=-1))}),
    Case("baseline-budget-word", (*BASE, "--baseline", "b.json"), "observations[0].budget",
         {"b.json": baseline(lambda o: o[0].update(budget="ten"))}),
    Case("baseline-no-label", (*BASE, "--baseline", "b.json"), "observations[0].label",
         {"b.json": baseline(lambda o: o[0].pop("label"))}),
    Case("baseline-no-common-cell", (*BASE, "--baseline", "b.json"), "holds no cell",
         {"b.json": baseline(lambda o: [r.update(label="other") for r in o])}),
    Case("baseline-other-budget", (*BASE, "--baseline", "b.json"), "budgets [20]",
         {"b.json": baseline(lambda o: [r.update(budget=20) for r in o])}),
    # importers: Kernel Tuner caches
    Case("kt-truncated-gz", IMPORT_GZ, "in.json.gz", {"in.json.gz": cache(gz=True, truncate=300)}),
    Case("kt-gz-name-not-gzip", IMPORT_GZ, "in.json.gz", {"in.json.gz": cache()}),
    Case("kt-not-json", IMPORT, "in.json", {"in.json": "{{{"}),
    Case("kt-not-utf8", IMPORT, "in.json", {"in.json": NOT_UTF8}),
    Case("kt-top-level-list", IMPORT, "in.json", {"in.json": "[1, 2]"}),
    Case("kt-unknown-format", IMPORT, "neither", {"in.json": '{"hello": 1}'}),
    Case("kt-cache-not-object", IMPORT, "cache", {"in.json": cache(setitem("cache", [1]))}),
    Case("kt-keys-not-list", IMPORT, "tune_params_keys", {"in.json": cache(setitem("tune_params_keys", 5))}),
    Case("kt-key-wrong-length", IMPORT, "'1,2'",
         {"in.json": cache(lambda c: c["cache"].update({"1,2": {"time": 1.0}}))}),
    Case("kt-record-missing-parameter", IMPORT, "lacks parameters",
         {"in.json": cache(first_cache_record(lambda r: r.pop("tile_size")))}),
    Case("kt-record-not-object", IMPORT, "0,32,1,0",
         {"in.json": cache(lambda c: c["cache"].update({"0,32,1,0": 5}))}),
    Case("kt-unknown-failure", IMPORT, "'Exploded'",
         {"in.json": cache(first_cache_record(lambda r: r.update(time="Exploded")))}),
    Case("kt-time-null", IMPORT, "time", {"in.json": cache(first_cache_record(lambda r: r.update(time=None)))}),
    Case("kt-times-not-numbers", IMPORT, "times",
         {"in.json": cache(first_cache_record(lambda r: r.update(times=["fast"])))}),
    Case("kt-value-outside-space", IMPORT, "33",
         {"in.json": cache(lambda c: c["cache"].update({"0,33,1,0": {**next(iter(c["cache"].values())),
                                                                    "block_size_x": 33}}))}),
    Case("kt-benchmark-mismatch", (*IMPORT, "-b", "gemm"), "gemm", {"in.json": cache()}),
    Case("kt-unknown-benchmark", (*IMPORT, "-b", "nope"), "'nope'", {"in.json": cache()}),
    Case("kt-out-exists", IMPORT, "out.parquet", {"in.json": cache(), "out.parquet": "old"}),
    Case("kt-out-folder", ("import", "in.json", "-o", "sub"), "sub", {"in.json": cache(), "sub/x": "x"}),
    # importers: T4
    Case("t4-results-empty", IMPORT, "results", {"in.json": t4(setitem("results", []))}),
    Case("t4-results-not-list", IMPORT, "results", {"in.json": t4(setitem("results", {}))}),
    Case("t4-no-configuration", IMPORT, "results[0]", {"in.json": t4(delitem("results[0].configuration"))}),
    Case("t4-configuration-differs", IMPORT, "results[1]",
         {"in.json": t4(delitem("results[1].configuration.tile_size"))}),
    Case("t4-unknown-invalidity", IMPORT, "'exploded'", {"in.json": t4(setitem("results[0].invalidity", "exploded"))}),
    Case("t4-unknown-unit", IMPORT, "'fortnights'",
         {"in.json": t4(setitem("results[0].measurements[0].unit", "fortnights"))}),
    Case("t4-measurement-without-value", IMPORT, "results[0]",
         {"in.json": t4(delitem("results[0].measurements[0].value"))}),
    Case("t4-measurements-not-list", IMPORT, "results[0]", {"in.json": t4(setitem("results[0].measurements", 5))}),
    Case("t4-runtime-not-number", IMPORT, "results[0]",
         {"in.json": t4(setitem("results[0].times.runtimes", ["fast"]))}),
    Case("t4-times-not-object", IMPORT, "results[0]", {"in.json": t4(setitem("results[0].times", [1]))}),
    # importers: KTT
    Case("ktt-metadata-not-object", IMPORT, "Metadata", {"in.json": ktt(setitem("Metadata", 5))}),
    Case("ktt-unknown-time-unit", IMPORT, "TimeUnit", {"in.json": ktt(setitem("Metadata.TimeUnit", "Fortnights"))}),
    Case("ktt-no-results", IMPORT, "Results", {"in.json": ktt(setitem("Results", []))}),
    Case("ktt-unknown-status", IMPORT, "'Exploded'", {"in.json": ktt(setitem("Results[0].Status", "Exploded"))}),
    Case("ktt-configuration-differs", IMPORT, "Results[1]",
         {"in.json": ktt(lambda r: r["Results"][1]["Configuration"].pop())}),
    Case("ktt-ok-without-duration", IMPORT, "Results[0]",
         {"in.json": ktt(lambda r: (r["Results"][0].pop("TotalDuration"),
                                    r["Results"][0].update(ComputationResults=[])))}),
    Case("ktt-bad-global-size", IMPORT, "GlobalSize",
         {"in.json": ktt(setitem("Results[0].ComputationResults[0].GlobalSize", [1, 2]))}),
    Case("ktt-duration-not-number", IMPORT, "Results[0]",
         {"in.json": ktt(setitem("Results[0].ComputationResults[0].Duration", "slow"))}),
    Case("ktt-configuration-entry-not-object", IMPORT, "Results[0]",
         {"in.json": ktt(setitem("Results[0].Configuration[0]", 5))}),
]
