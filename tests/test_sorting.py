"""Sorting compiled (in-process JIT) against NumPy, beyond the catalog's cases.

The claims checked here: every sort is stable and returns NumPy's ``kind='stable'``
result bit for bit (NaN payloads and signs, ``-0.0``/``0.0`` in input order), at every
dtype, for rows short enough for insertion sort and long enough for the radix passes
(or, built for an AVX2 or AVX-512 CPU, for the quicksort of 4- and 8-byte values: its
paths are forced one by one in ``tests/codegen/test_quicksort.py``),
with digits that all keys share (skipped passes) and ones that vary; partitions have
the partition property for every ``kth``; ``searchsorted`` is NumPy's binary search;
and the work buffers come from the kernel's scratch plan, never from malloc.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy_cases import CODE

from aotc import lax
from aotc.codegen import TargetSpec, emit_llvm
from aotc.codegen.core import jit
from aotc.codegen.memory.layout import plan_layout
from aotc.codegen.sorting.radix import SMALL
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

ORDERED = [np.dtype(c) for c in ("?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4",
                                 "f8")]
#: Insertion-sorted, network-sorted (up to 128 keys; 64 of 8 bytes with AVX2) and
#: partitioned or radix-sorted rows.
SIZES = [0, 1, 2, SMALL, SMALL + 1, 129, 257, 3000, 20_000]


def _program(fn: Any, signature: str) -> Any:
    return optimize(trace_kernel(fn, parse_signature_string(signature), name="k").program)


def _kernel(fn: Any, signature: str) -> jit.JitKernel:
    return jit.JitKernel(_program(fn, signature))


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def _data(dtype: np.dtype, n: int, rng: np.random.Generator, shape: str) -> np.ndarray:
    """Values that exercise every digit (random), few digits (small range), one digit
    value for all keys but one (skipped passes), or none (all equal)."""
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind == "f":
        x = (rng.standard_normal(n) * 1e3).astype(dtype)
        if shape == "small":
            x = np.round(x / 100).astype(dtype)
        x[::5] = np.nan
        x[::7] = -0.0
        x[::11] = 0.0
        x[::13] = -np.inf
        bits = x.view(f"u{dtype.itemsize}")
        x[5::19] = -np.nan  # NaNs with the sign bit set, and with payloads
        x[2::19] = np.nan
        bits[2::19] |= 0x5
        bits[3::17] |= 1
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        if shape == "small":
            x = (rng.integers(0, 40, n) * (256 if dtype.itemsize > 1 else 1)).astype(dtype)
    if shape == "equal":
        x[:] = x[0] if n else x
    return x


@pytest.mark.parametrize("dtype", ORDERED, ids=str)
def test_sort_and_argsort_are_numpys_stable_sort(dtype: np.dtype) -> None:
    k = _kernel(lambda x: (np.sort(x), np.argsort(x), np.sort(x[::-1]), np.argsort(x[::2])),
                f"({CODE[dtype]}[:])")
    rng = np.random.default_rng(5)
    for n in SIZES:
        for shape in ("random", "small", "equal"):
            x = _data(dtype, n, rng, shape)
            got = k(x)
            want = (np.sort(x, kind="stable"), np.argsort(x, kind="stable"),
                    np.sort(x[::-1], kind="stable"), np.argsort(x[::2], kind="stable"))
            for g, w in zip(got, want, strict=True):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(_bits(g), _bits(w), err_msg=f"{dtype} n={n} {shape}")


def test_rows_of_every_length_along_either_axis() -> None:
    k = _kernel(lambda x: (np.sort(x, axis=0), np.argsort(x, axis=1), np.sort(x.T, axis=1)),
                "(f4[:, :])")
    rng = np.random.default_rng(8)
    for rows, cols in [(3, 40), (40, 3), (SMALL + 1, SMALL), (1, 500), (0, 4), (4, 0)]:
        x = _data(np.dtype("f4"), rows * cols, rng, "random").reshape(rows, cols)
        got = k(x)
        want = (np.sort(x, axis=0, kind="stable"), np.argsort(x, axis=1, kind="stable"),
                np.sort(x.T, axis=1, kind="stable"))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(_bits(g), _bits(w))


@pytest.mark.parametrize("dtype", [np.dtype("f8"), np.dtype("f4")], ids=str)
def test_the_avx2_build_sorts_floats_as_numpy(dtype: np.dtype) -> None:
    """Built for x86-64-v3 (every CPU that runs this suite has AVX2), where ranges with
    no NaN sort as doubles (``vminpd``/``vmaxpd``): zeros of both signs, infinities and
    NaN-free rows of every network size, then rows with NaNs, bit for bit."""
    program = _program(lambda x: (np.sort(x), np.argsort(x)), f"({CODE[dtype]}[:])")
    k = jit.JitKernel(program, TargetSpec.parse("x86-64-v3"))
    rng = np.random.default_rng(11)
    for n in [*range(0, 70), 127, 128, 129, 257, 3000, 20_000]:
        for numbers in (True, False):
            x = _data(dtype, n, rng, "random")
            if numbers:
                x[np.isnan(x)] = rng.choice(np.array([0.0, -0.0, np.inf, 1.5], dtype),
                                            np.isnan(x).sum())
            got = k(x)
            want = (np.sort(x, kind="stable"), np.argsort(x, kind="stable"))
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(_bits(g), _bits(w), err_msg=f"n={n}")


def _before(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NumPy's order: a < b, NaN after every number."""
    if a.dtype.kind == "f":
        return (a < b) | (np.isnan(b) & ~np.isnan(a))
    return a < b


