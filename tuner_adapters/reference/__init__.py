"""The reference tuner: search strategies written here, with no tuning library."""
