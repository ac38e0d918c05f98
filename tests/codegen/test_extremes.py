"""max/min/argmax/argmin of floats on their vector paths, against NumPy: lengths around
every register width's threshold, NaNs and ties anywhere (NumPy's answer is the first
NaN, the first of equal extremes), signed zeros and infinities, strided and 2-d
inputs. Compiled in-process (aotc.jit)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import aotc
from codegen.extremes_kernels import extremes_1d, extremes_2d, fused_extremes

LENGTHS = (1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 4099)


def _cases(n: int, dtype: Any) -> list[np.ndarray]:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype)
    cases = [x, np.full(n, 2.5, dtype), np.sort(x), np.sort(x)[::-1].copy()]
    for where in {0, n // 3, n - 1}:
        nan = x.copy()
        nan[where] = np.nan
        cases.append(nan)
        tie = x.copy()
        tie[where] = x.max() + 1
        tie[-1] = x.max() + 1
        cases.append(tie)
    zeros = np.zeros(n, dtype)
    zeros[::2] = -0.0
    cases += [zeros, np.where(x > 0, np.inf, -np.inf).astype(dtype)]
    twice = x.copy()
    twice[n // 2:] = np.nan
    cases.append(twice)
    return cases


def _same(got: Any, want: Any) -> None:
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", LENGTHS)
def test_one_axis_matches_numpy(n: int, dtype: Any) -> None:
    fast = aotc.jit(extremes_1d)
    for x in _cases(n, dtype):
        want = (np.max(x), np.min(x), np.argmax(x), np.argmin(x))
        _same(fast(x), want)
        strided = np.repeat(x, 2)[::2]  # the same values, not contiguous
        _same(fast(strided), want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_and_columns_match_numpy(dtype: Any) -> None:
    fast = aotc.jit(extremes_2d)
    rng = np.random.default_rng(7)
    for rows, cols in ((3, 200), (200, 3), (33, 65)):
        m = rng.standard_normal((rows, cols)).astype(dtype)
        m[rows // 2, cols // 3] = np.nan
        m[0, :] = 4.0
        for a in (m, m.T.copy().T, np.asfortranarray(m)):
            want = (np.max(a, axis=1), np.argmax(a, axis=1), np.min(a, axis=0),
                    np.argmin(a, axis=0))
            _same(fast(a), want)


@pytest.mark.parametrize("target", ["x86-64-v2", "x86-64-v3", None])
def test_fused_extremes_on_every_register_width(target: str | None) -> None:
    """A fusion of max/min alone keeps four registers of lanes of the target's width
    (16 or 32 bytes, and this CPU's: 64 on an AVX-512 one; chunks of 8 to 64 items):
    NaNs, signed zeros and infinities anywhere in rows around those chunk lengths, as
    NumPy. (Every x86-64 CPU the suite runs on has the first two levels.)"""
    fast = aotc.jit(fused_extremes, target=target)
    for dtype in (np.float64, np.float32, np.int32):
        for n in (1, 7, 8, 9, 31, 32, 33, 64, 65, 100, 257):
            for x in _cases(n, np.float32)[:-1]:
                if dtype == np.int32 and np.isnan(x).any():
                    continue
                if dtype == np.int32:
                    x = np.where(np.isinf(x), 0, x * 1000)
                m = np.stack([x, x[::-1]]).astype(dtype)
                want = (np.max(m), np.min(m * 2), np.max(m, axis=1),
                        np.min(m, axis=0, keepdims=True))
                _same(fast(m), want)
