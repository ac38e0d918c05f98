"""``np.linalg.solve``, ``inv``, ``det`` and ``cholesky``: LAPACK's algorithms as loops
for small matrices, NumPy's own LAPACK above (:mod:`.lapack`).

NumPy calls LAPACK (``gesv``, ``getrf``, ``potrf``), and so does a kernel (see
:mod:`.lapack`), but for complex matrices and matrices of order up to
:data:`.lapack.SMALL` in a loop or a stack: those run the unblocked forms of the same
algorithms, written as ``lax.fori_loop`` over the matrix
order ``n`` (a runtime size): LU with partial pivoting (``getf2``: pick the largest
``|a[i, k]|`` at or below the diagonal, swap rows, scale the column, rank-1 update of the
trailing block ``lu[k+1:, k+1:]``, all in place), then forward and back substitution
(``getrs``: one row of the solution per step, a dot product with the rows solved before).
Cholesky works on the whole matrix under masks built from ``iota`` (columns before, at or
after ``k``). ``O(n^3)`` in all, as LAPACK's; results differ from NumPy's by rounding
only (LAPACK blocks and orders its sums differently).

NumPy's errors are ``LinAlgError``, which a kernel cannot name: it raises the nearest
builtin base (``ValueError``) with the message ``"LinAlgError: ..."``, as aotc does for
any user exception class, and the module's call raises ``np.linalg.LinAlgError`` of the
rest of the message (``templates/runtime.py``), as NumPy would. ``det`` follows NumPy's
``umath_linalg``: the sign and the log of ``|det|`` summed over U's diagonal, ``sign *
exp(logdet)`` (0.0 when singular). ``inv(a)`` is ``solve(a, eye(n))``, as NumPy's.
Stacks ``(..., n, n)`` loop over the matrices of the stack.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import DimExpr, size
from ..tracing.tracer import Tracer, as_tracer, current
from ..types import real_dtype
from .creation import full_from_dims, iota
from .functions_base import where
from .histograms import raise_if
from .lapack import by_order
from .linalg import dot_general
from .loops import LINALG_ERROR, call_loop
from .reductions import prod, sum_
from .statistics import argmax
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
F64 = np.dtype(np.float64)


def _fail_if(cond: Tracer, message: str) -> None:
    raise_if(cond, f"LinAlgError: {message}", LINALG_ERROR)


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _result_dtype(*arrays: Tracer, complex_ok: bool = False) -> np.dtype:
    """NumPy's ``_commonType``: single precision only when every input is (float32 or
    complex64), complex when any input is (where the function takes complex matrices),
    float64 otherwise (integers and booleans become float64)."""
    single = all(a.dtype in (np.float32, np.complex64) for a in arrays)
    if any(a.dtype.kind == "c" for a in arrays):
        if not complex_ok:
            raise current().error("np.linalg of complex matrices is not supported yet for "
                                  "this function (solve, inv, det and slogdet take them)",
                                  hint="solve the real and imaginary parts as a real "
                                       "system of twice the size")
        return np.dtype(np.complex64 if single else np.complex128)
    return np.dtype(np.float32) if single else F64


def square(a: Any) -> Tracer:
    x = as_tracer(a)
    if x.ndim < 2:
        raise current().error(f"{x.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")
    n, m = x.aval.shape[-2:]
    if n != m:
        if n.is_const and m.is_const:
            raise current().error("Last 2 dimensions of the array must be square")
        current().check("==", n, m, LINALG_ERROR,
                        "LinAlgError: Last 2 dimensions of the array must be square")
        x = lax.refine_shape(x, x.aval.shape[:-1] + (n,))
    return x


class _Masks:
    """``iota`` rows and columns of an ``n x n`` matrix, built once outside the loops."""

    def __init__(self, n: DimExpr) -> None:
        self.n = n
        self.index = iota(I64, (n,), 0)
        self.rows = iota(I64, (n, DimExpr.const(1)), 0)
        self.cols = iota(I64, (DimExpr.const(1), n), 1)


def _lu(a: Tracer, masks: _Masks) -> tuple[Tracer, Tracer, Tracer, Tracer]:
    """LAPACK's ``getf2`` on one matrix: ``(lu, perm, swaps, singular)``, with ``L``
    (unit diagonal) below and ``U`` on and above the diagonal of ``lu``, ``a[perm] = L @
    U``, the number of row swaps, and whether a pivot was exactly zero (LAPACK's
    ``info > 0``: the factorization is still complete, as LAPACK's)."""
    def step(k: Any, state: Any) -> Any:
        # The row swap and the rank-1 update of the trailing block write in place: the
        # saved row is a row's copy (passes.snapshots), not the matrix's.
        lu, perm, swaps, singular = state
        p = _u(np.add, k, argmax(_u(np.absolute, lu[k:, k])))
        row_k, index_k = lax.fresh(lu[k]), lax.fresh(perm[k])  # copies, not views
        lu[k] = lu[p]
        lu[p] = row_k
        perm[k] = perm[p]
        perm[p] = index_k
        swaps = _u(np.add, swaps, lax.convert(_u(np.not_equal, p, k), I64))
        pivot = lu[k, k]
        zero = _u(np.equal, pivot, 0)
        singular = _u(np.logical_or, singular, zero)
        below = _u(np.add, k, 1)
        lu[below:, k] = _u(np.true_divide, lu[below:, k], where(zero, 1, pivot))
        lu[below:, below:] = _u(np.subtract, lu[below:, below:],
                                _u(np.multiply, lu[below:, k][:, None], lu[k, below:][None, :]))
        return lu, perm, swaps, singular

    # (a copy made here: ``a`` may come from outside the branch running this)
    start = (lax.fresh(a), masks.index, np.int64(0), np.bool_(False))
    lu, perm, swaps, singular = lax.fori_loop(0, lax.dim_value(masks.n), step, start)
    return lu, perm, swaps, singular


def _substitute(lu: Tracer, perm: Tracer, b: Tracer, masks: _Masks) -> Tracer:
    """``getrs``: ``x`` with ``L @ U @ x = b[perm]`` (``b`` of shape ``(n, k)``)."""
    y = b[perm]

    def forward(i: Any, y: Any) -> Any:
        y[i] = _u(np.subtract, y[i], dot_general(lu[i, :i], y[:i], ((0,), (0,))))
        return y

    def backward(t: Any, x: Any) -> Any:
        i = _u(np.subtract, _u(np.subtract, lax.dim_value(masks.n), 1), t)
        after = _u(np.add, i, 1)
        dot = dot_general(lu[i, after:], x[after:], ((0,), (0,)))
        x[i] = _u(np.true_divide, _u(np.subtract, x[i], dot), lu[i, i])
        return x

    n = lax.dim_value(masks.n)
    return cast(Tracer, lax.fori_loop(0, n, backward, lax.fori_loop(0, n, forward, y)))


#: The core shape and dtype of one result of a function of one matrix.
Core = tuple[tuple[DimExpr, ...], np.dtype]


def per_matrix(x: Tracer, extra: list[Tracer], one: Callable[..., Sequence[Tracer]],
               cores: Sequence[Core]) -> list[Tracer]:
    """``one`` (one array per entry of ``cores``) on each matrix of a stack (and the
    matching matrix of each of ``extra``, broadcast to the stack): a loop over the
    flattened leading axes, each result written into its own stack."""
    batch = x.aval.shape[:-2]
    if not batch:
        return list(one(x, *extra))
    count = size(batch)
    flat = lax.reshape(x, (count,) + x.aval.shape[-2:])
    flat_extra = [lax.reshape(lax.broadcast_to(e, batch + e.aval.shape[-2:]),
                              (count,) + e.aval.shape[-2:]) for e in extra]
    start = [full_from_dims((count,) + core, 0, dtype) for core, dtype in cores]

    def body(i: Any, outs: Any) -> Any:
        for out, value in zip(outs, one(flat[i], *(e[i] for e in flat_extra)), strict=True):
            out[i] = value
        return outs

    outs = lax.fori_loop(0, lax.dim_value(count), body, start)
    return [lax.reshape(out, batch + core) for out, (core, _) in zip(outs, cores, strict=True)]


def _per_matrix(x: Tracer, extra: list[Tracer], one: Callable[..., Tracer],
                out_core: tuple[DimExpr, ...], dtype: np.dtype) -> Tracer:
    """:func:`per_matrix` of a function with one result."""
    return per_matrix(x, extra, lambda *m: (one(*m),), [(out_core, dtype)])[0]


def _solve_one(a: Tracer, b: Tracer) -> Tracer:
    masks = _Masks(a.aval.shape[0])
    lu, perm, _, singular = _lu(a, masks)
    _fail_if(singular, "Singular matrix")
    return _substitute(lu, perm, b, masks)


def solve(a: Any, b: Any) -> Tracer:
    x, rhs = square(a), as_tracer(b)
    dtype = _result_dtype(x, rhs, complex_ok=True)
    x, rhs = lax.convert(x, dtype), lax.convert(rhs, dtype)
    n = x.aval.shape[-1]
    vector = rhs.ndim == 1
    if vector:
        rhs = rhs[:, None]
    if rhs.ndim < 2:
        raise current().error("np.linalg.solve: b must be at least one-dimensional")
    if rhs.aval.shape[-2] != n:
        current().check("==", rhs.aval.shape[-2], n, "ValueError",
                        "solve: Input operand 1 has a mismatch in its core dimension 0 (size "
                        "{lhs} is different from {rhs})")
        rhs = lax.refine_shape(rhs, rhs.aval.shape[:-2] + (n,) + rhs.aval.shape[-1:])
    if rhs.ndim > 2 or x.ndim > 2:
        batch = _broadcast_batch(x.aval.shape[:-2], rhs.aval.shape[:-2])
        x = lax.broadcast_to(x, batch + x.aval.shape[-2:])
    k = rhs.aval.shape[-1]

    def lapack() -> Tracer:
        batch = x.aval.shape[:-2]
        b = lax.broadcast_to(rhs, batch + (n, k)) if rhs.ndim > 2 else rhs
        return call_loop("solve", "dd->d", [x, b], [batch + (n, k)],
                         error="Singular matrix", cast=dtype)[0]
    result = by_order(x, lambda: _per_matrix(x, [rhs], _solve_one, (n, k), dtype), lapack)
    return result[..., 0] if vector else result


def _broadcast_batch(p: tuple[DimExpr, ...], q: tuple[DimExpr, ...]) -> tuple[DimExpr, ...]:
    ndim = max(len(p), len(q))
    p = (DimExpr.const(1),) * (ndim - len(p)) + p
    q = (DimExpr.const(1),) * (ndim - len(q)) + q
    out = []
    for d, e in zip(p, q, strict=True):
        if d == e or (e.is_const and e.value == 1):
            out.append(d)
        elif d.is_const and d.value == 1:
            out.append(e)
        else:
            current().check("==", d, e, "ValueError",
                            "np.linalg.solve: the stacks of a and b do not broadcast "
                            "({lhs} vs {rhs})")
            out.append(d)
    return tuple(out)


def inv(a: Any) -> Tracer:
    x = square(a)
    dtype = _result_dtype(x, complex_ok=True)
    x = lax.convert(x, dtype)
    n = x.aval.shape[-1]
    eye = lax.convert(_u(np.equal, iota(I64, (n, n), 0), iota(I64, (n, n), 1)), dtype)
    return by_order(x, lambda: _per_matrix(x, [eye], _solve_one, (n, n), dtype),
                    lambda: call_loop("inv", "d->d", [x], [x.aval.shape],
                                      error="Singular matrix", cast=dtype)[0])


def _sign_and_log(a: Tracer) -> tuple[Tracer, Tracer]:
    """``sign, log|det|`` of one matrix, as ``umath_linalg``'s: ``0, -inf`` when singular;
    the log is real, the sign of ``a``'s dtype."""
    masks = _Masks(a.aval.shape[0])
    lu, _, swaps, singular = _lu(a, masks)
    diagonal = sum_(where(_u(np.equal, masks.rows, masks.cols), lu, 0), axis=1)
    size_ = _u(np.absolute, diagonal)
    logdet = where(singular, -np.inf, sum_(_u(np.log, size_)))
    if a.dtype.kind == "c":  # the phases' product, with the swaps' sign
        phase = prod(_u(np.true_divide, diagonal, where(size_ == 0, 1, size_)))
        odd = _u(np.equal, _u(np.remainder, swaps, 2), 1)
        sign = where(singular, 0, where(odd, -phase, phase))
    else:
        negatives = sum_(lax.convert(_u(np.less, diagonal, 0), I64))
        odd = _u(np.equal, _u(np.remainder, _u(np.add, swaps, negatives), 2), 1)
        sign = where(singular, 0, where(odd, -1, 1))
    return lax.convert(sign, a.dtype), lax.convert(logdet, real_dtype(a.dtype))


def _det_one(a: Tracer) -> Tracer:
    sign, logdet = _sign_and_log(a)
    return _u(np.multiply, sign, _u(np.exp, logdet))


def det(a: Any) -> Tracer:
    x = square(a)
    dtype = _result_dtype(x, complex_ok=True)
    x = lax.convert(x, dtype)
    return by_order(x, lambda: _per_matrix(x, [], _det_one, (), dtype),
                    lambda: call_loop("det", "d->d", [x], [x.aval.shape[:-2]], cast=dtype)[0])


def slogdet(a: Any) -> tuple[Tracer, Tracer]:
    x = square(a)
    dtype = _result_dtype(x, complex_ok=True)
    x = lax.convert(x, dtype)

    def small() -> tuple[Tracer, Tracer]:
        sign, logdet = per_matrix(x, [], _sign_and_log, [((), dtype), ((), real_dtype(dtype))])
        return sign, logdet

    def lapack() -> tuple[Tracer, Tracer]:
        sign, logdet = call_loop("slogdet", "d->dd", [x], [x.aval.shape[:-2]] * 2, cast=dtype)
        return sign, logdet

    result: tuple[Tracer, Tracer] = by_order(x, small, lapack)
    return result


def _cholesky_one(a: Tracer) -> Tracer:
    """LAPACK's ``potf2`` (lower): column ``j`` of ``L`` from the columns before it."""
    masks = _Masks(a.aval.shape[0])
    rows, cols = masks.index, masks.cols

    def step(j: Any, state: Any) -> Any:
        low, bad = state
        row = low[j]  # zero at and after column j
        d = _u(np.subtract, a[j, j], sum_(_u(np.multiply, row, row)))
        bad = _u(np.logical_or, bad, _u(np.less_equal, d, 0))  # NaN goes on, as NumPy's
        ljj = _u(np.sqrt, d)
        dots = sum_(_u(np.multiply, low, row[None, :]), axis=1)
        column = _u(np.multiply, _u(np.subtract, a[:, j], dots), _u(np.true_divide, 1, ljj))
        column = where(_u(np.greater, rows, j), column,
                       where(_u(np.equal, rows, j), ljj, 0))
        return where(_u(np.equal, cols, j), column[:, None], low), bad

    start = (full_from_dims(a.aval.shape, 0, a.dtype), np.bool_(False))
    low, bad = lax.fori_loop(0, lax.dim_value(masks.n), step, start)
    _fail_if(bad, "Matrix is not positive definite")
    return cast(Tracer, low)


def cholesky(a: Any, upper: bool = False) -> Tracer:
    x = square(a)
    dtype = _result_dtype(x)
    x = lax.convert(x, dtype)
    n = x.aval.shape[-1]

    def small() -> Tracer:
        low = _per_matrix(x, [], _cholesky_one, (n, n), dtype)
        return apply_ufunc(np.conjugate, _swap_last(low)) if upper else low

    return by_order(x, small, lambda: call_loop(
        "cholesky_up" if upper else "cholesky_lo", "d->d", [x], [x.aval.shape],
        error="Matrix is not positive definite", cast=dtype)[0])


def _swap_last(x: Tracer) -> Tracer:
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return lax.transpose(x, perm)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.linalg.solve: solve, np.linalg.inv: inv, np.linalg.det: det,
    np.linalg.cholesky: cholesky, np.linalg.slogdet: slogdet,
}
