"""``bat record``: measure a work list of configurations into a dataset, resumably.

``engine`` (work lists, the compile-ahead loop, merging to a dataset),
``journal`` (the fsynced JSON-lines checkpoint), ``live`` (provenance of a
recording on a GPU) and ``command`` (recording a command benchmark on this
host). Recording drives backends' measuring sessions; no backend imports it.
"""
