"""bat.toolchain.nvrtc's compile cache: the same input is compiled once, any change is compiled anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from bat.core.kernel import load_runner
from bat.toolchain.nvrtc import CACHE_ENV, compile_config

PNPOLY = {"between_method": 0, "block_size_x": 256, "tile_size": 4, "use_method": 1}


def test_a_repeated_compile_is_read_back_and_a_changed_one_is_not(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings (the 'nvrtc' extra) absent")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    runner = load_runner("pnpoly")
    first = compile_config(runner, PNPOLY)
    assert first.ok and len(list(tmp_path.glob("*.json"))) == 1
    again = compile_config(runner, PNPOLY)
    assert again == first  # cubin, log, ptxas usage and the recorded compile seconds
    other = compile_config(runner, {**PNPOLY, "tile_size": 2})
    assert other.cubin != first.cubin and len(list(tmp_path.glob("*.json"))) == 2
    compile_config(runner, PNPOLY, arch="sm_80")
    assert len(list(tmp_path.glob("*.json"))) == 3


def test_a_failed_compile_is_cached_as_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings (the 'nvrtc' extra) absent")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    big = {"block_size_x": 128, "block_size_y": 8, "filter_height": 15, "filter_width": 15,
           "read_only": 0, "tile_size_x": 3, "tile_size_y": 3, "use_padding": 0}
    runner = load_runner("convolution")
    first = compile_config(runner, big)
    again = compile_config(runner, big)
    assert not first.ok and again == first and "too much shared data" in again.log
    assert not list(tmp_path.glob("*.tmp"))
