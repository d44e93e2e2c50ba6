"""Finished units of a hypertune on disk: ``<out>/units.sqlite``, one row per unit, committed when it finishes.

SQLite in write-ahead-log mode, as the compare store (``bat.campaign.store``): a
commit is atomic, so after a ``kill -9`` every stored unit is readable and a rerun of the
same hypertune skips it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

FILE_NAME = "units.sqlite"


class UnitStore:
    """The units of one hypertune folder, by key."""

    def __init__(self, out: str | Path) -> None:
        self.path = Path(out) / FILE_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS units (key TEXT PRIMARY KEY, result TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT result FROM units WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, result: dict[str, Any]) -> None:
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO units VALUES (?, ?)", (result["key"], json.dumps(result)))

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM units").fetchone()[0])

    def close(self) -> None:
        self._db.close()
