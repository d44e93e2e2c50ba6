"""Tuners: library adapters (Optuna, SMAC3, Kernel Tuner) and the reference strategies."""
