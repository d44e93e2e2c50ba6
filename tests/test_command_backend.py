"""The command backend on real programs: the matmul_c example and a small C program with failure modes."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from process_events import gone

from bat.backends.command import command_backend, run_step
from bat.benchmarks.matmul_c.make_reference import reference_text
from bat.core.benchmark import load_benchmark
from bat.core.commandspec import parse_command_section, parse_template
from bat.core.dataset import Dataset, Status
from bat.core.errors import BackendError, SpaceSpecError
from bat.run.recording.command import host_id, record_command_benchmark

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler (cc)")

MATMUL_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "matmul_c"

PROG = r"""
#include <stdio.h>
#include <unistd.h>
int main(void) {
#if MODE == 0
    printf("elapsed: %d us\n", VALUE);
    return 0;
#elif MODE == 1
    fprintf(stderr, "boom: bad input\n");
    return 3;
#elif MODE == 2
    for (;;) sleep(1);
#elif MODE == 3
    printf("no time here\n");
    return 0;
#else
#error "MODE out of range"
#endif
}
"""

TOY_COMMAND = {
    "compile": "cc -DMODE={MODE} -DVALUE={VALUE} {dir}/prog.c -o prog",
    "run": "./prog",
    "objective": {"regex": r"elapsed: (\d+) us", "unit": "us"},
    "repeats": 2,
    "time_limit_s": {"run": 0.5},
}


def write_bench(tmp_path: Path, command: dict, parameters: list[dict] | None = None) -> Path:
    (tmp_path / "prog.c").write_text(PROG)
    raw = {
        "name": "toy",
        "parameters": parameters or [{"name": "MODE", "values": [0, 1, 2, 3, 4]},
                                     {"name": "VALUE", "values": [250, 1500]}],
        "constraints": [],
        "problem_size": {"SIZE": 1},
        "command": command,
    }
    path = tmp_path / "space.json"
    path.write_text(json.dumps(raw))
    return path


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    """Where the backend makes its per-configuration directories (checked for leftovers)."""
    d = tmp_path / "scratch"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


@pytest.fixture
def toy(tmp_path, scratch):
    backend = command_backend(load_benchmark(write_bench(tmp_path, TOY_COMMAND)))
    yield backend
    backend.close()
    assert list(scratch.iterdir()) == []


# -- the example, for real ---------------------------------------------------------------------
def test_matmul_configurations_run_verify_and_keep_every_sample(scratch):
    bench = load_benchmark("matmul_c")
    backend = command_backend(bench, small=True)
    configs = [dict(TILE_I=8, TILE_J=16, TILE_K=8, UNROLL=2, OPT="O2"),
               dict(TILE_I=64, TILE_J=4, TILE_K=32, UNROLL=8, OPT="O3"),
               dict(TILE_I=4, TILE_J=64, TILE_K=64, UNROLL=1, OPT="O2")]
    backend.prefetch(configs[1:])
    results = [backend.evaluate(c) for c in configs]
    backend.close()
    for config, r in zip(configs, results, strict=True):
        assert r.status is Status.OK, r.message
        assert r.config == config
        assert len(r.times_ms) == 3 and all(t > 0 for t in r.times_ms)
        assert r.objective_ms == pytest.approx(sum(r.times_ms) / 3)
        assert r.compile_ms is not None and r.compile_ms > 0
        # cost: the compile plus three runs and a verification, each at least its measured time
        assert r.cost_s > (r.compile_ms + sum(r.times_ms)) / 1e3
    assert list(scratch.iterdir()) == []


def test_matmul_static_assert_is_a_compile_error():
    backend = command_backend(load_benchmark("matmul_c"), small=True)
    r = backend.evaluate(dict(TILE_I=8, TILE_J=8, TILE_K=4, UNROLL=8, OPT="O2"))  # violates a constraint
    backend.close()
    assert r.status is Status.COMPILE_ERROR
    assert "UNROLL must divide TILE_K" in r.message
    assert r.objective_ms is None and r.times_ms == ()


def test_matmul_wrong_reference_is_incorrect(tmp_path):
    copy = tmp_path / "matmul_c"
    shutil.copytree(MATMUL_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    ref = copy / "reference_N64.txt"
    lines = ref.read_text().splitlines()
    ref.write_text("\n".join([str(int(lines[0]) + 1), *lines[1:]]) + "\n")
    backend = command_backend(load_benchmark(copy), small=True)
    r = backend.evaluate(dict(TILE_I=8, TILE_J=8, TILE_K=8, UNROLL=1, OPT="O2"))
    backend.close()
    assert r.status is Status.INCORRECT
    assert "verification failed" in r.message and "differ" in r.message
    assert len(r.times_ms) == 1  # verified after the first run; no more runs spent on it


@pytest.mark.parametrize("n", [64, 256])
def test_shipped_references_match_numpy(n):
    assert (MATMUL_DIR / f"reference_N{n}.txt").read_text() == reference_text(n)


# -- failure modes --------------------------------------------------------------------------
def test_objective_regex_and_unit(toy):
    r = toy.evaluate({"MODE": 0, "VALUE": 1500})
    assert r.status is Status.OK
    assert r.times_ms == (1.5, 1.5) and r.objective_ms == 1.5


def test_nonzero_exit_is_a_runtime_error_with_stderr(toy):
    r = toy.evaluate({"MODE": 1, "VALUE": 250})
    assert r.status is Status.RUNTIME_ERROR
    assert "exit status 3" in r.message and "boom: bad input" in r.message


def test_hang_is_killed_and_recorded_as_timeout(toy):
    r = toy.evaluate({"MODE": 2, "VALUE": 250})  # the program never ends: returning at all is the kill
    assert r.status is Status.TIMEOUT
    assert "0.5 s limit" in r.message
    assert r.cost_s >= 0.5  # the limit was waited for (how much longer depends on the machine's load)


def test_output_without_a_match_is_a_runtime_error(toy):
    r = toy.evaluate({"MODE": 3, "VALUE": 250})
    assert r.status is Status.RUNTIME_ERROR
    assert "no match" in r.message and "no time here" in r.message


def test_error_directive_is_a_compile_error(toy):
    r = toy.evaluate({"MODE": 4, "VALUE": 250})
    assert r.status is Status.COMPILE_ERROR
    assert "MODE out of range" in r.message


def test_timeout_kills_the_whole_process_group(tmp_path):
    late, pid_file = tmp_path / "late", tmp_path / "child.pid"
    script = 'sh -c \'echo $$ > "$2"; sleep 1; touch "$1"\' sh "$1" "$2" & sleep 30'
    step = run_step(["sh", "-c", script, "sh", str(late), str(pid_file)], tmp_path, 0.3)
    assert step.timed_out and step.returncode is None
    assert gone(pid_file)  # the background child died with its group (judged by the event, not a sleep)
    assert not late.exists()  # so it never got to its touch


# -- templates -------------------------------------------------------------------------------
def test_unknown_placeholder_is_rejected_at_load_naming_file_and_key(tmp_path):
    path = write_bench(tmp_path, {**TOY_COMMAND, "compile": "cc -DMODE={MODE} -DX={TILEX} prog.c"})
    with pytest.raises(SpaceSpecError) as err:
        load_benchmark(path)
    assert str(path) in str(err.value) and "command.compile" in str(err.value)
    assert "{TILEX}" in str(err.value)
    from bat.run.targets import make_target

    with pytest.raises(SpaceSpecError, match="TILEX"):
        make_target(str(path))


def test_shell_metacharacters_in_values_run_nothing(tmp_path, scratch):
    values = [f"x; touch {tmp_path}/pwned1", f"$(touch {tmp_path}/pwned2)",
              f"`touch {tmp_path}/pwned3`", f"a' && touch {tmp_path}/pwned4 '"]
    command = {"run": "printf 'got=%s\\n' {S}", "objective": "wall", "repeats": 1, "free_text": ["S"],
               "data": {"run": [2]}}
    bench = load_benchmark(write_bench(tmp_path, command, [{"name": "S", "values": values}]))
    backend = command_backend(bench)
    for v in values:
        assert backend.evaluate({"S": v}).status is Status.OK
        assert parse_template(command["run"], frozenset({"S"}), "t").render({"S": v}, frozenset({"S"})) == \
            ["printf", "got=%s\\n", v]
        assert run_step(["printf", "%s", v], tmp_path, 5).stdout == v
    backend.close()
    assert not list(tmp_path.glob("pwned*"))


#: every way of handing a placeholder to an interpreter as code (the threat model in bat/core/commandspec.py)
SCRIPT_PLACEHOLDERS = [
    "sh -c 'cc {X}'", "sh -ec 'cc {X}'", "bash -lc 'cc {X}'", "sh -xc 'x {X}'", "sh -c -e 'x {X}'",
    "sh -c -- 'x {X}'", "bash -o pipefail -c 'x {X}'", "bash -eo pipefail -c 'x {X}'", "zsh -c {X}",
    "bash5 -c 'x {X}'", "env sh -c 'cc {X}'", "env A=1 B=2 /bin/sh -c 'x {X}'", "nice -n 5 bash -c 'x {X}'",
    "timeout 5 sh -c 'x {X}'", "setsid -w sh -c 'x{X}'", "busybox sh -c 'x {X}'", "xargs -0 sh -c 'x {X}'",
    "/usr/bin/env -S 'sh -c \"x {X}\"'", "env --split-string='sh -c {X}'", "su nobody -c 'x {X}'",
    "su -c 'x {X}' nobody", "runuser -u nobody -- sh -c 'x {X}'", "python3 -c 'print({X})'",
    "python -Bc 'print({X})'", "python -c'print({X})'", "python3.11 -W ignore -c 'print({X})'",
    "perl -e 'print {X}'", "perl -le 'print {X}'", "node -e 'console.log({X})'",
]
#: placeholders passed as values: accepted
SCRIPT_ARGUMENTS = [
    "sh -c 'prog \"$1\"' sh {X}", "bash -ec 'prog \"$1\"' bash {X}", "cc -DX={X} {dir}/a.c", "env A={X} prog",
    "sh {dir}/script.sh {X}", "python3 {dir}/s.py {X}", "python -m mod {X}", "nice -n {X} prog",
    "bash -c 'echo hi' bash {X} -c {X}", "timeout {X} prog",
]


@pytest.mark.parametrize("text", SCRIPT_PLACEHOLDERS)
def test_placeholder_inside_an_inline_script_is_rejected(text):
    with pytest.raises(SpaceSpecError, match="would be parsed as code") as err:
        parse_template(text, frozenset({"X", "dir"}), "f.json: command.compile")
    assert str(err.value).startswith("f.json: command.compile: ") and "{X}" in str(err.value)


@pytest.mark.parametrize("text", SCRIPT_ARGUMENTS)
def test_placeholder_passed_as_an_argument_is_accepted(text):
    parse_template(text, frozenset({"X", "dir"}), "f.json: command.compile")


def test_positional_argument_renders_as_one_word():
    template = parse_template("sh -c 'cc -DX=\"$1\" p.c' sh {X}", frozenset({"X"}), "f")
    argv = template.render({"X": "1 $(x)"}, frozenset({"X"}))
    assert argv == ["sh", "-c", 'cc -DX="$1" p.c', "sh", "1 $(x)"]


@pytest.mark.parametrize(("section", "where"), [
    ({"run": "./p", "objective": {"regex": "t=\\d+"}}, "command.objective.regex"),
    ({"run": "./p", "objective": {"regex": "(a)(b)"}}, "command.objective.regex"),
    ({"run": "./p", "objective": {"regex": "t=(\\d+)", "unit": "min"}}, "command.objective.unit"),
    ({"run": "./p", "repeats": 0}, "command.repeats"),
    ({"run": "./p", "time_limit_s": {"run": -1}}, "command.time_limit_s.run"),
    ({"run": "./p", "time_limit_s": {"link": 5}}, "command.time_limit_s.link"),
    ({"run": "./p", "shell": True}, "command.shell"),
    ({"compile": "cc p.c"}, "command"),
    ({"run": "./p {X"}, "command.run"),
])
def test_bad_sections_name_file_and_json_path(section, where):
    with pytest.raises(SpaceSpecError, match=f"^bench.json: {where.replace('.', '[.]')}"):
        parse_command_section(section, {"X"}, "bench.json")


def test_missing_compiler_fails_before_any_configuration(tmp_path):
    path = write_bench(tmp_path, {**TOY_COMMAND, "compile": "no-such-compiler-xyz {dir}/prog.c"})
    with pytest.raises(BackendError, match="no-such-compiler-xyz"):
        command_backend(load_benchmark(path))


# -- bat run and recording ---------------------------------------------------------------------
def test_bat_run_end_to_end(tmp_path):
    from bat.cli import main

    out = tmp_path / "trace.parquet"
    rc = main(["run", "--tuner", "reference:random", "--benchmark", str(MATMUL_DIR / "space.json"),
               "--budget", "5", "--out", str(out)])
    assert rc == 0
    trace = pd.read_parquet(out)
    evaluated = trace[trace["kind"] == "evaluated"]
    assert len(evaluated) == 5
    assert (evaluated["status"] == "ok").all()
    assert (evaluated["objective_ms"] > 0).all()


def test_record_writes_an_ordinary_dataset_with_provenance(tmp_path, scratch):
    bench = load_benchmark("matmul_c")
    out = tmp_path / "matmul_c.parquet"
    dataset, outcome, _ = record_command_benchmark(bench, out, small=True, sample=4, seed=1)
    assert outcome.complete and outcome.done == 4
    loaded = Dataset.load(out)
    assert loaded.meta == dataset.meta
    loaded.check_space(bench.space)
    assert len(loaded.frame) == 4 and (loaded.frame["status"] == "ok").all()
    assert loaded.frame["times_ms"].map(len).eq(3).all()
    assert loaded.frame["compile_ms"].gt(0).all()
    meta = loaded.meta
    assert meta.gpu == host_id() and meta.problem_size == {"N": 64}
    assert meta.extra["commands"]["compile"].startswith("cc -{OPT}")
    assert meta.toolkit and meta.date and not meta.partial
    assert not out.with_name(out.name + ".journal.jsonl").exists()
    assert list(scratch.iterdir()) == []


def test_a_backtracking_objective_regex_is_stopped_by_its_time_limit():
    """Issue 43, class 4: ``^(a|aa)+$`` on 41 characters backtracks for minutes in the standard ``re``."""

    spec = parse_command_section({"run": "./p", "objective": {"regex": "^(a|aa)+$"}}, {"X"}, "bench.json")
    with pytest.raises(ValueError, match=r"took over .* s on 41 characters"):  # the limit fired: it stopped
        spec.objective.read_ms("a" * 40 + "!")
    with pytest.raises(ValueError, match="not a number"):  # a short output still matches at once
        spec.objective.read_ms("aaaa")
