"""Ufuncs and Python operators on tracers, with NumPy 2's exact dtype rules.

Type resolution is NumPy's: ``ufunc.resolve_dtypes`` with Python scalars passed as
their type, which makes them weak (NEP 50), gives the loop's input and output dtypes.
Inputs are converted to the loop dtypes, broadcast, and the primitive applied.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.core import COMPARISON
from ..ops.elementwise import NO_COMPLEX_KERNEL, PRIM_OF_UFUNC
from ..ops.index import raise_if_p
from ..shapes import DimExpr, broadcast_shapes, from_values, relu
from ..tracing.tracer import WEAK_TYPES, Tracer, as_tracer, bind_dim, current
from ..types import SHORT_NAMES
from . import pynumbers

# A weak bool behaves exactly as a bool dtype (the lowest kind), and NumPy's
# ``resolve_dtypes`` only accepts int, float and complex as weak Python types.
_PYTHON_TYPE = {"b": np.dtype(bool), "i": int, "u": int, "f": float, "c": complex}


def dtype_arg(value: Any) -> Any:
    """What ``resolve_dtypes`` expects: a dtype, or the Python type of a weak scalar."""
    if isinstance(value, Tracer):
        return _PYTHON_TYPE[value.dtype.kind] if value.weak else value.dtype
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, WEAK_TYPES) and not isinstance(value, np.generic):
        return type(value)
    return np.asarray(value).dtype


def promote_types(*operands: Any) -> np.dtype:
    """``np.result_type`` with Python scalars and weak tracers kept weak (NEP 50)."""
    zero = {bool: False, int: 0, float: 0.0, complex: 0j}
    args = []
    for o in operands:
        kind = dtype_arg(o)
        if not isinstance(kind, type):
            args.append(kind)  # a strong dtype
        else:  # weak: a Python scalar as itself, a weak tracer as a zero of its kind
            args.append(zero[kind] if isinstance(o, Tracer) else o)
    return np.result_type(*args)


def broadcast_all(operands: list[Tracer], error: str = "ValueError",
                  what: str = "operands", scalars: bool = False) -> list[Tracer]:
    """Broadcast every non-scalar operand to the common shape (scalars stay rank 0, or
    are broadcast too with ``scalars``); a mismatch at run time raises ``error``
    (NumPy's IndexError for index arrays).

    A size computed from integer values against one from shapes alone (``d[:, k:k + 1]
    + d[k:k + 1, :]``, whose slices are 1 long for any ``k`` in range) is stretched
    when it is 1, as NumPy would: the operand is read with step 0 along that axis
    (:func:`_stretched`), so the other size wins either way. Two sizes of arrays' shapes are
    taken to be equal, unless the kernel is traced for broadcasting at run time (its
    broadcast twin, which the call falls back on when they differ): there any size
    may be 1 and stretch (:func:`_runtime_shape`)."""
    ctx = current()
    try:  # (the shape's sizes: those of array shapes, where an axis has one)
        shape, _ = broadcast_shapes(*(t.aval.shape for t in operands))
    except ValueError as err:
        raise ctx.error(str(err).replace("operands", what)) from None
    message = f"{what} could not be broadcast together: size {{lhs}} against size {{rhs}}"
    if len(operands) == 2 and all(t.ndim == 1 for t in operands):  # NumPy's very words
        message = f"{what} could not be broadcast together with shapes ({{lhs}},) ({{rhs}},) "
    if ctx.root.stretches:
        shape = _runtime_shape(operands, shape, error, message)
    return [t if t.ndim == 0 and not scalars else
            broadcast_into(t, shape, message, error, value_first=False) for t in operands]


def _runtime_shape(operands: list[Tracer], shape: tuple[DimExpr, ...], error: str,
                   message: str) -> tuple[DimExpr, ...]:
    """The common shape when any size may be 1 at run time: along an axis where the
    operands' sizes differ in form, a fixed size other than 1 wins; else the result's
    size is bound while the kernel runs, the first size that is not 1 (all must be 1 or
    it: :func:`broadcast_into` checks each operand)."""
    out = list(shape)
    for axis in range(len(shape)):
        sizes = list(dict.fromkeys(
            t.aval.shape[axis - len(shape) + t.ndim] for t in operands
            if axis - len(shape) + t.ndim >= 0))
        sizes = [d for d in sizes if not (d.is_const and d.value == 1)]
        if len(sizes) < 2 or any(d.is_const for d in sizes):
            continue
        values = [lax.dim_value(d) for d in sizes]
        result: Any = values[0]
        for v in values[1:]:
            result = np.where(np.equal(result, 1), v, result)
        upper = sizes[0]
        for d in sizes[1:]:
            upper = upper + d
        out[axis] = bind_dim(as_tracer(result), upper)
    return tuple(out)


def broadcast_into(value: Tracer, shape: tuple[DimExpr, ...], message: str,
                   error: str = "ValueError", value_first: bool = True) -> Tracer:
    """``value`` broadcast to exactly ``shape``, checked against it axis by axis: a size
    from values may be 1 and stretch (see :func:`broadcast_all`), any other must equal
    the shape's (``error`` with ``message`` when it does not: its ``{lhs}`` is the
    value's size and ``{rhs}`` the shape's, or the other way round without
    ``value_first``), or, traced for broadcasting at run time, may be 1 and stretch too.
    Assignments broadcast into their region so, and :func:`broadcast_all` every operand
    into the common shape, so each operand is checked against the result, not only
    against another."""
    ctx = current()
    lead = len(shape) - value.ndim
    if lead < 0:
        raise ctx.error(message.format(lhs=value.aval.shape, rhs=shape))
    for axis, d in enumerate(value.aval.shape):
        target = shape[lead + axis]
        if d == target or (d.is_const and d.value == 1):
            continue
        lhs, rhs = (d, target) if value_first else (target, d)
        if d.is_const and target.is_const:
            raise ctx.error(message.format(lhs=lhs, rhs=rhs))
        if ctx.root.stretches or (from_values(d) and not from_values(target)):
            value = _stretched(value, axis, target, error, message, value_first)
        else:
            ctx.assume_equal(lhs, rhs, error, message)
    return value if value.aval.shape == shape else lax.broadcast_to(value, shape)


def _stretched(t: Tracer, axis: int, target: DimExpr, error: str, message: str,
               value_first: bool) -> Tracer:
    """``t`` along ``axis`` read ``target`` times: its elements in order when it is that
    long, its one element over and over when it is 1 long; else ``error``. A slice
    whose step along ``axis`` is 0 or 1 at run time (``[size >= 2]``), so the loop
    reading it stays a strided loop, with stride 0 for a size of 1."""
    d = t.aval.shape[axis]
    n, want = lax.dim_value(d), lax.dim_value(target)
    bad: Any = np.logical_and(np.not_equal(n, 1), np.not_equal(n, want))
    lhs, rhs = (n, want) if value_first else (want, n)
    lax.bind(raise_if_p, bad.atom, lhs.atom, rhs.atom, error=error, message=message)
    zero = DimExpr.const(0)
    moves = relu(d - 1) - relu(d - 2)  # 0 for sizes 0 and 1, else 1
    shape = list(t.aval.shape)
    shape[axis] = target
    return lax.slice_(t, (zero,) * t.ndim, tuple(moves if k == axis else 1
                                                 for k in range(t.ndim)), tuple(shape))


def loop_dtypes(ufunc: np.ufunc, operands: tuple[Any, ...]) -> tuple[np.dtype, ...]:
    kinds = [dtype_arg(o) for o in operands]
    if all(isinstance(k, type) for k in kinds):
        # Only weak values (a size and a Python int): NumPy would see Python scalars and
        # use its default dtypes; a weak tracer already has that dtype.
        kinds = [o.dtype if isinstance(o, Tracer) else k
                 for o, k in zip(operands, kinds, strict=True)]
    try:
        return ufunc.resolve_dtypes(tuple(kinds) + (None,) * ufunc.nout)
    except (TypeError, ValueError):
        names = ", ".join(str(dtype_arg(o)) for o in operands)
        raise current().error(f"np.{ufunc.__name__} is not defined for ({names})") from None


def apply_ufunc(ufunc: np.ufunc, *operands: Any) -> Tracer:
    # a variable that may be None (autograph.optional) takes part as its value
    operands = tuple(o.__aotc_value__() if hasattr(type(o), "__aotc_value__") else o
                     for o in operands)
    decomposition = DECOMPOSITIONS.get(ufunc)
    if decomposition is not None:
        # (a tuple of tracers for a ufunc of several outputs: divmod, modf, frexp)
        decomposed: Tracer = decomposition(*operands)
        return decomposed
    prim = PRIM_OF_UFUNC.get(ufunc)
    if prim is None:  # the dispatch tables only let a supported ufunc reach here
        raise current().error(f"np.{ufunc.__name__} is not supported")
    loop = loop_dtypes(ufunc, operands)
    unsupported = [d for d in loop if d not in SHORT_NAMES]
    if unsupported:
        raise current().error(
            f"np.{ufunc.__name__} here computes in {unsupported[0]}, which aotc does not "
            "support", hint="convert the input first, e.g. x.astype(np.float32)")
    if loop[0].kind == "c" and prim.name in NO_COMPLEX_KERNEL:
        raise current().error(f"np.{ufunc.__name__} of complex values is not supported yet",
                              hint="compute it from exp, log and sqrt, which support complex "
                                   "values, or on the real and imaginary parts")
    if prim.has(COMPARISON):
        loop = _comparison_loop(loop, operands)
    ins = [lax.convert(as_tracer(o, dt), dt)
           for o, dt in zip(operands, loop[:ufunc.nin], strict=True)]  # input dtypes only
    ins = broadcast_all(ins)
    out = lax.convert(lax.bind1(prim, *(t.atom for t in ins)), loop[ufunc.nin])
    out.dim = size_arithmetic(ufunc, operands)
    # Python scalars in, a Python scalar out: ``(1 - w) * x`` with ``w: float`` keeps
    # x's dtype, as in NumPy 2.
    out.weak = out.ndim == 0 and all(isinstance(dtype_arg(o), type) for o in operands)
    return out


def _comparison_loop(loop: tuple[np.dtype, ...], operands: tuple[Any, ...]
                     ) -> tuple[np.dtype, ...]:
    """NumPy compares an integer array with any Python int exactly (``u8 < -1`` is False):
    widen the loop when a Python int does not fit the array's dtype."""
    ints = [o for o in operands if isinstance(o, int) and not isinstance(o, bool)]
    if not ints or loop[0].kind not in "iu":
        return loop
    info = np.iinfo(loop[0])
    if all(info.min <= v <= info.max for v in ints):
        return loop
    wide = np.dtype(np.int64) if all(-2**63 <= v < 2**63 for v in ints) and \
        loop[0] != np.uint64 else np.dtype(np.float64)
    return (wide, wide) + loop[2:]


