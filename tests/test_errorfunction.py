"""math.erf and math.erfc of traced values, against Python's own (the C library's),
over every range of the algorithm, its boundaries and special values (compiled
in-process with ``aotc.jit``).

Bounds: erf is a rational function below 1.25 and 1 - (a product of two exps) above,
where the exps' error (TRANSCENDENTAL_ULPS of glibc's, tests/codegen) is scaled by the
small tail: measured within 1 ulp, asserted within 4. erfc's tail *is* that product
of two exps over x, so two exp errors and a division: asserted within
TRANSCENDENTAL_ULPS (measured 4). Signs, zeros, infinities and NaN are exact."""

from __future__ import annotations

import math

import numpy as np
from numpy_cases import TRANSCENDENTAL_ULPS

import aotc
from aotc import f64


@aotc.export
def error_functions(x: f64[:]) -> tuple[f64[:], f64[:]]:
    a, b = np.empty_like(x), np.empty_like(x)
    for i in range(x.shape[0]):
        a[i] = math.erf(x[i])
        b[i] = math.erfc(x[i])
    return a, b


def _ulps(got: np.ndarray, want: np.ndarray) -> int:
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert np.array_equal(np.signbit(got), np.signbit(want))
    far = np.abs(got.view(np.int64) - want.view(np.int64))
    return int(np.max(np.where(same, 0, far)))


def test_error_functions_match_pythons() -> None:
    rng = np.random.default_rng(11)
    edges = [0.0, 2.0 ** -56, 2.0 ** -28, 0.25, 0.84375, 1.25, 1 / 0.35, 6.0, 28.0, 40.0]
    special = np.array([e * s for e in edges for s in (1, -1)]
                       + [np.nextafter(e, 0) * s for e in edges[1:] for s in (1, -1)]
                       + [np.inf, -np.inf, np.nan, 1e-300, 5e-324])
    x = np.concatenate([rng.standard_normal(20000) * 3, rng.standard_normal(2000) * 20,
                        np.linspace(-30, 30, 20001), special])
    erf, erfc = aotc.jit(error_functions)(x)
    assert _ulps(erf, np.array([math.erf(v) for v in x])) <= 4
    assert _ulps(erfc, np.array([math.erfc(v) for v in x])) <= TRANSCENDENTAL_ULPS
