"""Catalog cases for complex numbers: promotion, arithmetic and special values, the parts
as views (read and written), functions, reductions, linear algebra, and a Mandelbrot loop.

Inputs mix finite values with signed zeros, infinite and NaN parts, huge parts (abs
must not overflow), empty and size-1 arrays and non-contiguous views. Exact unless a
tolerance is given: sums and products are ordered differently (64 ulp), dot/@/vdot are
BLAS in NumPy (64 ulp), transcendental functions are glibc's in NumPy (8 ulp), and
kernels on rank-0 values compare with NumPy's Python-scalar arithmetic, whose complex
product is unfused (2 ulp; arrays use NumPy's fused SIMD product, as aotc does).
"""

from __future__ import annotations

import numpy as np
from numpy_cases import TRANSCENDENTAL_ULPS, Case

rng = np.random.default_rng(11)


def _complex(re: np.ndarray, im: np.ndarray, dtype: str = "c16") -> np.ndarray:
    """``re + im*1j`` built exactly (``1j * inf`` has a NaN real part)."""
    z = np.zeros(np.broadcast(re, im).shape, dtype)
    z.real, z.imag = re, im
    return z


Z = rng.standard_normal(13) + 1j * rng.standard_normal(13)
W = rng.standard_normal(13) + 1j * rng.standard_normal(13)
PARTS = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e308])
SPECIAL = _complex(np.repeat(PARTS, len(PARTS)), np.tile(PARTS, len(PARTS)))
ZEROS = _complex(np.array([0.0, -0.0, 0.0, -0.0]), np.array([0.0, 0.0, -0.0, -0.0]))
VECS = [Z, Z[::-1], Z[::3], Z[:0], Z[:1]]
SORTABLE = _complex(np.array([1.0, 0.5, np.nan, -3.0, 1.0, np.nan, 1.0, -3.0, np.nan, 0.5, 1.0]),
                    np.array([2.0, -1.0, 1.0, 0.0, np.nan, np.nan, 1.0, -1.0, -2.0, np.nan, 2.0]))
M = rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))
MATS = [M, M[::-1, ::2], M.T, M[:1], np.asfortranarray(M)]