def size_arithmetic(ufunc: np.ufunc, operands: tuple[Any, ...]) -> Any:
    """Keep integer arithmetic on sizes symbolic, so ``np.zeros(n + 2)`` has a known size."""
    dims: list[DimExpr | int] = []
    for o in operands:
        if isinstance(o, Tracer) and o.dim is not None:
            dims.append(o.dim)
        elif isinstance(o, (int, np.integer)) and not isinstance(o, bool):
            dims.append(int(o))
        else:
            return None
    rule = _SIZE_ARITHMETIC.get(ufunc)
    if rule is None or all(isinstance(d, int) for d in dims):
        return None
    if ufunc is np.floor_divide and not (isinstance(dims[1], int) and dims[1] > 0):
        return None  # sizes divide only by positive constants
    return rule(*dims)


_SIZE_ARITHMETIC: dict[np.ufunc, Callable[..., Any]] = {
    np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
    np.floor_divide: operator.floordiv, np.negative: operator.neg, np.positive: operator.pos,
}


# -- ufuncs that are compositions of others ---------------------------------------------

def _identity(x: Any) -> Tracer:
    return lax.fresh(as_tracer(x))


def _scaled(ufunc: np.ufunc, factor: float) -> Callable[[Any], Tracer]:
    def apply(x: Any) -> Tracer:
        (dtype, _) = loop_dtypes(ufunc, (x,))
        return apply_ufunc(np.multiply, lax.convert(as_tracer(x), dtype),
                           np.asarray(factor, dtype)[()])
    return apply


