"""Class 4 of issue 32: values substituted into command templates are allow-listed (letters, digits,
``_ . , + -``), not programs deny-listed; only a parameter the section declares free text may hold other text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from refusal import assert_refused

from bat.core.commandspec import SAFE_VALUE, parse_template
from bat.core.errors import SpaceSpecError

#: programs that read an argument as code and are on no deny-list: a value reaching them must be inert
INTERPRETERS = ["awk {X}", "flock lockfile -c {X}", "script -qc {X}", "rbash -c {X}", "sg users -c {X}",
                "gdb -batch -ex {X}", "jq {X}", "sed {X}", "find . -exec {X} ;", "xargs -I{{}} {X}",
                "make -f /dev/null --eval={X}", "vim -c {X}", "php -r {X}", "lua -e {X}", "Rscript -e {X}"]
CODE_VALUES = ["BEGIN{system(\"id\")}", "!id", "$(id)", "`id`", "a;id", "a|id", "x y", "a\nb", "s/x/y/e",
               "'", "\"", "{print}", "*", "~", "a=b", "$HOME", ">f", "<f", "a&", "\\", "#", "%", "@x", "a:b",
               "a/b", "\u00e9", ""]


def space(tmp_path: Path, run: str, values: list, **command) -> str:
    raw = {"name": "toy", "parameters": [{"name": "X", "values": values}], "constraints": [],
           "problem_size": {"N": 1}, "command": {"run": run, "objective": "wall", **command}}
    (tmp_path / "s.json").write_text(json.dumps(raw))
    return "s.json"


@pytest.mark.parametrize("run", INTERPRETERS)
def test_a_value_outside_the_alphabet_is_refused_whatever_the_program(run, tmp_path, monkeypatch, capsys):
    for value in ("BEGIN{system(\"id\")}", "$(id)", "a b"):
        line = assert_refused(tmp_path, monkeypatch, capsys, ["space", space(tmp_path, run, ["ok", value])], "{X}")
        assert "free_text" in line


def test_values_in_the_alphabet_are_accepted_and_reach_the_program_as_they_are(tmp_path, capsys) -> None:
    from bat.core.benchmark import load_benchmark

    values = ["a", "1.5", "-3", "1e-05", "x_y,z+w", "A-b.c"]
    bench = load_benchmark(tmp_path / space(tmp_path, "printf %s {X}", values))
    for v in values:
        assert bench.command_spec.run.render({"X": v}) == ["printf", "%s", v]


def test_free_text_admits_any_value_and_the_interpreter_check_stays(tmp_path) -> None:
    from bat.core.benchmark import load_benchmark

    bench = load_benchmark(tmp_path / space(tmp_path, "printf %s {X}", ["a b", "$(id)"], free_text=["X"],
                                            data={"run": [2]}))
    assert bench.command_spec.run.render({"X": "$(id)"}, bench.command_spec.free_text) == ["printf", "%s", "$(id)"]
    with pytest.raises(SpaceSpecError, match="parsed as code"):
        load_benchmark(tmp_path / space(tmp_path, "sh -c 'echo {X}'", ["a"], free_text=["X"]))
    with pytest.raises(SpaceSpecError, match="free_text"):
        load_benchmark(tmp_path / space(tmp_path, "printf {X}", ["a"], free_text=["Y"]))


def test_problem_sizes_and_constants_are_checked_too(tmp_path) -> None:
    from bat.core.benchmark import load_benchmark

    raw = {"name": "toy", "parameters": [{"name": "X", "values": [1]}], "constraints": [],
           "problem_size": {"N": 1}, "constants": {"C": 1e-300}, "command": {"run": "p {C} {N}"}}
    (tmp_path / "s.json").write_text(json.dumps(raw))
    assert load_benchmark(tmp_path / "s.json").command_spec is not None  # 1e-300: in the alphabet


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_render_refuses_every_value_outside_the_alphabet(value: str) -> None:
    template = parse_template("awk {X}", frozenset({"X"}), "t")
    if SAFE_VALUE.fullmatch(value):
        assert template.render({"X": value}) == ["awk", value]
    else:
        with pytest.raises(SpaceSpecError, match="outside letters"):
            template.render({"X": value})


@pytest.mark.parametrize("value", CODE_VALUES)
def test_no_listed_code_value_is_in_the_alphabet(value: str) -> None:
    assert not SAFE_VALUE.fullmatch(value) or value == ""


@pytest.mark.parametrize("run", INTERPRETERS)
def test_a_free_text_value_reaches_no_position_the_section_does_not_declare_as_data(run, tmp_path) -> None:
    """Issue 43, class 6: the model, not a list of programs. A free-text value is passed only as a whole
    argument at a position the command section declares as data; each of the 15 programs that run an argument
    as code is refused without that declaration, whatever its name."""
    from bat.core.benchmark import load_benchmark

    with pytest.raises(SpaceSpecError, match=r"command\.data\.run: the free-text value \{X\}"):
        load_benchmark(tmp_path / space(tmp_path, run, ["a b"], free_text=["X"]))


@pytest.mark.parametrize(("run", "data", "says"), [
    ("make -f m --eval={X}", {"run": [3]}, "not a free-text placeholder standing alone"),
    ("cc -DX={X} p.c", {"run": [1]}, "not a free-text placeholder standing alone"),
    ("{X} a", {"run": [0]}, "never the program"),
    ("printf %s {X}", {"run": [7]}, "past the last argument"),
    ("printf %s {X}", {"compile": [1]}, "no compile command"),
    ("printf %s {X}", {"run": ["2"]}, "integers"),
    ("printf %s {X}", [2], "expected an object"),
])
def test_a_data_declaration_names_whole_free_text_arguments_only(run, data, says, tmp_path) -> None:
    from bat.core.benchmark import load_benchmark

    with pytest.raises(SpaceSpecError, match=r"command\.data") as info:
        load_benchmark(tmp_path / space(tmp_path, run, ["a b"], free_text=["X"], data=data))
    assert says in str(info.value)


def test_an_allow_listed_value_needs_no_declaration(tmp_path) -> None:
    from bat.core.benchmark import load_benchmark

    bench = load_benchmark(tmp_path / space(tmp_path, "cc -DX={X} p.c", ["a", "1.5"]))
    assert bench.command_spec.run.render({"X": "1.5"}) == ["cc", "-DX=1.5", "p.c"]