def _cases() -> list[Case]:
    c: list[Case] = []

    def add(name, fn, sig, inputs, ulps=0, tags=()):
        c.append(Case(name, fn, sig, inputs, ulps, {"extended", "complex", *tags}))

    # promotion (NEP 50: Python complex is weak) and arithmetic
    add("complex_weak_promotion", lambda x, i: (x + 1j, x * (2 - 1j), 1j / (x + 1),
                                                i + 1j, i * 1j, x + np.complex64(1j)),
        "(f4[:], i4[:])", [(Z.real.astype("f4"), np.arange(13, dtype="i4")),
                           (Z.real[:1].astype("f4"), np.arange(1, dtype="i4"))])
    add("complex_mixed_arithmetic", lambda z, x: (z * x + 1j, z / x, z - 2j * x, -z, z ** 2,
                                                  x - z, z * z.conj()),
        "(c16[:], f8[:])", [(z, np.abs(z) + 0.5) for z in VECS])
    add("complex64_arithmetic", lambda a, b: (a * b + a / b - a, a * 3, np.float32(2) * a),
        "(c8[:], c8[:])", [(z.astype("c8"), w.astype("c8")) for z, w in
                           zip(VECS, [W, W[::-1], W[::3], W[:0], W[:1]], strict=True)])
    add("complex_special_values", lambda z: (1 / z, z / 0, z * (1 + 1j), z + z, z - z,
                                             -z, np.conj(z), np.sign(z)),
        "(c16[:])", [(SPECIAL,), (SPECIAL[::-3],), (ZEROS,)])
    add("complex_signed_zeros", lambda z: (-z, z.conj(), np.conjugate(z), z.conjugate(), +z,
                                           z * 1, 0 - z, z.real, z.imag),
        "(c16[:])", [(ZEROS,), (ZEROS[::-1],)])
    add("complex_abs_huge_and_tiny", lambda z: (np.abs(z), np.abs(z) ** 2, abs(z)),
        "(c16[:])", [(np.array([1e308 + 1e308j, -1e308 - 0j, 3e-320 + 4e-320j, 1e300j,
                                complex(np.inf, np.nan), complex(np.nan, 1.0)]),),
                     (SPECIAL,), (SPECIAL[::-3],)],
        ulps=2)  # NumPy's abs is hypot for negative strides (1 ulp away), squared: 2
    add("complex_scalars", lambda a, b: (a * b, a / b, abs(a), a ** 2, a - b, a == b, -a,
                                         a.real, a.imag, np.conj(b)),
        "(c16, c16)", [(np.complex128(1.5 - 2j), np.complex128(-0.25 + 3j)),
                       (np.complex128(0j), np.complex128(2 + 0j))], ulps=2)
    # comparisons and ordering (NumPy orders complex values lexicographically)
    add("complex_comparisons", lambda a, b: (a == b, a != b, a < b, a >= b, np.maximum(a, b),
                                             np.fmin(a, b), np.isnan(a), np.isinf(a),
                                             np.isfinite(a)),
        "(c16[:], c16[:])", [(SPECIAL, SPECIAL[::-1]), (Z, W), (Z[:0], W[:0])])
    add("complex_ordering_reductions", lambda z: (np.max(z), np.min(z), np.argmax(z),
                                                  np.argmin(z), np.clip(z, -1 - 1j, 1 + 1j)),
        "(c16[:])", [(z,) for z in VECS if z.size] + [(SPECIAL[:20],)])
    # parts, conjugates, angles, construction
    add("complex_parts_read", lambda m: (m.real, m.imag, np.real(m), np.imag(m), m.T.real,
                                         m[::-1].imag[1:], np.real(m) * 2 + np.imag(m),
                                         np.iscomplex(m), np.isreal(m)),
        "(c16[:, :])", [(m,) for m in MATS])
    add("complex_angle", lambda m: (np.angle(m), np.angle(m, deg=True)), "(c16[:, :])",
        [(m,) for m in MATS] + [(SPECIAL.reshape(8, 8),)], ulps=TRANSCENDENTAL_ULPS)
    add("real_array_parts", lambda x: (x.real, np.imag(x), np.real(x) + 1, np.angle(x),
                                       np.iscomplex(x), np.conj(x)),
        "(f8[:])", [(Z.real,), (Z.real[:0],)])
    add("complex_construction", lambda a, b, n: (a + 1j * b, np.zeros(n, dtype=complex),
                                                 np.ones((2, n), np.complex64),
                                                 np.full(n, 1 + 2j),
                                                 np.zeros_like(a, np.complex64)),
        "(f8[:], f8[:], i8)", [(Z.real, Z.imag, np.int64(3)), (Z.real[:0], Z.imag[:0],
                                                               np.int64(0))])
    add("complex_scalar_construction", lambda a, b: (complex(a, b), np.complex128(a),
                                                     np.complex64(a, b), complex(a, b) * 1j,
                                                     np.float64(a) + 1j),
        "(f8, f8)", [(1.5, -2.0), (-0.0, np.inf), (np.nan, 0.0)])
    add("complex_astype", lambda z: (z.astype(np.float64), z.astype(np.int32), z.astype(bool),
                                     z.astype(np.complex64), z.real.astype(np.complex64)),
        "(c16[:])", [(z,) for z in VECS] + [(SPECIAL,)])
    add("where_complex", lambda z, w: (np.where(z.real > 0, z, w), np.where(np.isnan(z), 0, z),
                                       np.where(np.abs(z) < 1, 1j, z)),
        "(c16[:], c16[:])", [(SPECIAL, SPECIAL[::-1]), (Z, W)])
    # functions
    add("complex_functions", lambda z: (np.exp(z), np.log(z), np.sqrt(z), np.sin(z), np.cos(z),
                                        np.exp2(z), np.log10(z), np.log1p(z), np.expm1(z),
                                        np.sinh(z), np.cosh(z), z ** 0.5),
        "(c16[:])", [(z,) for z in VECS] + [(SPECIAL,)], ulps=TRANSCENDENTAL_ULPS)
    add("complex64_functions", lambda z: (np.exp(z), np.log(z), np.sqrt(z), np.sin(z),
                                          np.cos(z), np.abs(z)),
        "(c8[:])", [(z.astype("c8"),) for z in VECS], ulps=TRANSCENDENTAL_ULPS)
    add("complex_integer_powers", lambda z: (np.power(z, 3), np.power(z, -2), z ** 3,
                                             z ** -1, np.power(z, 0), np.power(z, 1)),
        "(c16[:])", [(z,) for z in VECS] + [(SPECIAL,)])
    add("complex_general_powers", lambda z, w: (np.power(z, w), z ** 2.5, 2.0 ** z),
        "(c16[:], c16[:])", [(Z, W / 2), (Z[:1], W[:1])], ulps=16)  # |w log z| < 10
    # reductions and statistics
    for red in ("sum", "prod", "mean"):
        for axis in (None, 0, 1):
            add(f"complex_{red}_axis{axis}",
                lambda m, r=red, a=axis: getattr(np, r)(m, axis=a), "(c16[:, :])",
                [(m,) for m in MATS] + [(M[:0],)], ulps=64)
    add("complex_fused_reductions", lambda z, w: (np.sum(np.abs(z) ** 2), np.sum(z * w),
                                                  np.sum(z * w, axis=0), np.prod(z + 1, axis=1),
                                                  np.max(z * 1j, axis=1), np.mean(z - w)),
        "(c16[:, :], c16[:, :])", [(m, m[::-1] * 0.5) for m in MATS], ulps=64)
    add("complex_cumulative_and_stats", lambda z: (np.cumsum(z), np.cumprod(z[:6]), np.var(z),
                                                   np.std(z), np.nansum(z), np.nanmean(z),
                                                   np.round(z, 2), np.diff(z)),
        "(c16[:])", [(z,) for z in VECS if z.size] + [(ZEROS,)], ulps=64)
    # NumPy's order: real part, then imaginary, NaN parts last (R+Rj, R+nanj, nan+Rj,
    # nan+nanj); no two inputs compare equal but for identical ones (±0 ties may go
    # either way in NumPy's unstable sort)
    add("complex_sorted", lambda z, m: (np.sort(z), np.argsort(z), np.sort(m, axis=0),
                                        np.argsort(m, axis=1), np.sort(m, axis=None)),
        "(c16[:], c16[:, :])", [(SORTABLE, M), (SORTABLE[::-1], M.T), (SORTABLE[:0], M[:0])])
    # linear algebra (NumPy calls BLAS for complex products)
    add("complex_linalg", lambda m, v: (m @ v, np.dot(v, v), np.vdot(v, v), np.vdot(m, m),
                                        np.linalg.norm(v), np.linalg.norm(m),
                                        np.linalg.norm(m, axis=1), m @ m.T.conj(),
                                        np.outer(v, v.conj()), np.einsum("ij,j->i", m, v)),
        "(c16[:, :], c16[:])", [(m, Z[:m.shape[1]]) for m in MATS], ulps=64)
    return c


