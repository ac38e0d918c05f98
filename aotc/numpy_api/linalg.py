"""Linear algebra as ``dot_general`` decompositions: dot, matmul, inner, outer, vdot,
trace, ``linalg.norm`` and NumPy 2's ``vecdot``/``matvec``/``vecmat`` ufuncs, with NumPy's
rank rules and dtype promotion."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from numpy.linalg import _linalg as numpy_linalg

from .. import lax
from ..ops.elementwise import imag_p, real_p
from ..ops.linalg import dot_general_p
from ..shapes import DimExpr, broadcast_shapes
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import eye
from .functions_base import where
from .reductions import max_, min_, sum_
from .shaping import ravel
from .ufuncs import apply_ufunc, promote_types


def _pair(a: Any, b: Any) -> tuple[Tracer, Tracer]:
    dtype = promote_types(a, b)
    return lax.convert(as_tracer(a), dtype), lax.convert(as_tracer(b), dtype)


#: NumPy's message for ``a @ b`` whose inner sizes differ (``np.matmul``'s gufunc).
MATMUL_MISMATCH = ("matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                   "gufunc signature (n?,k),(k,m?)->(n?,m?) (size {rhs} is different from "
                   "{lhs})")


def dot_general(x: Tracer, y: Tracer, contract: tuple[tuple[int, ...], tuple[int, ...]],
                batch: tuple[tuple[int, ...], tuple[int, ...]] = ((), ()),
                message: str = "shapes not aligned for matrix product: size {lhs} against "
                               "{rhs}") -> Tracer:
    ctx = current()
    for a, b in list(zip(*contract, strict=True)) + list(zip(*batch, strict=True)):
        da, db = x.aval.shape[a], y.aval.shape[b]
        if da != db:
            ctx.check("==", da, db, "ValueError", message)
    return lax.bind1(dot_general_p, x.atom, y.atom, contracting=contract, batch=batch)


def dot(a: Any, b: Any, out: Any = None) -> Tracer:
    if out is not None:
        raise current().error("np.dot: out= is not supported",
                              hint="use the returned array: buf[...] = np.dot(a, b)")
    x, y = _pair(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return apply_ufunc(np.multiply, x, y)
    rhs_axis = 0 if y.ndim == 1 else y.ndim - 2
    return dot_general(x, y, ((x.ndim - 1,), (rhs_axis,)))


def matmul(a: Any, b: Any, **kwargs: Any) -> Tracer:
    if any(v is not None for v in kwargs.values()):
        raise current().error("np.matmul: extra arguments are not supported")
    x, y = _pair(a, b)
    if x.ndim == 0 or y.ndim == 0:
        raise current().error("matmul: Input operand does not have enough dimensions")
    squeeze_lhs, squeeze_rhs = x.ndim == 1, y.ndim == 1
    one = DimExpr.const(1)
    if squeeze_lhs:
        x = lax.reshape(x, (one,) + x.aval.shape)
    if squeeze_rhs:
        y = lax.reshape(y, y.aval.shape + (one,))
    try:
        batch, eqs = broadcast_shapes(x.aval.shape[:-2], y.aval.shape[:-2])
    except ValueError as err:
        raise current().error(str(err)) from None
    for eq in eqs:
        current().check("==", eq.lhs, eq.rhs, "ValueError",
                        "matmul: batch sizes {lhs} and {rhs} do not match")
    x = lax.broadcast_to(x, batch + x.aval.shape[-2:])
    y = lax.broadcast_to(y, batch + y.aval.shape[-2:])
    nb = len(batch)
    out = dot_general(x, y, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))),
                      MATMUL_MISMATCH)
    shape = out.aval.shape
    if squeeze_lhs:
        shape = shape[:-2] + shape[-1:]
    if squeeze_rhs:
        shape = shape[:-1]
    return lax.reshape(out, shape)


def inner(a: Any, b: Any) -> Tracer:
    x, y = _pair(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return apply_ufunc(np.multiply, x, y)
    return dot_general(x, y, ((x.ndim - 1,), (y.ndim - 1,)))


def vdot(a: Any, b: Any) -> Tracer:
    """``sum(conj(a) * b)`` over the flattened arrays (the first is conjugated). Complex
    vectors are that sum itself, which fuses into one pass summed pairwise (NumPy calls
    BLAS's ``zdotc``: another order, the same accuracy); the real ones a ``dot_general``."""
    x, y = _pair(ravel(a), ravel(b))
    if x.dtype.kind != "c":
        return inner(x, y)
    if x.aval.shape[0] != y.aval.shape[0]:
        current().check("==", x.aval.shape[0], y.aval.shape[0], "ValueError",
                        "cannot reshape array of size {rhs} into shape ({lhs},)")
        y = lax.refine_shape(y, x.aval.shape)
    return sum_(apply_ufunc(np.multiply, apply_ufunc(np.conjugate, x), y))


def outer(a: Any, b: Any, out: Any = None) -> Tracer:
    if out is not None:
        raise current().error("np.outer: out= is not supported",
                              hint="use the returned array: buf[...] = np.outer(a, b)")
    x, y = ravel(a), ravel(b)
    return apply_ufunc(np.multiply, x[:, None], y[None, :])


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Tracer:
    x = as_tracer(a)
    if x.ndim != 2 or (axis1, axis2) != (0, 1) or out is not None:
        raise current().error("np.trace: only 2-D arrays over axes (0, 1) are supported")
    n, m = x.shape
    mask = eye(n, m, k=int(offset), dtype=bool)
    return sum_(where(mask, x, 0), dtype=dtype)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tracer:
    v = as_tracer(x)
    if v.dtype.kind in "biu":
        v = lax.convert(v, np.dtype(np.float64))
    vector = (axis is not None and not isinstance(axis, tuple)) or (axis is None and v.ndim == 1)
    if ord is None or ord == "fro" or (ord == 2 and vector):
        if v.dtype.kind == "c":  # |z|**2 = re**2 + im**2, in the parts' dtype
            re, im = (lax.bind1(p, v.atom) for p in (real_p, imag_p))
            squares = apply_ufunc(np.add, apply_ufunc(np.multiply, re, re),
                                  apply_ufunc(np.multiply, im, im))
        else:
            squares = apply_ufunc(np.multiply, v, v)
        return apply_ufunc(np.sqrt, sum_(squares, axis=axis, keepdims=keepdims))
    if vector and ord in (1, np.inf, -np.inf):
        mag = apply_ufunc(np.absolute, v)
        reduce = {1: sum_, np.inf: max_, -np.inf: min_}[ord]
        return reduce(mag, axis=axis, keepdims=keepdims)
    if vector and ord == 0:  # how many are nonzero, in the real dtype
        part = np.dtype(np.float32) if v.dtype in (np.float32, np.complex64) else \
            np.dtype(np.float64)
        return sum_(lax.convert(apply_ufunc(np.not_equal, v, 0), part), axis=axis,
                    keepdims=keepdims)
    if vector and isinstance(ord, (int, float)) and not isinstance(ord, bool):
        powered = apply_ufunc(np.power, apply_ufunc(np.absolute, v), ord)
        total = sum_(powered, axis=axis, keepdims=keepdims)
        return apply_ufunc(np.power, total, np.asarray(1 / ord, total.dtype)[()])
    raise current().error(f"np.linalg.norm with ord={ord!r} is not supported",
                          hint="use ord=None, 'fro', 1, 2, np.inf or -np.inf for vectors")


def _conj(x: Tracer) -> Tracer:
    return apply_ufunc(np.conjugate, x) if x.dtype.kind == "c" else x


def vecdot(a: Any, b: Any) -> Tracer:
    """``sum(conj(a) * b)`` over the last axis, the others broadcast."""
    x, y = _pair(a, b)
    return sum_(apply_ufunc(np.multiply, _conj(x), y), axis=-1)


def matvec(a: Any, b: Any) -> Tracer:
    """``a @ b`` of stacks of matrices and vectors: ``(..., m, n), (..., n) -> (..., m)``."""
    x, y = _pair(a, b)
    return cast(Tracer, matmul(x, y[..., None])[..., 0])


def vecmat(a: Any, b: Any) -> Tracer:
    """``conj(a) @ b``: ``(..., n), (..., n, m) -> (..., m)``."""
    x, y = _pair(a, b)
    return cast(Tracer, matmul(_conj(x)[..., None, :], y)[..., 0, :])


def multi_dot(arrays: Any, *, out: Any = None) -> Tracer:
    """NumPy's: the cheaper of ``(AB)C`` and ``A(BC)`` for three arrays (chosen at run
    time when the shapes leave it open: the order changes the rounding), NumPy's optimal
    chain order for more when every shape is known at build time, left to right
    otherwise; a 1-D first (last) array is a row (column)."""
    ctx = current()
    if out is not None:
        raise ctx.error("np.linalg.multi_dot: out= is not supported")
    items = [as_tracer(a) for a in arrays]
    if len(items) < 2:
        raise ctx.error("Expecting at least two arrays.")
    if len(items) == 2:
        return dot(items[0], items[1])
    first, last = items[0].ndim, items[-1].ndim
    if first == 1:
        items[0] = items[0][None, :]
    if last == 1:
        items[-1] = items[-1][:, None]
    if any(m.ndim != 2 for m in items):
        raise ctx.error("np.linalg.multi_dot: the arrays must be two-dimensional (the "
                        "first and last may be 1-D)")
    result = _three(*items) if len(items) == 3 else _chain(items)
    if first == 1 and last == 1:
        return cast(Tracer, result[0, 0])
    return ravel(result) if first == 1 or last == 1 else result


def _three(a: Tracer, b: Tracer, c: Tracer) -> Tracer:
    (a0, a1b0), (b1c0, c1) = a.aval.shape, c.aval.shape
    cost_left = a0 * b1c0 * (a1b0 + c1)
    cost_right = a1b0 * c1 * (a0 + b1c0)
    gap = cost_left - cost_right
    if gap.is_const:
        return dot(dot(a, b), c) if gap.value < 0 else dot(a, dot(b, c))
    return cast(Tracer, lax.cond(lax.dim_value(cost_left) < lax.dim_value(cost_right),
                                 lambda x, y, z: dot(dot(x, y), z),
                                 lambda x, y, z: dot(x, dot(y, z)), a, b, c))


def _chain(items: list[Tracer]) -> Tracer:
    dims = [d for m in items for d in m.aval.shape]
    if not all(d.is_const for d in dims):
        result = items[0]
        for m in items[1:]:
            result = dot(result, m)
        return result
    order = numpy_linalg._multi_dot_matrix_chain_order(  # type: ignore[attr-defined]
        [np.empty(tuple(d.value for d in m.aval.shape), dtype=np.int8) for m in items])

    def product(i: int, j: int) -> Tracer:
        if i == j:
            return items[i]
        k = int(order[i, j])
        return dot(product(i, k), product(k + 1, j))

    return product(0, len(items) - 1)


#: NumPy 2.2's vector ufuncs, where this NumPy has them.
VECTOR_UFUNCS = {getattr(np, name): fn for name, fn in
                 (("vecdot", vecdot), ("matvec", matvec), ("vecmat", vecmat))
                 if hasattr(np, name)}
