"""``bat compare``: repeated tuner runs on recorded (or live) targets, compared with statistics.

The runs are a campaign of ``bat.campaign`` (``Campaign`` and ``TunerSpec``:
what to run, seeds, budget policy; ``run_campaign``: in process, a process
pool or Dask, finished runs stored as they complete). Here: ``analyse``
(cells, pairwise tests, scores against random search, the baseline gate;
``methodology``: the methodology score, success, fixed targets and data
checks) and ``write_outputs`` (Markdown, JSON, plots, the IOHprofiler export).
"""
