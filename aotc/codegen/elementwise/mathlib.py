"""Float math: LLVM intrinsics where LLVM has exact ones, vector kernels, then libm.

Intrinsics (``llvm.sqrt``, ``llvm.fabs``, ``llvm.floor``, ``llvm.roundeven``…) are
correctly rounded and lower to single instructions. The transcendentals with a kernel in
:mod:`.vecmath` (exp, exp2, log, log2, log10, expm1, log1p, sin, cos, tan, tanh,
arctan, arctan2, sinh, cosh, arcsinh, arccosh, cbrt, power)
use it: inlined straight-line code the loop vectorizer widens. The rest call libm by
their C names (``cbrt``/``cbrtf``…), so an object file needs nothing beyond ``-lm``.
NumPy's own SIMD implementations differ from either by a few ulp; the tests state the
tolerance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder
from ..core.dtypes import reg_type
from ..vecmath import VECMATH_RULES

FloatRule = Callable[..., ir.Value]

#: Primitive name -> C function name (the float64 variant; float32 appends ``f``). Every
#: transcendental is listed, also those :data:`VECMATH_RULES` overrides.
LIBM_UNARY = {
    "cbrt": "cbrt", "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "expm1": "expm1", "sin": "sin", "cos": "cos",
    "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh",
    "arctanh": "atanh",
}
LIBM_BINARY = {"arctan2": "atan2", "hypot": "hypot", "pow": "pow"}
#: Primitive name -> LLVM intrinsic (overloaded on the float type).
INTRINSIC_UNARY = {
    "sqrt": "llvm.sqrt", "abs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil",
    "trunc": "llvm.trunc", "rint": "llvm.roundeven",
}
INTRINSIC_BINARY = {"copysign": "llvm.copysign"}


def libm_function(module: ir.Module, name: str, dtype: np.dtype, nargs: int) -> ir.Function:
    """Declare (once) the C function ``name`` for ``dtype`` (``expf`` for float32)."""
    symbol = name + ("f" if dtype.itemsize == 4 else "")
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    ty = reg_type(dtype)
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), symbol)
    fn.attributes.add("nounwind")
    return fn


def intrinsic(module: ir.Module, name: str, ty: ir.Type, nargs: int) -> ir.Function:
    """Declare (once) an intrinsic overloaded on one float type, e.g. ``llvm.sqrt.f64``."""
    return module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * nargs))


def call_libm(name: str) -> FloatRule:
    """A scalar rule calling the C function ``name`` (float dtypes only)."""
    def rule(b: KernelBuilder, dtype: np.dtype, *args: ir.Value) -> ir.Value:
        return b.call(libm_function(b.module, name, dtype, len(args)), list(args))
    rule.__name__ = f"libm_{name}"
    return rule


def call_intrinsic(name: str) -> FloatRule:
    """A scalar rule calling the LLVM intrinsic ``name`` on the value's float type."""
    def rule(b: KernelBuilder, dtype: np.dtype, *args: ir.Value) -> ir.Value:
        return b.call(intrinsic(b.module, name, args[0].type, len(args)), list(args))
    rule.__name__ = name.replace(".", "_")
    return rule


def fabs(b: KernelBuilder, x: ir.Value) -> ir.Value:
    return b.call(intrinsic(b.module, "llvm.fabs", x.type, 1), [x])


def floor(b: KernelBuilder, x: ir.Value) -> ir.Value:
    return b.call(intrinsic(b.module, "llvm.floor", x.type, 1), [x])


def copysign(b: KernelBuilder, mag: ir.Value, sign: ir.Value) -> ir.Value:
    return b.call(intrinsic(b.module, "llvm.copysign", mag.type, 2), [mag, sign])


def float_rules() -> dict[str, FloatRule]:
    """Primitive name -> float rule, for every function this module provides (vector
    kernels where :mod:`.vecmath` has one)."""
    rules: dict[str, FloatRule] = {}
    tables: Sequence[tuple[dict[str, str], Callable[[str], FloatRule]]] = (
        (LIBM_UNARY, call_libm), (LIBM_BINARY, call_libm),
        (INTRINSIC_UNARY, call_intrinsic), (INTRINSIC_BINARY, call_intrinsic),
    )
    for table, make in tables:
        for prim, fname in table.items():
            rules[prim] = make(fname)
    rules.update(VECMATH_RULES)
    return rules
