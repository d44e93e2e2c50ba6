"""The gemm benchmark: space.json, kernel source and runner."""
