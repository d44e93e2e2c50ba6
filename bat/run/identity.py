"""What a measurement depends on, as one hash: the identity a resume journal must match.

The space hash (bat.core.space) covers what decides which configurations
exist; a measurement also depends on the rest of the space file (the command
section, the kernel section, every problem size, the launch geometry) and on
the problem size the run uses. A journal written under any other of these is
not resumed (issue 32: a resumed trace once mixed results at N=100 and N=5).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from bat.core.benchmark import Benchmark


def measurement_identity(bench: Benchmark, size: Mapping[str, Any]) -> str:
    """sha256 of ``bench``'s whole space file (as parsed) and the problem size ``size`` the run measures at."""
    text = json.dumps({"space_file": bench.raw, "size": dict(size)}, sort_keys=True, default=str,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
