"""The expdist benchmark: space.json, kernel source and runner."""
