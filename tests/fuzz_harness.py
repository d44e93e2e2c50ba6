"""The fuzzer of issue 32: every input format, one property, shared by the CI test and bench/fuzz_bench.py.

Property: a command exits 0 with a result that reads back, or exits 2 with one ``error:`` line, nothing written
and under ``MEMORY_GROWTH_LIMIT_MB`` added to peak memory; never exit 1 (an internal error), never past
``TIME_LIMIT_S`` of CPU time or ``WALL_LIMIT_S``. Formats read through a library call (Parquet metadata of
datasets and traces, compare baselines) must return or raise a ``BatError``; the protocol server must answer
every line with one JSON reply and go on.

Inputs are valid files of each format with random mutations (a value anywhere replaced by any JSON value,
a key dropped, an item repeated), raw bytes, and a list of pathological texts (deep nesting, long integers,
non-finite numbers). hypothesis-jsonschema was tried for the schema-driven part and does not run with the
locked hypothesis (6.170: ``'many' object has no attribute 'more'``), so the JSON values are hypothesis's own
recursive strategies.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bad_input_builders import PNPOLY_DATA, ROOT
from hypothesis import strategies as st

#: CPU seconds one example may take before it counts as a hang (CPU time, so that the load of a shared machine
#: does not turn a slow example into a "hang": a plain bat compare took over 20 s of wall time at load 15)
TIME_LIMIT_S = 20.0
#: wall seconds one example may take (a process blocked on a FIFO uses no CPU: this limit catches it)
WALL_LIMIT_S = 300.0
#: resident memory (MB) refusing one input may add to the process (issue 32: a refusal under 500 MB; a fresh
#: ``bat`` process that refuses its input peaks under 200 MB, so the examples run in one long-lived process are
#: held to the difference); measured where Linux lets a process reset its own high-water mark
#: (``/proc/self/clear_refs``), so each example has its own peak
MEMORY_GROWTH_LIMIT_MB = 300

#: issue 43: texts past the language's own depth (a 100,000-term expression, 100,000 signs) and a regex that
#: backtracks, wherever a mutation puts them (a constraint, a T1 value list or condition, an objective regex)
DEEP_TEXTS = ["+".join(["x"] * 100_000), "-" * 100_000 + "1", "[" + "1+" * 50_000 + "1]", "^(a|aa)+$"]
SCALARS = (st.none() | st.booleans() | st.integers(-(10**40), 10**40) | st.floats(allow_nan=True)
           | st.text(max_size=12) | st.sampled_from(["", "0", "-1", "1e309", "NaN", "[/]", "$\\x$", "a\nb", "ﬁ",
                                                      "status", "x" * 300, "../../x", "{X}", "$(id)",
                                                      *DEEP_TEXTS]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
PATHOLOGICAL = [b"[" * 100_000, b"[" * 5000 + b"]" * 5000, b"1" * 6000, b"NaN", b"-Infinity", b"1e400",
                b'{"a": 1, "a": 2}', b"\xff\xfe", b"", b"{}", b"[]", b"null", b'"x"', b"{" * 50_000]


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:6]):
            out += _paths(v, (*prefix, i))
    return out


def _apply(doc: Any, path: tuple, how: str, value: Any) -> Any:
    if not path:
        return value if how == "set" else doc
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if how == "set":
        parent[key] = value
    elif how == "drop":
        del parent[key]
    elif how == "repeat" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[key]))
    return doc


@st.composite
def mutated(draw: st.DrawFn, base: Any, max_changes: int = 3) -> Any:
    """``base`` with 1..max_changes random changes."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_changes))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        how = draw(st.sampled_from(["set", "set", "drop", "repeat"]))
        doc = _apply(doc, path, how, draw(JSON))
    return doc


