"""Which datasets with quarantined rows this command line has drawn on, so that every output can mark them.

``bat import --allow-suspect`` keeps suspect rows quarantined (bat.formats.suspect), and ``Dataset.load``
quarantines those a Parquet file still holds (bat.core.suspect): status ``missing``, so no
best time or figure uses them, but a figure drawn from such a dataset still rests on a dataset that held
impossible data, and the user must see that next to it. Every place that hands a dataset's rows to a command
(``Dataset.load``; ``bat.registry.find_dataset`` and ``resolve_dataset``, which choose the dataset a command
or its worker processes will read) calls ``note``; ``bat.cli.main`` forgets at the start of each command line
and, at its end, marks the human output and adds ``quarantined`` to the ``--json`` document (bat.cli.output).
"""

from __future__ import annotations

import os
from typing import Any

_SEEN: dict[str, tuple[str, int]] = {}


def count(extra: dict[str, Any], suspect: Any = None) -> int:
    """Rows quarantined in a dataset: its ``extra["quarantined"]``, or its ``suspect`` column's marked rows."""
    rows = extra.get("quarantined")
    stated = rows if isinstance(rows, int) and not isinstance(rows, bool) and rows > 0 else 0
    marked = int((suspect.astype(str) != "").sum()) if suspect is not None else 0
    return max(stated, marked)


def note(where: str, rows: int) -> None:
    """Record that this command line drew on ``where``, a dataset with ``rows`` quarantined rows (0: none)."""
    if rows > 0:  # one file named two ways (relative, absolute, through a link) is one dataset
        key = os.path.realpath(where)
        shown, before = _SEEN.get(key, (where, 0))
        _SEEN[key] = (shown, max(rows, before))


def seen() -> list[dict[str, Any]]:
    """The datasets with quarantined rows drawn on since ``forget``: ``[{"dataset": ..., "rows": n}]``."""
    return [{"dataset": shown, "rows": rows} for shown, rows in sorted(_SEEN.values())]


def markdown_mark() -> str:
    """The mark at the top of a written report (``bat analyze``'s report.md, ``bat compare``'s summary.md)
    drawn on datasets with quarantined rows; "" when none."""
    marks = [f"> **Quarantined data:** this report draws on `{d['dataset']}`, which holds {d['rows']} quarantined "
             "suspect rows (quarantined at import with `--allow-suspect` or when read; excluded from every time "
             "here, column `suspect`)."
             for d in seen()]
    return "\n>\n".join(marks) + "\n\n" if marks else ""


def forget() -> None:
    """Start a new command line."""
    _SEEN.clear()
