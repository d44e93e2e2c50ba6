"""The emulated backend: every CUDA kernel run on the CPU under sanitizers, for correctness only.

``build`` (host compiler, CUDA compatibility header in ``cuda/``, cache), ``gate`` (what a
GPU would accept), ``device`` (the procedure's Device as a plan the executable runs),
``session`` (verifying configurations), ``backend`` (the Backend of ``bat run``) and
``selection`` (the configurations CI checks). Nothing here is ever a timing.
"""

#: What every emulated run says first.
CORRECTNESS_ONLY = "emulated on the CPU: results are correctness only, never timings"
