"""Float matrix products (``dot_general`` through :mod:`aotc.codegen.linalg.gemm`) against NumPy.

The GEMM sums in a different order than the naive loop (blocks of the contracted axis,
vector lanes, fused multiply-adds), so results are not bit-identical to NumPy's or to
any fixed order. What holds for every order is the classical bound (Higham, "Accuracy
and Stability of Numerical Algorithms", section 3.5): each element of a computed product
is a sum of ``k`` products evaluated with at most ``k`` roundings, so

    |fl(A @ B) - A @ B| <= gamma_k * (|A| @ |B|),   gamma_k = k u / (1 - k u),

``u = eps / 2`` the unit roundoff (an FMA only removes roundings). :func:`check` allows
``(k + 2) * eps * (|A| @ |B|)``: twice ``gamma_k`` plus slack, compared with a reference
computed in higher precision (float64 for float32 data, long double for float64), whose
own error is far below it. An empty contracted axis must give exact zeros.

Every kernel of a target is built into one library; the targets cover SSE (no FMA,
16-byte vectors), AVX2 (32-byte) and the host's widest, so each micro-kernel shape and
packing width runs. Sizes straddle the register blocks (6 or 12 rows, 2 vectors of
columns) and the cache blocks (``KC = 256``, ``MC`` 120/240, ``NC`` 1536/3072).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from aotc.codegen import TargetSpec, emit_llvm
from aotc.codegen.core.jit import JitLibrary
from aotc.codegen.linalg.gemm import blocking
from aotc.shapes import DimExpr

from .data import before_a_guard_page
from .programs import ProgramBuilder

TARGETS = ["x86-64-v2", "x86-64-v3", "native"]
DTYPES = ["f8", "f4"]
NN, NT, TN = ((1,), (0,)), ((1,), (1,)), ((0,), (0,))
NONE = ((), ())


def _dot(name: str, dtype: str, lhs: tuple, rhs: tuple, contracting, batch=NONE):
    pb = ProgramBuilder(f"{name}_{dtype}")
    x, y = pb.array(dtype, *lhs), pb.array(dtype, *rhs)
    return pb.build(pb.apply("dot_general", x, y, contracting=contracting, batch=batch))


def _programs(dtype: str) -> dict:
    return {
        "mm": _dot("mm", dtype, ("m", "k"), ("k2", "n"), NN),  # a @ b
        "mm_nt": _dot("mm_nt", dtype, ("m", "k"), ("n", "k2"), NT),  # a @ b.T
        "mm_tn": _dot("mm_tn", dtype, ("k", "m"), ("k2", "n"), TN),  # a.T @ b
        "bmm": _dot("bmm", dtype, ("s", "m", "k"), ("s2", "k2", "n"), ((2,), (1,)),
                    ((0,), (0,))),  # batched a @ b
        "mv": _dot("mv", dtype, ("m", "k"), ("k2",), NN),  # a @ v
        "vm": _dot("vm", dtype, ("k",), ("k2", "n"), TN),  # v @ b
        "vv": _dot("vv", dtype, ("k",), ("k2",), TN),  # v . w
        "bmv": _dot("bmv", dtype, ("s", "m", "k"), ("s2", "k2"), ((2,), (1,)),
                    ((0,), (0,))),  # batched a @ v
        "rows2": _dot("rows2", dtype, ("s", "m", "k"), ("k2", "n"), ((2,), (0,))),  # 2 free
        "bcast": _broadcast_b(dtype),
    }


def _broadcast_b(dtype: str):
    """``x @ w`` with a 3-D ``x``, as NumPy's matmul traces it: ``w`` broadcast to a
    batch (stride 0), then a batched product."""
    pb = ProgramBuilder(f"bcast_{dtype}")
    x, w = pb.array(dtype, "s", "m", "k"), pb.array(dtype, "k2", "n")
    shape = (DimExpr.sym("s"), DimExpr.sym("k2"), DimExpr.sym("n"))
    wb = pb.apply("broadcast_in_dim", w, broadcast_dimensions=(1, 2), shape=shape)
    return pb.build(pb.apply("dot_general", x, wb, contracting=((2,), (1,)),
                             batch=((0,), (0,))))


@functools.cache
def _library(target: str) -> dict:
    spec = TargetSpec.parse(target)
    if not set(spec.cpu_features) <= set(TargetSpec.parse("native").cpu_features):
        pytest.skip(f"this CPU cannot run {target} code")
    programs = {(d, name): p for d in DTYPES for name, p in _programs(d).items()}
    library = JitLibrary(list(programs.values()), spec)
    return dict(zip(programs, library.kernels, strict=True))


@pytest.fixture(scope="module", params=TARGETS)
def kernels(request):
    return _library(request.param)


def _exact(a: np.ndarray, b: np.ndarray, spec: str) -> np.ndarray:
    wide = np.longdouble if a.dtype == np.float64 else np.float64
    return np.einsum(spec, a.astype(wide), b.astype(wide))


def check(got: np.ndarray, a: np.ndarray, b: np.ndarray, spec: str) -> None:
    """``got`` is ``einsum(spec, a, b)`` within ``(k + 2) eps |a| |b|`` (see the module doc)."""
    exact = _exact(a, b, spec)
    assert got.shape == exact.shape and got.dtype == a.dtype
    k = _contracted(a, b, spec)
    scale = np.einsum(spec, np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    bound = (k + 2) * np.finfo(a.dtype).eps * scale
    error = np.abs(got.astype(exact.dtype) - exact)
    assert np.all(error <= bound), f"max error / bound {np.max(error / (bound + 1e-300))}"


def _contracted(a: np.ndarray, b: np.ndarray, spec: str) -> int:
    ins, out = spec.split("->")
    left = ins.split(",")[0]
    return int(np.prod([a.shape[left.index(c)] for c in left if c not in out], dtype=np.int64))


def _rand(rng: np.random.Generator, shape: tuple, dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


#: (m, k, n). Tiny products take the i-k-j loops (``linalg.FEW_PRODUCTS``); 1 to 4 rows
#: take ``gemm_rows`` (column blocks, single vectors, a masked last vector) or, with B
#: transposed, a matrix-vector product per row (B over 256 KiB is streamed row by row);
#: up to V columns of a B within 32 KiB take ``gemm_rows`` four rows at a time
#: (``linalg.narrow_product``); the others the GEMM (one vector wide up to V columns):
#: partial register blocks in m and n, sizes just above KC, MC (120 f64, 240 f32) and
#: NC (1536 f64, 3072 f32).
SHAPES = [(1, 1, 1), (7, 5, 3), (6, 16, 8), (250, 7, 1),
          (3, 20, 300), (4, 300, 9), (1, 64, 100), (2, 33, 257), (4, 1000, 47), (1, 3, 1000),
          (2, 700, 100), (3, 300, 257),  # B over 256 KiB: streamed by rows
          (65, 33, 17), (130, 257, 70), (12, 32, 16), (5, 40, 20), (7, 300, 3), (50, 40, 2),
          (121, 255, 9), (241, 258, 33), (5, 513, 1537), (5, 20, 3073), (250, 9, 1),
          (300, 70, 1), (9, 1000, 1),  # one column: the matrix-vector product
          (30, 3000, 5),  # a few columns of a B too large to read unpacked
          (64, 64, 64), (28, 9, 48), (61, 70, 40)]  # edge tiles of 4 and 8 rows, 1 vector


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_products(kernels, dtype):
    rng = np.random.default_rng(1)
    for m, k, n in SHAPES:
        a, b = _rand(rng, (m, k), dtype), _rand(rng, (k, n), dtype)
        check(kernels[dtype, "mm"](a, b)[0], a, b, "ik,kj->ij")
        bt = np.ascontiguousarray(b.T)
        check(kernels[dtype, "mm_nt"](a, bt)[0], a, bt, "ik,jk->ij")
        at = np.ascontiguousarray(a.T)
        check(kernels[dtype, "mm_tn"](at, b)[0], at, b, "ki,kj->ij")


@pytest.mark.parametrize("dtype", DTYPES)
def test_any_layout(kernels, dtype):
    """Transposed, strided, reversed and Fortran-ordered operands: packing reads them."""
    rng = np.random.default_rng(2)
    mm = kernels[dtype, "mm"]
    a, b = _rand(rng, (260, 300), dtype), _rand(rng, (300, 140), dtype)
    views = [
        (a.T[:140, :37], b[:37, :]),          # A transposed (unit-stride columns)
        (a[::2, ::3], b[:100, ::-1]),         # strided rows and columns, reversed B
        (np.asfortranarray(a), b[:300:1]),    # Fortran-ordered A
        (a[::-1, 5:], np.asfortranarray(b[5:])),  # reversed A, Fortran-ordered B
        (a[:9, :300], b.T.copy().T),          # B as a transposed view of a copy
    ]
    for x, y in views:
        check(mm(x, y)[0], x, y, "ik,kj->ij")


@pytest.mark.parametrize("dtype", DTYPES)
def test_small_products_read_nothing_past_their_operands(kernels, dtype):
    """Small products run unpacked (:mod:`aotc.codegen.linalg.gemm_small`): the kernels read
    ``A`` and ``B`` in place, edge tiles through masks. With each operand ending just
    before an inaccessible page, a column or row read past its end would crash."""
    rng = np.random.default_rng(7)
    keep: list = []
    for m, k, n in [(5, 3, 24), (13, 7, 17), (64, 64, 60), (1, 9, 33), (25, 40, 8),
                    (12, 16, 32), (7, 1, 5)]:
        a = before_a_guard_page(_rand(rng, (m, k), dtype), keep)
        b = before_a_guard_page(_rand(rng, (k, n), dtype), keep)
        check(kernels[dtype, "mm"](a, b)[0], a, b, "ik,kj->ij")
        at = before_a_guard_page(_rand(rng, (k, m), dtype), keep).T
        check(kernels[dtype, "mm"](at, b)[0], at, b, "ik,kj->ij")
        wide = before_a_guard_page(_rand(rng, (k, 2 * n), dtype), keep)[:, n:]
        check(kernels[dtype, "mm"](a, wide)[0], a, wide, "ik,kj->ij")


@pytest.mark.parametrize("dtype", DTYPES)
def test_gram_matrices(kernels, dtype):
    """``x.T @ x`` and ``x @ x.T`` (B is A transposed, in the same memory) compute the
    tiles on and above the diagonal and mirror them: exactly symmetric, within the
    bound. Products of one matrix that are not Gram matrices take every tile."""
    rng = np.random.default_rng(5)
    mm, nt, tn = (kernels[dtype, name] for name in ("mm", "mm_nt", "mm_tn"))
    for rows, cols in [(5, 7), (300, 50), (40, 130), (1000, 9), (257, 300)]:
        x = _rand(rng, (rows, cols), dtype)
        for got, a, b in [(mm(x.T, x)[0], x.T, x), (mm(x, x.T)[0], x, x.T),
                          (tn(x, x)[0], x.T, x), (nt(x, x)[0], x, x.T)]:
            check(got, a, b, "ik,kj->ij")
            assert np.array_equal(got, got.T)
        square = x[:min(x.shape), :min(x.shape)]
        check(mm(square, square)[0], square, square, "ik,kj->ij")  # same memory, not Gram
        shifted, fewer = x[1:, :], x[:, :-1]  # not B = A.T: offset, or a column fewer
        check(mm(shifted.T, x[:-1])[0], shifted.T, x[:-1], "ik,kj->ij")
        check(mm(x.T, fewer)[0], x.T, fewer, "ik,kj->ij")
        check(mm(fewer.T, x)[0], fewer.T, x, "ik,kj->ij")


@pytest.mark.parametrize("dtype", DTYPES)
def test_batched(kernels, dtype):
    rng = np.random.default_rng(3)
    for s, m, k, n in [(3, 7, 5, 9), (2, 65, 130, 33), (1, 1, 1, 1), (4, 13, 257, 20)]:
        a, b = _rand(rng, (s, m, k), dtype), _rand(rng, (s, k, n), dtype)
        check(kernels[dtype, "bmm"](a, b)[0], a, b, "sik,skj->sij")
        a2 = _rand(rng, (s, k, m), dtype).transpose(0, 2, 1)  # each A transposed
        check(kernels[dtype, "bmm"](a2, b)[0], a2, b, "sik,skj->sij")
        v = _rand(rng, (s, k), dtype)
        check(kernels[dtype, "bmv"](a, v)[0], a, v, "sik,sk->si")


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_merged(kernels, dtype):
    """Several axes of rows: merged into one when laid out as one (contiguous ``x`` of
    ``x @ w``, and the batch too when ``w`` is broadcast), else one product per outer
    index (strided, transposed ``x``)."""
    rng = np.random.default_rng(6)
    for s, m, k, n in [(3, 7, 5, 9), (4, 65, 40, 33), (2, 3, 300, 20), (5, 1, 8, 3),
                       (6, 10, 70, 1)]:
        x, w = _rand(rng, (s, m, k), dtype), _rand(rng, (k, n), dtype)
        layouts = [x, x[:, ::-1], _rand(rng, (m, s, k), dtype).transpose(1, 0, 2),
                   _rand(rng, (s, m, 2 * k), dtype)[:, :, ::2]]
        for xl in layouts:
            check(kernels[dtype, "rows2"](xl, w)[0], xl, w, "smk,kn->smn")
            check(kernels[dtype, "bcast"](xl, w)[0], xl, w, "smk,kn->smn")
            check(kernels[dtype, "bcast"](xl, w.T.copy().T)[0], xl, w, "smk,kn->smn")


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_products(kernels, dtype):
    """Matrix-vector (rows 4 at a time, and a transposed matrix by columns),
    vector-matrix and the dot product, at lengths around the vector blocks."""
    rng = np.random.default_rng(4)
    for m, k in [(1, 1), (3, 7), (4, 64), (5, 65), (33, 1000), (130, 257)]:
        a, v = _rand(rng, (m, k), dtype), _rand(rng, (k,), dtype)
        check(kernels[dtype, "mv"](a, v)[0], a, v, "ik,k->i")
        at = _rand(rng, (k, m), dtype).T  # unit-stride columns
        check(kernels[dtype, "mv"](at, v)[0], at, v, "ik,k->i")
        aw, vw = _rand(rng, (m, 2 * k), dtype)[:, ::2], _rand(rng, (3 * k,), dtype)[::3]
        check(kernels[dtype, "mv"](aw, vw)[0], aw, vw, "ik,k->i")
        b = _rand(rng, (k, m), dtype)
        check(kernels[dtype, "vm"](v, b)[0], v, b, "k,kj->j")
        w = _rand(rng, (k,), dtype)
        check(kernels[dtype, "vv"](v, w)[0], v, w, "k,k->")
        check(kernels[dtype, "vv"](v[::-1], w)[0], v[::-1], w, "k,k->")


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty(kernels, dtype):
    rng = np.random.default_rng(5)
    mm = kernels[dtype, "mm"]
    zero_k = mm(np.empty((5, 0), dtype), np.empty((0, 7), dtype))[0]
    assert zero_k.shape == (5, 7) and not zero_k.any()  # exact zeros
    assert mm(np.empty((0, 4), dtype), _rand(rng, (4, 3), dtype))[0].shape == (0, 3)
    assert mm(_rand(rng, (4, 3), dtype), np.empty((3, 0), dtype))[0].shape == (4, 0)
    assert not kernels[dtype, "mv"](np.empty((6, 0), dtype), np.empty(0, dtype))[0].any()
    assert kernels[dtype, "vv"](np.empty(0, dtype), np.empty(0, dtype))[0] == 0
    assert kernels[dtype, "bmm"](np.empty((0, 2, 3), dtype),
                                 np.empty((0, 3, 4), dtype))[0].shape == (0, 2, 4)


@pytest.mark.parametrize("m, k, n", [(7, 5, 9), (13, 20, 40), (64, 64, 64)])
def test_special_values(kernels, m, k, n):
    """NaN and inf propagate as in NumPy; the padding of edge blocks (copies of ``A``'s
    last row, zeros of ``B``) leaks nothing: a NaN in the last row of ``A`` stays in
    the last row of the result."""
    a = np.ones((m, k))
    b = np.ones((k, n))
    a[2, 3], b[1, 4], a[-1, -1] = np.nan, np.inf, np.nan
    got = kernels["f8", "mm"](a, b)[0]
    expected = a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[np.isfinite(expected)], expected[np.isfinite(expected)])


@pytest.mark.parametrize("target, vector_bytes", [("x86-64-v2", 16), ("x86-64-v3", 32),
                                                  ("x86-64-v4", 64)])
def test_micro_kernel_fits_the_target(target, vector_bytes):
    """The micro-kernel is sized by the target's registers, never wider, and uses FMA
    only where the target has it (without, ``llvm.fma`` would be a libm call)."""
    spec = TargetSpec.parse(target)
    assert spec.vector_bytes == vector_bytes
    text = emit_llvm([("mm", _programs("f8")["mm"])], spec, optimized=False)
    blk = blocking(np.dtype("f8"), vector_bytes, spec.isa.vector_registers(vector_bytes))
    fma = ".fma" if vector_bytes > 16 else ""
    name = f"aotc.gemm.kernel.float64.{blk.mr}x{blk.nr}.{vector_bytes}{fma}"
    assert ("llvm.fma" in text) == bool(fma)
    start = text.replace('"', "").index(f"define internal void @{name}(")
    text = text.replace('"', "")
    kernel = text[start:text.index("\n}\n", start)]
    lanes = vector_bytes // 8
    assert f"<{lanes} x double>" in kernel and f"<{2 * lanes} x double>" not in kernel


def test_a_long_product_can_be_interrupted(kernels):
    """The GEMM polls the runtime after every cache block (Ctrl-C reaches the wrapper);
    the hook is cleared again for the other tests, which share the kernel."""
    mm = kernels["f8", "mm"]
    calls = []
    a, b = np.ones((300, 300)), np.ones((300, 300))
    mm.poll = lambda: calls.append(1) or True
    try:
        with pytest.raises(KeyboardInterrupt):
            mm(a, b)
    finally:
        mm.poll = None
    assert calls == [1]
    np.testing.assert_array_equal(mm(a, b)[0], np.full((300, 300), 300.0))
