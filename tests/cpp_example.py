"""The C++ example client (bat/protocol/cpp), built with the machine's g++ once per source version.

The binary is cached under pytest's cache folder, named by the sha256 of the
header, the example and the compiler's version, so a test run rebuilds only
after a change; a build goes to a temporary name first and is renamed into
place, so two test workers can build at once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CPP = ROOT / "bat" / "protocol" / "cpp"
SOURCES = (CPP / "bat_client.hpp", CPP / "example_tuner.cpp")
FLAGS = ("-std=c++17", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror")


def compiler() -> str:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed: the C++ client cannot be built here")
    return gxx


def example_binary(cache: Path) -> Path:
    """The example tuner, built (or found built) in ``cache``."""
    gxx = compiler()
    version = subprocess.run([gxx, "--version"], capture_output=True, text=True, check=True).stdout
    digest = hashlib.sha256(version.encode() + " ".join(FLAGS).encode())
    for source in SOURCES:
        digest.update(source.read_bytes())
    binary = cache / f"bat_example_tuner-{digest.hexdigest()[:16]}"
    if not binary.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = cache / f"{binary.name}.{os.getpid()}.tmp"
        subprocess.run([gxx, *FLAGS, "-o", str(partial), str(SOURCES[1])], check=True)
        os.replace(partial, binary)
    return binary
