"""Building a configuration for the CPU: kernel.cu + the CUDA compatibility header -> an executable.

One executable per configuration: the benchmark's ``kernel.cu`` with its ``-D`` macros,
after ``cuda/bat_cuda.h``, and a generated driver that lists the kernels and
``__constant__`` symbols by name (``cuda/bat_launch.h`` deduces the parameter types),
linked with the runtime (``cuda/bat_runtime.cpp`` and ``cuda/bat_fibers.cpp``, compiled once
per sanitizer). The two
headers are precompiled once per sanitizer (``bat_pch.h.gch``), which halves the compiler's
time per configuration; should a search space's ``-D`` macro touch them, GCC quietly reads
the headers themselves instead. The HIP layer (``cuda/bat_hip.h``) sits beside them as
``hip/hip_runtime.h``, for a HIP source to include (bat.backends.emulated.hip); files a
source includes by name (the space file's ``kernel.headers``) are written beside it. The host
compiler is ``$CXX`` or ``g++``; clang is told not to follow ``#pragma unroll``, as GCC does not.
Executables are cached by a hash of everything that goes into them (sources, macros, flags,
compiler version) under ``$BAT_EMULATION_CACHE``, else ``$XDG_CACHE_HOME/bat/emulated``, else
``~/.cache/bat/emulated``; a finished entry is renamed into place, so parallel builds never see
half an entry.

The shared memory of a kernel is its static locals (``__shared__`` is ``static`` in the
header): their offsets and sizes come from the executable's symbol table (``nm``), so the
runtime can poison them before every block; an address sanitizer still guards each one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from bat.core.errors import BackendError, MissingDependencyError
from bat.toolchain.nvrtc import macro_options

#: Sanitizers: ``address`` (AddressSanitizer + UndefinedBehaviorSanitizer, the default),
#: ``thread`` (ThreadSanitizer), ``none`` (fastest, checks only the outputs).
SANITIZERS = ("address", "thread", "none")
BASE_FLAGS = ("-std=c++17", "-O1", "-g", "-fno-strict-aliasing", "-ffp-contract=off",
              "-fno-omit-frame-pointer", "-Wno-unknown-pragmas")
#: clang only: ``#pragma unroll`` not followed (GCC ignores the pragma too). A loop's unrolling changes
#: nothing a CPU run checks, and clang's full unrolling of Convolution's 15 x 15 filter over a 7 x 4 tile
#: under AddressSanitizer takes 40 times the compile time (12 CPU s instead of 0.3).
CLANG_FLAGS = ("-mllvm", "-pragma-unroll-threshold=0", "-Wno-pass-failed")
SANITIZER_FLAGS = {
    "address": ("-fsanitize=address,undefined", "-fno-sanitize-recover=all"),
    "thread": ("-fsanitize=thread",),
    "none": (),
}
HEADERS = ("bat_cuda.h", "bat_launch.h")
HIP_LAYER = ("bat_hip.h", "hip/hip_runtime.h")  # the HIP layer, served beside HEADERS under HIP's name
PRECOMPILED = "bat_pch.h"  # includes HEADERS; precompiled beside them
RUNTIME = ("bat_runtime.cpp", "bat_fibers.cpp")
RUNTIME_HEADERS = ("bat_fibers.h",)
COMPILE_TIMEOUT_S = 300


@dataclass(frozen=True)
class SharedRegion:
    """A kernel's ``__shared__`` variable: offset from the runtime's anchor symbol, size, name."""

    offset: int
    size: int
    name: str


@dataclass(frozen=True)
class Build:
    """The outcome of building one configuration (``ok`` False: ``log`` says why)."""

    ok: bool
    log: str
    seconds: float
    executable: Path | None = None
    shared: tuple[SharedRegion, ...] = ()
    cached: bool = False

    def first_error(self) -> str:
        """The compiler's first error line (or the log's first line)."""
        lines = [line.strip() for line in self.log.splitlines() if line.strip()]
        errors = [line for line in lines if "error" in line]
        return (errors or lines or ["(empty log)"])[0]


def cache_root(override: str | Path | None = None) -> Path:
    """Where built executables are kept (see the module docstring)."""
    if override is not None:
        return Path(override)
    if env := os.environ.get("BAT_EMULATION_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bat" / "emulated"


def compiler() -> str:
    """The host C++ compiler: ``$CXX`` or ``g++`` (MissingDependencyError when there is none)."""
    name = os.environ.get("CXX", "g++")
    path = shutil.which(name)
    if path is None:
        raise MissingDependencyError(f"the emulated backend needs a C++17 compiler: {name!r} is not on PATH "
                                     "(install g++, or set CXX)")
    return path


@functools.cache
def compiler_version(path: str) -> str:
    """The first line of ``<compiler> --version`` (part of every cache key)."""
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    return (out.stdout.splitlines() or ["unknown"])[0]


def source_text(name: str) -> str:
    """A file of the compatibility layer (``cuda/<name>``), from the installed package."""
    return resources.files("bat.backends.emulated").joinpath("cuda", name).read_text()


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def driver_source(source_name: str, kernels: Sequence[str], symbols: Sequence[str]) -> str:
    """The generated driver: the kernel source between the header and the tables of names."""
    kernel_rows = "".join(f'    bat_emu::kernel("{k}", {k}),\n' for k in kernels)
    symbol_rows = "".join(f'    bat_emu::symbol("{s}", {s}),\n' for s in symbols) or \
        '    bat_emu::Symbol{nullptr, nullptr, 0},\n'
    return (
        f'#include "{PRECOMPILED}"\n'  # the compatibility headers, before the kernel's own macros
        f'#include "{source_name}"\n'
        f"static const bat_emu::Kernel bat_emu_kernels[] = {{\n{kernel_rows}}};\n"
        f"static const bat_emu::Symbol bat_emu_symbols[] = {{\n{symbol_rows}}};\n"
        "int main(int argc, char** argv) {\n"
        f"    return bat_emu::main(argc, argv, bat_emu_kernels, {len(kernels)}, bat_emu_symbols, "
        f"{len(symbols)});\n"
        "}\n"
    )


class Builder:
    """Builds (or finds in the cache) the executable of a configuration for one sanitizer."""

    def __init__(self, sanitizer: str = "address", *, cache: str | Path | None = None) -> None:
        if sanitizer not in SANITIZERS:
            raise BackendError(f"unknown sanitizer {sanitizer!r}; valid: {', '.join(SANITIZERS)}")
        self.sanitizer = sanitizer
        self.cxx = compiler()
        self.root = cache_root(cache)
        self.base_flags = (*BASE_FLAGS, *(CLANG_FLAGS if "clang" in compiler_version(self.cxx) else ()))
        self.flags = (*self.base_flags, *SANITIZER_FLAGS[sanitizer])
        self._headers = "".join(source_text(h) for h in HEADERS)
        self._hip = source_text(HIP_LAYER[0])

    def describe(self) -> str:
        names = {"address": "AddressSanitizer + UndefinedBehaviorSanitizer", "thread": "ThreadSanitizer",
                 "none": "no sanitizer"}
        return f"{compiler_version(self.cxx)} with {names[self.sanitizer]}"

    def runtime(self) -> tuple[Path, ...]:
        """The runtime's objects for this sanitizer (compiled once; under TSan not instrumented)."""
        texts = [source_text(name) for name in (*RUNTIME, *RUNTIME_HEADERS)]
        flags = (*self.base_flags, "-DBAT_EMU_TSAN=1") if self.sanitizer == "thread" else self.flags
        key = _digest(*texts, self._headers, *flags, compiler_version(self.cxx))
        target = self.root / "runtime" / key[:24]
        objects = tuple(target / f"{Path(name).stem}.o" for name in RUNTIME)
        if all(o.is_file() for o in objects):
            return objects
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=target.parent, prefix=".build-"))
        try:
            for name in (*RUNTIME, *RUNTIME_HEADERS, *HEADERS):
                (work / name).write_text(source_text(name))
            for name in RUNTIME:
                out = self._run([self.cxx, *flags, "-c", name, "-o", f"{Path(name).stem}.o"], str(work))
                if out.returncode != 0:
                    raise BackendError(f"the emulation runtime does not compile with {self.cxx}:\n"
                                       f"{out.stderr[-3000:]}")
            with contextlib.suppress(OSError):  # another process may have finished it first
                work.rename(target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return objects

    def headers(self) -> Path:
        """A directory with the compatibility headers, precompiled for this sanitizer's flags, and the HIP layer."""
        key = _digest(self._headers, self._hip, *self.flags, compiler_version(self.cxx))
        target = self.root / "pch" / key[:24]
        if (target / f"{PRECOMPILED}.gch").is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=target.parent, prefix=".build-"))
        try:
            for header in HEADERS:
                (work / header).write_text(source_text(header))
            (work / HIP_LAYER[1]).parent.mkdir(parents=True)
            (work / HIP_LAYER[1]).write_text(source_text(HIP_LAYER[0]))
            (work / PRECOMPILED).write_text("".join(f'#include "{h}"\n' for h in HEADERS))
            out = self._run([self.cxx, *self.flags, "-x", "c++-header", PRECOMPILED, "-o", f"{PRECOMPILED}.gch"],
                            str(work))
            if out.returncode != 0:
                raise BackendError(f"the compatibility headers do not compile with {self.cxx}:\n{out.stderr[-3000:]}")
            with contextlib.suppress(OSError):  # another process may have finished it first
                work.rename(target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return target

    def build(self, source: str, source_name: str, macros: Mapping[str, object], kernels: Sequence[str],
              symbols: Sequence[str] = (), includes: Mapping[str, str] | None = None) -> Build:
        """The executable of one configuration; a compile error is data (``Build.ok`` False).

        ``includes`` (name -> text) are files the source includes by name, written beside it.
        """
        start = time.perf_counter()
        driver = driver_source(source_name, kernels, symbols)
        defines = macro_options(macros)
        runtime, headers = self.runtime(), self.headers()
        included = sorted((includes or {}).items())
        key = _digest(source, source_name, driver, self._headers, runtime[0].parent.name, *defines, *self.flags,
                      compiler_version(self.cxx), *(part for item in included for part in item),
                      *([self._hip] if HIP_LAYER[1] in source else []))
        entry = self.root / "bin" / key[:2] / key[2:26]
        if (entry / "done.json").is_file():
            return self._load(entry, time.perf_counter() - start, cached=True)
        entry.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=entry.parent, prefix=".build-"))
        try:
            (work / source_name).write_text(source)
            for name, text in included:
                (work / name).write_text(text)
            (work / "driver.cpp").write_text(driver)
            commands = ([self.cxx, *self.flags, *defines, "-I", str(headers), "-c", "driver.cpp", "-o", "driver.o"],
                        [self.cxx, *self.flags, "driver.o", *map(str, runtime), "-o", "kernel"])
            for command in commands:
                out = self._run(command, str(work))
                if out.returncode != 0:
                    return Build(False, out.stderr or out.stdout, time.perf_counter() - start)
            shared = shared_regions(work / "kernel", _static_names(work / "driver.o"))
            (work / "done.json").write_text(json.dumps({"shared": [r.__dict__ for r in shared],
                                                        "commands": commands}))
            with contextlib.suppress(OSError):  # another process may have finished the same entry first
                work.rename(entry)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return self._load(entry, time.perf_counter() - start, cached=False)

    def _load(self, entry: Path, seconds: float, *, cached: bool) -> Build:
        meta = json.loads((entry / "done.json").read_text())
        shared = tuple(SharedRegion(**r) for r in meta["shared"])
        return Build(True, "", seconds, entry / "kernel", shared, cached)

    @staticmethod
    def _run(command: list[str], cwd: str) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            return subprocess.CompletedProcess(command, 124, "", f"{command[0]}: no result after {exc.timeout} s")


