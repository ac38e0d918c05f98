"""Float sums: blocked, pairwise, vectorized, and as accurate as NumPy's.

Errors are measured against ``math.fsum`` (the exactly rounded sum) on ill-conditioned
data: magnitudes over 16 decades with half the terms nearly cancelling.

The bound. aotc sums 128-element blocks in the lanes of a 64-byte vector (128/L adds per
lane, L = 8 float64 or 16 float32 lanes), adds the lanes as a tree (log2 L), the block's
tail (one add) and the blocks pairwise (at most log2(n/128) + 1 adds on the way through
the cascade). Every term thus goes through at most d = log2(n) + 15 roundings, and a sum
whose terms each see at most d roundings errs by at most d u sum|x| / (1 - d u), u the
unit roundoff (2**-53, 2**-24). ``bound`` uses (log2(n) + 20) u sum|x|.

The comparison with NumPy. The vector width is fixed by the IR (64-byte vectors, which
LLVM splits into the target's registers) and nothing is reassociated, so the result is
the same on every target: the accuracy tests run for SSE, AVX2 and the host's widest
vectors, and the results must be bit-identical. NumPy's sum is compared as an algorithm,
not as the installed build: :func:`numpy_pairwise` is NumPy 2's ``pairwise_sum``
(blocks of at most 128 split by halving, 8 accumulators; bit-identical to ``np.sum`` of a
1-d array with NumPy 2.4). Over each size's trials aotc's summed error must stay within
2x of it; measured over 40 trials the ratio is 0.91-1.01 for 1000 to 10**6 elements
(single trials vary both ways by more than 10x, which is why trials are summed).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from aotc.codegen import TargetSpec, emit_llvm
from aotc.codegen.core.jit import JitLibrary

from .programs import ProgramBuilder

SIZES = [1, 7, 8, 127, 128, 129, 1000, 4096 + 17, 100_000, 1_000_000]
COMPARED = 1000  # from here on, compare with NumPy's algorithm too
TARGETS = ["x86-64-v2", "x86-64-v3", "native"]  # 128-, 256- and the host's widest vectors
SPECS = [("f8", 1, (0,)), ("f4", 1, (0,)), ("f8", 3, (0, 2)), ("f8", 2, (1,))]


def _sum_program(dtype: str, ndim: int, axes: tuple[int, ...]):
    pb = ProgramBuilder("sum")
    x = pb.array(dtype, *"abc"[:ndim])
    return pb.build(pb.apply("reduce_sum", x, axes=axes))


@functools.cache
def _library(target: str) -> dict:
    spec = TargetSpec.parse(target)
    if not set(spec.cpu_features) <= set(TargetSpec.parse("native").cpu_features):
        pytest.skip(f"this CPU cannot run {target} code")
    library = JitLibrary([_sum_program(*s) for s in SPECS], spec)
    return dict(zip(SPECS, library.kernels, strict=True))


@pytest.fixture(scope="module", params=TARGETS)
def sums(request):
    return _library(request.param)


def ill_conditioned(n: int, rng: np.random.Generator) -> np.ndarray:
    # ldexp is exact, so the data are the same on every host (NumPy's ``10.0 ** u`` is
    # SIMD code whose last bits differ between AVX2 and AVX-512 builds of its loops).
    x = np.ldexp(rng.standard_normal(n), rng.integers(-27, 27, n))
    half = n // 2
    x[half:2 * half] = -x[:half] * (1 + rng.uniform(-1e-9, 1e-9, half))
    return rng.permutation(x)


def bound(x: np.ndarray, eps: float) -> float:
    """Pairwise summation's error bound: (16 + 4 + log2(n)) eps sum|x|."""
    return (20 + math.log2(max(len(x), 2))) * eps * math.fsum(np.abs(x.astype(float)))


