"""Reference transfer tuners: tune a GPU from other GPUs' measured data of the same space (the prior).

The prior is the entitled fact ``problem.facts.others`` (bat.core.facts): by
GPU id, the measured datasets of *other* GPUs, never the target's. ``prior``
aligns it with the target's space once per prior (cached in-process); the
tuners are ``best`` (the source GPUs' best configurations first, then random
search), ``rank`` (mean normalised rank over the sources, then a local
search) and ``model`` (a cross-GPU model of the GPU facts and the
configuration, re-weighted by the target's measurements). docs/METHODS.md
gives the source of each idea.
"""