@pytest.mark.parametrize("dtype", [np.dtype("f8"), np.dtype("i2")], ids=str)
def test_partitions_have_the_partition_property(dtype: np.dtype) -> None:
    rng = np.random.default_rng(3)
    x = _data(dtype, 60, rng, "small")
    # kth given at run time: one kernel for every kth (a constant kth compiles the same
    # selection; the catalog's partition cases have constant ones).
    k = _kernel(lambda x, kth: (np.partition(x, kth), np.argpartition(x, kth)),
                f"({CODE[dtype]}[:], i8)")
    for kth in (0, 1, 29, 58, 59, -1, -60):
        part, order = k(x, np.int64(kth))
        np.testing.assert_array_equal(np.sort(_bits(part)), np.sort(_bits(x)))
        assert sorted(order.tolist()) == list(range(x.size))
        for p in (part, x[order]):
            pivot = p[kth]
            assert not _before(np.full(x.size, pivot), p)[:kth % x.size].any()
            assert not _before(p, np.full(x.size, pivot))[kth % x.size + 1:].any()


def test_kth_out_of_bounds_is_numpys_error() -> None:
    k = _kernel(lambda x: np.partition(x, 4), "(f8[:])")
    with pytest.raises(ValueError, match=r"kth\(=4\) out of bounds \(3\)"):
        k(np.zeros(3))
    runtime = _kernel(lambda x, k: (np.partition(x, k)[k], np.argpartition(x, [k, 0])),
                      "(f8[:], i8)")
    x = np.array([5.0, 1.0, 3.0])
    assert runtime(x, np.int64(-1))[0] == 5.0
    for kth, shown in ((3, 3), (-4, -1)):
        with pytest.raises(ValueError, match=rf"kth\(={shown}\) out of bounds \(3\)"):
            runtime(x, np.int64(kth))
        with pytest.raises(ValueError, match=rf"kth\(={shown}\) out of bounds \(3\)"):
            np.partition(x, kth)


@pytest.mark.parametrize("dtype", [np.dtype("f8"), np.dtype("f4"), np.dtype("i8"),
                                   np.dtype("u1"), np.dtype("?")], ids=str)
def test_searchsorted_is_a_binary_search(dtype: np.dtype) -> None:
    k = _kernel(lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, side="right")),
                f"({CODE[dtype]}[:], {CODE[dtype]}[:])")
    rng = np.random.default_rng(4)
    for n in (0, 1, 2, 7, 1000):
        a = np.sort(_data(dtype, n, rng, "small"), kind="stable")
        v = np.concatenate([_data(dtype, 300, rng, "small"), a])
        left, right = k(a, v)
        np.testing.assert_array_equal(left, np.searchsorted(a, v))
        np.testing.assert_array_equal(right, np.searchsorted(a, v, side="right"))


def test_work_buffers_are_planned_in_scratch() -> None:
    """Each sort's key, index and counter buffers are scratch slots of the plan (sized by
    the row's upper bound when it is only known at run time); no code allocates."""
    program = _program(lambda x: (np.sort(x[x > 0]), np.argsort(x), np.unique(x)), "(f8[:])")
    layout = plan_layout(program)
    work = [key for key in layout.staging if isinstance(key, tuple) and key[1:2] == ("work",)]
    prims = {key[0].prim.name for key in work}
    assert prims == {"sort", "argsort"}
    text = emit_llvm([("k", program)], TargetSpec())
    assert "malloc" not in text and "calloc" not in text


def test_sorting_inside_a_loop_and_of_a_selection() -> None:
    def kernel(x, k):
        def body(i, acc):
            row = np.sort(x[i])
            return acc + row[-1] - row[0]
        return lax.fori_loop(0, k, body, 0.0), np.sort(x[x > 0]), np.median(x[x < 0])

    kern = _kernel(kernel, "(f8[:, :], i8)")
    x = np.random.default_rng(9).standard_normal((5, 30))
    total, positives, median = kern(x, np.int64(4))
    expected = 0.0
    for i in range(4):
        expected = expected + x[i].max() - x[i].min()
    assert total == expected
    np.testing.assert_array_equal(positives, np.sort(x[x > 0]))
    assert median == np.median(x[x < 0])


