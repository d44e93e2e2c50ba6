"""The run wiring: targets (a benchmark on a backend), the run driver and recording.
"""
