"""Reverse-mode rules (vector-Jacobian products) of the data primitives.

``vjp_rules[prim](em, cts, ins, outs, **params) -> in_cts``: given the cotangent of each
output (None where it is zero), the primal inputs and outputs (atoms of the program being
built), emit the cotangent of each input (None where it is zero or the input is not a
float). This is JAX's transpose of the linearized primitive, written directly, so the
primal values a rule needs are whatever the forward sweep computed; control flow lives
in :mod:`.vjp_control`. A JVP table would sit beside this one with the same key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir import Atom, Lit
from ..ops.core import ALL_PRIMITIVES, Primitive
from ..ops.elementwise import convert_p, select_p
from ..ops.index import compress_p, take_p
from ..ops.linalg import dot_general_p
from ..ops.reduce import CUMULATIVE, REDUCTIONS
from ..ops.shape import (
    broadcast_in_dim_p,
    concatenate_p,
    dim_value_p,
    iota_p,
    refine_shape_p,
    reshape_p,
    slice_p,
    transpose_p,
    update_slice_p,
)
from ..shapes import DimExpr
from ..tracing.avals import AType
from .core import Emitter, zeros

VjpRule = Callable[..., list[Atom | None]]
vjp_rules: dict[Primitive, VjpRule] = {}
Cts = list[Atom | None]
I64 = np.dtype(np.int64)


def is_float(atype: AType) -> bool:
    return atype.dtype.kind == "f"


class Ops:
    """Shorthand for emitting arithmetic in rules: ``o.mul(a, b)``, ``o.c(2.0, like)``."""

    def __init__(self, em: Emitter) -> None:
        self.em = em

    def __getattr__(self, name: str) -> Callable[..., Atom]:
        prim = ALL_PRIMITIVES[name]
        return lambda *args, **params: self.em.one(prim, *args, **params)

    @staticmethod
    def c(value: Any, like: Atom) -> Lit:
        return Lit(value, like.type.dtype)


def unbroadcast(em: Emitter, ct: Atom, atype: AType) -> Atom:
    """An elementwise input of shape ``()`` was read at every index: sum its cotangent."""
    if atype.shape or not ct.type.shape:
        return ct
    return em.one(REDUCTIONS["reduce_sum"], ct, axes=tuple(range(ct.type.ndim)))


def _unary(grad: Callable[[Ops, Atom, Atom, Atom], Atom]) -> VjpRule:
    """``grad(o, g, x, z)``: the input's cotangent from the output's ``g``, input ``x`` and
    result ``z``."""
    def rule(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom]) -> Cts:
        (g,), (x,), (z,) = cts, ins, outs
        if g is None or not is_float(x.type):
            return [None]
        return [unbroadcast(em, grad(Ops(em), g, x, z), x.type)]
    return rule


def _binary(grad: Callable[[Ops, Atom, Atom, Atom, Atom], tuple[Atom | None, Atom | None]]
            ) -> VjpRule:
    def rule(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom]) -> Cts:
        (g,), (x, y), (z,) = cts, ins, outs
        if g is None or not is_float(z.type):
            return [None, None]
        gx, gy = grad(Ops(em), g, x, y, z)
        return [None if gx is None else unbroadcast(em, gx, x.type),
                None if gy is None else unbroadcast(em, gy, y.type)]
    return rule


def _extremum(greater: str) -> Callable[[Ops, Atom, Atom, Atom, Atom], tuple[Atom, Atom]]:
    """max/min: the cotangent goes to the chosen side; ties split it in half (JAX)."""
    def grad(o: Ops, g: Atom, x: Atom, y: Atom, z: Atom) -> tuple[Atom, Atom]:
        half = o.mul(g, o.c(0.5, g))
        zero = o.c(0.0, g)
        tie = o.eq(x, y)
        gx = o.select(getattr(o, greater)(x, y), g, o.select(tie, half, zero))
        gy = o.select(getattr(o, greater)(y, x), g, o.select(tie, half, zero))
        return gx, gy
    return grad


_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))
UNARY: dict[str, Callable[[Ops, Atom, Atom, Atom], Atom]] = {
    "neg": lambda o, g, x, z: o.neg(g),
    "exp": lambda o, g, x, z: o.mul(g, z),
    "exp2": lambda o, g, x, z: o.mul(g, o.mul(z, o.c(_LN2, z))),
    "expm1": lambda o, g, x, z: o.mul(g, o.add(z, o.c(1.0, z))),
    "log": lambda o, g, x, z: o.div(g, x),
    "log2": lambda o, g, x, z: o.div(g, o.mul(x, o.c(_LN2, x))),
    "log10": lambda o, g, x, z: o.div(g, o.mul(x, o.c(_LN10, x))),
    "log1p": lambda o, g, x, z: o.div(g, o.add(x, o.c(1.0, x))),
    "sqrt": lambda o, g, x, z: o.div(o.mul(g, o.c(0.5, g)), z),
    "cbrt": lambda o, g, x, z: o.div(g, o.mul(o.c(3.0, z), o.square(z))),
    "square": lambda o, g, x, z: o.mul(g, o.mul(o.c(2.0, x), x)),
    "reciprocal": lambda o, g, x, z: o.neg(o.mul(g, o.square(z))),
    "abs": lambda o, g, x, z: o.mul(g, o.sign(x)),
    "sin": lambda o, g, x, z: o.mul(g, o.cos(x)),
    "cos": lambda o, g, x, z: o.neg(o.mul(g, o.sin(x))),
    "tan": lambda o, g, x, z: o.mul(g, o.add(o.c(1.0, z), o.square(z))),
    "tanh": lambda o, g, x, z: o.mul(g, o.sub(o.c(1.0, z), o.square(z))),
    "sinh": lambda o, g, x, z: o.mul(g, o.cosh(x)),
    "cosh": lambda o, g, x, z: o.mul(g, o.sinh(x)),
    "arctan": lambda o, g, x, z: o.div(g, o.add(o.c(1.0, x), o.square(x))),
    "arcsin": lambda o, g, x, z: o.div(g, o.sqrt(o.sub(o.c(1.0, x), o.square(x)))),
    "arccos": lambda o, g, x, z: o.neg(o.div(g, o.sqrt(o.sub(o.c(1.0, x), o.square(x))))),
    "arcsinh": lambda o, g, x, z: o.div(g, o.sqrt(o.add(o.square(x), o.c(1.0, x)))),
    "arccosh": lambda o, g, x, z: o.div(g, o.sqrt(o.sub(o.square(x), o.c(1.0, x)))),
    "arctanh": lambda o, g, x, z: o.div(g, o.sub(o.c(1.0, x), o.square(x))),
}
#: Piecewise constant: zero derivative wherever one exists.
#: Piecewise constant (zero derivative almost everywhere), or random draws: constants to
#: a gradient, drawn once in the forward sweep.
FLAT = ("sign", "floor", "ceil", "trunc", "rint", "floor_divide", "random_draw")

BINARY: dict[str, Callable[[Ops, Atom, Atom, Atom, Atom], tuple[Atom | None, Atom | None]]] = {
    "add": lambda o, g, x, y, z: (g, g),
    "sub": lambda o, g, x, y, z: (g, o.neg(g)),
    "mul": lambda o, g, x, y, z: (o.mul(g, y), o.mul(g, x)),
    "div": lambda o, g, x, y, z: (o.div(g, y), o.neg(o.div(o.mul(g, z), y))),
    # d x**y = y x**(y-1) dx + log(x) x**y dy, with log(0) read as 0 (0**y is flat in y)
    "pow": lambda o, g, x, y, z: (
        o.mul(g, o.mul(y, o.pow(x, o.sub(y, o.c(1.0, y))))),
        o.mul(g, o.mul(z, o.select(o.eq(x, o.c(0.0, x)), o.c(0.0, x), o.log(x))))),
    "max": _extremum("gt"), "fmax": _extremum("gt"),
    "min": _extremum("lt"), "fmin": _extremum("lt"),
    "mod": lambda o, g, x, y, z: (g, o.neg(o.mul(g, o.floor(o.div(x, y))))),
    "arctan2": lambda o, g, x, y, z: (  # z = arctan2(x, y): x is the ordinate
        o.div(o.mul(g, y), o.add(o.square(x), o.square(y))),
        o.neg(o.div(o.mul(g, x), o.add(o.square(x), o.square(y))))),
    "hypot": lambda o, g, x, y, z: (o.div(o.mul(g, x), z), o.div(o.mul(g, y), z)),
}


def _flat(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], **params: Any) -> Cts:
    return [None] * len(ins)


def _select(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom]) -> Cts:
    (g,), (c, a, b) = cts, ins
    if g is None:
        return [None, None, None]
    zero = Lit(0.0, g.type.dtype)
    ga = em.one(select_p, c, g, zero)
    gb = em.one(select_p, c, zero, g)
    return [None, unbroadcast(em, ga, a.type), unbroadcast(em, gb, b.type)]


def _convert(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *, dtype: Any) -> Cts:
    (g,), (x,) = cts, ins
    if g is None or not is_float(x.type):
        return [None]
    return [em.one(convert_p, g, dtype=x.type.dtype)]


# -- reductions --------------------------------------------------------------------------

def _kept(ndim: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _spread(em: Emitter, g: Atom, x: Atom, axes: tuple[int, ...]) -> Atom:
    """``g`` (reduced over ``axes``) broadcast back to ``x``'s shape."""
    return em.one(broadcast_in_dim_p, g, shape=x.type.shape,
                  broadcast_dimensions=_kept(x.type.ndim, axes))


