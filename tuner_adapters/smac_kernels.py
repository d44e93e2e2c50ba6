"""SMAC's Gaussian-process kernels copied without scikit-learn's ``clone`` while a black-box run fits them.

Why: each step of the optimiser of the GP's hyper-parameters (L-BFGS, SMAC's
``GaussianProcess._optimize``) asks scikit-learn's ``log_marginal_likelihood``
for the likelihood at a new ``theta``, which takes ``kernel.clone_with_theta(theta)``:
``sklearn.base.clone`` of the whole kernel tree. That clone rebuilds every
node through its constructor (SMAC's kernels look up their hyper-parameters
with ``dir()`` there) and deep-copies every parameter, among them each
prior's NumPy random state. In a 40-trial black-box run this was two fifths
of the run's CPU time, for objects that live one likelihood evaluation.

Inside ``kernels_copied()`` SMAC's kernels clone with ``theta`` by copying
each node of the tree (``copy.copy``, the kernels below it copied the same
way) and then setting ``theta`` on the copy, as scikit-learn does. The copy
holds the same parameter values as scikit-learn's clone: setting ``theta``
replaces the copied nodes' attributes (``set_params``) and never changes an
object in place, so the original kernel is untouched. What the copy shares
with the original instead of deep-copying: the priors (the likelihood of a
clone never reads them; SMAC reads the priors of its own kernel) and the
arrays of dimensions each kernel operates on (never written). The numbers
computed from the copy are those computed from scikit-learn's clone, so the
proposals are unchanged (tests/test_smac_kernels.py compares both clones;
the recorded trace digests of ``smac:bo`` check whole runs).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def copied_tree(kernel: Any) -> Any:
    """A copy of ``kernel`` whose kernels below it are copies too; every other attribute is shared."""
    from sklearn.gaussian_process.kernels import Kernel

    cloned = copy.copy(kernel)
    for name, value in vars(kernel).items():
        if isinstance(value, Kernel):
            setattr(cloned, name, copied_tree(value))
    return cloned


def clone_with_theta(kernel: Any, theta: Any) -> Any:
    """``kernel`` copied as :func:`copied_tree` does, with hyper-parameters ``theta`` (log-transformed)."""
    cloned = copied_tree(kernel)
    cloned.theta = theta
    return cloned


@contextmanager
def kernels_copied() -> Iterator[None]:
    """SMAC's kernels take :func:`clone_with_theta` in the block; scikit-learn's own method afterwards."""
    from smac.model.gaussian_process.kernels.base_kernels import AbstractKernel

    if "clone_with_theta" in vars(AbstractKernel):  # SMAC defined one of its own: leave it
        yield
        return
    AbstractKernel.clone_with_theta = clone_with_theta  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del AbstractKernel.clone_with_theta  # type: ignore[attr-defined]