def numpy_pairwise(a: np.ndarray) -> np.generic:
    """``0 + pairwise_sum(a)`` as NumPy 2 computes a float sum along one axis, in the
    dtype of ``a``: under 8 elements in order; up to 128 in 8 accumulators started from
    the first 8 elements, combined ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the tail in
    order; beyond, the two halves (the first a multiple of 8 long) summed and added."""
    t = a.dtype.type

    def pw(lo: int, n: int) -> np.generic:
        if n < 8:
            res = t(0.0)
            for v in a[lo:lo + n]:
                res = t(res + v)
            return res
        if n <= 128:
            whole = n - n % 8
            rows = a[lo:lo + whole].reshape(-1, 8)
            r = rows[0].copy()
            for row in rows[1:]:
                r += row
            res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
            for v in a[lo + whole:lo + n]:
                res = t(res + v)
            return res
        half = n // 2 - (n // 2) % 8
        return t(pw(lo, half) + pw(lo + half, n - half))

    return t(t(0.0) + pw(0, len(a)))


@functools.cache
def trials(dtype: str, n: int) -> list[tuple[np.ndarray, float, float]]:
    """(x, its exact sum, NumPy's algorithm's error) for each trial of size ``n``."""
    rng = np.random.default_rng(n)
    out = []
    for _ in range(20 if n < 10**6 else 10):
        if dtype == "f8":
            x = ill_conditioned(n, rng)
        else:
            x = (rng.standard_normal(n) + 0.25).astype(np.float32)
        exact = math.fsum(x.astype(float))
        out.append((x, exact, abs(float(numpy_pairwise(x)) - exact)))
    return out


def _check_accuracy(kernel, dtype: str, n: int, eps: float) -> None:
    ours, theirs = 0.0, 0.0
    for x, exact, numpy_error in trials(dtype, n):
        (got,) = kernel(x)
        assert abs(float(got) - exact) <= bound(x, eps)
        ours += abs(float(got) - exact)
        theirs += numpy_error
    assert n < COMPARED or ours <= 2 * theirs, (ours, theirs)


@pytest.mark.parametrize("n", SIZES)
def test_float64_sum_as_accurate_as_numpy(sums, n):
    _check_accuracy(sums[("f8", 1, (0,))], "f8", n, 2.0**-53)


@pytest.mark.parametrize("n", SIZES)
def test_float32_sum_as_accurate_as_numpy(sums, n):
    _check_accuracy(sums[("f4", 1, (0,))], "f4", n, 2.0**-24)


#: Near 2**54 float64 steps by 4 above and 2 below: B + 1 rounds to B, -B + 1 to -B,
#: and -B + 2 is exact; so where each 1 is added decides the sum (exactly 2 each time).
_B = 2.0**54


def _at(n: int, values: dict[int, float]) -> np.ndarray:
    x = np.zeros(n)
    x[list(values)] = list(values.values())
    return x


#: (x, NumPy 2's sum of x, worked by hand from the algorithm; what another order gives)
HAND_SUMS = [
    # under 8 elements, in order: ((B + 1) + 1) - B
    (np.array([_B, 1.0, 1.0, -_B]), 0.0),
    # 8: the accumulators combined as a tree, (B + 1) + (-B + 1) = B - B (in order: 1)
    (np.array([_B, 1.0, -_B, 1.0, 0.0, 0.0, 0.0, 0.0]), 0.0),
    # 16: element i goes to accumulator i % 8: r0 = B - B, r1 = 1 + 1 (in order: 1)
    (_at(16, {0: _B, 1: 1.0, 8: -_B, 9: 1.0}), 2.0),
    # 11: the tail after the 8 accumulators, in order: ((B + 1) + 1) - B (apart: 2)
    (_at(11, {0: _B, 8: 1.0, 9: 1.0, 10: -_B}), 0.0),
    # 200: halves of 96 and 104 (n / 2 rounded down to a multiple of 8): B, then
    # -B + 1 = -B (split at 100, the tail of the first half would be B - B + 1: 1)
    (_at(200, {0: _B, 96: -_B, 97: 1.0}), 0.0),
    # float32 too, in float32 (2**25 steps by 4 above and 2 below): as the second
    (np.array([2.0**25, 1.0, -2.0**25, 1.0, 0.0, 0.0, 0.0, 0.0], np.float32), 0.0),
    # 0 + the sum: negative zeros sum to +0.0
    (np.full(8, -0.0), 0.0),
]


