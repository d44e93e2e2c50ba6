"""The toolchain: NVRTC compiles, ptxas resource use, compile pools and Nsight Compute counters.

Imports the core only.
"""
