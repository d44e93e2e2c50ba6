"""Other tools' files of measurements: Kernel Tuner caches, T4 results and KTT output, read and written.

Imports the core only.
"""
