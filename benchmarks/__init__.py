"""Benchmark definitions: one package per kernel, each with its space.json."""
