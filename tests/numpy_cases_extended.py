"""Catalog cases for the wider NumPy API: creation, statistics, joining, linear algebra."""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view as swv
from numpy_cases import CODE, TRANSCENDENTAL_ULPS, Case


def _whole_windows(a, v, mode):
    """``np.convolve(a, v, mode)`` and ``np.convolve(v, a, mode)`` at the outputs whose
    sum has a term for every element of the shorter array."""
    short, long = min(a.shape[0], v.shape[0]), max(a.shape[0], v.shape[0])
    offset = {"full": 0, "same": (short - 1) // 2, "valid": short - 1}[mode]
    window = slice(short - 1 - offset, long - offset)
    return np.convolve(a, v, mode)[window], np.convolve(v, a, mode)[window]


rng = np.random.default_rng(7)
V = rng.standard_normal(11)
VECS = [V, V[::-1], V[::2], V[:1]]
M = rng.standard_normal((4, 6))
MATS = [M, M[::-1, ::2], M.T, M[:1], np.asfortranarray(M)]
IV = rng.integers(-50, 50, 9)


def _cases() -> list[Case]:
    c: list[Case] = []

    def add(name, fn, sig, inputs, ulps=0):
        c.append(Case(name, fn, sig, inputs, ulps, {"extended"}))

    # creation with runtime sizes
    add("zeros_ones_full", lambda x, n: (np.zeros((n + 2, 3)), np.ones(x.shape[0], np.int32),
                                         np.full((2, n), 1.5, np.float32), np.empty(0)),
        "(f8[:], i8)", [(V, np.int64(3)), (V[:0], np.int64(0))])
    # astype gives a typed value: float32 with an int64 zero promotes to float64
    add("astype_is_strong", lambda x: (np.where(x < 0, x, np.asarray(0).astype(np.int64)),
                                       x + np.asarray(2).astype(np.int64)),
        "(f4[:])", [(V.astype(np.float32),)])
    add("like_functions", lambda x: (np.zeros_like(x), np.ones_like(x, dtype=np.int8),
                                     np.full_like(x, 7), np.zeros_like(x, dtype=np.float32)),
        "(f8[:, :])", [(m,) for m in MATS])
    add("arange_forms", lambda x, n: (np.arange(n), np.arange(2, n + 5, 3),
                                      np.arange(x.shape[0], 0, -2) * 1.5,
                                      np.arange(0.0, 1.0, 0.25)),
        "(f8[:], i8)", [(V, np.int64(7)), (V[:1], np.int64(0))])
    add("linspace", lambda n, a, b: (np.linspace(a, b, n), np.linspace(0, 1, 5, endpoint=False),
                                     np.linspace(a, b, 1)),
        "(i8, f8, f8)", [(np.int64(7), 0.0, 1.0), (np.int64(2), -3.0, 5.5), (np.int64(1), 2.0, 3.0),
                         (np.int64(0), 1.0, 2.0)], ulps=2)
    add("eye_identity", lambda n: (np.eye(n), np.eye(n, n + 1, k=1, dtype=np.int64),
                                   np.identity(3, dtype=np.float32)),
        "(i8)", [(np.int64(4),), (np.int64(0),), (np.int64(1),)])
    # statistics
    for ddof in (0, 1):
        add(f"var_std_ddof{ddof}", lambda x, d=ddof: (np.var(x, ddof=d), x.std(axis=0, ddof=d),
                                                     np.var(x, axis=1, keepdims=True)),
            "(f8[:, :])", [(m,) for m in MATS], ulps=64)
    add("var_int", lambda x: np.var(x), "(i8[:])", [(IV,), (IV[::2],)], ulps=16)
    add("average", lambda x, w: (np.average(x), np.average(x, weights=w),
                                 np.average(x[None, :] * np.ones((2, 1)), axis=1, weights=w)),
        "(f8[:], f8[:])", [(v, np.abs(v) + 0.5) for v in VECS], ulps=32)
    add("argmax_argmin", lambda x: (np.argmax(x), np.argmin(x, axis=0), x.argmax(axis=1),
                                    np.argmin(x, axis=1, keepdims=True)),
        "(f8[:, :])",
        [(m,) for m in MATS] + [(np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, 2.0]]),)])
    add("count_nonzero_clip", lambda x: (np.count_nonzero(x > 0), np.count_nonzero(x, axis=0),
                                         np.clip(x, -0.5, 0.5), x.clip(0)),
        "(f8[:, :])", [(m,) for m in MATS])
    nanny = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [-1.0, 2.0, np.inf]])
    add("nan_reductions", lambda x: (np.nansum(x), np.nansum(x, axis=1), np.nanmax(x, axis=1),
                                     np.nanmin(x, axis=0), np.nanmean(x, axis=1)),
        "(f8[:, :])", [(nanny,), (M,)], ulps=8)
    # joining and reordering
    add("concatenate_stack", lambda x, y: (np.concatenate([x, y, x]), np.stack([x, y], axis=1),
                                           np.hstack([x, y]), np.vstack([x, y]),
                                           np.concatenate([x[None], y[None]], axis=None)),
        "(f8[n], f8[n])", [(v, v * 2) for v in VECS])
    add("concatenate_mixed_dtypes", lambda x, y: np.concatenate([x, y]), "(i4[:], f4[:])",
        [(np.arange(3, dtype="i4"), np.ones(2, "f4"))])
    add("tile_repeat", lambda x, k: (np.tile(x, 3), np.tile(x, (2, 2)), np.repeat(x, 2),
                                     np.repeat(x, k), x.repeat(2, axis=0)),
        "(f8[:], i8)", [(v, np.int64(3)) for v in VECS])
    add("tile_repeat_2d", lambda x: (np.tile(x, (2, 1)), np.repeat(x, 2, axis=1)), "(f8[:, :])",
        [(m,) for m in MATS])
    add("roll_flip_diff", lambda x: (np.roll(x, 2), np.roll(x, -13), np.flip(x), x[::-1][::2],
                                     np.diff(x), np.diff(x, n=2)),
        "(f8[:])", [(v,) for v in VECS if v.size > 2])
    add("diff_prepend_append", lambda x, m, k: (
        np.diff(x, prepend=0.0), np.diff(x, append=x[:2]), np.diff(x, 2, prepend=1.0, append=-1),
        np.diff(m, axis=0, prepend=m[:1]), np.diff(k, prepend=0), np.diff(k, append=2.5)),
        "(f8[:], f8[:, :], i8[:])", [(v, m, IV) for v, m in zip(VECS, MATS, strict=False)])
    add("sliding_windows", lambda x, m, w: (
        swv(x, w).max(axis=1), swv(x, 3), swv(m, (2, 3)), swv(m, (2, 1), axis=(1, 0))),
        "(f8[:], f8[:, :], i8)", [(v, m, np.int64(w)) for v, m in zip(VECS, MATS, strict=False)
                                  for w in (1, 3) if v.size >= 3 and min(m.shape) >= 3])
    add("linspace_retstep", lambda a, n: (*np.linspace(a, 2.0, n, retstep=True),
                                          *np.linspace(a, 2.0, n, endpoint=False, retstep=True)),
        "(f8, i8)", [(np.float64(-1.5), np.int64(n)) for n in (0, 1, 2, 7)])
    add("roll_2d", lambda x: (np.roll(x, 1, axis=0), np.roll(x, (1, -2), axis=(0, 1)),
                              np.roll(x, 3), np.flip(x, axis=1), np.roll(x, 1, axis=(0, 1))),
        "(f8[:, :])", [(m,) for m in MATS])
    add("cumsum_cumprod", lambda x: (np.cumsum(x), np.cumsum(x, axis=0), x.cumprod(axis=1)),
        "(f8[:, :])", [(m,) for m in MATS], ulps=16)
    add("cumsum_int8_accumulates_i64", lambda x: np.cumsum(x), "(i1[:])",
        [(np.full(40, 100, dtype="i1"),)])
    add("take", lambda x, i: (np.take(x, i), x.take(i, axis=0)), "(f8[:], i8[:])",
        [(V, np.array([0, -1, 3, 3])), (V, np.array([], dtype="i8"))])
    add("moveaxis_swapaxes", lambda x: (np.moveaxis(x, 0, -1), np.swapaxes(x, 0, 2) + 1,
                                        np.broadcast_to(x[0], (2,) + x.shape[1:])),
        "(f8[:, :, :])", [(rng.standard_normal((2, 3, 4)),)])
    # linear algebra
    add("matmul_ranks", lambda a, b, v: (a @ b, a @ v, v @ b, np.matmul(a[None], b[None]),
                                         v @ v),
        "(f8[:, k], f8[k, :], f8[k])",
        [(rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(4))],
        ulps=32)
    add("batched_matmul", lambda a, b: a @ b, "(f4[:, :, :], f4[:, :])",
        [(rng.standard_normal((2, 3, 4)).astype("f4"), rng.standard_normal((4, 2)).astype("f4"))],
        ulps=32)
    add("dot_inner_outer", lambda a, b: (np.dot(a, b), np.inner(a, b), np.outer(a, b),
                                         np.vdot(a, b), np.dot(a, 2.0)),
        "(f8[n], f8[n])", [(v, v[::-1]) for v in VECS], ulps=32)
    add("int_matmul", lambda a, b: a @ b, "(i8[:, :], i8[:, :])",
        [(np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4))])
    add("trace_norm", lambda a: (np.trace(a), np.trace(a, offset=1), np.linalg.norm(a),
                                 np.linalg.norm(a[0]), np.linalg.norm(a[0], ord=1),
                                 np.linalg.norm(a, axis=1), np.linalg.norm(a[0], np.inf)),
        "(f8[:, :])", [(m,) for m in MATS], ulps=32)
    return c


EXTENDED_CASES = _cases()


