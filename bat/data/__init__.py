"""Recorded data, checked: can a dataset be analysed, and be replayed, as it is? Below the run wiring and the analyses.

``checks`` runs the data checks on a dataset against its peers (the other
GPUs' data of its benchmark); ``repeats`` groups a dataset's repeated times,
which the checks and the noise-aware optimum both read.
"""
