"""Elementwise primitives: one scalar function applied at every index.

All inputs of an elementwise primitive share one dtype (tracing inserts ``convert``
first, as NumPy's ufunc type resolution does) and either the output's shape or ``()``;
a rank-0 input is the same value at every index. Comparisons and ``is*`` tests give
bool; ``select(cond, a, b)`` takes a bool condition. On complex operands ``abs`` gives
the parts' float dtype, as ``np.absolute`` does; ``real``/``imag`` take a complex value
apart and ``complex`` puts one together from two floats.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import TraceError
from ..shapes import Shape
from ..tracing.avals import AType
from ..types import complex_dtype, real_dtype
from .core import (
    ALL_PRIMITIVES,
    COMMUTATIVE,
    COMPARISON,
    ELEMENTWISE,
    ImplRule,
    Primitive,
    TypeRule,
    impl_rules,
    primitive,
    type_rules,
)

BOOL = np.dtype(bool)

# Each entry: primitive name -> the NumPy ufunc that defines it.
UNARY_UFUNCS: dict[str, np.ufunc] = {
    "neg": np.negative, "abs": np.absolute, "sign": np.sign, "square": np.square,
    "sqrt": np.sqrt, "cbrt": np.cbrt, "exp": np.exp, "exp2": np.exp2, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "expm1": np.expm1,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos,
    "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint,
    "reciprocal": np.reciprocal, "logical_not": np.logical_not, "invert": np.invert,
    "conj": np.conjugate,
}
BINARY_UFUNCS: dict[str, np.ufunc] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "floor_divide": np.floor_divide, "mod": np.remainder, "pow": np.power,
    "max": np.maximum, "min": np.minimum, "fmax": np.fmax, "fmin": np.fmin,
    "arctan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift,
    "right_shift": np.right_shift, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}
PREDICATE_UFUNCS: dict[str, np.ufunc] = {  # unary, result bool
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "signbit": np.signbit,
}
COMPARISON_UFUNCS: dict[str, np.ufunc] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}
_COMMUTATIVE = {"add", "mul", "max", "min", "fmax", "fmin", "hypot", "bitwise_and",
                "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
                "eq", "ne"}

#: Ufunc primitives whose result on complex operands is real (``|z|``).
REAL_RESULT = {"abs"}
#: NumPy has complex loops for these, aotc has no complex kernel yet: tracing refuses
#: them on complex values with a located error (``tests/ops/test_registry.py`` checks
#: that every other complex loop NumPy has is lowered).
NO_COMPLEX_KERNEL = frozenset({"tan", "tanh", "arcsin", "arccos", "arctan", "arcsinh",
                               "arccosh", "arctanh"})

#: Every elementwise primitive defined by a ufunc, and the ufunc.
UFUNC_OF: dict[Primitive, np.ufunc] = {}
#: The primitive for each ufunc (the inverse of ``UFUNC_OF``).
PRIM_OF_UFUNC: dict[np.ufunc, Primitive] = {}


def _broadcast_shape(types: tuple[AType, ...]) -> Shape:
    shapes = {t.shape for t in types if t.shape != ()}
    if len(shapes) > 1:
        raise TraceError(f"elementwise inputs differ in shape: {sorted(map(str, types))}")
    return shapes.pop() if shapes else ()


def _same_dtype(name: str, types: tuple[AType, ...]) -> np.dtype:
    dtypes = {t.dtype for t in types}
    if len(dtypes) != 1:
        raise TraceError(f"{name}: inputs must share a dtype, got {sorted(map(str, dtypes))}")
    return dtypes.pop()


def _result_dtype(name: str, result_bool: bool, dtype: np.dtype) -> np.dtype:
    if result_bool:
        return BOOL
    return real_dtype(dtype) if name in REAL_RESULT else dtype


def _make_type_rule(name: str, result_bool: bool) -> TypeRule:
    def rule(*types: Any) -> tuple[Any, ...]:

        dtype = _same_dtype(name, types)
        return (AType(_result_dtype(name, result_bool, dtype), _broadcast_shape(types)),)
    return rule


def _make_impl_rule(name: str, ufunc: np.ufunc, result_bool: bool) -> ImplRule:
    def impl(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
        want = _result_dtype(name, result_bool, arrays[0].dtype)
        with np.errstate(all="ignore"):
            out = ufunc(*arrays)
        if out.dtype != want:
            out = out.astype(want)  # e.g. np.sign on bool is undefined; keep the IR dtype
        return (np.asarray(out),)
    return impl


for _table, _bool_result in ((UNARY_UFUNCS, False), (BINARY_UFUNCS, False),
                             (PREDICATE_UFUNCS, True), (COMPARISON_UFUNCS, True)):
    for _name, _ufunc in _table.items():
        _props = [ELEMENTWISE] + ([COMMUTATIVE] if _name in _COMMUTATIVE else [])
        if _table is COMPARISON_UFUNCS:
            _props.append(COMPARISON)
        _p = primitive(_name, *_props)
        UFUNC_OF[_p] = _ufunc
        PRIM_OF_UFUNC[_ufunc] = _p
        type_rules[_p] = _make_type_rule(_name, _bool_result)
        impl_rules[_p] = _make_impl_rule(_name, _ufunc, _bool_result)


# -- select and convert ------------------------------------------------------------------

select_p = primitive("select", ELEMENTWISE)


def _select_type(cond: Any, a: Any, b: Any) -> tuple[Any, ...]:

    if cond.dtype != BOOL:
        raise TraceError("select: the condition must be bool")
    return (AType(_same_dtype("select", (a, b)), _broadcast_shape((cond, a, b))),)


type_rules[select_p] = _select_type
impl_rules[select_p] = lambda c, a, b: (np.asarray(np.where(c, a, b)),)

convert_p = primitive("convert", ELEMENTWISE)


def _convert_type(x: Any, *, dtype: np.dtype) -> tuple[Any, ...]:

    return (AType(np.dtype(dtype), x.shape),)


def _convert_impl(x: np.ndarray, *, dtype: np.dtype) -> tuple[np.ndarray, ...]:
    # complex -> real keeps the real part; tracing warned once, where the user cast
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return (np.asarray(x).astype(dtype),)


type_rules[convert_p] = _convert_type
impl_rules[convert_p] = _convert_impl


# -- complex parts ---------------------------------------------------------------------

real_p = primitive("real", ELEMENTWISE)
imag_p = primitive("imag", ELEMENTWISE)
#: ``complex(re, im)``: two floats of one dtype as the complex value ``re + im*1j``
#: (exactly: ``im`` never multiplies ``1j``, so ``complex(0.0, inf)`` has a zero real part).
complex_p = primitive("complex", ELEMENTWISE)


def _part_type(x: Any) -> tuple[Any, ...]:

    if x.dtype.kind != "c":
        raise TraceError(f"real/imag: the operand must be complex, got {x.dtype}")
    return (AType(real_dtype(x.dtype), x.shape),)


def _complex_type(re: Any, im: Any) -> tuple[Any, ...]:

    dtype = _same_dtype("complex", (re, im))
    if dtype.kind != "f":
        raise TraceError(f"complex: the parts must be float32 or float64, got {dtype}")
    return (AType(complex_dtype(dtype), _broadcast_shape((re, im))),)


def _complex_impl(re: np.ndarray, im: np.ndarray) -> tuple[np.ndarray, ...]:
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, complex_dtype(re.dtype))
    out.real, out.imag = re, im
    return (out,)


type_rules.update({real_p: _part_type, imag_p: _part_type, complex_p: _complex_type})
impl_rules.update({real_p: lambda x: (np.real(x).copy(),),
                   imag_p: lambda x: (np.imag(x).copy(),), complex_p: _complex_impl})


def prim(name: str) -> Primitive:
    """Look up an elementwise primitive by name (for tests and decompositions)."""
    return ALL_PRIMITIVES[name]