def _write_cases() -> list[Case]:
    c: list[Case] = []

    def add(name, fn, sig, inputs, ulps=0):
        c.append(Case(name, fn, sig, inputs, ulps, {"writes"}))

    def stencil(U):
        u = U[1:-1, 1:-1]
        u += 0.25 * (U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:])
        return U

    add("view_write_seen_through_base", stencil, "(f8[:, :])",
        [(rng.standard_normal((5, 6)),), (rng.standard_normal((6, 5)).T,), (np.zeros((2, 2)),)])

    def element_writes(x, y):
        y[0] = x[0] * 2
        y[-1] = 7
        y[1:3] = x[:2]
        x[::2] = -1.0
        return x.sum() + y.sum()

    add("element_and_slice_writes", element_writes, "(f8[:], f8[:])",
        [(V.copy(), V[::-1].copy())], ulps=64)  # summation order

    def augmented(x, k):
        x += 1
        x *= k
        x[1:] -= x[:-1]  # reads the old x[:-1] first, as NumPy's ufunc buffers do here
        return x

    add("augmented_assignment_on_argument", augmented, "(f8[:], f8)",
        [(V.copy(), 2.0), (V[:1].copy(), 3.0)])

    def masked(x, t):
        x[x > t] = t
        x[x < -t] -= 1
        y = x.copy()
        y[y == t] = 0
        return y

    add("masked_assignment", masked, "(f8[:], f8)", [(V.copy(), 0.5), (V[:0].copy(), 0.5)])

    def mask_with_indices(a, labels):  # a mask among other indices: its nonzero() places
        a[labels == 1, 0] = -1.0
        return (a[labels == 2, 1], a[labels > 0, 1:], a[1, labels[:a.shape[1]] >= 0],
                a[..., labels[:a.shape[1]] > 0], a[labels == 0][:, None, 0], a)

    add("mask_with_indices", mask_with_indices, "(f8[:, :], i8[:])",
        [(np.arange(12.0).reshape(4, 3), np.array([0, 1, 1, 2])),
         (np.arange(12.0).reshape(4, 3), np.array([5, 5, 5, 5])),
         (np.arange(9.0).reshape(3, 3), np.array([2, 0, 1]))])

    def transposed_view_write(a):
        a.T[0] = 1.0
        b = a[:, ::-1]
        b[0, 0] = 9.0
        return a

    add("transposed_and_reversed_view_writes", transposed_view_write, "(f8[:, :])",
        [(M.copy(),)])

    def fresh_array_writes(n):
        z = np.zeros((n, n))
        z[0] = 1.0
        z[:, -1] = 2.0
        z[1:, 0] += 3.0
        return z

    add("write_into_fresh_zeros", fresh_array_writes, "(i8)", [(np.int64(4),), (np.int64(1),)])

    def int_wraparound_writes(x):
        x += 100  # wraps around in int8
        x[0] = 127
        return x

    add("int8_inplace_wraps", int_wraparound_writes, "(i1[:])",
        [(np.arange(-5, 5, dtype="i1"),)])
    return c


EXTENDED_CASES += _write_cases()


