"""One record at a time: what every importer does with the entries of a file it reads.

``parse_records`` hands each entry to the format's row parser and turns
whatever a malformed entry makes Python raise (a missing key, a string where
a number belongs, a list where an object belongs) into one DatasetError that
names the file and the entry and says what the entry should hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from bat.core.errors import DatasetError

T = TypeVar("T")


def parse_records(entries: Iterable[tuple[str, Any]], parse: Callable[[str, Any], T], expected: str) -> list[T]:
    """``[parse(where, entry) ...]``; a malformed entry raises DatasetError naming ``where`` and ``expected``."""
    rows = []
    for where, entry in entries:
        try:
            rows.append(parse(where, entry))
        except DatasetError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise DatasetError(f"{where}: malformed entry ({type(exc).__name__}: {exc}); expected {expected}"
                               ) from None
    return rows
