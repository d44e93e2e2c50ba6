"""Shared test battery for tuners, usable from outside this repository.

``check_tuner(factory)`` runs every check; ``TunerBattery`` is a pytest mix-in.
"""

from bat.testing.tuner_battery import CHECKS, Battery, TunerBattery, check_tuner, expected_failures

__all__ = ["CHECKS", "Battery", "TunerBattery", "check_tuner", "expected_failures"]