def _reduce_sum(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *,
                axes: tuple[int, ...]) -> Cts:
    (g,), (x,) = cts, ins
    return [None if g is None or not is_float(x.type) else _spread(em, g, x, axes)]


def _reduce_extremum(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *,
                     axes: tuple[int, ...]) -> Cts:
    """The cotangent is shared equally by the elements that attain the extremum."""
    (g,), (x,), (z,) = cts, ins, outs
    if g is None or not is_float(x.type):
        return [None]
    o = Ops(em)
    hit = o.eq(x, _spread(em, z, x, axes))
    count = em.one(REDUCTIONS["reduce_sum"], o.convert(hit, dtype=x.type.dtype), axes=axes)
    share = _spread(em, o.div(g, count), x, axes)
    return [o.select(hit, share, o.c(0.0, x))]


def _reduce_prod(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *,
                 axes: tuple[int, ...]) -> Cts:
    (g,), (x,), (z,) = cts, ins, outs
    if g is None or not is_float(x.type):
        return [None]
    o = Ops(em)  # z / x: exact away from zeros, as the tests exercise
    return [o.div(o.mul(_spread(em, g, x, axes), _spread(em, z, x, axes)), x)]


def _reverse(em: Emitter, x: Atom, axis: int) -> Atom:
    n = x.type.shape[axis]
    start = tuple(n - 1 if i == axis else DimExpr.const(0) for i in range(x.type.ndim))
    step = tuple(-1 if i == axis else 1 for i in range(x.type.ndim))
    return em.one(slice_p, x, start=start, step=step, shape=x.type.shape)


