"""IndexedConfig: a configuration dict that carries its place in the space that made it.

``SearchSpace.config`` and ``SearchSpace.configs`` hand out configurations
as this dict subclass: besides the values it holds the space, the value
indices (``row``), the mixed-radix flat id (``flat``) and whether the
constraints allow it (``valid``; None when not checked yet), computed in
bulk when it was made.
The Problem then keys, checks and forwards it by its integers, and the
replay backend finds its recorded row by ``flat``, instead of looking each
value up again. Any change to the dict drops what it carries (``flat``
becomes -1), so a tuner that edits a configuration in place gets the checked
path of an ordinary dict; to everything else it is an ordinary dict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: the SearchSpace that made a configuration (bat.core.space, which imports this module: not imported back)
Space = Any


class IndexedConfig(dict[str, Any]):
    """A dict of parameter values that knows its value indices, flat id and validity in ``space``."""

    __slots__ = ("flat", "row", "space", "valid")

    def __init__(self, values: Iterable[tuple[str, Any]] | Mapping[str, Any], space: Space,
                 row: tuple[int, ...], flat: int, valid: bool | None) -> None:
        super().__init__(values)
        self.space, self.row, self.flat, self.valid = space, row, flat, valid

    @classmethod
    def made(cls, values: Iterable[tuple[str, Any]] | Mapping[str, Any], space: Space, row: tuple[int, ...],
             flat: int, valid: bool | None) -> IndexedConfig:
        """The same as ``IndexedConfig(...)``, made without the Python-level ``__init__`` (about half the time:
        the space makes configurations by the hundred, and the Problem copies each proposal)."""
        new = _new(cls)
        _update(new, values)
        new.space, new.row, new.flat, new.valid = space, row, flat, valid
        return new

    def indexed_in(self, space: Space) -> bool:
        """Whether what it carries holds for ``space`` (made there, not changed since)."""
        return self.flat >= 0 and self.space is space

    def copy(self) -> IndexedConfig:
        return self.made(self, self.space, self.row, self.flat, self.valid)

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return dict, (dict(self),)  # pickled (to another process) as the plain dict it is

    def _forget(self) -> None:
        self.flat = -1

    def __setitem__(self, key: str, value: Any) -> None:
        self._forget()
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._forget()
        super().__delitem__(key)

    def __ior__(self, other: Any) -> IndexedConfig:  # type: ignore[override,misc]
        self._forget()
        return super().__ior__(other)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._forget()
        super().update(*args, **kwargs)

    def pop(self, *args: Any) -> Any:
        self._forget()
        return super().pop(*args)

    def popitem(self) -> tuple[str, Any]:
        self._forget()
        return super().popitem()

    def setdefault(self, key: str, default: Any = None) -> Any:
        self._forget()
        return super().setdefault(key, default)

    def clear(self) -> None:
        self._forget()
        super().clear()


_new = dict.__new__
_update = dict.update
