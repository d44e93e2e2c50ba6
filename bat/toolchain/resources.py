"""Static resource use of compiled kernels, parsed from the assembler's verbose (-v) log.

Hand-written because no library reads ptxas' ``info`` lines: they are plain
text, one ``Function properties for <entry>`` block per kernel, e.g.::

    ptxas info    : Compiling entry function 'k' for 'sm_90'
    ptxas info    : Function properties for k
    ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
    ptxas info    : Used 32 registers, used 1 barriers, 4000 bytes smem, 380 bytes cmem[0]

Parsing is kept apart from compiling so it can be tested on a stored log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bat.core.errors import BackendError

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_FRAME = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")


@dataclass(frozen=True)
class ResourceUsage:
    """What one kernel entry needs per thread / per block, as ptxas reports it.

    Field names match the optional dataset columns (docs/DESIGN.md).
    """

    kernel: str
    arch: str
    registers: int
    shared_bytes: int  # static shared memory per block
    local_bytes: int  # stack frame per thread (local memory)
    spill_stores_bytes: int
    spill_loads_bytes: int
    barriers: int = 0
    constant_bytes: int = 0  # kernel parameters and literals in bank 0

    def as_columns(self) -> dict[str, int]:
        """The dataset columns of this usage (registers, shared_bytes, ...)."""
        return {
            "registers": self.registers,
            "shared_bytes": self.shared_bytes,
            "local_bytes": self.local_bytes,
            "spill_stores_bytes": self.spill_stores_bytes,
            "spill_loads_bytes": self.spill_loads_bytes,
        }


_MANGLED = re.compile(r"^_Z(\d+)(\w+)$")


def parse_ptxas_log(log: str) -> dict[str, ResourceUsage]:
    """Every entry function's resource use in a ptxas -v log, keyed by entry name (a C++-mangled entry
    also by its plain function name, when no other entry has that name)."""
    usages: dict[str, ResourceUsage] = {}
    current: dict | None = None

    def close() -> None:
        if current is not None and "registers" in current:
            usages[current["kernel"]] = ResourceUsage(**current)

    for line in log.splitlines():
        if m := _ENTRY.search(line):
            close()
            current = dict(kernel=m.group(1), arch=m.group(2), shared_bytes=0, local_bytes=0)
            current.update(spill_stores_bytes=0, spill_loads_bytes=0)
            continue
        if current is None:
            continue
        if m := _FRAME.search(line):
            frame, stores, loads = (int(g) for g in m.groups())
            current.update(local_bytes=frame, spill_stores_bytes=stores, spill_loads_bytes=loads)
        elif m := _USED.search(line):
            current["registers"] = int(m.group(1))
            for key, pattern in (
                ("barriers", _BARRIERS),
                ("shared_bytes", _SMEM),
                ("constant_bytes", _CMEM),
            ):
                if found := pattern.search(line):
                    current[key] = int(found.group(1))
    close()
    plain: dict[str, list[str]] = {}
    for name in usages:  # C++ entries come mangled (_Z18convolution_kernelPfS_S_): also by the plain name
        if (m := _MANGLED.match(name)) and len(m.group(2)) >= int(m.group(1)):
            plain.setdefault(m.group(2)[: int(m.group(1))], []).append(name)
    for name, entries in plain.items():
        if len(entries) == 1 and name not in usages:  # an overloaded name stays ambiguous: no alias
            usages[name] = usages[entries[0]]
    return usages


def usage_of(log: str, kernel: str) -> ResourceUsage:
    """The resource use of one entry in a ptxas -v log (BackendError naming it if absent)."""
    usages = parse_ptxas_log(log)
    if kernel not in usages:
        found = ", ".join(sorted(usages)) or "none"
        raise BackendError(f"ptxas log has no resource line for kernel {kernel!r} (found: {found})")
    return usages[kernel]
