"""Analyses of a benchmark's search space on recorded data, and of tuners on it (docs/METHODS.md).

One module per analysis: ``distribution``, ``speedup``, ``convergence``,
``centrality`` (with ``ffg`` for the graph and PageRank, ``surrogate`` for
model-estimated landscapes), ``importance``, ``portability``, ``sizes``,
``noise`` (the noise-aware optimum), ``checks`` (data checks); for tuners
``score`` (the methodology score), ``ecdf`` (fixed targets) and
``iohprofiler`` (export for IOHanalyzer). ``plots`` draws them and
``report`` / ``report_md`` write the Markdown/JSON report; ``compare`` is
the campaign engine of ``bat compare``.
"""
