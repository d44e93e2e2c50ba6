"""Shared test battery for tuners, usable from outside this repository.

``check_tuner(factory)`` runs every check and returns a ``BatteryReport``;
``TunerBattery`` is a pytest mix-in. Names load on first use (PEP 562), so a
tuner process that imports ``bat.testing.exploits`` loads no pandas.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CHECKS", "MAX_WASTE", "Battery", "BatteryReport", "TunerBattery", "check_tuner", "expected_failures"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from bat.testing import tuner_battery

        return getattr(tuner_battery, name)
    raise AttributeError(f"module 'bat.testing' has no attribute {name!r}")
