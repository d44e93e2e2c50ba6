"""The coulomb benchmark: a space file only; its data is replayed from results/ktt-coulomb."""
