"""Loop nests for unroll and jam (:mod:`aotc.passes.jam`), shared by the pass's IR tests
(``tests/passes/test_jam.py``) and the compiled ones (``tests/codegen/test_jam.py``):
each with its signature and a maker of arguments for an outer trip count ``n``."""

from __future__ import annotations

import numpy as np
from tour_loops import box_blur, convolve_valid


def distances(x):
    n, d = x.shape
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(d):
                t = x[i, k] - x[j, k]
                s += t * t
            out[i, j] = np.sqrt(s)
    return out


def weighted_total(x, w, k):
    """An outer scalar carry, read only after the inner loop: summed in order."""
    total = 0.0
    for i in range(x.shape[0] - k.shape[0] + 1):
        acc = 0.0
        for j in range(k.shape[0]):
            acc += x[i + j] * k[j]
        total += acc * w[i]
    return total


def into(out, x, k):
    """Results written into an argument."""
    for i in range(out.shape[0]):
        acc = 0
        for j in range(k.shape[0]):
            acc += x[i + j] * k[j]
        out[i] = acc


def triangle(x):
    """Inner bounds that differ per outer iteration: not jammed."""
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        s = 0.0
        for j in range(i):
            s += x[j]
        out[i] = s
    return out


def prefix_of_results(y):
    """The inner loop reads what earlier outer iterations wrote: not jammed."""
    for i in range(1, y.shape[0]):
        s = 0.0
        for j in range(i):
            s += y[j]
        y[i] = s * 0.5
    return y


CASES = {
    "correlate": (convolve_valid, "f8[:](f8[:], f8[:])",
                  lambda rng, n: (rng.random(n + 3), rng.random(4))),
    "blur": (box_blur, "f4[:,:](f4[:,:], i8)",
             lambda rng, n: (rng.random((n + 4, n + 5)).astype(np.float32), np.int64(2))),
    "distances": (distances, "f8[:,:](f8[:,:])", lambda rng, n: (rng.random((n, 3)),)),
    "weighted_total": (weighted_total, "f8(f8[:], f8[:], f8[:])",
                       lambda rng, n: (rng.random(n + 4), rng.random(n + 1), rng.random(4))),
    "into": (into, "void(i8[:], i8[:], i8[:])",
             lambda rng, n: (np.zeros(n, np.int64), rng.integers(-9, 9, n + 5),
                             rng.integers(-9, 9, 6))),
    "triangle": (triangle, "f8[:](f8[:])", lambda rng, n: (rng.random(n),)),
    "prefix_of_results": (prefix_of_results, "f8[:](f8[:])", lambda rng, n: (rng.random(n),)),
}
JAMMED = {"correlate", "blur", "distances", "weighted_total", "into"}