def _size_bound_cases() -> list[Case]:
    def harris(image):
        m, n = image.shape
        dx = (image[1:, :] - image[:m - 1, :])[:, 1:]
        dy = (image[:, 1:] - image[:, :n - 1])[1:, :]
        return dx * dy - 0.05 * (dx + dy) ** 2

    def bounds(x, k):
        n = x.shape[0]
        return x[:n - 2], x[k:], x[: k + 1], x[n // 2:], x[1:n:2]

    return [
        Case("slice_bounds_from_shapes", harris, "(f8[:, :])",
             [(M,), (M[:1],), (M[:0],), (M.T[::-1],)], 0, {"extended"}),
        Case("slice_bounds_from_arguments", bounds, "(f8[:], i8)",
             [(V, np.int64(3)), (V[:1], np.int64(0)), (V[:0], np.int64(5))], 0, {"extended"}),
    ]


EXTENDED_CASES += _size_bound_cases()


def _aliasing_write_cases() -> list[Case]:
    def reversed_self_update(x):
        x += (x * 2)[::-1]
        return x

    def shifted_self_update(x):
        x[1:] += x[:-1] * 0.5
        return x.sum()

    return [Case("inplace_reads_reversed_self", reversed_self_update, "(f8[:])",
                 [(np.arange(6.0),), (np.arange(7.0)[::-1].copy(),)], 0, {"writes"}),
            Case("inplace_reads_shifted_self", shifted_self_update, "(f8[:])",
                 [(np.arange(6.0),)], 8, {"writes"})]


EXTENDED_CASES += _aliasing_write_cases()


def _more_functions_cases() -> list[Case]:
    """round, ptp, isclose, copyto, convolve, searchsorted, interp, meshgrid, triu/tril,
    einsum, cross, polyval, bincount, histogram and Python's math on traced scalars."""
    c: list[Case] = []
    r = np.random.default_rng(11)

    def add(name, fn, sig, inputs, ulps=0, tags=("extended",)):
        c.append(Case(name, fn, sig, inputs, ulps, set(tags)))

    # np.round: NumPy's x * 10**d, rint, / 10**d; exact for d = 0; ints for d < 0 via f8
    rv = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 1.005, 2.675, 123.456, -0.0, np.nan, np.inf,
                   -np.inf, 1e300, -1e-30, 0.125, -0.04, 0.04])
    add("round_float64", lambda x: (np.round(x), np.round(x, 2), np.around(x, -1), x.round(3),
                                    np.round(x, -2), np.round(x, 30), np.round(x, -400),
                                    np.round(x, 1)),
        "(f8[:])", [(rv,), (rv[::-2],), (rv[:1],), (rv[:0],)])
    with np.errstate(over="ignore"):
        rv32 = rv.astype("f4")  # 1e300 is inf
    add("round_float32", lambda x: (np.round(x), np.round(x, 1), np.around(x, -1), x.round(2),
                                    np.round(x, 45)),
        "(f4[:])", [(rv32,), (rv32[:0],)])
    iv = np.array([2**62 + 1, 25, -25, 15, -15, 35, 5, -5, 127, -128, 0, 250])
    add("round_integers", lambda x, y, u: (np.round(x), np.round(x, 2), np.around(x, -1),
                                           x.round(-2), np.round(y, -1), np.round(y, 3),
                                           np.round(u, -1), np.round(u, -2), np.round(x, -30)),
        "(i8[:], i1[:], u1[:])", [(iv, iv.astype("i1"), iv.astype("u1")),
                                  (iv[:1], iv[:0].astype("i1"), iv[-1:].astype("u1"))])
    add("round_scalars", lambda a, k: (np.round(a, 1), round(a, 2), np.round(a), np.round(k, -1)),
        "(f8, i8)", [(np.float64(2.675), np.int64(25)), (np.float64(-0.45), np.int64(-35))])
    # np.ptp: max - min in the dtype (wraps for integers)
    add("ptp", lambda x: (np.ptp(x), np.ptp(x, axis=0), np.ptp(x, axis=1, keepdims=True)),
        "(f8[:, :])", [(m,) for m in MATS] + [(np.array([[1.0, np.nan], [-np.inf, 2.0]]),)])
    add("ptp_int8_wraps", lambda x: (np.ptp(x), np.ptp(x[:, None], axis=1)), "(i1[:])",
        [(np.array([-128, 127, 0], "i1"),), (np.array([5], "i1"),)])
    # np.isclose / np.allclose
    ca = np.array([1.0, np.nan, np.inf, -np.inf, 0.0, 1e-9, 1.0000001, -0.0, 1e10, np.inf])
    cb = np.array([1.0, np.nan, np.inf, np.inf, 1e-9, 0.0, 1.0, 0.0, 1.00001e10, 1.0])
    add("isclose_allclose", lambda a, b: (np.isclose(a, b), np.isclose(a, b, equal_nan=True),
                                          np.allclose(a[:1], b[:1]), np.isclose(a, 1.0),
                                          np.isclose(a, 1, rtol=0.1, atol=0),
                                          np.allclose(a, b, equal_nan=True), np.allclose(a, b)),
        "(f8[:], f8[:])", [(ca, cb), (ca[::-1], cb[::-1]), (ca[:0], cb[:0]), (ca[:1], cb[1:2])])
    add("isclose_mixed_dtypes", lambda a, b: (np.isclose(a, b), np.isclose(b, a),
                                              np.isclose(a, 0.1), np.isclose(b, 2)),
        "(f4[:], i8[:])", [(np.array([1.0, 0.0, 1e-9, 0.1, np.nan], "f4"),
                            np.array([1, 0, 0, 0, 2**62]))])

    # np.copyto: a write into dst with NumPy's casting
    def copy_into(dst, src, mask):
        np.copyto(dst, src)
        np.copyto(dst[1:], 2 * src[1:], where=mask[1:])
        np.copyto(dst[:1], 7)
        return dst

    add("copyto_where", copy_into, "(f8[:], f8[:], b1[:])",
        [(np.zeros(4), np.array([1.0, -0.0, np.nan, np.inf]), np.array([True, False, True, True])),
         (np.zeros(1), np.ones(1), np.ones(1, bool))], tags=("writes",))

    def copy_unsafe(dst, src, f):
        np.copyto(dst, src, casting="unsafe")
        np.copyto(f, dst[0])
        np.copyto(f[::2], 1.5)
        return dst.sum() + f.sum()

    add("copyto_casting", copy_unsafe, "(i4[:, :], f8[:], f4[:])",
        [(np.zeros((2, 3), "i4"), np.array([1.5, -2.5, 3e4]), np.zeros(3, "f4"))],
        tags=("writes",))
    # np.convolve: the three modes, either argument longer, build-time and runtime lengths
    ca = np.array([1.0, -2.0, 3.0, 0.5, -0.0, 4.0, 2.0])
    cv = np.array([1.0, -2.0, 0.5])
    for mode in ("full", "same", "valid"):
        add(f"convolve_{mode}", lambda a, v, m=mode: (np.convolve(a, v, m), np.convolve(v, a, m),
                                                      np.convolve(a[:4], a[:4], m)),
            "(f8[:], f8[:])", [(ca, cv), (ca[::-1], cv[:1]), (ca[:1], cv), (cv, ca[::2])])
        # Outputs that see the whole shorter array are NumPy's own loop: bit-exact.
        add(f"convolve_{mode}_static_lengths", lambda a, v, m=mode: _whole_windows(a, v, m),
            "(f8[:], f8[9])", [(r.standard_normal(40), r.standard_normal(9)),
                               (r.standard_normal(5), r.standard_normal(9)),
                               (r.standard_normal(1), r.standard_normal(9))])
        # NumPy computes the other outputs with BLAS dot, whose order (and use of FMA)
        # is the CPU's OpenBLAS kernel's. Two orders of a sum of at most 9 positive
        # products differ by at most 8 roundings of the sum plus one per product:
        # within 16 ulps, on every CPU.
        add(f"convolve_{mode}_static_lengths_ends",
            lambda a, v, m=mode: (np.convolve(a, v, m), np.convolve(v, a, m)),
            "(f8[:], f8[9])", [(r.random(40) + 0.5, r.random(9) + 0.5),
                               (r.random(5) + 0.5, r.random(9) + 0.5)], ulps=16)
    add("convolve_dtypes", lambda a, v, b: (np.convolve(a, v), np.convolve(a, v, "same"),
                                            np.convolve(a.astype(np.float32), 2.0),
                                            np.convolve(v, [1, 2]), np.convolve(b, b[::-1])),
        "(i1[:], i1[:], b1[:])",
        [(np.array([100, -100, 50, 7], "i1"), np.array([3, 2], "i1"),
          np.array([True, False, False, True]))])
    add("convolve_inf_nan_signed_zero", lambda a, v: (np.convolve(a, v), np.convolve(a, v[:1])),
        "(f8[:], f8[2])", [(np.array([-0.0, np.inf, 1.0, np.nan, -0.0]), np.array([0.0, -1.0])),
                           (np.array([-0.0]), np.array([1.0, -0.0]))])
    # np.searchsorted by counting, with NumPy's NaN-last order
    sa = np.array([-np.inf, 1.0, 2.0, 2.0, 3.0, np.nan])
    sv = np.array([[0.0, 1.0, 2.0], [2.5, np.inf, np.nan], [-np.inf, -0.0, 3.0]])
    add("searchsorted", lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, side="right"),
                                      np.searchsorted(a, 2.0), a.searchsorted(v[0], "right"),
                                      np.searchsorted(a, v, sorter=np.arange(a.shape[0]))),
        "(f8[:], f8[:, :])", [(sa, sv), (sa[:1], sv), (sa[:0], sv), (sa[1:3], sv[:, :0])])
    add("searchsorted_int_keys", lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, 300),
                                               np.searchsorted(a, v, "right"),
                                               np.searchsorted(a.astype(np.float32), 0.1)),
        "(i1[:], i8[:])", [(np.array([-5, 0, 0, 7, 100], "i1"), np.array([-6, 0, 7, 1000]))])
    # np.interp: NumPy's arr_interp step by step
    xp = np.array([0.0, 1.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, 3.0, 5.0, -1.0, np.inf])
    xs = np.array([-1.0, 0.0, 0.5, 1.0, 1.5, 2.5, 3.0, 4.0, 5.0, np.nan, -0.0, np.inf, -np.inf])
    add("interp", lambda x, xp, fp: (np.interp(x, xp, fp), np.interp(x, xp, fp, left=-7.0, right=9),
                                     np.interp(x, xp[:1], fp[:1]),
                                     np.interp(x, xp[:1], fp[:1], 0.0, 1.0),
                                     np.interp(2.0, xp, fp), np.interp(x[:, None], xp[:2], fp[:2])),
        "(f8[:], f8[:], f8[:])", [(xs, xp, fp), (xs[:0], xp, fp), (xs[:1], xp[1:3], fp[1:3])])
    sx = np.sort(r.standard_normal(40))
    add("interp_random_and_int", lambda x, xp, fp, i: (np.interp(x, xp, fp),
                                                         np.interp(i, i, fp[:3])),
        "(f8[:], f8[:], f4[:], i4[3])", [(r.standard_normal(60) * 1.5, sx,
                                          r.standard_normal(40).astype("f4"),
                                          np.array([0, 2, 4], "i4"))])
    # np.meshgrid
    add("meshgrid", lambda x, y: (*np.meshgrid(x, y), *np.meshgrid(x, y, indexing="ij"),
                                  *np.meshgrid(x, y, sparse=True),
                                  *np.meshgrid(x, y, x, copy=False), *np.meshgrid(x)),
        "(f8[:], i4[:])", [(np.arange(3.0), np.arange(4, dtype="i4")),
                           (np.arange(0.0), np.arange(1, dtype="i4"))])
    # np.triu / np.tril, with runtime k and stacks
    add("triu_tril", lambda m, k: (np.triu(m), np.tril(m), np.triu(m, 1), np.tril(m, -1),
                                   np.triu(m, k), np.tril(m, k), np.triu(m[0]), np.tril(m[None]),
                                   np.triu(m, -10)),
        "(f8[:, :], i8)", [(m, np.int64(k)) for m in MATS for k in (2, -1)])
    add("triu_tril_int_stack", lambda m: (np.triu(m), np.tril(m, 10), np.tril(m, -1)),
        "(i2[:, :, :])", [(np.arange(24, dtype="i2").reshape(2, 3, 4),),
                          (np.zeros((0, 2, 2), "i2"),)])
    # np.einsum: integer-valued floats are exact whatever the order of the sums
    ea = r.integers(-5, 5, (3, 4)).astype(float)
    eb = r.integers(-5, 5, (4, 5)).astype(float)
    es = r.integers(-5, 5, (4, 4)).astype(float)
    ev = r.integers(-5, 5, 4).astype(float)
    add("einsum_forms", lambda a, b, s, v: (
        np.einsum("ij,jk->ik", a, b), np.einsum("ij,jk", a, b), np.einsum("ij->ji", a),
        np.einsum("ii", s), np.einsum("ii->i", s), np.einsum("ij->", a), np.einsum("ij->j", a),
        np.einsum("i,i", v, v), np.einsum("i,j->ij", v, v), np.einsum("ij,j->i", a, v),
        np.einsum("ij,ij->ij", s, s), np.einsum("ij,jk,kl->il", a, s, b), np.einsum("ji", a),
        np.einsum(a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2], [2, 0]),
        np.einsum("i,", v, 2.0), np.einsum("ij,kj->ikj", a, a), np.einsum("jii->j", s[None]),
        np.einsum("ij,jk->ik", a, b, optimize=True), np.einsum("ij,kj->ikj", a, s[:2]),
        np.einsum("ij,kj->kij", s, a)),
        "(f8[:, :], f8[:, :], f8[:, :], f8[:])", [(ea, eb, es, ev), (ea[:0], eb, es, ev)])
    et = r.integers(-5, 5, (2, 3, 4)).astype(float)
    eu = r.integers(-5, 5, (2, 4, 5)).astype(float)
    add("einsum_batch", lambda t, u: (np.einsum("bij,bjk->bik", t, u),
                                      np.einsum("bij,bjk->bki", t, u),
                                      np.einsum("bij->b", t), np.einsum("Bij,Bjk", t, u)),
        "(f8[:, :, :], f8[:, :, :])", [(et, eu), (et[:, :0], eu)])
    add("einsum_dtypes", lambda a, v, p, q: (np.einsum("ij,j->i", a, v), np.einsum("ij->i", a),
                                             np.einsum("i,i", p, q), np.einsum("i,j->ij", p, q),
                                             np.einsum("ij,j", a, v, dtype=np.int64),
                                             np.einsum("i,i", v.astype(np.float32) + 0.5, v,
                                                       dtype=np.int8, casting="unsafe")),
        "(i1[:, :], i1[:], b1[:], b1[:])",
        [(np.full((2, 3), 100, "i1"), np.full(3, 3, "i1"), np.array([True, False]),
          np.array([False, True]))])
    add("einsum_signed_zero_and_broadcast", lambda a, b: (
        np.einsum("i,i->", a[0], a[1]), np.einsum("i,j->ij", a[0], a[1]), np.einsum("i->", a[0]),
        np.einsum("i", a[0]), np.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ikj", a, b)),
        "(f8[2, 2], f8[1, 3])",
        [(np.array([[-0.0, -0.0], [1.0, 1.0]]), np.array([[1.0, -2.0, 0.5]]))])
    ra, rb = r.random((7, 9)) + 0.5, r.random((9, 5)) + 0.5
    # dot_general sums in another order than NumPy's (the CPU's BLAS kernel's): two
    # orders of 9 positive products differ by at most 8 roundings of the sum plus one
    # per product, within 16 ulps. Terms of both signs would make the ulps of the
    # result unbounded (a near-cancelling sum), so the data are positive.
    add("einsum_random_matmul", lambda a, b: np.einsum("ij,jk->ik", a, b), "(f8[:, :], f8[:, :])",
        [(ra, rb)], ulps=16)
    # np.cross: 2- and 3-vectors, axes
    c3, d3, c2 = r.standard_normal((5, 3)), r.standard_normal((5, 3)), r.standard_normal((5, 2))
    add("cross", lambda a, b, c, u: (np.cross(a, b), np.cross(a, c), np.cross(c, a),
                                     np.cross(c, c), np.cross(u, b), np.cross(c, u),
                                     np.cross(a.T, b.T, axisa=0, axisb=0, axisc=0),
                                     np.cross(a.T, b.T, axis=0)),
        "(f8[:, 3], f8[:, 3], f8[:, 2], f8[3])",
        [(c3, d3, c2, d3[0]), (c3[:1], d3[:1], c2[:1], c3[0]),
         (c3[:0], d3[:0], c2[:0], np.array([np.inf, -0.0, np.nan]))])
    add("cross_open_length", lambda a, b: np.cross(a, b), "(f8[:, :], f8[:, :])",
        [(c3, d3), (c3[:0], d3[:0])])  # taken as 3-vectors, checked at run time
    add("cross_int8_wraps", lambda a, b: np.cross(a, b), "(i1[3], i1[3])",
        [(np.array([1, 2, 3], "i1"), np.array([100, 100, 100], "i1"))])
    # np.polyval: Horner, with NumPy's dtypes (0 * inf makes NaN, ints wrap)
    pv = np.array([1.5, -2.0, 0.5, 3.0])
    px = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5])
    add("polyval", lambda p, x: (np.polyval(p, x), np.polyval(p[:1], x), np.polyval(p[:0], x),
                                 np.polyval([1.0, 2.0], x), np.polyval(p, 2.0)),
        "(f8[:], f8[:])", [(pv, px), (pv[::-1], px[:1]), (pv, px[:0]), (pv[:0], px)])
    add("polyval_dtypes", lambda p, x, q, k: (np.polyval(p, x), np.polyval(p, x[0]),
                                              np.polyval(q, k), np.polyval(q, x)),
        "(f8[4], i4[:], i8[:], i8[:])", [(pv, np.array([1, -2, 3], "i4"), np.array([3, 1, 2**62]),
                                          np.array([1, 5, 2**40]))])
    add("polyval_long_loop", lambda p, x: np.polyval(p, x), "(f4[40], f4[:])",
        [(r.standard_normal(40).astype("f4"), np.array([0.5, -0.7, 1.01], "f4"))])
    # np.bincount with a build-time or argument minlength
    bx = np.array([0, 1, 1, 3, 2, 1, 7])
    bw = np.array([0.5, 1.0, -2.0, 3.0, -0.0, 0.25, 1e10])
    add("bincount", lambda x, w, n: (np.bincount(x, minlength=8), np.bincount(x, w, minlength=10),
                                     np.bincount(x[:0], minlength=3),
                                     np.bincount(x > 1, minlength=2),
                                     np.bincount(x, np.arange(x.shape[0], dtype=np.int32),
                                                 minlength=n)),
        "(i8[:], f8[:], i8)", [(bx, bw, np.int64(9)), (bx[:1], bw[:1], np.int64(1))])
    # computed at the top level from the arguments: NumPy's length, max + 1, before the run
    add("bincount_computed", lambda x, w: (np.bincount(x // 2), np.bincount(x // 2, w),
                                           np.bincount((w * 3).astype(np.int64) % 5),
                                           np.bincount(x[::-1] + 1, minlength=3)),
        "(i8[:], f8[:])", [(bx, np.abs(bw)), (bx[:1], bw[:1])])
    add("bincount_computed_empty", lambda x: np.bincount(x // 2), "(i8[:])", [(bx[:0],)])
    add("bincount_uint8", lambda x: np.bincount(x, minlength=256), "(u1[:])",
        [(np.arange(300).astype("u1"),)])
    # np.histogram: NumPy's edges, indices and closed last bin, bit for bit
    hd = r.standard_normal(200)
    add("histogram", lambda a: (*np.histogram(a), *np.histogram(a, 7, range=(-1, 1)),
                                *np.histogram(a, 3, range=(0.5, 0.5)), *np.histogram(a[:1], 4),
                                *np.histogram(a, bins=5, density=True),
                                *np.histogram(a, [-1.0, 0.0, 0.5, 3.0])),
        "(f8[:])", [(hd,), (hd[:0],), (np.array([1.0, 2.0, 2.0, 3.0]),)])
    add("histogram_float32", lambda a: (*np.histogram(a, 7, range=(-1, 1)), *np.histogram(a, 3),
                                        *np.histogram(a[:0], 2)),
        "(f4[:])", [(hd.astype("f4"),), (np.array([0.1, 0.2], "f4"),)])
    add("histogram_weights", lambda a, w: (*np.histogram(a, 6, weights=w),
                                           *np.histogram(a, 6, weights=w, range=(-1.0, 2.0)),
                                           *np.histogram(a, 4, weights=w.astype(np.int32))),
        "(f8[:], f8[:])", [(hd, np.round(hd * 10))])
    add("histogram_integers", lambda a, b, u: (*np.histogram(a, 5),
                                               *np.histogram(a, 4, range=(2, 9)),
                                               *np.histogram(a, 3, range=(3, 3)),
                                               *np.histogram(b, 5), *np.histogram(u, 4)),
        "(i8[:], i1[:], b1[:])", [(np.array([3, 3, 5, 9, -2, 3]), np.array([-128, 127, 0], "i1"),
                                   np.array([True, False, True])),
                                  (np.array([3, 3, 3]), np.array([5], "i1"), np.array([True]))])
    add("histogram_edges_and_runtime_range", lambda a, e, lo, hi: (
        *np.histogram(a, e), *np.histogram(a, e, density=True),
        *np.histogram(a, 4, range=(lo, hi)), *np.histogram(a, 4, range=(lo, lo))),
        "(f8[:], f8[:], f8, f8)",
        [(np.array([0.0, 0.2, 0.5, 0.5, 1.0, 1.5, np.nan, -1.0]), np.array([0.0, 0.5, 0.5, 1.0]),
          np.float64(-0.5), np.float64(1.25)), (hd, np.array([-1.0, 1.0]), np.float64(0.25),
                                                np.float64(0.75))])

    # Python's math on traced scalars: NumPy's ufuncs in float64, Python's result types
    def math_exact(x, y):
        return (math.sqrt(x), math.floor(x), math.ceil(-x), math.trunc(x), math.fabs(y),
                math.copysign(x, y), math.isnan(x), math.isinf(y), math.isfinite(x),
                math.fmod(x, y), math.fmod(y, x), math.degrees(x), math.radians(y), math.pi * x,
                math.sqrt(4.0), y * math.floor(x))

    def math_transcendental(x, y):
        return (math.exp(x), math.log(x), math.log(x, 2.0), math.log10(x), math.log2(x),
                math.log1p(x), math.expm1(x), math.sin(x), math.cos(x), math.tan(x),
                math.asin(x / 4), math.acos(x / 4), math.atan(x), math.atan2(x, y), math.sinh(x),
                math.cosh(x), math.tanh(x), math.hypot(x, y), math.pow(x, y))

    pairs = [(2.5, -1.5), (0.5, 3.0), (1e-300, 7.0), (0.9, 1e300), (3.75, -1e-310)]
    add("math_exact", math_exact, "(f8, f8)", [(np.float64(a), np.float64(b)) for a, b in pairs])
    add("math_transcendental", math_transcendental, "(f8, f8)",
        [(np.float64(a), np.float64(b)) for a, b in pairs], ulps=TRANSCENDENTAL_ULPS)
    add("math_special_values", lambda x: (math.sqrt(x), math.fabs(x), math.copysign(1.0, x),
                                          math.isinf(x), math.isnan(x),
                                          math.atan(x), math.hypot(x, 2.0)),
        "(f8)", [(np.float64(-0.0),), (np.float64(np.inf),), (np.float64(np.nan),)],
        ulps=TRANSCENDENTAL_ULPS)
    add("math_on_float32_and_ints", lambda x, n, v: (math.sqrt(x), math.floor(x), math.exp(x),
                                                     math.fmod(x, 0.75), math.floor(n),
                                                     math.sqrt(n),
                                                     v * math.sqrt(x), math.isnan(n)),
        "(f4, i8, f4[:])", [(np.float32(2.5), np.int64(2**62 + 1), np.arange(3, dtype="f4")),
                            (np.float32(0.1), np.int64(7), np.zeros(0, "f4"))],
        ulps=TRANSCENDENTAL_ULPS)
    add("math_isclose", lambda x, y: (math.isclose(x, y), math.isclose(x, y, rel_tol=1e-3),
                                      math.isclose(x, y, abs_tol=0.5), math.isclose(x, x),
                                      math.isclose(x, math.inf)),
        "(f8, f8)", [(np.float64(a), np.float64(b)) for a, b in
                     [(1.0, 1.0 + 1e-10), (1.0, 1.0001), (0.0, 0.3), (np.inf, np.inf),
                      (np.nan, 1.0), (-1.0, 1.0), (np.inf, -np.inf)]])
    return c


EXTENDED_CASES += _more_functions_cases()


def _sorting_cases() -> list[Case]:
    """np.sort, np.argsort (stable: exactly NumPy's kind='stable'; other kinds: the values
    they put in order), .sort() in place, np.unique, np.median, np.percentile/quantile,
    np.partition/argpartition (sorted rows are one valid partition: cases compare what
    any partition must give) at every dtype, on edge values and layouts."""
    c: list[Case] = []
    r = np.random.default_rng(23)

    def add(name, fn, sig, inputs, tags=("extended",)):
        c.append(Case(name, fn, sig, inputs, 0, set(tags)))

    def layouts(a):  # contiguous, reversed, strided, empty, one element
        return [(a,), (a[::-1],), (a[::3],), (a[:0],), (a[:1],)]

    special = np.array([3.0, -0.0, np.nan, 0.0, -np.inf, 1.5, -0.0, np.inf, np.nan, -2.5, 0.0,
                        1.5, 5e-324, -5e-324, np.finfo("f8").max, -np.finfo("f8").max, 0.0])
    payload = special.copy()
    payload.view(np.uint64)[2] = 0x7FF8_0000_0000_0123  # NaN payloads and a negative NaN
    payload.view(np.uint64)[8] = 0xFFF8_0000_0000_0000
    many = r.standard_normal(400)
    many[::7] = np.round(many[::7])  # ties
    many[::13] = np.nan
    many[::17] = -0.0
    floats = [(special,), (payload,), (many,), (many[::-2],), (special[:0],), (special[:1],),
              (np.full(40, 2.5),), (np.sort(many),), (np.sort(many)[::-1],),
              (np.zeros(30) * np.array([1.0, -1.0] * 15),)]

    def stable(x):
        return (np.sort(x, kind="stable"), np.argsort(x, kind="stable"),
                np.sort(x, kind="mergesort"), np.argsort(x, stable=True))

    add("sort_stable_float64", stable, "(f8[:])", floats)
    with np.errstate(over="ignore"):  # float64's max is float32's inf
        add("sort_stable_float32", stable, "(f4[:])", [(a.astype("f4"),) for (a,) in floats])
    # NumPy's unstable kinds order equal elements (and -0.0/0.0) as they happen to fall,
    # so argsort is checked through the values it orders, and zero signs are not compared.
    add("sort_default_kinds", lambda x: (np.sort(x), x[np.argsort(x)], np.sort(x, kind="quick"),
                                         np.sort(x, kind="heapsort"), x[np.argsort(x, axis=None)]),
        "(f8[:])", floats, tags=("extended", "zero_sign_unspecified"))
    for dtype in [np.dtype(d) for d in ("?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8")]:
        if dtype.kind == "b":
            values = r.integers(0, 2, 300).astype(bool)
        else:
            info = np.iinfo(dtype)
            extremes = np.array([info.max, info.min, 0, 1, info.max, info.min + 1, 7], dtype)
            values = np.concatenate([extremes, r.integers(info.min, info.max, 150, dtype,
                                                          endpoint=True),
                                     r.integers(0, 5, 150).astype(dtype)])
        code = CODE[dtype]
        add(f"sort_{code}", lambda x: (np.sort(x), np.argsort(x, kind="stable"),
                                       x[np.argsort(x)], np.sort(x, axis=None)),
            f"({code}[:])", layouts(values) + [(np.full(20, values[0]),)])
    grid = np.round(r.standard_normal((5, 7)), 1)
    grid[1, 2], grid[3, 0], grid[0, 0] = np.nan, -0.0, 0.0
    grids = [(grid,), (grid.T,), (grid[::-1, ::2],), (np.asfortranarray(grid),), (grid[:0],),
             (grid[:, :1],)]
    add("sort_2d_each_axis", lambda x: (np.sort(x, axis=0, kind="stable"),
                                        np.sort(x, axis=1, kind="stable"),
                                        np.sort(x, axis=None, kind="stable"),
                                        np.argsort(x, axis=0, kind="stable"),
                                        np.argsort(x, axis=-1, kind="stable"), x.argsort(axis=0,
                                                                                   kind="stable")),
        "(f8[:, :])", grids)
    add("sort_3d_middle_axis", lambda x: (np.sort(x, axis=1, kind="stable"),
                                          np.argsort(x, axis=1, kind="stable")),
        "(i4[:, :, :])", [(r.integers(-3, 3, (3, 4, 5)).astype("i4"),),
                          (r.integers(-3, 3, (2, 0, 3)).astype("i4"),)])

    def sort_in_place(x, y):
        x.sort(kind="stable")
        y.sort(axis=0)
        v = y[:, ::2]
        v.sort()  # a write through a view of the argument
        return x, y

    add("sort_method_in_place", sort_in_place, "(f8[:], i8[:, :])",
        [(many.copy(), r.integers(-9, 9, (4, 6))), (special.copy(), r.integers(-9, 9, (1, 3)))],
        tags=("writes",))

    def uniques(x):
        values, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                                   return_counts=True)
        return (np.unique(x), values, index, inverse, counts, np.unique(x, return_counts=True)[1],
                np.unique(x, equal_nan=False), np.unique(x, sorted=False))

    add("unique_float64", uniques, "(f8[:])", floats, tags=("extended", "zero_sign_unspecified"))
    add("unique_int_and_bool", lambda x, b: (*np.unique(x, return_inverse=True,
                                                        return_counts=True),
                                             *np.unique(b, return_index=True)),
        "(i8[:], b1[:])", [(np.array([5, -2**63, 5, 2**63 - 1, 0, 5, -1]),
                            np.array([True, False, True])),
                           (np.zeros(0, "i8"), np.zeros(0, bool)),
                           (np.full(9, 7), np.ones(4, bool))])
    add("unique_2d_inverse_shape", lambda x: np.unique(x, return_inverse=True), "(u2[:, :])",
        [(r.integers(0, 4, (3, 5)).astype("u2"),), (r.integers(0, 4, (3, 5)).astype("u2").T,)])
    medians = [(grid,), (grid.T,), (np.abs(grid),), (grid[:, :1],), (grid[:0],),
               (np.array([[-0.0, -0.0], [np.inf, -np.inf]]),), (np.array([[1e308, 1e308]]),)]
    add("median", lambda x: (np.median(x), np.median(x, axis=0), np.median(x, axis=1),
                             np.median(x, axis=-1, keepdims=True), np.median(x, axis=(0, 1)),
                             np.median(x, keepdims=True)),
        "(f8[:, :])", medians)
    add("median_int_and_float32", lambda i, f: (np.median(i), np.median(i[1:]), np.median(f),
                                                np.median(f[::2]), np.median(i > 0)),
        "(i8[:], f4[:])", [(np.array([2**63 - 1, 2**63 - 1, 5, -3]), np.float32([1, 2, 4, 3])),
                           (np.array([7]), np.float32([np.nan, 1]))])
    quants = [(np.abs(grid),), (grid,), (grid.T,), (grid[:, :1],),
              (np.array([[1.0, np.inf, -np.inf, 3.0]]),)]
    add("percentile_quantile", lambda x: (np.percentile(x, 50), np.percentile(x, [10, 37.5, 90]),
                                          np.quantile(x, 0.3, axis=0), np.quantile(x, 1),
                                          np.quantile(x, [0, 1]), np.percentile(x, 100, axis=1),
                                          np.quantile(x, 0.25, axis=1, keepdims=True),
                                          np.quantile(x, [0.5, 0.75], axis=0, keepdims=True)),
        "(f8[:, :])", quants)
    add("quantile_dtypes", lambda f, i, q: (np.quantile(f, 0.3), np.quantile(f, [0.3]),
                                            np.quantile(f, q), np.percentile(i, 40),
                                            np.quantile(i, 1), np.quantile(i, [0.5, 0.9]),
                                            np.percentile(f, q * 100)),
        "(f4[:], i2[:], f8)", [(np.float32([1, 2, 3.5, 7, -1]), np.int16([5, -32768, 32767, 0]),
                                np.float64(0.71)),
                               (np.float32([5]), np.int16([3]), np.float64(0.0))])
    add("partition_property", lambda x: (np.partition(x, 3)[3], np.partition(x, [1, -2])[1],
                                         np.partition(x, -2)[-2],
                                         np.sort(np.partition(x, 4)[:4]),
                                         x[np.argpartition(x, 2)][2],
                                         np.sort(np.partition(x[None], 1, axis=1)[0, 1:])),
        "(i8[:])", [(r.integers(-20, 20, 9),), (np.array([5, 5, 5, 1, 9, 9, 0]),)])
    return c


EXTENDED_CASES += _sorting_cases()

from numpy_cases_complex import COMPLEX_CASES  # noqa: E402  (after the cases it extends)

EXTENDED_CASES += COMPLEX_CASES


def _index_and_ufunc_method_cases() -> list[Case]:
    """unravel_index/ravel_multi_index, the triangle and diagonal indices, ufunc methods
    (reduce, accumulate, outer), column_stack/dstack, isin, diag/diagonal/fill_diagonal
    and gradient: exact integer and selection arithmetic, compared bit for bit."""
    c: list[Case] = []
    r = np.random.default_rng(31)

    def add(name, fn, sig, inputs, ulps=0, tags=("extended",)):
        c.append(Case(name, fn, sig, inputs, ulps, set(tags)))

    flat = np.array([0, 5, 11, 7, 3, 3])
    add("unravel_index", lambda i, n: (*np.unravel_index(i, (3, 4)),
                                       *np.unravel_index(i, (3, 4), order="F"),
                                       *np.unravel_index(7, (n, 4)),
                                       *np.unravel_index(i[:1], (n, 2, 2)),
                                       *np.unravel_index(i[None, :], (12,)),
                                       *np.unravel_index(np.int64(0), (1, 1))),
        "(i8[:], i8)", [(flat, np.int64(3)), (flat[:0], np.int64(2)), (flat[::-2], np.int64(6))])
    add("ravel_multi_index", lambda x, i, j: (np.ravel_multi_index((i, j), x.shape),
                                              np.ravel_multi_index((i, j), (5, 7), order="F"),
                                              np.ravel_multi_index((i, j + 20), (3, 4),
                                                                   mode="wrap"),
                                              np.ravel_multi_index((i - 5, j), (3, 4),
                                                                   mode=("clip", "raise")),
                                              np.ravel_multi_index((i[0], 2), (3, 4)),
                                              np.ravel_multi_index(np.stack([i, j]), (3, 4))),
        "(f8[:, :], i4[:], i8[:])",
        [(np.zeros((3, 4)), np.array([0, 2, 1], "i4"), np.array([3, 0, 2])),
         (np.zeros((3, 5)), np.array([2], "i4"), np.array([3]))])
    add("triangle_indices", lambda x, n, k: (*np.triu_indices(n), *np.tril_indices(n, -1),
                                             *np.triu_indices(n, k, 5), *np.tril_indices(n, k),
                                             *np.diag_indices(n), *np.diag_indices(2, 3),
                                             *np.triu_indices(4, 1), *np.triu_indices_from(x),
                                             *np.tril_indices_from(x, 1),
                                             *np.diag_indices_from(x[:2, :2])),
        "(f8[:, :], i8, i8)", [(np.zeros((3, 4)), np.int64(4), np.int64(1)),
                               (np.zeros((2, 2)), np.int64(0), np.int64(-2)),
                               (np.zeros((2, 3)), np.int64(1), np.int64(3))])
    # add.reduce sums pairwise in another order than NumPy's: rounding only
    fv = np.array([3.0, -1.0, np.nan, 7.0, -0.0, 2.5, np.inf, 0.0])
    add("ufunc_methods_float", lambda x: (np.maximum.accumulate(x), np.minimum.accumulate(x),
                                          np.add.accumulate(x), np.multiply.accumulate(x),
                                          np.subtract.accumulate(x), np.fmax.accumulate(x),
                                          np.add.reduce(x), np.maximum.reduce(x[:1]),
                                          np.fmin.reduce(x[:1]), np.subtract.reduce(x[:1]),
                                          np.subtract.outer(x, x[:3]),
                                          np.multiply.outer(x, 2.0),
                                          np.maximum.reduce([x[0], x[-1], 2.0]),
                                          np.add.outer([x[0], 1.0], x)),
        "(f8[:])", [(fv,), (fv[::-1],), (fv[1:2],), (r.standard_normal(40),)], ulps=16)
    add("ufunc_methods_empty", lambda x: (np.maximum.accumulate(x), np.add.reduce(x),
                                          np.multiply.reduce(x), np.logical_or.reduce(x),
                                          np.subtract.accumulate(x), np.power.outer(x, x)),
        "(f8[:])", [(fv[:0],), (fv[2:3],)])
    m = r.integers(-9, 9, (3, 4)).astype(float)
    # (no np.power.reduce here: NumPy's own result changes with the layout of the input)
    add("ufunc_methods_axes", lambda x: (np.maximum.accumulate(x, axis=1),
                                         np.minimum.accumulate(x), np.add.reduce(x, axis=1),
                                         np.add.reduce(x, axis=1, keepdims=True),
                                         np.subtract.reduce(x, axis=1),
                                         np.maximum.outer(x[0], x[:, 0]),
                                         np.logical_xor.reduce(x, axis=1),
                                         np.add.accumulate(x, axis=-1),
                                         np.add.reduce(x, axis=None), np.minimum.reduce(x, 1),
                                         np.subtract.reduce(x, axis=0, keepdims=True),
                                         np.subtract.reduce(x, axis=()),
                                         np.subtract.reduce(x, axis=(1,))),
        "(f8[:, :])", [(m,), (m.T,), (m[::-1, ::2],), (m[:1],)])
    iv = np.array([100, 100, -3, 27, 127], "i1")
    add("ufunc_methods_int8", lambda x: (np.add.accumulate(x), np.maximum.accumulate(x),
                                         np.multiply.reduce(x), np.subtract.accumulate(x),
                                         np.add.outer(x, x), np.bitwise_or.reduce(x),
                                         np.bitwise_xor.accumulate(x), np.add.reduce(x),
                                         np.minimum.reduce(x), np.left_shift.outer(x, x[:2])),
        "(i1[:])", [(iv,), (iv[::-1],), (iv[:1],)])
    add("ufunc_methods_bool", lambda b: (np.logical_and.accumulate(b), np.logical_or.reduce(b),
                                         np.logical_xor.reduce(b), np.equal.reduce(b),
                                         np.add.accumulate(b), np.logical_and.outer(b, b)),
        "(b1[:])", [(np.array([True, True, False, True]),), (np.array([True]),)])
    # joining
    jv = np.array([1.0, -2.0, 3.5])
    add("column_stack_dstack", lambda x, v: (np.column_stack([v, v]),
                                             np.column_stack((x, v)), np.dstack([v, v]),
                                             np.dstack([x, x]), np.dstack((x[0, 0], x[1, 1])),
                                             np.atleast_3d(v), np.atleast_3d(x),
                                             np.atleast_3d(v[0]), np.column_stack([v[0], v[1]]),
                                             np.column_stack([v.astype(np.int32), v])),
        "(f8[:, :], f8[:])", [(M[:3, :3], jv), (M.T[:3, :5], jv), (M[:2, :2], jv[:2])])
    add("isin_membership", lambda x, v, i: (np.isin(x, v), np.isin(x, [1.0, 5.0], invert=True),
                                 np.isin(v, v[:0]), np.isin(3.5, v), np.isin(i, v),
                                 np.isin(v, i, invert=True), np.isin(x, np.nan)),
        "(f8[:, :], f8[:], i8[:])",
        [(np.arange(12.0).reshape(3, 4), np.array([1.0, 5.0, np.nan, 3.5, 11.0]),
          np.array([1, 2, 3])),
         (np.array([[np.nan, -0.0]]), np.array([0.0, np.nan]), np.zeros(0, "i8")),
         (np.zeros((0, 2)), np.zeros(0), np.array([7]))])
    # diagonals
    add("diag_diagonal", lambda x, v: (np.diag(v), np.diag(v, 1), np.diag(v, -2), np.diag(x),
                                       np.diag(x, 1), np.diag(x, -2), np.diagonal(x),
                                       np.diagonal(x, 2), np.diagonal(x, -5), x.diagonal(-1),
                                       np.diag(x, 7), np.diag(v > 0), np.diag(v, 0)),
        "(f8[:, :], f8[:])", [(m,) + (jv,) for m in MATS] + [(M[:0], jv[:0]), (M[:1, :1], jv[:1])])
    add("diagonal_stack", lambda x: (np.diagonal(x), np.diagonal(x, 1, 1, 2),
                                     np.diagonal(x, -1, axis1=2, axis2=0)),
        "(i4[:, :, :])", [(np.arange(24, dtype="i4").reshape(2, 3, 4),),
                          (np.zeros((2, 0, 3), "i4"),)])

    def fill(a, b, v):
        np.fill_diagonal(a, v)
        np.fill_diagonal(b, 7, wrap=True)
        np.fill_diagonal(b[:2], -1.5)
        return a, b

    add("fill_diagonal", fill, "(f8[:, :], i4[:, :], f8[:])",
        [(np.zeros((4, 3)), np.zeros((7, 3), "i4"), jv[:2]),
         (np.zeros((2, 5)), np.zeros((2, 2), "i4"), jv),
         (np.zeros((0, 3)), np.zeros((5, 1), "i4"), jv[:1])], tags=("writes",))

    def fill_cube(c):
        np.fill_diagonal(c, 2.0)
        return c

    add("fill_diagonal_cube", fill_cube, "(f4[:, :, :])", [(np.ones((3, 3, 3), "f4"),)],
        tags=("writes",))
    gv = np.array([1.0, 4.0, 9.0, 16.0, 30.0, -0.0, np.inf])
    add("gradient", lambda v, w: (np.gradient(v), np.gradient(v, 0.5), np.gradient(v, 3),
                                  np.gradient(v, edge_order=2), np.gradient(w),
                                  np.gradient(w.astype(np.float32), 2.0),
                                  np.gradient(w.astype(np.float32), np.float64(0.1)),
                                  np.gradient(v[:3], edge_order=2)),
        "(f8[:], i8[:])", [(gv, np.array([1, 3, 2])), (gv[::-1], np.array([5, -2**40, 3, 7])),
                           (gv[1:4], np.array([0, 9, 2]))])
    add("gradient_2d", lambda x, h: (*np.gradient(x), np.gradient(x, axis=1),
                                     *np.gradient(x, h, 2.0), *np.gradient(x, axis=(1, 0)),
                                     np.gradient(x, h, axis=0, edge_order=2)),
        "(f8[:, :], f8)", [(m ** 2, np.float64(0.25)), (m.T, np.float64(-2.0))])
    return c


EXTENDED_CASES += _index_and_ufunc_method_cases()


def _composite_function_cases() -> list[Case]:
    """logaddexp/logaddexp2/heaviside/sinc/nan_to_num, select, digitize, ix_,
    matrix_power, ufunc.at, .fill and .item. logaddexp, logaddexp2 and sinc are an exp
    (or sin) and a log1p (or a division) of it, each within TRANSCENDENTAL_ULPS of glibc
    on every target (tests/codegen), and their sum moves at most one more ulp: so
    TRANSCENDENTAL_ULPS + 1 for them; the others select, count or multiply exactly and
    compare bit for bit."""
    c: list[Case] = []
    r = np.random.default_rng(43)

    def add(name, fn, sig, inputs, ulps=0, tags=("extended",)):
        c.append(Case(name, fn, sig, inputs, ulps, set(tags)))

    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -700.0, 700.0, 1e-300, np.inf, -np.inf,
                        np.nan, 1e308, -2.5, 40.0])
    xs, ys = np.repeat(special, special.size), np.tile(special, special.size)
    add("logaddexp", lambda x, y: (np.logaddexp(x, y), np.logaddexp2(x, y),
                                   np.logaddexp(x.astype(np.float32), 1.5)),
        "(f8[:], f8[:])", [(xs, ys), (r.standard_normal(9) * 30, r.standard_normal(9))],
        ulps=TRANSCENDENTAL_ULPS + 1)
    add("heaviside", lambda x, y: (np.heaviside(x, y), np.heaviside(x, 0.5),
                                   np.heaviside(x.astype(np.float32), np.float32(2.0))),
        "(f8[:], f8[:])", [(xs, ys)])
    add("sinc", lambda x, n: (np.sinc(x), np.sinc(n), np.sinc(x.astype(np.float32))),
        "(f8[:], i8[:])", [(special, np.arange(-3, 4)), (r.standard_normal(7) * 5, IV)],
        ulps=TRANSCENDENTAL_ULPS + 1)
    zs = np.array([complex(np.nan, np.inf), complex(-0.0, np.nan), 1 + 2j, complex(-np.inf, 0)])
    add("nan_to_num", lambda x, z, n: (np.nan_to_num(x), np.nan_to_num(x, nan=-1.0, posinf=5),
                                       np.nan_to_num(x.astype(np.float32), neginf=-3.0),
                                       np.nan_to_num(z, nan=2.0), np.nan_to_num(n)),
        "(f8[:], c16[:], i8[:])", [(special, zs, IV)])
    add("select", lambda x, k: (np.select([x < -1, x < 1], [x * 2, x ** 2], default=-7.0),
                                np.select([x > 0], [k]),
                                np.select([x > 0, k > 0], [x.astype(np.float32), 1.5]),
                                np.select([x[:, None] > 0, k[None, :2] > 0], [1, 2], 9)),
        "(f8[:], i8[:])", [(V[:9], IV), (V[:0], IV[:0])])
    edges, falling = np.array([-1.0, 0.0, 0.0, 2.5]), np.array([3.0, 1.0, 1.0, -2.0])
    add("digitize", lambda x, e, f: (np.digitize(x, e), np.digitize(x, e, right=True),
                                     np.digitize(x, f), np.digitize(x, f, right=True),
                                     np.digitize(x, e[:1]), np.digitize(x, e[:0])),
        "(f8[:], f8[:], f8[:])",
        [(np.array([-3.0, -1.0, 0.0, 1.0, 2.5, 9.0, np.nan, -0.0]), edges, falling)])
    mat = r.standard_normal((4, 4))
    add("ix_", lambda m, i, b: (m[np.ix_(i, i)], m[np.ix_(b, i[:2])], np.ix_(i, b)[1]),
        "(f8[:, :], i8[:], b1[:])",
        [(mat, np.array([3, 0, -1]), np.array([True, False, True, True]))])

    def ix_write(m, i):
        m[np.ix_(i, i)] = -1.0
        return m

    add("ix_write", ix_write, "(f8[:, :], i8[:])", [(mat.copy(), np.array([0, 2]))],
        tags=("writes",))
    add("matrix_power", lambda m, k, n: (np.linalg.matrix_power(m, 0),
                                         np.linalg.matrix_power(m, 1),
                                         np.linalg.matrix_power(m, 5),
                                         np.linalg.matrix_power(k, 3),
                                         np.linalg.matrix_power(k, n)),
        "(f8[:, :], i8[:, :], i8)", [(mat, np.array([[1, 2], [3, 4]]), np.int64(6)),
                                     (mat[:0, :0], np.eye(3, dtype=np.int64), np.int64(0))],
        ulps=64)

    def at(a, i, w, k):
        np.add.at(a, i, w)
        np.maximum.at(a, i[:2], 0.5)
        np.negative.at(a, 0)
        np.multiply.at(k, i, 3)
        return a, k

    add("ufunc_at", at, "(f8[:], i8[:], f8[:], i8[:])",
        [(np.zeros(5), np.array([1, 1, -1, 3]), np.array([1.0, 2.0, 4.0, 8.0]),
          np.arange(1, 6))], tags=("writes",))

    def fill_item(a, n):
        b = a.copy()
        b.fill(n)
        return b, a[1:2].item(), a.item(0), b[:1, None].item()

    add("fill_item", fill_item, "(f8[:], i8)", [(V, np.int64(-3))])
    return c


