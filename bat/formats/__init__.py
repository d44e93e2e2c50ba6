"""Other tools' files: T1 search spaces, Kernel Tuner caches, T4 results and KTT output, read and written.

Imports the core only.
"""
