"""Shared test battery for tuners, usable from outside this repository.

``check_tuner(factory)`` runs every check and returns a ``BatteryReport``;
``TunerBattery`` is a pytest mix-in.
"""

from bat.testing.tuner_battery import (
    CHECKS,
    MAX_WASTE,
    Battery,
    BatteryReport,
    TunerBattery,
    check_tuner,
    expected_failures,
)

__all__ = ["CHECKS", "MAX_WASTE", "Battery", "BatteryReport", "TunerBattery", "check_tuner", "expected_failures"]
