"""The import-linter contracts of pyproject.toml (``[tool.importlinter]``), checked on the namespace as one tree.

``lint-imports`` reads files through grimp, which does not follow the
editable install's mapping of ``analysis/`` and the other top-level folders
into ``bat``: it runs in a folder holding the namespace as a tree of links
(``static_tree``). ``python tests/import_contracts.py`` checks the
repository (.ci/run) and exits with lint-imports' status: 0 when every
contract is kept, 1 when one is broken.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from package_map import ROOT, static_tree


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with pyproject.toml's contracts on the namespace in ``tree`` (a folder holding ``bat``)."""
    program = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    return subprocess.run([program, "--config", str(ROOT / "pyproject.toml"), "--no-cache"], cwd=tree,
                          capture_output=True, text=True, timeout=300)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bat-contracts-") as scratch:
        result = lint_imports(static_tree(Path(scratch)))
    print(result.stdout, end="")
    print(result.stderr, end="", file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
