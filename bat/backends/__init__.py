"""Backends evaluate configurations: replay of recorded data, live CuPy, shell commands."""
