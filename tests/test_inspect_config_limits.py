"""Issue 32, class 2: ``bat inspect --config`` (JSON or NAME=VALUE) is read within the limits of every JSON reader
(depth, digits, finite numbers, no name twice) and each value is a number, a text or a boolean; anything else is
one line naming --config, exit 2, before anything is compiled (bat/cli/inspect_cmd.py)."""

from __future__ import annotations

import pytest
from refusal import assert_refused

from bat.cli.inspect_cmd import parse_config

GOOD = "block_size_x=32,tile_size=1,between_method=0,use_method=0"


@pytest.mark.parametrize("config", [
    '{"block_size_x": 1' + "0" * 5000 + "}",  # an integer of 5,000 digits (an internal error before)
    "block_size_x=" + "[" * 100_000,  # nested past the depth limit, NAME=VALUE form (an internal error before)
    '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    '{"block_size_x": 1e999}', '{"block_size_x": NaN}',
    '{"a": 1, "a": 2}', "a=1,a=2",
    "[1]", "{}x", '{"a": [1]}', "a={}", "a=null",
    "x",
])
def test_a_config_out_of_bounds_is_refused_in_one_line(config: str, tmp_path, monkeypatch, capsys) -> None:
    line = assert_refused(tmp_path, monkeypatch, capsys, ["inspect", "-b", "pnpoly", "--config", config], "--config")
    assert len(line) < 400  # the culprit is named, not echoed whole


def test_values_keep_their_types() -> None:
    assert parse_config(GOOD) == {"block_size_x": 32, "tile_size": 1, "between_method": 0, "use_method": 0}
    assert parse_config('{"a": 1.5, "b": "row", "c": true}') == {"a": 1.5, "b": "row", "c": True}
    assert parse_config("a=row,b=[/]") == {"a": "row", "b": "[/]"}
