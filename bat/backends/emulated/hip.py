"""HIP kernel sources on the emulated backend: recognising them and checking what they use.

A HIP twin differs from its CUDA kernel by ``#include "hip/hip_runtime.h"`` and by HIP's
own names (``hipThreadIdx_x``, ``hipLaunchKernelGGL``, ``HIP_DYNAMIC_SHARED``, ...). The
layer that serves that include is ``cuda/bat_hip.h``: it maps HIP's names onto CUDA's (and
onto the runtime's dynamic shared memory on the CPU), so the same file serves
g++ (after the CUDA compatibility header) and NVRTC (which gates HIP sources: the code as
an Nvidia GPU would compile it for sm_90). Before anything is compiled, ``check`` names
the first HIP name or HIP header a source uses that the layer does not define, in one
line: a HIP source is never half-emulated.
"""

from __future__ import annotations

import functools
import re

from bat.backends.emulated.build import source_text
from bat.core.errors import BackendError

#: The header a HIP source includes; the layer serves it.
HIP_INCLUDE = "hip/hip_runtime.h"
#: The layer's file in ``cuda/``.
LAYER = "bat_hip.h"

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](hip/[^>"]+)[>"]', re.M)
_HIP_NAME = re.compile(r"\b(?:hip[A-Z]\w*|HIP_\w+|__HIP\w*|__hip\w*)\b")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def is_hip(text: str, name: str = "") -> bool:
    """True for a HIP source: a ``.hip`` file name, or an include of a ``hip/`` header."""
    return name.endswith(".hip") or _INCLUDE.search(_COMMENT.sub("", text)) is not None


@functools.cache
def layer_names() -> frozenset[str]:
    """The names the layer defines (its ``HIP_NAMES:`` comment lines)."""
    lines = [line.split("HIP_NAMES:", 1)[1] for line in source_text(LAYER).splitlines() if "HIP_NAMES:" in line]
    return frozenset(" ".join(lines).split())


def check(text: str, name: str) -> None:
    """Raise BackendError naming the first HIP header or name in ``text`` that the layer lacks."""
    code = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # keep line numbers
    for match in _INCLUDE.finditer(code):
        if match.group(1) != HIP_INCLUDE:
            line = code.count("\n", 0, match.start()) + 1
            raise BackendError(f"{name}:{line}: includes {match.group(1)}, which the emulated HIP layer lacks "
                               f"(it serves {HIP_INCLUDE} only)")
    known = layer_names()
    for match in _HIP_NAME.finditer(code):
        if match.group(0) not in known:
            line = code.count("\n", 0, match.start()) + 1
            raise BackendError(f"{name}:{line}: uses {match.group(0)}, which the emulated HIP layer lacks "
                               f"(it has {', '.join(sorted(known))})")


def nvrtc_headers() -> dict[str, str]:
    """The layer as NVRTC's ``hip/hip_runtime.h`` (include name -> text)."""
    return {HIP_INCLUDE: source_text(LAYER)}
