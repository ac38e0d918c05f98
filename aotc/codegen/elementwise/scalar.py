"""Elementwise primitives on one element: ``SCALAR_RULES[prim](builder, dtype, *args)``.

``dtype`` is the operands' dtype (for ``select``, that of the two branches; for
``convert``, the source) and ``args`` are register values. A rule is a :class:`ByKind`:
one function per dtype kind ('b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c'
complex), so a kind is supported exactly when NumPy has a loop for it (``np.sqrt`` on
ints has none: the tracer converts first). Semantics are NumPy's ufunc loops; the tricky
ones live in :mod:`.division`, :mod:`.convert`, :mod:`.mathlib` and, for complex values,
:mod:`.complexarith` and :mod:`.complexmath`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from llvmlite import ir

from ...errors import UnsupportedError
from ...ir import Eqn
from ...ops.core import ALL_PRIMITIVES, Primitive
from ...ops.elementwise import NO_COMPLEX_KERNEL
from ..core.builder import KernelBuilder
from ..core.dtypes import BOOL, FLOAT64, I1, bits, constant
from . import division as dm
from .complexarith import COMPLEX_RULES, make_complex
from .complexfuncs import COMPLEX_MATH_RULES, power
from .convert import convert, to_bool, to_float64
from .mathlib import fabs, float_rules

Fn = Callable[..., ir.Value]


@dataclass(frozen=True)
class ByKind:
    """One implementation per dtype kind; a missing kind is an UnsupportedError."""

    name: str
    impls: dict[str, Fn]

    def __call__(self, b: KernelBuilder, dtype: np.dtype, /, *args: ir.Value, **params: Any
                 ) -> ir.Value:
        impl = self.impls.get(dtype.kind)
        if impl is None:
            if dtype.kind == "c" and self.name in NO_COMPLEX_KERNEL:
                raise UnsupportedError(f"'{self.name}' of complex values is not supported yet")
            raise UnsupportedError(
                f"'{self.name}' is not supported for dtype {dtype} (NumPy has no such loop)")
        return impl(b, dtype, *args, **params)


def kinds(b: Fn | None = None, i: Fn | None = None, u: Fn | None = None,
          f: Fn | None = None, iu: Fn | None = None, biu: Fn | None = None,
          every: Fn | None = None) -> dict[str, Fn]:
    """Spell a kind table; ``iu`` is both integer kinds, ``every`` all five (complex
    rules come from :mod:`.complexarith` and :mod:`.complexmath`, merged below)."""
    table = {"b": b, "i": i, "u": u, "f": f}
    for group, fn in (("iu", iu), ("biu", biu), ("biufc", every)):
        if fn is not None:
            table.update(dict.fromkeys(group, fn))
    return {k: v for k, v in table.items() if v is not None}


# -- small building blocks ---------------------------------------------------------------

def _op(name: str) -> Fn:
    """Call ``builder.<name>(*args)`` (``add``, ``and_``, ``shl``…)."""
    return lambda b, dtype, *args: getattr(b, name)(*args)


def _fop(name: str) -> Fn:
    """A float instruction carrying the target's fast-math flags."""
    return lambda b, dtype, *args: getattr(b, name)(*args, flags=b.fp_flags)


