"""Loop versioning: index loops whose checks hold over the whole range get a copy
without them, chosen at run time. IR only: traced, optimized and interpreted."""

from __future__ import annotations

import numpy as np
import pytest
from builder import eqns_named, optimized
from hypothesis import given, settings
from hypothesis import strategies as st
from tour_loops import knapsack

from aotc.interpret import eval_program
from aotc.ir import Program
from aotc.ops.index import KernelError
from aotc.passes.loop_versioning import versioned_loops


def versions(program: Program) -> list[tuple[Program, Program]]:
    """(checked body, unchecked body) of each versioned loop."""
    pairs = [versioned_loops(e) for e in eqns_named(program, "cond")]
    return [(c.params["body"], u.params["body"]) for c, u in (p for p in pairs if p)]


def shifted(x, k):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i + k]
    return out


def rows_then_columns(a):
    out = np.zeros((a.shape[0], a.shape[1] - 1))
    for i in range(a.shape[0]):
        for j in range(a.shape[1] - 1):
            out[i, j] = a[i, j] + a[i, j + 1]
    return out


def gathered(x, idx):
    out = np.zeros(idx.shape[0])
    for i in range(idx.shape[0]):
        out[i] = x[idx[i]]
    return out


def test_an_affine_index_gets_a_loop_without_checks():
    ((checked, unchecked),) = versions(optimized(shifted, "f8[:](f8[:], i8)"))
    assert len(eqns_named(checked, "raise_if")) == 2  # x[i + k] and out[i]
    assert eqns_named(unchecked, "raise_if") == []
    assert eqns_named(unchecked, "select") == []  # no negative-index wrap
    binds = eqns_named(unchecked, "bind_dim")
    assert binds and all(e.params["proven"] for e in binds)  # no clamp
    assert not any(e.params.get("proven") for e in eqns_named(checked, "bind_dim"))


@pytest.mark.parametrize("k", [0, -1, 1, -5, 2**62, -2**63 + 1])
def test_either_loop_gives_pythons_answer(k):
    program = optimized(shifted, "f8[:](f8[:], i8)")
    x = np.array([1.0, -2.5, 4.0, 8.0, 0.5])
    try:
        want = shifted(x, k)
    except IndexError as err:
        with pytest.raises(KernelError) as raised:
            eval_program(program, x, np.int64(k))
        assert (raised.value.error, str(raised.value)) == ("IndexError", str(err))
        return
    np.testing.assert_array_equal(eval_program(program, x, np.int64(k))[0], want)


def test_a_nest_whose_checks_all_hold_is_versioned_whole():
    """The row loop's copy has no check at any depth; the checked copy's inner loop is
    versioned on its own (its row index invariant), for when the nest's test fails."""
    program = optimized(rows_then_columns, "f8[:,:](f8[:,:])")
    (nest, inner) = versions(program)
    assert eqns_named(nest[1], "raise_if") == []
    assert len(eqns_named(nest[0], "for_loop")) == 2  # its columns, checked and unchecked
    assert eqns_named(inner[1], "raise_if") == []
    a = np.arange(12.0).reshape(3, 4) ** 2
    np.testing.assert_array_equal(eval_program(program, a)[0], rows_then_columns(a))


def blur(img, r):
    h, w = img.shape
    out = np.zeros_like(img)
    for i in range(r, h - r):
        for j in range(r, w - r):
            s = 0.0
            for di in range(-r, r + 1):
                for dj in range(-r, r + 1):
                    s += img[i + di, j + dj]
            out[i, j] = s
    return out


def upper_pairs(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i + 1, x.shape[0]):
            s += x[i] * x[j]
    return s