def _cumsum(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *, axis: int) -> Cts:
    (g,), (x,) = cts, ins
    if g is None or not is_float(x.type):
        return [None]
    summed = em.one(CUMULATIVE["cumsum"], _reverse(em, g, axis), axis=axis)
    return [_reverse(em, summed, axis)]


# -- shapes and views --------------------------------------------------------------------

def _broadcast_in_dim(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *,
                      shape: tuple[DimExpr, ...], broadcast_dimensions: tuple[int, ...]) -> Cts:
    (g,), (x,) = cts, ins
    if g is None or not is_float(x.type):
        return [None]
    # A stretched axis is one of size 1; two sizes named apart (w.0 against x.0) were
    # checked equal when the kernel broadcast them, and only the names change back.
    one = DimExpr.const(1)
    stretched = [d for i, d in enumerate(broadcast_dimensions)
                 if x.type.shape[i] == one and shape[d] != one]
    axes = tuple(sorted({*_kept(len(shape), broadcast_dimensions), *stretched}))
    summed = em.one(REDUCTIONS["reduce_sum"], g, axes=axes) if axes else g
    if tuple(summed.type.shape) == tuple(x.type.shape):
        return [summed]
    if summed.type.ndim == x.type.ndim and not stretched:
        return [em.one(refine_shape_p, summed, shape=x.type.shape)]
    return [em.one(reshape_p, summed, new_sizes=x.type.shape)]


