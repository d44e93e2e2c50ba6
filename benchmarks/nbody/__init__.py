"""The nbody benchmark: space.json, kernel source and runner."""