def _float_power(x: Any, y: Any) -> Tracer:
    dtype = promote_types(np.float64(0), x, y)
    return apply_ufunc(np.power, lax.convert(as_tracer(x), dtype), lax.convert(as_tracer(y), dtype))


DECOMPOSITIONS: dict[np.ufunc, Callable[..., Any]] = {
    np.positive: _identity,
    np.divmod: lambda x, y: (apply_ufunc(np.floor_divide, x, y), apply_ufunc(np.remainder, x, y)),
    np.fabs: lambda x: apply_ufunc(np.absolute, lax.convert(as_tracer(x),
                                                            loop_dtypes(np.fabs, (x,))[0])),
    np.deg2rad: _scaled(np.deg2rad, math.pi / 180.0),
    np.rad2deg: _scaled(np.rad2deg, 180.0 / math.pi),
    np.radians: _scaled(np.radians, math.pi / 180.0),
    np.degrees: _scaled(np.degrees, 180.0 / math.pi),
    np.float_power: _float_power,
}


def _binary(ufunc: np.ufunc) -> Callable[[Tracer, Any], Tracer]:
    return lambda self, other: apply_ufunc(ufunc, self, other)


def _reflected(ufunc: np.ufunc) -> Callable[[Tracer, Any], Tracer]:
    return lambda self, other: apply_ufunc(ufunc, other, self)