def _reshape(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], **_: Any) -> Cts:
    (g,), (x,) = cts, ins
    return [None if g is None else em.one(reshape_p, g, new_sizes=x.type.shape)]


def _refine_shape(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], **_: Any) -> Cts:
    (g,), (x,) = cts, ins
    return [None if g is None else em.one(refine_shape_p, g, shape=x.type.shape)]


def _transpose(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *,
               permutation: tuple[int, ...]) -> Cts:
    (g,) = cts
    if g is None:
        return [None]
    inverse = tuple(int(i) for i in np.argsort(permutation))
    return [em.one(transpose_p, g, permutation=inverse)]


def _slice(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *, start: Any,
           step: Any, shape: Any) -> Cts:
    (g,), (x,) = cts, ins
    if g is None or not is_float(x.type):
        return [None]
    return [em.one(update_slice_p, zeros(em, x.type), g, start=start, step=step)]


def _update_slice(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *, start: Any,
                  step: Any) -> Cts:
    (g,), (base, update) = cts, ins
    if g is None or not is_float(base.type):
        return [None, None]
    g_base = em.one(update_slice_p, g, zeros(em, update.type), start=start, step=step)
    g_update = em.one(slice_p, g, start=start, step=step, shape=update.type.shape)
    return [g_base, g_update]


def _concatenate(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *,
                 axis: int) -> Cts:
    (g,) = cts
    if g is None or not is_float(g.type):
        return [None] * len(ins)
    found: Cts = []
    offset = DimExpr.const(0)
    for x in ins:
        start = tuple(offset if i == axis else DimExpr.const(0) for i in range(x.type.ndim))
        found.append(em.one(slice_p, g, start=start, step=(1,) * x.type.ndim,
                            shape=x.type.shape))
        offset = offset + x.type.shape[axis]
    return found


def _take(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *, axis: int) -> Cts:
    """The transpose of a gather is a scatter-add: here a product with the one-hot matrix
    of the indices (``O(len(idx) * n)``, which the gradient tests' sizes afford)."""
    (g,), (x, idx) = cts, ins
    if g is None or not is_float(x.type):
        return [None, None]
    o = Ops(em)
    n = x.type.shape[axis]
    size = em.one(dim_value_p, expr=n)
    i64 = idx if idx.type.dtype == I64 else o.convert(idx, dtype=I64)
    i64 = o.select(o.lt(i64, Lit(0, I64)), o.add(i64, size), i64)
    k = idx.type.ndim
    grid = (*idx.type.shape, n)
    lanes = em.one(iota_p, dtype=I64, shape=grid, dimension=k)
    spread = em.one(broadcast_in_dim_p, i64, shape=grid, broadcast_dimensions=tuple(range(k)))
    one_hot = o.convert(o.eq(spread, lanes), dtype=x.type.dtype)
    # g: (pre, *idx, post) contracted with one_hot (*idx, n) -> (pre, post, n)
    summed = em.one(dot_general_p, g, one_hot,
                    contracting=(tuple(range(axis, axis + k)), tuple(range(k))), batch=((), ()))
    nd = x.type.ndim
    perm = (*range(axis), nd - 1, *range(axis, nd - 1))
    return [em.one(transpose_p, summed, permutation=perm), None]