def _write_cases() -> list[Case]:
    """Writes through the parts: ``z.real``/``z.imag`` are views, as in NumPy."""
    c: list[Case] = []

    def add(name, fn, sig, inputs, ulps=0):
        c.append(Case(name, fn, sig, inputs, ulps, {"extended", "complex", "writes"}))

    def write_parts(z):
        z.real[...] = 0
        z.imag += 1
        return z.sum()

    def set_parts(z, x):
        z.real = x
        z.imag = -x
        return z

    def slice_parts(m):
        m.real[1:3] = 7.0
        m.imag[::2, ::-1] *= -1
        m.T.real[0] = 5.0
        r = m.imag
        r[-1] = m[-1].real - r[-1]
        return m, r

    def conj_in_place(z):
        z.imag *= -1
        z *= 1j
        return z

    def view_sees_write(z):
        r = z.real
        i = z[1:].imag
        z[0] = 5j
        z[-1] += 1
        return r.copy(), i * 2

    def loop_part_writes(z, n):
        im = z.imag
        for k in range(n):  # a runtime loop writing through part views
            z.real[k] *= 2
            im[k] += k
        return z

    add("complex_part_writes", write_parts, "(c16[:])", [(z.copy(),) for z in VECS], ulps=64)
    add("complex_part_views_see_writes", view_sees_write, "(c16[:])",
        [(z.copy(),) for z in VECS if z.size])
    add("complex_part_writes_in_loop", loop_part_writes, "(c16[:], i8)",
        [(Z.copy(), np.int64(5)), (Z[::2].copy(), np.int64(0))])
    add("complex_part_setters", set_parts, "(c16[:], f8[:])",
        [(Z.copy(), Z.real.copy()), (Z[:0].copy(), Z.real[:0].copy())])
    add("complex_part_slice_writes", slice_parts, "(c16[:, :])",
        [(m.copy(),) for m in MATS if m.shape[0] >= 3] + [(np.asfortranarray(M),)])
    add("complex64_conj_in_place", conj_in_place, "(c8[:])",
        [(z.astype("c8"),) for z in VECS] + [(ZEROS.astype("c8"),)])
    return c


def _mandelbrot_cases() -> list[Case]:
    """Escape-time counts on a complex grid: a runtime loop over complex arrays."""
    def mandelbrot(c, n):
        z = np.zeros_like(c)
        count = np.zeros(c.shape, np.int64)
        for _ in range(n):
            inside = np.abs(z) <= 2.0
            z = np.where(inside, z * z + c, z)
            count += inside
        return count, z

    re, im = np.meshgrid(np.linspace(-2.0, 0.6, 11), np.linspace(-1.2, 1.2, 7))
    grid = re + 1j * im
    return [Case("mandelbrot_complex", mandelbrot, "(c16[:, :], i8)",
                 [(grid, np.int64(20)), (grid[::2, ::-1], np.int64(5)), (grid[:0], np.int64(3))],
                 0, {"extended", "complex"})]


COMPLEX_CASES: list[Case] = _cases() + _write_cases() + _mandelbrot_cases()