def encoded(docs: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """JSON bytes of ``docs`` (NaN written as JSON writers do), raw bytes, or a pathological text."""
    return st.one_of(docs.map(lambda d: json.dumps(d).encode()), st.binary(max_size=64),
                     st.sampled_from(PATHOLOGICAL))


# ---- bases -------------------------------------------------------------------------------------------------

def space_base() -> dict[str, Any]:
    raw = json.loads((ROOT / "benchmarks" / "pnpoly" / "space.json").read_text())
    raw.pop("kernel")
    raw.pop("launch")
    return raw


def t1_base() -> dict[str, Any]:
    return json.loads((ROOT / "tests" / "fixtures" / "t1" / "hotspot_milo.T1.json").read_text())


def _built_once(build: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """``build`` runs once (a dataset read and converted); each call returns a copy, which callers mutate."""
    once = functools.cache(build)

    @functools.wraps(build)
    def copy_of() -> dict[str, Any]:
        return copy.deepcopy(once())
    return copy_of


@_built_once
def cache_base() -> dict[str, Any]:
    from bat.core.dataset import Dataset
    from bat.formats.kerneltuner import to_cache

    raw = to_cache(Dataset.load(PNPOLY_DATA))
    raw["cache"] = dict(list(raw["cache"].items())[:8])
    return raw


@_built_once
def t4_base() -> dict[str, Any]:
    from bat.core.dataset import Dataset
    from bat.formats.t4 import to_t4

    raw = to_t4(Dataset.load(PNPOLY_DATA))
    raw["results"] = raw["results"][:8]
    return raw


@_built_once
def ktt_base() -> dict[str, Any]:
    from bat.core.dataset import Dataset
    from bat.formats.ktt import to_ktt

    raw = to_ktt(Dataset.load(ROOT / "results" / "ktt-coulomb" / "coulomb_RTX_2080_Ti.parquet"))
    raw["Results"] = raw["Results"][:6]
    return raw


def dataset_meta_base() -> dict[str, Any]:
    from bat.core.dataset import Dataset

    return json.loads(Dataset.read_meta(PNPOLY_DATA).to_json())


def baseline_base() -> dict[str, Any]:
    obs = [{"label": "r", "benchmark": "pnpoly", "gpu": "RTX_3090", "budget": 10, "perf": 0.9, "repeat": r}
           for r in range(3)]
    return {"observations": obs}


PROTOCOL_BASES = [{"type": "hello", "protocol": 1, "tuner": "fuzz"},
                  {"type": "evaluate", "config": {"bx": 2, "ratio": 0.5, "layout": "row"}, "id": 1},
                  {"type": "batch", "configs": [{"bx": 4, "ratio": 1.0, "layout": "col"}]},
                  {"type": "valid", "configs": [{"bx": 1, "ratio": 0.5, "layout": "row"}]},
                  {"type": "done"}]


# ---- checks ------------------------------------------------------------------------------------------------

def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    seen = {}
    for folder, _, files in os.walk(root):
        for f in files:
            st_ = os.stat(os.path.join(folder, f))
            seen[os.path.join(folder, f)] = (st_.st_size, st_.st_mtime_ns)
    return seen


class Hang(BaseException):
    """An example past ``TIME_LIMIT_S`` (a BaseException: the CLI's catch-all must not report it as exit 1)."""


@contextlib.contextmanager
def time_limit(what: str) -> Any:
    """Raise ``Hang`` in the code under test past ``TIME_LIMIT_S`` of CPU time or ``WALL_LIMIT_S`` (a real hang
    would block the process forever; the alarm ends it and names it). Only a timer where signals can be had
    (the main thread)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(number: int, _: Any) -> None:
        limit = f"{WALL_LIMIT_S} s" if number == signal.SIGALRM else f"{TIME_LIMIT_S} s of CPU time"
        raise Hang(f"a hang: {what} past {limit}")

    previous = {number: signal.signal(number, ring) for number in (signal.SIGALRM, signal.SIGPROF)}
    signal.setitimer(signal.ITIMER_REAL, WALL_LIMIT_S)
    signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        for number, handler in previous.items():
            signal.signal(number, handler)


#: every how many command lines ``run_cli`` also runs the same command line as a process of its own and
#: demands the same exit status and error line (0: never); the bench sets it, the CI test has its own sample
CROSS_CHECK_EVERY = [0]
#: (command lines run, of which cross-checked out of process) since the process started
COUNTS = [0, 0]


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(field + ":")) / 1024


def memory_mark() -> float | None:
    """Reset this process's peak resident memory and return its resident memory now (MB); None where Linux's
    ``/proc/self/clear_refs`` is not to be had (no per-example check there)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _status_mb("VmRSS")
    except OSError:
        return None


def memory_growth_mb(mark: float | None) -> float:
    """How far this process's peak resident memory rose above ``mark`` since it was taken (0 without one)."""
    return 0.0 if mark is None else _status_mb("VmHWM") - mark


def run_out_of_process(folder: Path, files: dict[str, bytes], argv: list[str]) -> tuple[int, str]:
    """``bat argv`` as a process of its own in ``folder`` (with ``files``): its exit status and stderr."""
    for name, data in files.items():
        (folder / name).write_bytes(data)
    env = dict(os.environ, BAT_DATA_DIR=str(folder / "bat-data"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", "import sys; from bat.cli import main; sys.exit(main())", *argv],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=WALL_LIMIT_S)
    return done.returncode, done.stderr


def run_cli(folder: Path, files: dict[str, bytes], argv: list[str],
            result: Callable[[Path], None] | None = None) -> int:
    """Write ``files`` into ``folder``, run ``bat argv`` there in this process (the CLI's own ``main``, its
    streams captured) and check the property; the exit status. Every ``CROSS_CHECK_EVERY``-th command line
    also runs out of process (in a sibling folder), and both must give the same status and error line."""
    from bat.cli import main

    COUNTS[0] += 1
    other = None
    if CROSS_CHECK_EVERY[0] and COUNTS[0] % CROSS_CHECK_EVERY[0] == 0:
        COUNTS[1] += 1
        (folder / "out-of-process").mkdir()
        code_, stderr = run_out_of_process(folder / "out-of-process", files, argv)
        other = code_, _error_line(stderr.replace(str(folder / "out-of-process"), "FOLDER"))
        folder = folder / "in-process"
        folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    before = snapshot(folder)
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.environ["BAT_DATA_DIR"] = str(folder / "bat-data")
    mark = memory_mark()
    start = time.perf_counter()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), time_limit(f"bat {argv}"):
            code = main(list(argv))
    finally:
        os.chdir(cwd)
    took = time.perf_counter() - start
    if other is not None:
        mine = code, _error_line(err.getvalue().replace(str(folder), "FOLDER"))
        assert mine == other, f"in process {mine}, out of process {other}: bat {argv}"
    shown = f"bat {' '.join(argv)} on {sorted(files)}: exit {code} in {took:.1f} s; stderr {err.getvalue()[:500]!r}"
    assert took < WALL_LIMIT_S, "a hang: " + shown
    assert code in (0, 2), shown
    if code == 2:
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), "not one error line: " + shown
        assert snapshot(folder) == before, "a file written before failing: " + shown
        grew = memory_growth_mb(mark)
        assert grew < MEMORY_GROWTH_LIMIT_MB, f"{grew:.0f} MB more to refuse: {shown}"
    elif result is not None:
        result(folder)
    return code


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("error: ")]
    return lines[-1] if lines else ""


def library_call(call: Callable[[], Any], what: str) -> None:
    """``call`` returns or raises a BatError with a one-line message; anything else fails."""
    from bat.core.errors import BatError

    mark = memory_mark()
    start = time.perf_counter()
    try:
        with time_limit(what):
            call()
    except BatError as exc:
        assert "\n" not in str(exc).strip() or what == "tolerate-newline", f"{what}: a message of several lines"
        grew = memory_growth_mb(mark)
        assert grew < MEMORY_GROWTH_LIMIT_MB, f"{what}: {grew:.0f} MB more to refuse"
    assert time.perf_counter() - start < WALL_LIMIT_S, f"{what}: a hang"


@dataclass(frozen=True)
class Format:
    """One input format: how examples are drawn and how one is checked in a fresh folder."""

    name: str
    strategy: Callable[[], st.SearchStrategy[Any]]
    check: Callable[[Any, Path], None]

    def fuzz(self, examples: int) -> None:
        """Check ``examples`` derandomised examples (the same in every run: CI's), each in a fresh folder."""
        from hypothesis import HealthCheck, given, settings

        @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(self.strategy())
        def check(example: Any) -> None:
            with tempfile.TemporaryDirectory() as folder:
                self.check(example, Path(folder))

        check()


def _readable_dataset(folder: Path) -> None:
    from bat.core.dataset import Dataset

    ds = Dataset.load(folder / "d.parquet")
    ok = ds.ok["objective_ms"]
    assert ((ok > 0) & (ok < float("inf"))).all(), "an accepted dataset with an impossible time"


def _check_space(data: bytes, folder: Path) -> None:
    run_cli(folder, {"s.json": data}, ["space", "s.json"])


def _check_t1(data: bytes, folder: Path) -> None:
    run_cli(folder, {"k.T1.json": data}, ["space", "k.T1.json"])


def _import(name: str, benchmark: str) -> Callable[[bytes, Path], None]:
    def check(data: bytes, folder: Path) -> None:
        run_cli(folder, {name: data}, ["import", name, "-b", benchmark, "-o", "d.parquet"], _readable_dataset)
    return check


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _check_dataset_meta(meta: Any, folder: Path) -> None:
    import pyarrow.parquet as pq

    from bat.core.dataset import META_KEY, Dataset

    table = pq.read_table(PNPOLY_DATA).slice(0, 20)
    schema_meta = dict(table.schema.metadata)
    params, doc = meta if isinstance(meta, tuple) else (None, meta)
    schema_meta[META_KEY] = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    if params is not None:
        schema_meta[b"bat_parameters"] = params
    path = folder / "m.parquet"
    pq.write_table(table.replace_schema_metadata(schema_meta), path)
    library_call(lambda: Dataset.load(path).meta.load_benchmark(), "dataset metadata")
    library_call(lambda: Dataset.read_meta(path), "dataset metadata")


def _check_trace_meta(meta: Any, folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bat.analysis.data import check_traces
    from bat.core.trace import META_KEY

    table = pa.table({"step": [0, 1], "objective_ms": [1.0, 2.0]})
    raw = meta if isinstance(meta, bytes) else json.dumps(meta).encode()
    path = folder / "t.parquet"
    pq.write_table(table.replace_schema_metadata({META_KEY: raw}), path)
    job = _pnpoly_job()
    library_call(lambda: check_traces([path], [job]), "trace metadata")


_JOB: list[Any] = []


def _pnpoly_job() -> Any:
    if not _JOB:
        from bat.analysis.data import load_benchmark_data

        _JOB.append(load_benchmark_data("pnpoly", ["RTX_3090"]))
    return _JOB[0]


def _check_baseline(data: bytes, folder: Path) -> None:
    from bat.analysis.compare.baseline import load_baseline

    (folder / "b.json").write_bytes(data)
    library_call(lambda: load_baseline(folder / "b.json"), "baseline")


def _check_protocol(lines: list[bytes], folder: Path) -> None:
    from test_protocol_session import SPACE, Toy

    from bat.core.problem import Budget, Problem
    from bat.core.trace import TraceRecorder
    from bat.protocol.server import Session

    problem = Problem(space=SPACE, backend=Toy(), budget=Budget(max_evals=3), observers=[TraceRecorder(SPACE.names)])
    out = io.BytesIO()
    start = time.perf_counter()
    with time_limit("protocol session"):
        outcome = Session(problem, seed=1).run(iter([line.replace(b"\n", b" ") + b"\n" for line in lines]), out)
    assert time.perf_counter() - start < WALL_LIMIT_S
    replies = [json.loads(r) for r in out.getvalue().splitlines()]
    assert len(replies) == outcome.requests, (lines, replies)


def _check_options(argv: list[str], folder: Path) -> None:
    run_cli(folder, {}, argv)


RUN_OPTIONS = {"-n": ["5", "0", "-1", "1e3", "nan", "", "99999999999999999999"],
               "--seed": ["0", "-1", "x", "1" * 40], "--time-budget": ["0.5", "0", "inf", "nan", "-1", "1e400"],
               "--gpu": ["RTX_3090", "H100", "[/]", "../x", ""], "--backend": ["replay", "auto", "nope", ""],
               "--noise": ["none", "repeats", "x", "bootstrap"], "-O": ["x=1", "=", "a", "seed=" + "9" * 50],
               "--tuner-charge": ["0.1", "1" + "0" * 30, "inf"],
               # issue 43, audited whole: empty texts, a folder where a file is read, sizes past their kind
               "--dataset": ["", " ", "pnpoly_RTX_3090", "."], "--prior": ["", "RTX_3090", "."],
               "--tuner-options": [".", "missing.json", ""], "--compile-workers": ["1", "1" + "0" * 30, "-1"],
               "--devices": ["1", "0", "1025"], "--timeout-factor": ["2", "nan", "0.5"]}
COMPARE_OPTIONS = {"--budgets": ["5", ",,", "5,", "0", "-3", "a", "100001"], "--gpus": ["RTX_3090", ",", "[/]"],
                   "--repeats": ["1", "0", "-1", "x", "9999999"], "--remeasure": ["1", "1" + "0" * 30],
                   "--success": ["noise", "1.05", "inf", "1e300", "nan"],
                   "-t": ["reference:random", "a b=reference:random,a_b=x", ","],
                   "--scheduler": ["", " "], "--preset": ["", "nope"], "--compile-workers": ["1,2", "", "1e30"],
                   "--tuner-options": [".", ""], "--baseline": [".", ""]}


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """``bat run`` or ``bat compare`` with a few options, each from its list or any short text."""
    if draw(st.booleans()):
        argv, table = ["run", "-t", "reference:random", "-b", "pnpoly", "-n", "5"], RUN_OPTIONS
    else:
        argv, table = ["compare", "-b", "pnpoly", "--repeats", "1", "--budgets", "5", "-o", "cmp"], COMPARE_OPTIONS
        argv[1:1] = ["-t", "reference:random"]
    for option in draw(st.lists(st.sampled_from(sorted(table)), max_size=3, unique=True)):
        value = draw(st.sampled_from(table[option]) | st.text(max_size=8).filter(lambda t: "\x00" not in t))
        argv += [option, value]
    return argv


def formats() -> list[Format]:
    """Every input format of issue 32, with its strategy (built lazily: the bases read repository files)."""
    return [
        Format("space", lambda: encoded(mutated(space_base())), _check_space),
        Format("t1", lambda: encoded(mutated(t1_base())), _check_t1),
        Format("kerneltuner", lambda: encoded(mutated(cache_base())), _import("c.json", "pnpoly")),
        Format("kerneltuner-gz", lambda: encoded(mutated(cache_base())).map(_gz), _import("c.json.gz", "pnpoly")),
        Format("t4", lambda: encoded(mutated(t4_base())), _import("t.json", "pnpoly")),
        Format("ktt", lambda: encoded(mutated(ktt_base())), _import("k.json", "coulomb")),
        Format("dataset-metadata", lambda: st.one_of(mutated(dataset_meta_base()), st.sampled_from(PATHOLOGICAL),
                                                     st.tuples(st.sampled_from([*PATHOLOGICAL, b'["x"]']),
                                                               mutated(dataset_meta_base()))),
               _check_dataset_meta),
        Format("trace-metadata", lambda: st.one_of(mutated({"benchmark": "pnpoly", "gpu": "RTX_3090",
                                                            "tuner": "t"}), st.sampled_from(PATHOLOGICAL)),
               _check_trace_meta),
        Format("baseline", lambda: encoded(mutated(baseline_base())), _check_baseline),
        Format("protocol", lambda: st.lists(encoded(st.sampled_from(PROTOCOL_BASES).flatmap(mutated)),
                                            max_size=6), _check_protocol),
        Format("options", command_lines, _check_options),
    ]
