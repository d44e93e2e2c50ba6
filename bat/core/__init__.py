"""The core: spaces and their files (ours, T1), benchmarks, datasets, the Problem, traces, the contracts.

Imports nothing else of BAT and no tuning, analysis or device library.
"""
