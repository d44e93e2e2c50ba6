"""The dedispersion benchmark: space.json, kernel source and runner."""