@pytest.mark.parametrize("code", ["i8", "u8", "f8"])
def test_shortcut_and_its_fallback(code: str) -> None:
    """64-bit keys are first sorted by their top varying digits and finished by an
    insertion sort; keys that share those digits in bulk make it give up and sort every
    digit instead. Rows of 2**15 keys and more are sampled first, and skip the attempt
    when the sample is crowded; a cluster too small for the sample to see still falls
    back. All give NumPy's stable order."""
    k = _kernel(lambda x: (np.sort(x), np.argsort(x)), f"({code}[:])")
    rng = np.random.default_rng(12)
    for n in (20_000, 40_000):
        low = rng.integers(0, 2**32, n, dtype=np.uint64)
        distinct = rng.integers(0, 2**32, n, dtype=np.uint64)  # the shortcut works
        shared = np.uint64(0x0101_0101) * (np.arange(n, dtype=np.uint64) % 50)
        cluster = distinct.copy()  # one prefix for 1% of the keys
        cluster[rng.choice(n, n // 100, replace=False)] = 0x0101_0101
        for top in (distinct, shared, cluster):
            bits = (top << np.uint64(32)) | low
            x = bits.view(np.dtype(code))
            if code == "f8":
                x = np.where(np.isfinite(x), x, 0.5)  # no NaNs from random bits
            values, order = k(x)
            np.testing.assert_array_equal(_bits(values), _bits(np.sort(x, kind="stable")))
            np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))


@pytest.mark.parametrize("code", ["i4", "u4"])
def test_shortcut_of_32_bit_integers(code: str) -> None:
    """A million-element row of 32-bit integers takes the shortcut too (three digits of
    four); skewed rows (most keys below 2**16, a long tail) fall back."""
    k = _kernel(lambda x: (np.sort(x), np.argsort(x)), f"({code}[:])")
    rng = np.random.default_rng(13)
    n = 1 << 20
    info = np.iinfo(np.dtype(code))
    uniform = rng.integers(info.min, info.max, n, dtype=np.dtype(code), endpoint=True)
    skewed = np.minimum(rng.pareto(1.0, n) * 1000, info.max).astype(code)
    for x in (uniform, skewed):
        values, order = k(x)
        np.testing.assert_array_equal(values, np.sort(x))
        np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))


def test_long_rows_of_wide_keys_along_either_axis() -> None:
    """64-bit keys in rows long enough for the interleaved streams (lengths not a
    multiple of their count) and the shortcut, whose insertion sort skips ordered
    windows only in contiguous rows: columns go one element at a time."""
    k = _kernel(lambda x: (np.sort(x, axis=0), np.argsort(x, axis=0), np.sort(x, axis=1)),
                "(f8[:, :])")
    rng = np.random.default_rng(14)
    for rows in (5003, 4098):
        x = _data(np.dtype("f8"), rows * 3, rng, "random").reshape(rows, 3)
        with np.errstate(invalid="ignore"):  # (NaNs stay NaNs)
            x[:, 1] = np.round(x[:, 1])  # runs of equal keys for the insertion sort
        got = k(x.T.copy().T)
        want = (np.sort(x, axis=0, kind="stable"), np.argsort(x, axis=0, kind="stable"),
                np.sort(x, axis=1, kind="stable"))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(_bits(g), _bits(w))


@pytest.mark.parametrize("code", ["i8", "f8"])
def test_digits_with_few_values_move_in_more_streams(code: str) -> None:
    """A digit taking few values in a row (a float's sign and exponent) is moved in
    twice as many streams as one taking many; rows mixing both kinds of digit, of
    lengths not a multiple of the streams, in many equal keys, keep NumPy's stable
    order."""
    k = _kernel(lambda x: (np.sort(x), np.argsort(x)), f"({code}[:])")
    rng = np.random.default_rng(21)
    for n in (4099, 20_005):
        few = rng.integers(0, 3, n, dtype=np.uint64) << np.uint64(48)  # 3 values
        many = rng.integers(0, 2**8, n, dtype=np.uint64) << np.uint64(8)  # 256 values
        x = (few | many | np.uint64(0x3FF0_0000_0000_0000)).view(np.dtype(code))
        values, order = k(x)
        np.testing.assert_array_equal(_bits(values), _bits(np.sort(x, kind="stable")))
        np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))


def test_keys_sharing_their_top_bits() -> None:
    """Rows whose keys share their top bits (doubles in [0, 1), integers below 2^40) are
    sorted on digits aligned to the first bit that differs, and given back whole."""
    k = _kernel(lambda x, y: (np.sort(x), np.argsort(x), np.sort(y)), "(f8[:], i8[:])")
    rng = np.random.default_rng(22)
    for n in (20_003, 70_000):
        x = rng.random(n)
        if n > 50_000:
            x[::97] = 0.0  # and zeros, whose keys share little with the others'
        y = rng.integers(0, 2**40, n)
        values, order, ints = k(x, y)
        np.testing.assert_array_equal(_bits(values), _bits(np.sort(x, kind="stable")))
        np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))
        np.testing.assert_array_equal(ints, np.sort(y))
