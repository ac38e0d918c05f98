"""Quickstart kernels: plain NumPy functions, compiled ahead of time by aotc.

Imported from a source checkout this module runs on NumPy as ordinary Python; in the
installed wheel ``quickstart.kernels`` is the compiled extension with the same functions.
"""

import numpy as np

import aotc
from aotc import f32, f64, i64


@aotc.export
def rosen(x: f64["n"]) -> f64:
    """The Rosenbrock function of a vector."""
    t0 = 100 * (x[1:] - x[:-1] ** 2) ** 2
    return np.sum(t0 + (1 - x[:-1]) ** 2)


@aotc.export("f8[:](f8[:], f8)", "f4[:](f4[:], f4)")  # Numba-style strings, two overloads
def scale(x, a):
    """Multiply a vector by a scalar, in float64 or float32."""
    return a * x


@aotc.export
def row_norms(a: f32["n", "m"]) -> f32["n"]:
    """The Euclidean norm of each row of a matrix."""
    return np.sqrt(np.sum(a * a, axis=1))


@aotc.export
def weighted_rows(a: f32["n", "m"], w: f32["m"]) -> f32["n"]:
    """Row sums of ``a`` weighted by ``w``; ``m`` must agree (checked on every call)."""
    return np.sum(a * w, axis=1)


@aotc.export
def centroid(points: i64[:, 3]) -> f64[3]:
    """The mean of integer 3-D points, as floats."""
    return np.mean(points, axis=0)


@aotc.export
def mean_std(x: f64[:]) -> (f64, f64):
    """Mean and (population) standard deviation, in one pass over the data."""
    mean = np.mean(x)
    return mean, np.sqrt(np.mean((x - mean) ** 2))
