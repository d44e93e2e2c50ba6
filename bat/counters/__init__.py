"""Hardware performance counters: the metrics the profile-guided searcher reads, and collecting them with ncu."""
