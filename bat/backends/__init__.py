"""Backends evaluate configurations: replay of recorded data, live CuPy, the kernels emulated on
the CPU (correctness only), shell commands; ``procedure`` is the measurement every kernel
backend shares."""
