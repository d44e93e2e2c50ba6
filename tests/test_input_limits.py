"""Class 2 of issue 32: every reader has limits (bytes, decompressed bytes, depth, digits, values, group size)
and reads regular files only; a breach is one line and exit 2, found before memory or time grows."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pytest
from bad_input_builders import PNPOLY_DATA, _space
from refusal import assert_refused

from bat.core import limits
from bat.core.errors import InputLimitError, ProtocolError
from bat.core.spacefile import space_from_dict
from bat.protocol import wire


def deep(n: int) -> str:
    return "[" * n + "]" * n


def test_depth_digits_and_non_finite_numbers_are_limits_of_loads() -> None:
    assert limits.loads(deep(limits.MAX_DEPTH), "x") is not None
    for text, words in ((deep(limits.MAX_DEPTH + 1), "deeper"), (deep(100_000), "deeper"),
                        ("1" * 5000, "5000 digits"), ("-" + "9" * 31, "31 digits"),
                        ("NaN", "NaN"), ("[Infinity]", "Infinity"), ("1e309", "infinity")):
        with pytest.raises(InputLimitError, match=words):
            limits.loads(text, "f.json")
    assert limits.loads("[NaN]", "x", finite=False)[0] != 0


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    fifo = tmp_path / "x.parquet"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "FIFO"), (Path("/dev/zero"), "device"), (tmp_path, "folder")):  # a read would block
        with pytest.raises(InputLimitError, match=kind):
            limits.read_bytes(path)


def test_a_gzip_bomb_stops_at_the_decompressed_limit(tmp_path: Path) -> None:
    bomb = tmp_path / "c.json.gz"
    with gzip.open(bomb, "wb") as fh:
        for _ in range(4):
            fh.write(b" " * (1 << 20))
    with pytest.raises(InputLimitError, match="after decompression"):
        limits.read_bytes(bomb, limit=1 << 20)
    assert len(limits.read_bytes(bomb, limit=5 << 20)) == 4 << 20


def test_a_protocol_line_nested_too_deep_is_a_parse_error() -> None:
    for line in (deep(100_000).encode(), b'{"id": 1' + b"0" * 5000 + b"}", b" " * (limits.MAX_LINE_BYTES + 1)):
        with pytest.raises(ProtocolError) as info:
            wire.decode(line)
        assert info.value.code == "parse_error"


def test_a_duplicate_check_of_a_million_values_is_linear() -> None:
    raw = _space()
    raw.pop("other_names")  # other frameworks' names of pnpoly's parameters, replaced here
    raw["parameters"] = [{"name": "x", "values": list(range(1_000_000))}]
    raw["constraints"] = []
    start = time.process_time()  # CPU seconds of this process, which other processes' load does not stretch
    space_from_dict(raw, "s.json")
    assert time.process_time() - start < 30  # quadratic: hours


def test_a_constraint_group_too_large_for_the_engine_is_refused_with_its_size() -> None:
    raw = _space()
    raw.pop("other_names")  # other frameworks' names of pnpoly's parameters, replaced here
    raw["parameters"] = [{"name": f"b{i}", "values": [0, 1]} for i in range(48)]
    raw["constraints"] = [{"expr": " + ".join(f"b{i}" for i in range(48)) + " > 3", "why": "t"}]
    with pytest.raises(ValueError, match=f"span {2**48} combinations, over the {limits.MAX_GROUP_SIZE}"):
        space_from_dict(raw, "s.json")


@pytest.mark.parametrize(("argv", "files", "culprit"), [
    (["space", "s.json"], {"s.json": deep(100_000)}, "deeper than the limit"),
    (["space", "s.json"], {"s.json": '{"name": ' + "1" * 5000 + "}"}, "5000 digits"),
    (["space", "s.json"], {"s.json": " " * (limits.MAX_SPACE_BYTES + 1)}, "over the limit"),
    (["import", "c.json", "-b", "pnpoly"], {"c.json": deep(100_000)}, "c.json"),
    (["import", "c.json.gz", "-b", "pnpoly"], {"c.json.gz": "bomb"}, "after decompression"),
    (["import", "c.json.gz", "-b", "pnpoly"], {"c.json.gz": "deepgz"}, "deeper than the limit"),
], ids=["space-deep", "space-digits", "space-bytes", "cache-deep", "cache-gzip-bomb", "cache-gz-deep"])
def test_a_file_over_a_limit_is_refused(argv, files, culprit, tmp_path, monkeypatch, capsys) -> None:
    for name, content in files.items():
        if content == "bomb":  # 2 MB of zeros that expand past the data limit
            with gzip.open(tmp_path / name, "wb", compresslevel=9) as fh:
                chunk = b"0" * (1 << 24)
                for _ in range(limits.MAX_DATA_BYTES // len(chunk) + 1):
                    fh.write(chunk)
        elif content == "deepgz":
            (tmp_path / name).write_bytes(gzip.compress(deep(100_000).encode()))
        else:
            (tmp_path / name).write_text(content)
    assert_refused(tmp_path, monkeypatch, capsys, argv, culprit)


@pytest.mark.parametrize(("argv", "name"), [(["import", "{}", "-b", "pnpoly"], "x.json"),
                                            (["import", "{}", "-b", "pnpoly"], "x.json.gz"),
                                            (["space", "{}"], "x.json"),
                                            (["analyze", "--trace", "{}", "-b", "pnpoly"], "x.parquet")])
def test_a_fifo_is_refused_without_blocking(argv, name, tmp_path, monkeypatch, capsys) -> None:
    os.mkfifo(tmp_path / name)
    argv = [a.replace("{}", name) for a in argv]
    assert_refused(tmp_path, monkeypatch, capsys, argv, "FIFO")


def test_a_fifo_in_the_data_folder_blocks_no_listing(tmp_path, monkeypatch, capsys) -> None:
    from refusal import run_in

    data = tmp_path / "bat-data" / "datasets"
    data.mkdir(parents=True)
    os.mkfifo(data / "x.parquet")
    code = run_in(tmp_path, monkeypatch, ["list", "datasets"])  # opening the FIFO would block: it is skipped
    assert code == 0


def test_the_shipped_data_is_within_the_limits() -> None:
    assert PNPOLY_DATA.stat().st_size < limits.MAX_DATA_BYTES
    for space in Path(__file__).resolve().parents[1].glob("benchmarks/*/space.json"):
        limits.loads(limits.read_text(space, limits.MAX_SPACE_BYTES), str(space))
        json.loads(space.read_text())


@pytest.mark.parametrize(("value", "words"), [("[" * 100_000, "deeper"), ("9" * 5000, "5000 digits")])
def test_a_tuner_option_over_a_limit_is_refused(value, words, tmp_path, monkeypatch, capsys) -> None:
    assert_refused(tmp_path, monkeypatch, capsys, ["run", "-t", "reference:random", "-b", "pnpoly", "-n", "3",
                                                   "-O", f"batch={value}"], words)
