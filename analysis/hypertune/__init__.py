"""Tuning the tuners: a hyper-parameter search over a tuner's declared options on replayed data.

``splits`` chooses the training and held-out datasets, ``space`` the
discretised hyper-parameter space, ``units`` evaluates one setting (an inner
campaign scored by the methodology score), ``store`` keeps finished units,
``search`` drives a tuner of this project over the space, ``driver`` runs the
whole hypertune, ``report`` writes its Markdown and figures.
"""
