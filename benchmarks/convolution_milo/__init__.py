"""The convolution_milo benchmark (FAIR Benchmark Hub): space.json, the hub's CUDA kernel and HIP twin, runner."""
