"""The campaign engine: many tuner runs on recorded (or live) targets, executed and stored, below the analyses.

``design`` says what to run (``Campaign``, ``TunerSpec``, ``RunSpec``: tuners,
targets, budgets, seeds), ``presets`` names designs, ``execute`` runs them (in
this process, on a pool of local worker processes, or on Dask), ``store``
keeps every finished run in one SQLite file and ``forked`` runs a finished
campaign's independent jobs on forked processes. The statistics, reports and
figures of a comparison (``bat.analysis.compare``) and the hypertune
(``bat.analysis.hypertune``) use it; it imports no analysis.
"""
