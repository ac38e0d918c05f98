"""Kernels for test_extremes.py: max/min/argmax/argmin of floats, long enough for the
vector paths (aotc.codegen.nests.extremes and the fused max/min lanes)."""

import numpy as np

import aotc


@aotc.export("(f8[:],)", "(f4[:],)")
def extremes_1d(x):
    return np.max(x), np.min(x), np.argmax(x), np.argmin(x)


@aotc.export("(f8[:, :],)", "(f4[:, :],)")
def extremes_2d(m):
    return np.max(m, axis=1), np.argmax(m, axis=1), np.min(m, axis=0), np.argmin(m, axis=0)


@aotc.export("(f8[:, :],)", "(f4[:, :],)", "(i4[:, :],)")
def fused_extremes(m):
    """max/min alone in a fusion: four of the target's registers of lanes."""
    return np.max(m), np.min(m * 2), np.max(m, axis=1), np.min(m, axis=0, keepdims=True)
