"""The live CuPy backend, split by job: ``device`` (is there a GPU, what is it), ``cupy_device``
(the thin CuPy layer: every CuPy call, as the measurement procedure's Device), ``session``
(measuring compiled configurations on it) and ``backend`` (the Backend of ``bat run``).

Nothing here imports CuPy until a session starts or the device is probed.
"""
