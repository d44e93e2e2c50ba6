"""Analyses of a benchmark's search space on recorded data (see METHODS.md, "Analyses").

One module per analysis: ``distribution``, ``speedup``, ``convergence``,
``centrality`` (with ``ffg`` for the graph and PageRank, ``surrogate`` for
model-estimated landscapes), ``importance``, ``portability``, ``sizes``;
``plots`` draws them and ``report`` writes the Markdown/JSON report.
"""
