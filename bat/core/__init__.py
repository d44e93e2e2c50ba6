"""The core: search spaces, expressions, benchmarks, datasets, the Problem, traces and the contracts of tuners and kernel runners.

Imports nothing else of BAT and no tuning, analysis or device library.
"""
