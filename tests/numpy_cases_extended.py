"""Catalog cases for the wider NumPy API: creation, statistics, joining, linear algebra."""

from __future__ import annotations

import numpy as np
from numpy_cases import Case

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