def _compress(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *,
              size: DimExpr) -> Cts:
    """Selected items go back to their places: item ``k`` came from the ``k``-th true
    mask entry, so each place reads the cotangent at its count of trues so far; the
    unselected ones read an appended zero row."""
    (g,), (x, mask) = cts, ins
    if g is None or not is_float(x.type):
        return [None, None]
    o = Ops(em)
    lead, rest = x.type.shape[:mask.type.ndim], tuple(x.type.shape[mask.type.ndim:])
    flat_n = DimExpr.const(1)
    for d in lead:
        flat_n = flat_n * d
    flat_mask = em.one(reshape_p, mask, new_sizes=(flat_n,))
    position = o.sub(em.one(CUMULATIVE["cumsum"], o.convert(flat_mask, dtype=I64), axis=0),
                     Lit(1, I64))
    padded = em.one(concatenate_p, g, zeros(em, AType(g.type.dtype, (DimExpr.const(1), *rest))),
                    axis=0)
    index = o.select(flat_mask, position, em.one(dim_value_p, expr=size))
    gathered = em.one(take_p, padded, index, axis=0)
    return [em.one(reshape_p, gathered, new_sizes=x.type.shape), None]


def _dot_general(em: Emitter, cts: Cts, ins: list[Atom], outs: list[Atom], *,
                 contracting: Any, batch: Any) -> Cts:
    """Each side's cotangent contracts ``g`` with the other side over the other side's
    free axes (batch axes stay batch axes), then puts the axes back in order."""
    (g,), (lhs, rhs) = cts, ins
    if g is None or not is_float(lhs.type):
        return [None, None]
    (lc, rc), (lb, rb) = contracting, batch
    nb = len(lb)
    lfree = [i for i in range(lhs.type.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rhs.type.ndim) if i not in rc and i not in rb]
    g_lfree = tuple(range(nb, nb + len(lfree)))
    g_rfree = tuple(range(nb + len(lfree), nb + len(lfree) + len(rfree)))
    g_batch = tuple(range(nb))

    def side(other: Atom, g_other_free: tuple[int, ...], other_free: list[int],
             other_batch: tuple[int, ...], mine_b: tuple[int, ...], mine_free: list[int],
             mine_c: tuple[int, ...], other_c: tuple[int, ...], ndim: int) -> Atom:
        out = em.one(dot_general_p, g, other, contracting=(g_other_free, tuple(other_free)),
                     batch=(g_batch, tuple(other_batch)))
        # out axes: batch, my free axes, then the other's contracted axes in its order
        order = sorted(range(len(other_c)), key=lambda k: other_c[k])
        src = [*mine_b, *mine_free, *(mine_c[k] for k in order)]
        perm = tuple(src.index(d) for d in range(ndim))
        return out if perm == tuple(range(ndim)) else em.one(transpose_p, out,
                                                             permutation=perm)

    g_lhs = side(rhs, g_rfree, rfree, rb, lb, lfree, lc, rc, lhs.type.ndim)
    g_rhs = side(lhs, g_lfree, lfree, lb, rb, rfree, rc, lc, rhs.type.ndim)
    return [g_lhs, g_rhs]


for _name, _grad in UNARY.items():
    vjp_rules[ALL_PRIMITIVES[_name]] = _unary(_grad)
for _name, _grad2 in BINARY.items():
    vjp_rules[ALL_PRIMITIVES[_name]] = _binary(_grad2)
for _name in FLAT:
    vjp_rules[ALL_PRIMITIVES[_name]] = _flat
vjp_rules.update({
    select_p: _select, convert_p: _convert,
    REDUCTIONS["reduce_sum"]: _reduce_sum, REDUCTIONS["reduce_max"]: _reduce_extremum,
    REDUCTIONS["reduce_min"]: _reduce_extremum, REDUCTIONS["reduce_prod"]: _reduce_prod,
    CUMULATIVE["cumsum"]: _cumsum,
    broadcast_in_dim_p: _broadcast_in_dim, reshape_p: _reshape, refine_shape_p: _refine_shape,
    transpose_p: _transpose, slice_p: _slice, update_slice_p: _update_slice,
    concatenate_p: _concatenate, take_p: _take, dot_general_p: _dot_general,
    compress_p: _compress,
})