EXTENDED_CASES += _composite_function_cases()


def _more_composite_cases() -> list[Case]:
    """correlate, the nan-functions, kron, tensordot, tri, fix, logspace, geomspace,
    ediff1d, append, cov and corrcoef. Sums of products and variances round in another
    order than NumPy's (pairwise against BLAS or sequential), so those compare within
    64 ulps of |terms| (as the other products here); logspace/geomspace are a power or
    log10 of NumPy's own linspace: TRANSCENDENTAL_ULPS + 1; the rest is exact."""
    c: list[Case] = []
    r = np.random.default_rng(47)

    def add(name, fn, sig, inputs, ulps=0, tags=("extended",)):
        c.append(Case(name, fn, sig, inputs, ulps, set(tags)))

    a5, v3, v7 = r.standard_normal(5), r.standard_normal(3), r.standard_normal(7)
    add("correlate", lambda a, v: (np.correlate(a, v), np.correlate(a, v, "same"),
                                   np.correlate(a, v, "full"), np.correlate(v, a, "same"),
                                   np.correlate(a[:2], v, "same")),
        "(f8[:], f8[:])", [(a5, v3), (a5[:4], v7), (v3, v3), (a5[:1], v7)], ulps=64)
    add("correlate_complex", lambda a, v: np.correlate(a, v * 1j + v[::-1], "full"),
        "(c16[:], f8[:])", [(a5 + 2j * a5[::-1], v3)], ulps=64)
    nv = np.array([1.0, np.nan, 3.0, -2.0, np.nan, 0.5])
    nm = np.array([[1.0, np.nan, 2.0], [np.nan, 4.0, -1.0], [0.5, 0.25, np.nan]])
    add("nanfunctions", lambda x, m, k: (np.nanprod(x), np.nancumsum(x), np.nancumprod(x),
                                         np.nanvar(x), np.nanstd(x, ddof=1),
                                         np.nanvar(m, axis=0), np.nanvar(m, axis=1, ddof=2),
                                         np.nanargmax(x), np.nanargmin(m, axis=1),
                                         np.nanprod(m, axis=0, keepdims=True),
                                         np.nancumsum(k), np.nanvar(k), np.nanargmax(k),
                                         np.nanstd(x.astype(np.float32))),
        "(f8[:], f8[:, :], i8[:])", [(nv, nm, IV)], ulps=16)
    add("kron", lambda a, b, v: (np.kron(a, b), np.kron(v, a), np.kron(v, v[:2]),
                                 np.kron(a.astype(np.int64), b)),
        "(f8[:, :], f8[:, :], f8[:])", [(r.standard_normal((2, 3)), r.standard_normal((3, 2)),
                                          v3)])
    t1, t2 = r.standard_normal((2, 3, 4)), r.standard_normal((3, 4, 5))
    add("tensordot", lambda a, b: (np.tensordot(a, b), np.tensordot(a[:, :, :3], b, 1),
                                   np.tensordot(a, b, axes=([1, 2], [0, 1])),
                                   np.tensordot(a, a, axes=([0], [0])), np.tensordot(a, b, 0)),
        "(f8[:, :, :], f8[:, :, :])", [(t1, t2)], ulps=64)
    add("tri", lambda n, k: (np.tri(n), np.tri(n, 3, k), np.tri(3, n, -1, dtype=np.int32)),
        "(i8, i8)", [(np.int64(4), np.int64(1)), (np.int64(0), np.int64(-2))])
    fv = np.array([-2.5, -0.5, -0.0, 0.0, 0.5, 2.7, np.nan, np.inf, -np.inf, 1e300])
    add("fix", lambda x, k: (np.fix(x), np.fix(x.astype(np.float32)), np.fix(k)),
        "(f8[:], i8[:])", [(fv, IV)])
    add("logspace", lambda a, b, n: (np.logspace(a, b, n), np.logspace(a, b, 7, base=2.0),
                                     np.logspace(0.0, 3.0, 4, endpoint=False),
                                     np.geomspace(1.0, 1000.0, 4), np.geomspace(a + 5, b + 9, n),
                                     np.geomspace(-1.0, -64.0, 7, endpoint=False)),
        "(f8, f8, i8)", [(np.float64(-1.0), np.float64(2.0), np.int64(5)),
                         (np.float64(0.5), np.float64(0.25), np.int64(1))],
        ulps=TRANSCENDENTAL_ULPS + 1)
    add("ediff1d_append", lambda x, m: (np.ediff1d(x), np.ediff1d(m, to_begin=-1.0),
                                        np.ediff1d(x, to_end=[7, 8], to_begin=0),
                                        np.append(x, m), np.append(m, m[:1], axis=0),
                                        np.append(x, 2.5)),
        "(f8[:], f8[:, :])", [(V, M), (V[:1], M[:1])])
    cm = r.standard_normal((3, 6))
    add("cov_corrcoef", lambda m, x, y: (np.cov(m), np.cov(m, bias=True), np.cov(m, ddof=3),
                                         np.cov(m.T, rowvar=False), np.cov(x, y),
                                         np.cov(x), np.corrcoef(m), np.corrcoef(x, y),
                                         np.corrcoef(x)),
        "(f8[:, :], f8[:], f8[:])", [(cm, v7, v7[::-1] * 2 + 1)], ulps=64)
    add("delete", lambda x, m, i: (np.delete(x, i), np.delete(m, i, axis=1),
                                   np.delete(m, [0, -1], axis=0), np.delete(x, slice(1, None, 2)),
                                   np.delete(x, x > 0), np.delete(m, 2), np.delete(x, [])),
        "(f8[:], f8[:, :], i8)", [(a5, r.standard_normal((2, 4)), np.int64(1)),
                                  (v3, r.standard_normal((3, 3)), np.int64(-1))])
    fx = np.array([0.5, -2.5, 7.25, -0.0, np.inf, -np.inf, np.nan, 3.0, 1e300, -7.0])
    fy = np.array([2.0, 1.5, -2.0, 1.0, 2.0, 2.0, 1.0, 0.0, 3.0, -0.0])
    gn = np.array([12, -18, 0, 7, -7, 0, 2**40, 5, -9, 2**62])
    gm = np.array([8, 12, 5, 0, -21, 0, 6, 5, 3, 3 * 2**20])
    add("more_ufuncs", lambda x, y, n, k: (np.degrees(x), np.radians(x), np.fmod(x, y),
                                           np.fmod(n, k), *np.modf(x), np.gcd(n, k),
                                           np.lcm(n[:6], k[:6]), np.gcd(n, 6),
                                           np.fmod(x.astype(np.float32), 1.5)),
        "(f8[:], f8[:], i8[:], i8[:])", [(fx, fy, gn, gm), (fx[:0], fy[:0], gn[:0], gm[:0])])
    add("vector_ufuncs", lambda a, v, z: (np.vecdot(a, a), np.matvec(a, v), np.vecmat(v, a),
                                          np.vecdot(z, z), np.vecmat(z[:3], a)),
        "(f8[:, :], f8[:], c16[:])", [(r.standard_normal((3, 3)), v3, a5 + 1j * a5[::-1])],
        ulps=64)
    add("insert", lambda x, m, i: (np.insert(x, i, 9.5), np.insert(m, i, 7.0, axis=1),
                                   np.insert(m, 0, [1.5, 2.5, 3.5], axis=0),
                                   np.insert(x, x.shape[0], [1.0, 2.0]), np.insert(m, -1, 4),
                                   np.insert(m, i, [[1.0], [2.0], [3.0]], axis=1)),
        "(f8[:], f8[:, :], i8)", [(a5, r.standard_normal((3, 3)), np.int64(1)),
                                  (v3, r.standard_normal((3, 3)), np.int64(-3))])
    return c


