"""The datasets shipped with BAT (read-only): one folder per source, each with its PROVENANCE.md.

Registered as ``shipped`` in the ``bat.datasets`` entry-point group, so an
installed wheel finds them through the package; imports and recordings go
to the user's data folder instead (bat.core.userdata).
"""
