"""The convolution_milo benchmark of the FAIR Benchmark Hub: its search space (space.json, from the hub's T1 file)."""
