"""The hotspot benchmark: space.json, kernel source and runner."""
