"""Array kernels: in-place writes and views, shape functions, statistics, linear
algebra and integer arithmetic, written as ordinary NumPy."""

import numpy as np

import aotc
from aotc import f32, f64, i64, u32


@aotc.export
def heat_step(u: f64[:, :], alpha: float) -> None:
    """One explicit heat-equation step, in place: the caller's array changes."""
    interior = u[1:-1, 1:-1]
    interior += alpha * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                         - 4 * interior)


@aotc.export
def standardize(x: f32[:, :]) -> f32[:, :]:
    """Zero mean, unit variance per column (ddof=1), constant columns left at zero."""
    std = x.std(axis=0, ddof=1, keepdims=True)
    return np.where(std > 0, (x - x.mean(axis=0, keepdims=True)) / np.maximum(std, 1e-30), 0)


@aotc.export
def polynomial_features(x: f64[:], degree: i64) -> f64[:, :]:
    """Columns x**0 .. x**(degree-1), plus a linspace knot grid as the last column."""
    powers = np.arange(degree)
    feats = x[:, None] ** powers[None, :]
    knots = np.linspace(x.min(), x.max(), x.shape[0])
    return np.concatenate([feats, knots[:, None]], axis=1)


@aotc.export
def moving_average(x: f64[:], window: i64) -> f64[:]:
    """Trailing mean over ``window`` samples by a cumulative sum."""
    c = np.cumsum(np.concatenate([np.zeros(1), x]))
    return (c[window:] - c[:-window]) / window


@aotc.export
def classify(features: f32[:, "d"], weights: f32["d", "k"], bias: f32["k"]) -> i64[:]:
    """Linear classifier: the arg-max class of each row."""
    return np.argmax(features @ weights + bias, axis=1)


@aotc.export
def clip_outliers(x: f64[:], k: float) -> f64[:]:
    """Replace values beyond k standard deviations by the mean (masked assignment)."""
    y = x.copy()
    mu, sigma = np.mean(x), np.std(x)
    y[np.abs(x - mu) > k * sigma] = mu
    return y


@aotc.export
def checkerboard(n: i64) -> f64[:, :]:
    """eye, tile, repeat, roll and flip building a patterned matrix."""
    block = np.tile(np.eye(2), (n, n))
    stripes = np.repeat(np.arange(2 * n) % 2, 1)[None, :]
    return np.flip(np.roll(block, 1, axis=1), axis=0) + stripes


@aotc.export
def nan_summary(x: f64[:, :]):
    """Per-row NaN-ignoring mean and max, and the count of valid entries."""
    return np.nanmean(x, axis=1), np.nanmax(x, axis=1), np.count_nonzero(~np.isnan(x), axis=1)


@aotc.export
def hash_u32(keys: u32[:]) -> u32[:]:
    """An integer hash (xorshift-multiply): wraps around as uint32 does."""
    h = keys ^ (keys >> 16)
    h = h * np.uint32(0x45D9F3B)
    h = h ^ (h >> 16)
    return h


@aotc.export
def frobenius_trace(a: f64["n", "n"]):
    """Norms and the trace of a square matrix, and its product with its transpose."""
    return np.linalg.norm(a), np.trace(a), a @ a.T