@pytest.mark.parametrize("r", [0, 1, 2, 3, -1])
def test_a_stencil_nest_is_proven_at_the_corners_of_its_box(r):
    """``img[i + di, j + dj]`` over four loops: one test before the nest. Where it fails
    the checked nest runs (``r = -1`` writes ``out[-1, 6]``: Python's IndexError)."""
    program = optimized(blur, "f8[:,:](f8[:,:], i8)")
    nest = versions(program)[0]
    assert eqns_named(nest[1], "raise_if") == []
    img = np.arange(30.0).reshape(5, 6) ** 1.5
    try:
        want = blur(img, r)
    except IndexError as err:
        with pytest.raises(KernelError) as raised:
            eval_program(program, img, np.int64(r))
        assert str(raised.value) == str(err)
        return
    np.testing.assert_array_equal(eval_program(program, img, np.int64(r))[0], want)


def test_a_triangular_nest_is_proven_over_the_box_around_it():
    program = optimized(upper_pairs, "f8(f8[:])")
    nest = versions(program)[0]
    assert eqns_named(nest[1], "raise_if") == []
    for n in (0, 1, 2, 7):
        x = np.arange(1.0, n + 1)
        assert eval_program(program, x)[0] == upper_pairs(x)


def test_an_element_read_before_the_nest_proves_its_checks():
    """``w[i]``, read for the inner range, is the same read in ``dp[c - w[i]]``: the
    inner loop's proof uses the value read before it, so its checks go."""
    program = optimized(knapsack, "i8(i8[:], i8[:], i8)")  # the numpy_tour example's
    inner = [u for _, u in versions(program) if not eqns_named(u, "for_loop")]
    assert inner and eqns_named(inner[0], "raise_if") == []
    w, v = np.array([3, 4, 5, 9, 4]), np.array([3, 4, 4, 10, 4])
    for cap in (0, 1, 8, 11, 20):
        assert eval_program(program, w, v, cap)[0] == knapsack(w, v, cap)
    with pytest.raises(KernelError, match="index 1 is out of bounds for axis 0 with size 1"):
        eval_program(program, np.array([-1]), np.array([1]), 0)  # dp[0 - w[0]], as NumPy


def test_an_index_read_from_data_keeps_its_checks():
    program = optimized(gathered, "f8[:](f8[:], i8[:])")
    ((checked, unchecked),) = versions(program)  # idx[i] and out[i] are proven
    assert len(eqns_named(checked, "raise_if")) == 2  # out[i], idx[i]: one check (CSE)
    assert len(eqns_named(unchecked, "raise_if")) == 1
    x, idx = np.arange(4.0), np.array([3, -1, 0])
    np.testing.assert_array_equal(eval_program(program, x, idx)[0], gathered(x, idx))
    with pytest.raises(KernelError, match="index 4 is out of bounds"):
        eval_program(program, x, np.array([4]))


def affine_reads(x, lo, hi, a, c):
    s = 0.0
    for i in range(lo, hi):
        s += x[a * i + c] * (i + 1)
    return s


BIG = [2**30 - 1, 2**30, 2**31, 2**40, 2**61 - 20]
small_or_big = st.integers(-12, 12) | st.sampled_from(BIG + [-b for b in BIG])
any_int64 = small_or_big | st.sampled_from([2**62, -2**63, 2**63 - 1])


@settings(deadline=None)
@given(lo=small_or_big, span=st.integers(-2, 12), a=st.integers(-3, 3) | any_int64,
       c=any_int64)
def test_affine_reads_match_numpy_wherever_the_range_goes(lo, span, a, c):
    assert versions(AFFINE)
    """Either loop, chosen by the test, gives the uncompiled value (int64 arithmetic,
    wrapping as NumPy's) or its IndexError; a wrong proof would also trip the
    interpreter's check of every unclamped bound."""
    x = np.arange(1.0, 8.0)
    args = tuple(map(np.int64, (lo, lo + span, a, c)))
    try:
        with np.errstate(over="ignore"):
            want = affine_reads(x, *args)
    except IndexError as err:
        with pytest.raises(KernelError) as raised:
            eval_program(AFFINE, x, *args)
        assert (raised.value.error, str(raised.value)) == ("IndexError", str(err))
        return
    (got,) = eval_program(AFFINE, x, *args)
    assert got == want

AFFINE = optimized(affine_reads, "f8(f8[:], i8, i8, i8, i8)")
