"""The AVX2 and AVX-512 quicksorts of :mod:`aotc.codegen.sorting.quicksort`, called directly on
keys.

Kernels reach it only on rows long enough and inputs friendly enough for its common path
(``tests/test_sorting.py`` checks NumPy's stable results through it on this CPU's
native build); here each path is forced: the heapsort that finishes a range past the
depth limit (``depth=0``), rows of few distinct keys (the least key's copies set apart)
and rows of the greatest key alone.
Results are compared with ``np.sort`` of the same unsigned keys, exactly.

Each register size is tested where this CPU runs it: the AVX2 build on every AVX2 CPU
(AVX-512 ones included), the AVX-512 build on AVX-512 CPUs only. SSE-only builds keep
the radix sort (the last test checks that choice).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvmlite import ir

from aotc.codegen import TargetSpec
from aotc.codegen.core.dtypes import I64, PTR
from aotc.codegen.core.module import object_from_text
from aotc.codegen.sorting import quicksort
from aotc.codegen.sorting.radix import sort_values_function
from aotc.codegen.sorting.sortkeys import keys_of
from aotc.codegen.targets.spec import jit_target_machine

NATIVE = TargetSpec.parse("native")
#: Register sizes of the quicksort, each run only where this CPU has them.
REGISTERS = [pytest.param(v, id=f"{8 * v}-bit", marks=pytest.mark.skipif(
    NATIVE.vector_bytes < v, reason=f"this CPU has no {8 * v}-bit vectors"))
    for v in (32, 64)]
SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
#: Lengths around the network sizes (one register to 16), the sample sizes and beyond.
SIZES = [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512,
         513, 1000, 1023, 1024, 1025, 4095, 4097, 10_000, 70_001]


@functools.cache
def _sorts(vector_bytes: int) -> dict[str, Any]:
    """``void sort_uN(x, n, depth)`` for 32- and 64-bit keys in registers of
    ``vector_bytes``, one library."""
    module = ir.Module()
    for width, dtype in ((32, "u4"), (64, "u8")):
        keys = quicksort.keys_for(NATIVE.isa, keys_of(np.dtype(dtype)), vector_bytes)
        inner = quicksort.quicksort_function(module, keys, vector_bytes)
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, I64]),
                         f"test_sort_u{width}")
        b = ir.IRBuilder(fn.append_basic_block())
        b.call(inner, list(fn.args))
        b.ret_void()
    tm = jit_target_machine(NATIVE)
    module.triple, module.data_layout = tm.triple, str(tm.target_data)
    builder = llvm.JITLibraryBuilder().add_object_img(object_from_text(str(module), NATIVE))
    for width in (32, 64):
        builder.export_symbol(f"test_sort_u{width}")
    tracker = builder.link(llvm.create_lljit_compiler(tm, use_jit_link=True),
                           f"aotc_test_quicksort{vector_bytes}")
    return {"tracker": tracker, **{f"u{w}": SIGNATURE(tracker[f"test_sort_u{w}"])
                                   for w in (32, 64)}}


def _sorted(keys: np.ndarray, vector_bytes: int, depth: int | None = None) -> np.ndarray:
    """The keys sorted in place by the compiled quicksort (as values: in the quicksort's
    signed keys when it takes those)."""
    signed = quicksort.keys_for(NATIVE.isa, keys_of(keys.dtype), vector_bytes).signed
    x = keys ^ keys.dtype.type(1 << (8 * keys.itemsize - 1) if signed else 0)
    levels = 2 * len(keys).bit_length() if depth is None else depth
    _sorts(vector_bytes)[f"u{8 * keys.itemsize}"](x.ctypes.data, len(keys), levels)
    return x


def _rows(dtype: str, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    top = np.iinfo(dtype).max
    return {
        "random": rng.integers(0, top, n, dtype=dtype, endpoint=True),
        "few": rng.integers(0, 3, n).astype(dtype),
        "extremes": rng.choice(np.array([0, 1, top - 1, top], dtype), n),
        "greatest": np.full(n, top, dtype),
        "ascending": np.arange(n, dtype=dtype),
        "descending": np.arange(n, dtype=dtype)[::-1].copy(),
        "organ pipe": np.concatenate([np.arange(n // 2), np.arange(n - n // 2)[::-1]]
                                     ).astype(dtype),
    }


@pytest.mark.parametrize("vector_bytes", REGISTERS)
@pytest.mark.parametrize("dtype", ["u4", "u8"])
def test_every_length_and_shape_of_row(vector_bytes: int, dtype: str) -> None:
    rng = np.random.default_rng(11)
    for n in SIZES:
        for shape, keys in _rows(dtype, n, rng).items():
            got = _sorted(keys, vector_bytes)
            assert np.array_equal(got, np.sort(keys)), (n, shape)


@pytest.mark.parametrize("vector_bytes", REGISTERS)
@pytest.mark.parametrize("dtype", ["u4", "u8"])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_past_the_depth_limit_a_heapsort_finishes(vector_bytes: int, dtype: str,
                                                  depth: int) -> None:
    """``depth=0`` is all heapsort; small depths hand the ranges left to it part way."""
    rng = np.random.default_rng(depth)
    for n in (129, 1000, 4097, 30_000):
        for shape, keys in _rows(dtype, n, rng).items():
            got = _sorted(keys, vector_bytes, depth=depth)
            assert np.array_equal(got, np.sort(keys)), (n, shape)


def test_avx2_and_avx512_targets_take_the_quicksort() -> None:
    """The row sort names its algorithm: SSE builds keep the radix sort."""
    for vector_bytes, quick in ((16, False), (32, True), (64, True)):
        for dtype, wide in (("f8", True), ("i4", True), ("i2", False), ("u1", False)):
            fn = sort_values_function(ir.Module(), np.dtype(dtype), vector_bytes)
            assert fn.name.endswith(".quick") == (quick and wide), (vector_bytes, dtype)