def _power(base: Any, exponent: Any) -> Tracer:
    """``base ** exponent`` as NumPy's operator computes it: for float arrays an exact
    Python int 2 or -1 or float 0.5 uses square, reciprocal or sqrt (its fast path),
    which can differ from ``np.power`` in the last bit."""
    fast = {(int, 2): np.square, (int, -1): np.reciprocal, (float, 0.5): np.sqrt}
    if isinstance(base, Tracer) and base.dtype.kind in "fc" and type(exponent) in (int, float):
        ufunc = fast.get((type(exponent), exponent))
        if ufunc is not None and (base.ndim or ufunc is not np.sqrt):
            return apply_ufunc(ufunc, base)
    result = apply_ufunc(np.power, base, exponent)
    if result.ndim or result.dtype.kind != "f":
        return result
    # Rank 0: NumPy scalars compute ``**`` with C pow, without the sqrt that np.power's
    # loop uses for a 0.5 exponent. They differ where pow(x, 0.5) is |x|: ±0 and -inf.
    special = apply_ufunc(np.logical_or, apply_ufunc(np.equal, base, 0),
                          apply_ufunc(np.equal, base, -np.inf))
    fix = apply_ufunc(np.logical_and, special, apply_ufunc(np.equal, exponent, 0.5))
    magnitude = lax.convert(as_tracer(apply_ufunc(np.absolute, base)), result.dtype)
    return lax.select(fix, magnitude.atom, result.atom)


BINARY_OPERATORS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor, "lshift": np.left_shift,
    "rshift": np.right_shift,
}


def _deferring(op: Callable[[Tracer, Any], Any]) -> Callable[[Tracer, Any], Any]:
    """``op``, but NotImplemented for an operand with a NumPy protocol of its own (a lazy
    ``x[mask]``): Python then asks that operand's reflected operator, as NumPy's arrays
    defer to such types (``r / x[x > 1]``)."""
    def deferring(self: Tracer, other: Any) -> Any:
        if not isinstance(other, Tracer | np.ndarray | np.generic) \
                and getattr(type(other), "__array_ufunc__", None) is not None:
            return NotImplemented
        return op(self, other)
    return deferring


#: Python operator methods of :class:`Tracer` (installed by ``aotc.numpy_api``).
OPERATORS: dict[str, Callable[..., Any]] = {name: _deferring(op) for name, op in {
    **{f"__{n}__": pynumbers.binary(n, _binary(u), False)
       for n, u in BINARY_OPERATORS.items() if n != "pow"},
    "__pow__": pynumbers.binary("pow", _power, False),
    **{f"__r{n}__": pynumbers.binary(n, _reflected(u), True)
       for n, u in BINARY_OPERATORS.items() if n != "pow"},
    "__rpow__": pynumbers.binary("pow", lambda self, other: _power(other, self), True),
    "__eq__": _binary(np.equal), "__ne__": _binary(np.not_equal),
    "__lt__": _binary(np.less), "__le__": _binary(np.less_equal),
    "__gt__": _binary(np.greater), "__ge__": _binary(np.greater_equal),
}.items()} | {
    "__neg__": pynumbers.unary(lambda self: apply_ufunc(np.negative, self)),
    "__pos__": pynumbers.unary(lambda self: lax.fresh(self)),
    "__abs__": pynumbers.unary(lambda self: apply_ufunc(np.absolute, self)),
    "__invert__": lambda self: apply_ufunc(np.invert, self),
}