_NM_LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) [bBdD] (.+)$")
_OWN = ("bat_emu", "std::", "__gnu", "guard variable", "typeinfo", "vtable")


def _nm(path: Path) -> list[tuple[int, int, str]]:
    """(address, size, demangled name) of every sized data or bss symbol ``path`` defines."""
    nm = shutil.which("nm")
    if nm is None:
        raise MissingDependencyError("the emulated backend needs nm (binutils, installed with g++)")
    out = subprocess.run([nm, "-S", "-C", "--defined-only", str(path)], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return [(int(m.group(1), 16), int(m.group(2), 16), m.group(3)) for m in map(_NM_LINE.match, out.splitlines())
            if m]


def _static_names(driver_object: Path) -> frozenset[str]:
    """The static locals of the kernel's own translation unit (the driver), not of the runtime or of a
    sanitizer runtime linked into the executable (clang links ASan's statically)."""
    return frozenset(name for _, size, name in _nm(driver_object)
                     if "::" in name and not name.startswith(_OWN) and size > 0)


def shared_regions(executable: Path, names: frozenset[str]) -> tuple[SharedRegion, ...]:
    """The kernel's static locals (its ``__shared__`` variables, among ``names``), relative to ``bat_emu_anchor``."""
    anchor, regions = None, []
    for address, size, name in _nm(executable):
        if name == "bat_emu_anchor":
            anchor = address
        elif name in names and size > 0:
            regions.append((address, size, name))
    if anchor is None:
        raise BackendError(f"{executable}: no bat_emu_anchor symbol (was it linked with the emulation runtime?)")
    return tuple(SharedRegion(a - anchor, s, n) for a, s, n in sorted(regions))