@pytest.mark.parametrize(("x", "want"), HAND_SUMS, ids=[f"n{len(x)}-{x.dtype}" for x, _ in
                                                           HAND_SUMS])
def test_reference_is_numpys_algorithm(x, want):
    """The reference, on sums whose result depends on the order of the additions,
    gives the values worked out by hand from NumPy's pairwise_sum, in x's dtype."""
    got = numpy_pairwise(x)
    assert type(got) is x.dtype.type
    assert got == want and not np.signbit(got), got


def test_reference_is_this_numpys_sum():
    """The reference reproduces ``np.sum`` of a 1-d array bit for bit (NumPy 2 sums
    float64 and float32 arrays with this algorithm). Should a NumPy change that, this
    fails, and the accuracy tests above compare with the algorithm, not with it."""
    rng = np.random.default_rng(5)
    arrays = [x for x, _ in HAND_SUMS]
    for n in (0, 5, 8, 100, 128, 129, 1000, 4113, 30_000):
        arrays += [ill_conditioned(n, rng), (rng.standard_normal(n) + 0.25).astype(np.float32)]
    for x in arrays:
        want = np.sum(x)
        got = numpy_pairwise(x)
        assert type(got) is type(want), (len(x), x.dtype)
        assert got == want and np.signbit(got) == np.signbit(want), (len(x), x.dtype, got, want)


def test_sums_do_not_depend_on_the_target():
    """Same IR on every target, no reassociation: bit-identical sums."""
    libraries = [_library(t) for t in TARGETS]
    for spec in (("f8", 1, (0,)), ("f4", 1, (0,))):
        for n in (129, 4113, 100_000):
            for x, _, _ in trials(spec[0], n)[:3]:
                results = {float(lib[spec](x)[0]) for lib in libraries}
                assert len(results) == 1, (spec, n, results)


def test_strided_and_multi_axis_sums(sums):
    rng = np.random.default_rng(3)
    base = ill_conditioned(40 * 30 * 50, rng).reshape(40, 30, 50)
    for x in (base, base[::-1, :, ::2], base.transpose(2, 1, 0)):
        (got,) = sums[("f8", 3, (0, 2))](x)
        want = [math.fsum(x[:, j, :].ravel()) for j in range(x.shape[1])]
        scale = [bound(x[:, j, :].ravel(), 2.0**-53) for j in range(x.shape[1])]
        assert np.all(np.abs(got - want) <= scale)
    rows = rng.standard_normal((7, 1000))
    for x in (rows, rows[:, ::3], np.asfortranarray(rows)):
        (got,) = sums[("f8", 2, (1,))](x)
        np.testing.assert_allclose(got, [math.fsum(r) for r in x], rtol=1e-13, atol=1e-13)


def test_special_values(sums):
    kernel = sums[("f8", 1, (0,))]
    for values, want in (([], 0.0), ([np.inf, 1.0], np.inf), ([np.inf, -np.inf], np.nan),
                         ([1.0] * 300 + [np.nan], np.nan), ([-0.0] * 200, 0.0)):
        (got,) = kernel(np.array(values, dtype=float))
        np.testing.assert_array_equal(got, want)
        assert np.isnan(want) or np.signbit(got) == np.signbit(want)


@pytest.mark.parametrize("target", TARGETS)
def test_sum_is_vector_code(target):
    """Vector accumulators and vector loads, without fast-math flags."""
    text = emit_llvm([("k", _sum_program("f8", 1, (0,)))], TargetSpec.parse(target))
    assert "fadd <" in text and "load <" in text
    assert "reassoc" not in text and " fast " not in text
