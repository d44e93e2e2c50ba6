"""The pnpoly benchmark: space.json, kernel source and runner."""