EXTENDED_CASES += _more_composite_cases()


def _placing_and_float_part_cases() -> list[Case]:
    """put, putmask, place, choose, piecewise, lexsort, the ufuncs that take floats apart
    (frexp, ldexp, nextafter, spacing), histogram2d, the nan-quantiles and reduceat: all
    exact (reduceat's sums within 4 ulps: pairwise against NumPy's loop), signed zeros
    and NaN included (rows of NaN only give NaN, as NumPy's)."""
    c: list[Case] = []
    r = np.random.default_rng(53)

    def add(name, fn, sig, inputs, ulps=0, tags=("extended",)):
        c.append(Case(name, fn, sig, inputs, ulps, set(tags)))

    def placed(a, ind, v, m):
        b, d, e, f = a.copy(), a.copy(), a.copy(), a[0].copy()
        np.put(b, ind, v)
        np.putmask(d, m, v)
        np.place(e, m, v[::-1])
        np.put(f, ind, v, mode="clip")
        return b, d, e, f

    def into_arguments(a, m, ind):
        np.putmask(a, m, -1.0)
        np.place(a, ~m, [7.0, 8.0])
        np.put(a, ind, 0.5)
        np.place(a, a > 1e300, np.zeros(0))  # nothing selected: no values needed
        return a.sum()

    m34 = r.standard_normal((3, 4))
    add("put_into_arguments", into_arguments, "(f8[:, :], b1[:, :], i8[:])",
        [(m34, m34 > 0, np.array([1, -2]))])
    add("put_putmask_place", placed, "(f8[:, :], i8[:], f8[:], b1[:, :])",
        [(m34, np.array([0, 5, -1, 7, 5]), np.array([10.0, 20.0, 30.0]), m34 > 0),
         (m34[:2], np.array([-8, 3]), np.array([1.5]), np.ones((2, 4), bool))])
    x7 = np.array([-2.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0])
    add("choose_piecewise", lambda x, i: (
        np.choose(i, [x, 2 * x, -x]), np.choose(i + 5, [x, x * x], mode="wrap"),
        np.choose(i, [x, 1.5], mode="clip"),
        np.piecewise(x, [x < 0, x > 1], [lambda t: -t, lambda t: t * t, 0.5]),
        np.piecewise(x, x > 0, [np.sqrt, 7.0]),
        np.piecewise(i, [i == 0, i == 2], [lambda t: t + 10, -1])),
        "(f8[:], i8[:])", [(x7, np.array([0, 1, 2, 2, 1, 0, 1]))])
    add("lexsort", lambda a, b, k: (np.lexsort((a, b)), np.lexsort((b, a)), np.lexsort([k]),
                                    np.lexsort((k, b, a))),
        "(f8[:], i8[:], i8[:])", [(np.array([3.0, 1.0, 2.0, 2.0, 0.0, 1.0]),
                                   np.array([1, 0, 1, 0, 1, 0]), np.array([5, 5, 4, 4, 3, 3]))])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324,
                        2.2250738585072014e-308, 1.7976931348623157e308, 1.0, -1.0, 0.5,
                        3.0, 1e-310, 0.1, -7.5e-300, 6.0e299])
    exps = np.array([0, 1, -1, 5, 1074, -1074, 2000, -2000, 1, 1023, -1022, 1, -1, 3, 40,
                     -60, 10])
    toward = np.array([1.0, -1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, np.inf, 2.0, 0.0, 0.0, np.inf,
                       -1.0, 0.0, np.inf, -np.inf])
    add("float_parts", lambda x, n, y: (*np.frexp(x), np.ldexp(x, n), np.nextafter(x, y),
                                        np.spacing(x), *np.frexp(x.astype(np.float32)),
                                        np.nextafter(x.astype(np.float32), np.float32(0)),
                                        np.spacing(x.astype(np.float32)), np.ldexp(n, 3)),
        "(f8[:], i8[:], f8[:])", [(special, exps, toward),
                                  (r.standard_normal(9) * 10.0 ** r.integers(-30, 30, 9),
                                   r.integers(-60, 60, 9), r.standard_normal(9))])
    hx = r.standard_normal(40)
    hy = r.random(40) * 2
    hx[:3], hy[:3] = [1.0, -1.0, 0.5], [2.0, 0.0, 2.0]  # on the outer edges
    add("histogram2d", lambda x, y, w: (*np.histogram2d(x, y),
                                        np.histogram2d(x, y, bins=(3, 4), range=[[-1, 1], [0, 2]],
                                                       weights=w)[0],
                                        np.histogram2d(x, y, bins=[np.array([-3.0, -1.0, 0.0,
                                                                             0.5, 3.0]), 5],
                                                       density=True)[0]),
        "(f8[:], f8[:], f8[:])", [(hx, hy, r.random(40)), (hx[:0], hy[:0], hx[:0])])
    nx = np.array([3.0, np.nan, 1.0, 7.0, np.nan, -2.0, 4.0])
    nm = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [5.0, 1.0, np.nan, 0.5]])
    add("nan_quantiles", lambda x, m, z, q, n: (
        np.nanmedian(x), np.nanmedian(m, axis=1), np.nanmedian(m, axis=0, keepdims=True),
        np.nanquantile(x, 0.3), np.nanquantile(m, q, axis=1),
        np.nanpercentile(z, 40, axis=0), np.nanquantile(z, q), np.nanmedian(n),
        np.nanpercentile(n, [10, 90]), np.nanmedian(z, axis=1),
        np.nanquantile(m, 0.75, axis=0, keepdims=True)),
        "(f8[:], f8[:, :], f4[:, :], f8[:], i8[:])",
        [(nx, nm, np.array([[1.5, np.nan], [2.5, 3.0], [np.nan, np.nan]], np.float32),
          np.array([0.0, 0.25, 0.5, 1.0]), np.array([5, 1, 9, 3]))])
    add("reduceat", lambda x, m, i, b: (
        np.add.reduceat(x, i), np.maximum.reduceat(x, i), np.subtract.reduceat(x, i),
        np.multiply.reduceat(m, [0, 2], axis=1), np.add.reduceat(m, i[:2] // 2),
        np.add.reduceat(b, [0, 3])),
        "(f8[:], f8[:, :], i8[:], i1[:])",
        [(np.arange(8.0) ** 1.5, np.arange(12.0).reshape(3, 4), np.array([0, 4, 1, 5, 7]),
          np.array([100, 100, 100, 5, 6], np.int8))], ulps=4)
    return c


EXTENDED_CASES += _placing_and_float_part_cases()


def _arrangement_and_set_cases() -> list[Case]:
    """flipud/fliplr/rot90, take/put_along_axis, block, diagflat, resize,
    broadcast_arrays, matrix_transpose, concat; trapezoid, unwrap, cumulative_sum/prod,
    array_equal; the set functions and unique_*; polyder/polyint/polyadd/polysub/
    polymul. All exact (NumPy's own operations in its order), except unique_values,
    whose order NumPy leaves unspecified (a hash table's for integers): compared sorted."""
    c: list[Case] = []
    r = np.random.default_rng(59)

    def add(name, fn, sig, inputs, ulps=0, tags=("extended",)):
        c.append(Case(name, fn, sig, inputs, ulps, set(tags)))

    def along(m):
        s = np.argsort(m, axis=1)
        mm = m.copy()
        np.put_along_axis(mm, s[:, :1], -1.0, axis=1)
        return (np.take_along_axis(m, s, axis=1), mm,
                np.take_along_axis(m, np.argsort(m, axis=0)[:1], axis=0))

    m34 = r.standard_normal((3, 4))
    add("arrangements", lambda m, x: (
        np.flipud(m), np.fliplr(m), np.rot90(m), np.rot90(m, 3), np.rot90(m, -2),
        *along(m), np.block([[m, m], [m, m]]), np.block([x, x]), np.diagflat(x[:3]),
        np.diagflat(m[:2, :2], 1), np.resize(x, 7), np.resize(m, (2, 2)),
        np.broadcast_arrays(m, x[:4])[1], np.matrix_transpose(m), np.concat([x, x])),
        "(f8[:, :], f8[:])", [(m34, r.standard_normal(6))])
    x6 = np.cumsum(r.random(6))
    add("calculus", lambda x, m, y: (
        np.trapezoid(x), np.trapezoid(x, y), np.trapezoid(m, dx=0.5, axis=0),
        np.trapezoid(m, y[:4]), np.unwrap(x * 4), np.unwrap(m * 3, axis=0),
        np.cumulative_sum(x, include_initial=True), np.cumulative_prod(m, axis=1),
        np.array_equal(x, y), np.array_equal(x, x), np.array_equal(m, m[:1]),
        np.array_equal(x, x[:2])),
        "(f8[:], f8[:, :], f8[:])", [(x6, m34, np.cumsum(r.random(6)))])
    i8 = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    add("sets", lambda i, f: (
        np.intersect1d(i, i[::2] + 1), np.setdiff1d(i, i[::2]), np.union1d(i, i * 2),
        np.setxor1d(i, i[1:] + 1), np.intersect1d(f, f[2:]), *np.unique_counts(i),
        *np.unique_inverse(i), *np.unique_all(f), np.sort(np.unique_values(i))),
        "(i8[:], f8[:])", [(i8, np.array([0.5, -1.0, 0.5, 2.0, np.inf, -1.0]))])
    add("polynomials", lambda p, q: (
        np.polyder(p), np.polyder(p, 2), np.polyint(p), np.polyint(p, 2, k=[1.0, 2.0]),
        np.polyadd(p, q), np.polysub(q, p), np.polymul(p, q), np.polyder(q.astype(np.int64))),
        "(f8[:], f8[:])", [(r.standard_normal(5), r.standard_normal(3))])
    add("windows", lambda x, m: (np.hanning(len(x)), np.hamming(7), np.blackman(m),
                                 np.bartlett(x.shape[0]), np.hanning(m) * x[0]),
        "(f8[:], i8)", [(np.arange(1.0, 9.0), np.int64(12)), (np.ones(1), np.int64(0)),
                        (np.ones(2), np.int64(3))], ulps=TRANSCENDENTAL_ULPS)
    add("bessel_i0_kaiser", lambda x, m: (np.i0(x), np.kaiser(m, 14.0), np.kaiser(7, 5.0),
                                          np.i0(x.astype(np.float32)), np.i0(m)),
        "(f8[:], i8)", [(np.concatenate([np.linspace(-30, 30, 41), [0.0, 8.0, -8.0, 700.0]]),
                         np.int64(12)), (np.zeros(1), np.int64(1)), (np.ones(2), np.int64(0))],
        ulps=TRANSCENDENTAL_ULPS)
    add("vector_norm_orders", lambda x, m: (np.linalg.norm(x, 3), np.linalg.norm(x, 0),
                                           np.linalg.norm(x, -1), np.linalg.norm(m, 3, axis=1),
                                           np.linalg.norm(x.astype(np.float32), 0.5)),
        "(f8[:], f8[:, :])", [(np.array([1.0, -2.0, 0.5, 3.5]), np.arange(6.0).reshape(2, 3))],
        ulps=TRANSCENDENTAL_ULPS)
    def methods(x, m, n, y):
        out = []
        for method in ("lower", "higher", "nearest", "midpoint"):
            out += [np.percentile(x, 37, method=method),
                    np.quantile(m, [0.1, 0.5, 0.9], axis=1, method=method),
                    np.percentile(n, [25, 50], method=method),
                    np.nanpercentile(y, 37, method=method),
                    np.nanquantile(m, 0.5, axis=0, method=method)]
        return tuple(out)

    add("quantile_methods", methods, "(f8[:], f8[:, :], i8[:], f8[:])",
        [(np.array([3.0, 1.0, 7.0, -2.0, 4.0, 2.5]), np.arange(12.0).reshape(3, 4) ** 1.3,
          np.array([5, 1, 9, 3, 8]), np.array([np.nan, 3.0, 1.0, np.nan, 2.0]))],
        ulps=TRANSCENDENTAL_ULPS)
    add("multi_dot", lambda x, v, a, b, c, d: (
        np.linalg.multi_dot([x, x.T, x]), np.linalg.multi_dot([v, x, x.T, x]),
        np.linalg.multi_dot([a, b, c, d]), np.linalg.multi_dot([v, x, x[0]])),
        "(f8[:, :], f8[:], f8[3, 4], f8[4, 5], f8[5, 2], f8[2, 6])",
        [(r.standard_normal((3, 2)), r.standard_normal(3), *(r.standard_normal(s) for s in
                                                             ((3, 4), (4, 5), (5, 2), (2, 6))))],
        ulps=64)
    return c


EXTENDED_CASES += _arrangement_and_set_cases()
