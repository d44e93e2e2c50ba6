"""SMAC's kernels copied by bat.tuner_adapters.smac_kernels equal scikit-learn's clones; the original is kept."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("smac")

from sklearn.base import clone
from smac.model.gaussian_process.kernels import (
    ConstantKernel,
    HammingKernel,
    MaternKernel,
    WhiteKernel,
)
from smac.model.gaussian_process.kernels.base_kernels import AbstractKernel
from smac.model.gaussian_process.priors import HorseshoePrior, LogNormalPrior

from bat.tuner_adapters.smac_kernels import clone_with_theta, kernels_copied


def _kernel() -> AbstractKernel:
    """The black-box facade's kernel on two continuous and two categorical dimensions."""
    amp = ConstantKernel(2.0, constant_value_bounds=(np.exp(-10), np.exp(2)),
                         prior=LogNormalPrior(mean=0.0, sigma=1.0, seed=1))
    matern = MaternKernel(np.ones(2), [(np.exp(-6.75), np.exp(0.09))] * 2, nu=2.5, operate_on=np.array([0, 1]))
    hamming = HammingKernel(np.ones(2), [(np.exp(-6.75), np.exp(0.09))] * 2, operate_on=np.array([2, 3]))
    noise = WhiteKernel(noise_level=1e-8, noise_level_bounds=(np.exp(-25), np.exp(2)),
                        prior=HorseshoePrior(scale=0.1, seed=1))
    return amp * (matern * hamming) + noise


def test_the_copy_computes_what_scikit_learns_clone_computes() -> None:
    kernel = _kernel()
    before = kernel.theta.copy()
    rng = np.random.default_rng(0)
    x = np.hstack([rng.random((12, 2)), rng.integers(0, 3, (12, 2))]).astype(float)
    for _ in range(3):
        theta = np.log(rng.uniform(0.05, 1.0, len(before)))
        ours = clone_with_theta(kernel, theta)
        theirs = clone(kernel)
        theirs.theta = theta
        np.testing.assert_array_equal(ours.theta, theirs.theta)
        for got, want in zip(ours(x, eval_gradient=True), theirs(x, eval_gradient=True), strict=True):
            np.testing.assert_array_equal(got, want)
        assert ours.k1 is not kernel.k1 and ours.k1.k2.k1 is not kernel.k1.k2.k1  # every kernel node a copy
    np.testing.assert_array_equal(kernel.theta, before)  # the original kept its hyper-parameters


def test_the_copy_is_smacs_only_inside_the_block() -> None:
    kernel = _kernel()
    with kernels_copied():
        assert AbstractKernel.clone_with_theta is clone_with_theta
        assert kernel.clone_with_theta(kernel.theta).theta.tolist() == kernel.theta.tolist()
    assert "clone_with_theta" not in vars(AbstractKernel)
