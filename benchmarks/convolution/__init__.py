"""The convolution benchmark: space.json, kernel source and runner."""
