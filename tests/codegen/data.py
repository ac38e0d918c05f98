"""Test inputs with the edge cases that break code generators; results are compared by
:func:`numpy_cases.assert_same` (imported here for the codegen tests)."""

from __future__ import annotations

import ctypes
import mmap
from typing import Any

import numpy as np
from numpy_cases import (
    assert_all_same,
    assert_arguments_after,
    assert_same,  # noqa: F401  (for the codegen tests)
    copy_arguments,
    snapshot,
)

from aotc.ops.core import ALL_PRIMITIVES
from aotc.ops.elementwise import UFUNC_OF

BOOL = np.dtype(bool)
INTS = [np.dtype(c) for c in ("i1", "i2", "i4", "i8")]
UINTS = [np.dtype(c) for c in ("u1", "u2", "u4", "u8")]
FLOATS = [np.dtype("f4"), np.dtype("f8")]
COMPLEX = [np.dtype("c8"), np.dtype("c16")]
DTYPES = [BOOL, *INTS, *UINTS, *FLOATS, *COMPLEX]


def edge_values(dtype: np.dtype) -> np.ndarray:
    """0, ±1, small values, shift counts around the bit width, MIN/MAX, NaN, ±inf, -0.0…"""
    if dtype == BOOL:
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        bits = 8 * dtype.itemsize
        values = [0, 1, 2, 3, 5, 7, 100, bits - 1, bits, bits + 1, info.max, info.max - 1,
                  info.max // 2 + 1]
        if dtype.kind == "i":
            values += [-1, -2, -3, -7, -100, -bits, info.min, info.min + 1]
        return np.array([v for v in values if info.min <= v <= info.max], dtype)
    if dtype.kind == "c":  # pairs of a few edge parts, built exactly (1j * inf is NaN + inf j)
        parts = [0.0, -0.0, 1.0, -2.5, 0.1, 1e30, float(np.finfo(dtype).max), np.inf,
                 -np.inf, np.nan]
        z = np.zeros(len(parts) ** 2, dtype)
        z.real, z.imag = np.repeat(parts, len(parts)), np.tile(parts, len(parts))
        return z
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0, 0.1, 100.0,
                     1e10, -1e10, 1e30, info.tiny, info.smallest_subnormal, info.max, -info.max,
                     np.inf, -np.inf, np.nan], dtype)


def pairs(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of edge values, as two 1-d arrays."""
    v = edge_values(dtype)
    x, y = np.meshgrid(v, v, indexing="ij")
    return x.ravel(), y.ravel()


def has_numpy_loop(prim: str, dtype: np.dtype) -> bool:
    """NumPy's ufunc has a loop taking exactly this dtype (no casting)."""
    ufunc = UFUNC_OF.get(ALL_PRIMITIVES[prim])
    if ufunc is None:
        return True
    want = dtype.char * ufunc.nin
    return any(t.split("->")[0] == want for t in ufunc.types)


def layouts(x: np.ndarray) -> dict[str, np.ndarray]:
    """``x`` (or, for 'broadcast', an array of its shape) in several memory layouts.

    C order, Fortran order (transposed strides), every axis reversed (negative strides),
    every other element of a larger buffer (non-unit strides), and a zero-stride
    broadcast of the first row.
    """
    out = {"c": np.ascontiguousarray(x), "fortran": np.asfortranarray(x),
           "reversed": np.flip(np.flip(x).copy())}
    if x.ndim:
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        out["strided"] = big[..., ::2]
        if x.shape[0]:
            out["broadcast"] = np.broadcast_to(x[:1], x.shape)
    return out


def random_values(dtype: np.dtype, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random values of ``dtype`` mixing small numbers with edge values."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    if dtype == BOOL:
        return rng.random(shape) < 0.7
    edges = edge_values(dtype)
    if dtype.kind == "c":
        small = rng.standard_normal(size) * 4 + 4j * rng.standard_normal(size)
    elif dtype.kind == "f":
        small = rng.standard_normal(size) * 4
    else:
        info = np.iinfo(dtype)
        small = rng.integers(max(info.min, -9), min(info.max, 9), size, endpoint=True)
    values = np.where(rng.random(size) < 0.15, rng.choice(edges, size), small.astype(dtype))
    return values.astype(dtype).reshape(shape)


def copy_layout(a: Any) -> Any:
    """A private copy of ``a`` with the very same strides (negative, zero, gaps), so a
    kernel can write into it without touching the caller's data or the reference's."""
    return copy_arguments([a])[0]


def check_call(kernel: Any, *args: Any, rtol: float = 0.0) -> list[np.ndarray]:
    """Run ``kernel`` on same-layout copies of ``args`` and the reference interpreter on
    plain copies; compare every output and every argument afterwards (the interpreter
    writes into its arguments as NumPy would; one it only reads must come back from the
    kernel as it was)."""
    from aotc.interpret import eval_program

    before = snapshot(args)
    mine, theirs = copy_arguments(args), snapshot(args)
    got = kernel(*mine)
    # Outputs from a run without the writes into arguments: the interpreter performs
    # them before reading outputs, and an output may be the argument object itself.
    want = eval_program(kernel.program.replace(writebacks=()), *snapshot(args))
    eval_program(kernel.program, *theirs)
    name = kernel.program.name
    assert_all_same(got, want, rtol=rtol, what=name)
    assert_arguments_after(name, mine, theirs, before, rtol=rtol)
    return got


def before_a_guard_page(values: np.ndarray, keep: list) -> np.ndarray:
    """A copy of ``values`` (C order) whose last byte is the last before a page that no
    access may touch: a read past it kills the process."""
    page = mmap.PAGESIZE
    pages = -(-values.nbytes // page) + 1
    area = mmap.mmap(-1, pages * page)
    start = ctypes.addressof(ctypes.c_char.from_buffer(area))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    assert libc.mprotect(start + (pages - 1) * page, page, 0) == 0  # PROT_NONE
    keep.append(area)
    out = np.frombuffer(area, values.dtype, values.size,
                        (pages - 1) * page - values.nbytes).reshape(values.shape)
    out[...] = values
    return out