def _identity(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return x


def _const_bool(value: bool) -> Fn:
    return lambda b, dtype, x: ir.Constant(I1, int(value))


def _icmp(op: str) -> Fn:
    signed = {"i": True, "u": False, "b": False}
    return lambda b, dtype, x, y: (b.icmp_signed if signed[dtype.kind]
                                   else b.icmp_unsigned)(op, x, y)


def _fcmp(op: str) -> Fn:
    # != is true for NaN (unordered); every other comparison with NaN is false.
    if op == "!=":
        return lambda b, dtype, x, y: b.fcmp_unordered(op, x, y)
    return lambda b, dtype, x, y: b.fcmp_ordered(op, x, y)


def _int_select_cmp(op: str) -> Fn:
    def rule(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
        return b.select(_icmp(op)(b, dtype, x, y), x, y)
    return rule


#: LLVM's -0.0-below-+0.0 extremes by (comparison, whether a NaN operand wins).
_ZERO_ORDERED = {(">", True): "maximum", (">", False): "maxnum",
                 ("<", True): "minimum", ("<", False): "minnum"}


def _fmax_like(op: str, propagate_nan: bool) -> Fn:
    """``np.maximum``/``minimum`` (``propagate_nan``) or ``np.fmax``/``fmin``.

    maximum: ``isnan(x) ? x : (x > y ? x : y)``, so a NaN in either operand wins.
    fmax: ``(x > y || isnan(y)) ? x : y``, NaN only if both are NaN. For equal operands
    both give ``y``, as NumPy's x86 array loops do (``maxps`` semantics); the sign of a
    zero result is not otherwise specified by NumPy (its scalar loops differ). Where
    NumPy's loops order -0.0 below +0.0 (AArch64's ``fmax``/``fmaxnm``:
    ``isa.zero_ordered_max``), LLVM's ``maximum``/``maxnum`` are those instructions.
    """
    def rule(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
        if b.isa.zero_ordered_max:
            name = _ZERO_ORDERED[op, propagate_nan]
            fn = b.module.declare_intrinsic(f"llvm.{name}", [x.type],
                                            ir.FunctionType(x.type, [x.type, x.type]))
            return b.call(fn, [x, y])
        if propagate_nan:
            pick = b.select(b.fcmp_ordered(op, x, y), x, y)
            return b.select(b.fcmp_unordered("uno", x, x), x, pick)
        keep = b.or_(b.fcmp_ordered(op, x, y), b.fcmp_unordered("uno", y, y))
        return b.select(keep, x, y)
    return rule


def _logical(op: str) -> Fn:
    """``logical_*``: operands tested against zero; the result has the operand dtype."""
    def rule(b: KernelBuilder, dtype: np.dtype, *args: ir.Value) -> ir.Value:
        result = getattr(b, op)(*(to_bool(b, a, dtype) for a in args))
        return convert(b, result, BOOL, dtype)
    return rule


def _logical_not(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return convert(b, b.not_(to_bool(b, x, dtype)), BOOL, dtype)


# -- rules that need a few instructions ------------------------------------------------

def _int_abs(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, constant(dtype, 0)), b.neg(x), x)  # wraps at MIN


def _int_sign(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    pos = b.zext(_icmp(">")(b, dtype, x, constant(dtype, 0)), x.type)
    neg = b.zext(_icmp("<")(b, dtype, x, constant(dtype, 0)), x.type)
    return b.sub(pos, neg)


def _float_sign(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    zero = constant(dtype, 0.0)
    out = b.select(b.fcmp_ordered("==", x, zero), zero, x)  # -0.0 -> 0.0, NaN stays
    out = b.select(b.fcmp_ordered("<", x, zero), constant(dtype, -1.0), out)
    return b.select(b.fcmp_ordered(">", x, zero), constant(dtype, 1.0), out)


def _int_reciprocal(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    # NumPy computes ``1.0 / x`` in double and casts back (1/0 -> inf -> INT_MIN…).
    r = b.fdiv(constant(FLOAT64, 1.0), to_float64(b, x, dtype))
    return convert(b, r, FLOAT64, dtype)


def _float_reciprocal(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return b.fdiv(constant(dtype, 1.0), x, flags=b.fp_flags)


def _square(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return b.fmul(x, x, flags=b.fp_flags) if dtype.kind == "f" else b.mul(x, x)


def _isinf(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return b.fcmp_ordered("==", fabs(b, x), constant(dtype, np.inf))


def _isfinite(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return b.fcmp_ordered("<", fabs(b, x), constant(dtype, np.inf))


def _signbit(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    as_int = b.bitcast(x, ir.IntType(bits(dtype)))
    return b.icmp_signed("<", as_int, ir.Constant(as_int.type, 0))


def _select(b: KernelBuilder, dtype: np.dtype, cond: ir.Value, x: ir.Value, y: ir.Value
            ) -> ir.Value:
    return b.select(cond, x, y)


def _convert(b: KernelBuilder, src: np.dtype, x: ir.Value, /, *, dtype: np.dtype
             ) -> ir.Value:
    return convert(b, x, src, np.dtype(dtype))


def _float_pow(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value, *,
               scalar_exponent: bool = False) -> ir.Value:
    """``np.power`` on floats. When the exponent is one value for every element
    (NumPy's zero-stride exponent), NumPy's loop computes ``x * x`` for 2.0 and
    ``sqrt(x)`` for 0.5 instead of ``pow``: sqrt(-0.0) is -0.0 and sqrt(-inf) NaN where
    pow gives +0.0 and +inf, and ``x * x`` is correctly rounded."""
    result = _F["pow"](b, dtype, x, y)
    if not scalar_exponent:
        return result
    for value, fast in ((0.5, _F["sqrt"](b, dtype, x)), (2.0, _square(b, dtype, x))):
        result = b.select(b.fcmp_ordered("==", y, constant(dtype, value)), fast, result)
    return result


def _int_pow(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value, *,
             scalar_exponent: bool = False) -> ir.Value:
    return dm.int_pow(b, dtype, x, y)


_F = float_rules()

_TABLE: dict[str, dict[str, Fn]] = {
    # arithmetic (bool add/mul are or/and, as NumPy's '??->?' loops)
    "add": kinds(b=_op("or_"), iu=_op("add"), f=_fop("fadd")),
    "sub": kinds(iu=_op("sub"), f=_fop("fsub")),
    "mul": kinds(b=_op("and_"), iu=_op("mul"), f=_fop("fmul")),
    "div": kinds(f=_fop("fdiv")),
    "floor_divide": kinds(iu=dm.int_floor_divide, f=dm.float_floor_divide),
    "mod": kinds(iu=dm.int_mod, f=dm.float_mod),
    "pow": kinds(iu=_int_pow, f=_float_pow),
    "neg": kinds(iu=_op("neg"), f=_op("fneg")),
    "abs": kinds(b=_identity, i=_int_abs, u=_identity, f=_F["abs"]),
    "sign": kinds(iu=_int_sign, f=_float_sign),
    "square": kinds(iu=_square, f=_square),
    "reciprocal": kinds(iu=_int_reciprocal, f=_float_reciprocal),
    "floor": kinds(biu=_identity, f=_F["floor"]),
    "ceil": kinds(biu=_identity, f=_F["ceil"]),
    "trunc": kinds(biu=_identity, f=_F["trunc"]),
    "rint": kinds(f=_F["rint"]),
    # max/min: bool is or/and; floats follow NumPy's NaN rules
    "max": kinds(b=_op("or_"), iu=_int_select_cmp(">"), f=_fmax_like(">", True)),
    "min": kinds(b=_op("and_"), iu=_int_select_cmp("<"), f=_fmax_like("<", True)),
    "fmax": kinds(b=_op("or_"), iu=_int_select_cmp(">"), f=_fmax_like(">", False)),
    "fmin": kinds(b=_op("and_"), iu=_int_select_cmp("<"), f=_fmax_like("<", False)),
    "copysign": kinds(f=_F["copysign"]),
    # bits and logic
    "bitwise_and": kinds(biu=_op("and_")),
    "bitwise_or": kinds(biu=_op("or_")),
    "bitwise_xor": kinds(biu=_op("xor")),
    "invert": kinds(biu=_op("not_")),  # on bool (i1) this is logical not
    "left_shift": kinds(iu=dm.left_shift),
    "right_shift": kinds(iu=dm.right_shift),
    "logical_and": kinds(every=_logical("and_")),
    "logical_or": kinds(every=_logical("or_")),
    "logical_xor": kinds(every=_logical("xor")),
    "logical_not": kinds(every=_logical_not),
    # predicates
    "isnan": kinds(biu=_const_bool(False), f=lambda b, dtype, x: b.fcmp_unordered("uno", x, x)),
    "isinf": kinds(biu=_const_bool(False), f=_isinf),
    "isfinite": kinds(biu=_const_bool(True), f=_isfinite),
    "signbit": kinds(f=_signbit),
    # special
    "select": kinds(every=_select),
    "convert": kinds(every=_convert),
    # complex parts (the 'c' rules are merged below)
    "conj": kinds(iu=_identity, f=_identity),
    "real": {}, "imag": {},
    "complex": kinds(f=make_complex),
}
_TABLE.update({name: kinds(f=_F[name]) for name in (
    "sqrt", "cbrt", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos",
    "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "arctan2", "hypot")})
_TABLE.update({name: kinds(biu=_icmp(op), f=_fcmp(op)) for name, op in (
    ("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="))})

for _name, _rule in {**COMPLEX_RULES, **COMPLEX_MATH_RULES, "pow": power}.items():
    _TABLE[_name]["c"] = _rule

#: Every elementwise primitive's scalar rule.
SCALAR_RULES: dict[Primitive, ByKind] = {
    ALL_PRIMITIVES[name]: ByKind(name, impls) for name, impls in _TABLE.items()
}


_POW = ALL_PRIMITIVES["pow"]
_MUL = ALL_PRIMITIVES["mul"]


def rule_params(eqn: Eqn) -> dict[str, Any]:
    """The keyword arguments of ``eqn``'s scalar rule: its params, and what the rule must
    know of its operands' shapes (``pow``: whether the exponent is rank 0; a complex
    ``*``: whether it multiplies scalars, which NumPy rounds apart from its arrays)."""
    params = dict(eqn.params)
    if eqn.prim is _POW:
        params["scalar_exponent"] = eqn.inputs[1].type.ndim == 0
    out = eqn.outs[0].type
    if eqn.prim is _MUL and out.dtype.kind == "c" and out.ndim == 0:
        params["of_scalars"] = True  # NumPy's scalar product, not its SIMD loop's
    return params


def scalar_rule(prim: Primitive) -> ByKind:
    try:
        return SCALAR_RULES[prim]
    except KeyError:
        raise UnsupportedError(f"no code generation rule for primitive '{prim.name}'") from None
